"""A new user's first hour, on a made-up one-level benchmark (issue 34): three models, 600 keys,
every response in one multi-model JSONL file (``tests/one_level.py``), a rule written for it
(``tests/data/one_level/``), and the reports it reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

RESAMPLES = "200"


def _queue(run_cli, bench: Path, rule: Path, tmp_path: Path) -> list[dict]:
    queue = tmp_path / "queue.jsonl"
    result = run_cli("review", str(rule), "--bench", str(bench), "--out", str(queue), "--sample", "50")
    assert result.code == 0, result.err
    return [json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines()]


def _check(run_cli, bench: Path, rule: Path, tmp_path: Path, rows: list[dict]) -> dict:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "audit.json"
    result = run_cli(
        "check", str(rule), "--bench", str(bench), "--resamples", RESAMPLES,
        "--adjudications", str(labels), "--json", str(out),
    )
    assert result.code == 0, result.err
    return json.loads(out.read_text(encoding="utf-8"))


def test_no_misreading_observed_keeps_the_estimate_and_only_widens_the_interval(
    one_level, run_cli, tmp_path: Path
) -> None:
    """50 adjudicated verdicts, none overturned: each corrected accuracy is the uncorrected one
    exactly, with an interval around it (the old point figures used the posterior means
    (e + 1/2)/(n + 1) and moved, 67.50% -> 68.88% in the issue)."""
    bench, rule = one_level
    rows = _queue(run_cli, bench, rule, tmp_path)
    assert len(rows) == 50
    for row in rows:
        row["accept"] = row["verdict"] == "accept"
    data = _check(run_cli, bench, rule, tmp_path, rows)
    for model in data["models"]:
        corrected = model["corrected"]
        assert corrected["estimate"] == model["structured"], model["model"]
        assert corrected["low"] <= corrected["estimate"] <= corrected["high"]
        assert corrected["high"] - corrected["low"] > 0.01  # the rates' uncertainty: 0 in 50 is no 0


def test_observed_misreadings_move_the_estimate_by_rogan_gladen(
    one_level, run_cli, tmp_path: Path
) -> None:
    """Overturn 3 accepts and 2 rejects of the sample: every corrected accuracy is the
    Rogan–Gladen estimate at the observed rates e/n, recomputed here from the counts alone."""
    bench, rule = one_level
    rows = _queue(run_cli, bench, rule, tmp_path)
    flipped = {True: 0, False: 0}
    for row in rows:
        row["accept"] = ruled = row["verdict"] == "accept"
        if flipped[ruled] < (3 if ruled else 2):
            flipped[ruled] += 1
            row["accept"] = not ruled
    data = _check(run_cli, bench, rule, tmp_path, rows)
    wrong = [r for r in rows if not r["accept"]]  # the truth among the labelled
    right = [r for r in rows if r["accept"]]
    fa = sum(r["verdict"] == "accept" for r in wrong) / len(wrong)
    fr = sum(r["verdict"] != "accept" for r in right) / len(right)
    assert (fa, fr) == (3 / len(wrong), 2 / len(right))
    for model in data["models"]:
        mine = [r for r in rows if r["model"] == model["model"]]
        truly_right = sum(row["accept"] for row in mine)
        # the after figure counts a labelled verdict as its label, every other as the rule says
        a = round(model["structured"] * model["n"]) - truly_right
        r = model["n"] - len(mine) - a
        expected = (truly_right + min(max((a - fa * (a + r)) / (1 - fa - fr), 0), a + r)) / model["n"]
        corrected = model["corrected"]
        assert corrected["estimate"] == pytest.approx(expected, abs=1e-12), model["model"]
        assert corrected["estimate"] != model["structured"]
        assert corrected["low"] <= corrected["estimate"] <= corrected["high"]
