"""The review queue (`keyaudit review`) and adjudications (`check --adjudications`)."""

from __future__ import annotations

import csv
import json
from pathlib import Path


def test_review_writes_uncertain_and_a_seeded_sample(run_cli, tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for target in (first, second):
        result = run_cli("review", "physical_stability", "--out", str(target), "--sample", "7")
        assert result.code == 0, result.err
    assert first.read_bytes() == second.read_bytes()  # same inputs and seed: same file
    rows = [json.loads(line) for line in first.read_text().splitlines()]
    uncertain = [r for r in rows if r["selected"] == "uncertain"]
    sample = [r for r in rows if r["selected"] == "sample"]
    assert uncertain and len(sample) == 7
    assert all(r["uncertain"] for r in uncertain) and not any(r["uncertain"] for r in sample)
    assert all(r["accept"] is None and r["note"] == "" for r in rows)
    assert {"id", "model", "key", "answer_line", "extracted", "verdict"} <= set(rows[0])
    other = tmp_path / "c.jsonl"
    run_cli("review", "physical_stability", "--out", str(other), "--sample", "7", "--seed", "1")
    assert other.read_bytes() != first.read_bytes()


def test_review_csv_has_the_columns_to_fill(run_cli, tmp_path: Path) -> None:
    target = tmp_path / "q.csv"
    assert run_cli("review", "gear_train", "--out", str(target), "--sample", "3").code == 0
    with target.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and list(rows[0])[-2:] == ["accept", "note"]
    assert all(r["accept"] == "" for r in rows)


def _labelled(run_cli, tmp_path: Path, flip: int) -> tuple[Path, list[dict]]:
    queue = tmp_path / "q.jsonl"
    assert run_cli("review", "physical_stability", "--out", str(queue), "--sample", "10").code == 0
    rows = [json.loads(line) for line in queue.read_text().splitlines()]
    for index, row in enumerate(rows):
        said = row["verdict"] == "accept"
        row["accept"] = (not said) if index < flip else said
    rows[-1]["accept"] = rows[-1]["verdict"] != "accept"  # one sampled certain verdict wrong
    path = tmp_path / "labelled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def test_adjudications_overrule_the_rule_with_provenance(run_cli, tmp_path: Path) -> None:
    path, rows = _labelled(run_cli, tmp_path, flip=2)
    out = tmp_path / "audit.json"
    result = run_cli(
        "check", "physical_stability", "--resamples", "200", "--adjudications", str(path),
        "--json", str(out),
    )
    assert result.code == 0, result.err
    summary = json.loads(out.read_text())["adjudications"]
    assert summary["applied"] == len(rows)
    assert summary["overturned"] == 3
    assert (summary["sample_n"], summary["sample_errors"]) == (10, 1)
    low, high = summary["error_rate_ci"]
    assert 0 < low < 0.1 < high < 0.5  # Wilson 95% for 1 in 10: 1.79%–40.42%
    assert "overturned the rule" in result.out
    # every labelled verdict is now certain
    data = json.loads(out.read_text())
    labelled_ids = {(r["model"], r["id"]) for r in rows}
    for m in data["models"]:
        assert not any((m["model"], u["id"]) in labelled_ids for u in m["uncertain"])


def test_a_label_for_a_changed_or_unknown_response_is_an_error(run_cli, tmp_path: Path) -> None:
    path, rows = _labelled(run_cli, tmp_path, flip=0)
    for change, message in (
        ({"id": "physical_stability_9999_q5"}, "no response of model"),
        ({"key": "stable; something else"}, "key of"),
        ({"answer_line": "ANSWER: stable"}, "changed since review"),
    ):
        bad = [dict(rows[0], **change)] + rows[1:]
        target = tmp_path / "bad.jsonl"
        target.write_text("".join(json.dumps(r) + "\n" for r in bad))
        result = run_cli("check", "physical_stability", "--adjudications", str(target))
        assert result.code == 2
        assert "bad.jsonl:1: " in result.err and message in result.err
        assert "Traceback" not in result.err


def test_unlabelled_rows_are_skipped_and_bad_labels_refused(run_cli, tmp_path: Path) -> None:
    queue = tmp_path / "q.jsonl"
    run_cli("review", "physical_stability", "--out", str(queue), "--sample", "2")
    rows = [json.loads(line) for line in queue.read_text().splitlines()]
    rows[1]["accept"] = "maybe"
    target = tmp_path / "bad.jsonl"
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run_cli("check", "physical_stability", "--adjudications", str(target))
    assert result.code == 2 and "bad.jsonl:2: 'accept' must be true or false" in result.err
