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


@pytest.fixture(scope="module")
def one_level_reports(one_level, tmp_path_factory) -> dict:
    """``check`` of the one-level benchmark with 50 adjudicated verdicts (none overturned):
    terminal, Markdown, JSON and HTML."""
    from typer.testing import CliRunner

    from keyaudit.cli.app import app

    bench, rule = one_level
    out = tmp_path_factory.mktemp("one-level-reports")

    def run(*args: str) -> str:  # (run_cli is per test; this fixture is per module)
        result = CliRunner().invoke(app, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    run("review", str(rule), "--bench", str(bench), "--out", str(out / "q.jsonl"), "--sample", "50")
    rows = [json.loads(line) for line in (out / "q.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["accept"] = row["verdict"] == "accept"
    (out / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    terminal = run(
        "check", str(rule), "--bench", str(bench), "--resamples", RESAMPLES,
        "--adjudications", str(out / "labels.jsonl"), "--json", str(out / "a.json"),
        "--markdown", str(out / "a.md"), "--html", str(out / "a.html"),
    )
    return {
        "terminal": " ".join(terminal.split()),
        "markdown": " ".join((out / "a.md").read_text(encoding="utf-8").split()),
        "json": json.loads((out / "a.json").read_text(encoding="utf-8")),
        "html": (out / "a.html").read_text(encoding="utf-8"),
    }


def test_a_one_level_report_names_the_ties_before_and_the_order_they_became(one_level_reports) -> None:
    """Strict scoring gives all three models 0%: the reports say they are tied (the old ones:
    'undefined (fewer than two models)' with three models), and each pair the rule puts in order
    is a change of order (the old ones: 'No pair of models changes order')."""
    tied = "All 3 models are tied before the rules (overall -33.33%), so Kendall's τ-b, which compares two orders, is undefined; after them the order is Ohm Large"
    pairs = (
        "Ohm Large, tied with Amp Mini before, now leads it by",
        "Volt 7B, tied with Amp Mini before, now leads it by",
        "Ohm Large, tied with Volt 7B before, now leads it by",
    )
    html = " ".join(one_level_reports["html"].split())
    for name in ("terminal", "markdown"):
        text = one_level_reports[name]
        assert tied in text, name
        assert all(pair in text for pair in pairs), name
        assert "fewer than two models" not in text and "No pair of models changes order" not in text
    assert tied in html and all(pair in html for pair in pairs)
    flips = one_level_reports["json"]["before_after"]["flips"]
    assert [(f["ahead"], f["behind"], f["change"], f["significant"]) for f in flips] == [
        ("Ohm Large", "Amp Mini", "tie broken", True),
        ("Volt 7B", "Amp Mini", "tie broken", True),
        ("Ohm Large", "Volt 7B", "tie broken", True),
    ]


def test_a_one_level_report_speaks_of_its_own_level_everywhere(one_level_reports) -> None:
    """No L5−L4, no Raw L5, no L4-to-L5 sentence where the benchmark has one level (L1); the
    adjudications' counts and the rule's error rates are in the terminal and the Markdown too,
    not only in the JSON, and the JSON's statements are those sentences word for word."""
    data = one_level_reports["json"]
    statements = data["statements"]
    assert statements["verdicts_by_error"] is None
    assert statements["verdict_changes"].startswith("This benchmark has one level (L1)")
    texts = {
        "terminal": one_level_reports["terminal"],
        "markdown": one_level_reports["markdown"],
        "statements": json.dumps(statements, ensure_ascii=False),
        "html": one_level_reports["html"],
    }
    for name, text in texts.items():
        for level_word in ("L5", "L4", "Raw L"):
            assert level_word not in text, (name, level_word)
    assert data["settings"]["levels"][1] == 1
    for name in ("terminal", "markdown"):
        text = texts[name]
        assert "50 verdicts labelled by a person, 0 overturned the rule" in text, name
        assert "false-accept rate (truly wrong answers it accepts) 0 of" in text, name
        assert "Model order by mean accuracy over its L1 cells after the rule, corrected: Ohm Large 73.67%" in text
        for sentence in statements["closing"]:
            assert " ".join(sentence.split()).replace("`", "") in text.replace("`", ""), (name, sentence)


def test_the_worked_examples_answer_column_holds_answer_lines_only(one_level_reports) -> None:
    """The key files carry the question; it was printed in every row of the 'ANSWER line
    (verbatim)' column. Every worked example shares it here: it is said once, above the table."""
    terminal = one_level_reports["terminal"]
    assert terminal.count("The drawing shows bulbs A, B, C and D") == 1
    assert "Question (every example): The drawing shows bulbs A, B, C and D" in terminal


def test_a_fresh_authors_first_hour(one_level, run_cli, tmp_path: Path) -> None:
    """Issue 34, Done when: a benchmark laid out from one multi-model JSONL file, the README's
    loop (keys, new-rule, test-rule, check), and a report that speaks of its own design: one
    level, three models tied before and ordered after, no L5−L4."""
    bench, _ = one_level
    keys = run_cli("keys", "--bench", str(bench))
    assert keys.code == 0 and "circuit_bulbs" in keys.out, keys.err
    assert run_cli("new-rule", "circuit_bulbs", "--level", "1", "--bench", str(bench), "--out", str(tmp_path / "r")).code == 0
    rule = tmp_path / "r" / "circuit_bulbs.toml"
    tested = run_cli("test-rule", str(rule), "--bench", str(bench))
    assert tested.code == 0 and "rule OK" in tested.out
    report = tmp_path / "audit.md"
    checked = run_cli("check", str(rule), "--bench", str(bench), "--resamples", RESAMPLES, "--markdown", str(report))
    assert checked.code == 0, checked.err
    assert "3 models found of 3 in the roster" in checked.flat
    text = " ".join(report.read_text(encoding="utf-8").split())
    for said in (
        "This benchmark has one level (L1)",
        "All 3 models are tied before the rules",
        "Ohm Large, tied with Volt 7B before, now leads it by",
    ):
        assert said in text and said in checked.flat, said
    assert "L5" not in text and "L4" not in text and "L5" not in checked.out
