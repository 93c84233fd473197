"""Issue 26 items 5 and 10, issue 25 item 4: review files a spreadsheet cannot run, a random
sample that can be verified, and adjudication values read strictly.

Every test builds the hostile input: a small benchmark whose model names, keys and answer lines
begin with formula characters, labelled files with forged ``selected: sample`` rows, fractional
or boolean epochs, and ``accept`` values that are neither true nor false.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from keyaudit.engine.load.adjudications import (
    FORMULA_STARTS,
    escape_cell,
    read_adjudications,
    unescape_cell,
)

#: Model names, as a spreadsheet would run them if they were written as they are.
MODELS = ['=HYPERLINK("http://evil.example","x")', "@SUM(1+1)", "+1+1", "-2+3", "\tcmd", "\rcmd", "'=quoted"]
#: Keys: one per item, each beginning with a formula character (after quotes, for the last).
KEYS = ["=stable", "+unstable", "-stable", "@unstable", "\tstable", "'@stable", "''-unstable"]
KEY_GRAMMAR = (
    "start: LEAD? status REST?\nstatus: STATUS\nLEAD: /[=+\\-@\\t\\r']+/\n"
    "STATUS: /stable|unstable/\nREST: /;.*/\n"
)
ANSWER_GRAMMAR = (
    "start: _item*\n_item: status | WORD | MARK\nstatus: STATUS\nSTATUS.2: /stable|unstable/\n"
    "WORD: /[A-Za-z0-9]+/\nMARK: /[^\\sA-Za-z0-9]/\n%ignore /\\s+/\n"
)
RULE = """[rule]
name = "formula"
cells = [{domain = "dom", level = 5}]
key_grammar = "k.lark"
answer_grammar = "a.lark"
[answer]
label = "=ANSWER:"
[key]
status = "key.status"
[[let]]
name = "said"
expr = "first([s.status for s in find(answer, 'status')])"
[[require]]
reason = "wrong"
check = "said == target.status"
[output]
status = "said"
"""


def hostile_bench(root: Path) -> tuple[Path, Path]:
    """A benchmark of 7 items and 6 models whose names, keys and answer lines all begin with a
    formula character, and a rule for it (answer label ``=ANSWER:``, so every answer line begins
    with ``=``). Returns (benchmark folder, rule file)."""
    bench = root / "bench"
    (bench / "keys").mkdir(parents=True)
    (bench / "responses").mkdir()
    ids = [f"dom_{i:04d}_q5" for i in range(len(KEYS))]
    (bench / "keys" / "k.jsonl").write_text(
        "".join(json.dumps({"id": i, "answer": k}) + "\n" for i, k in zip(ids, KEYS, strict=True)),
        encoding="utf-8",
    )
    for number, model in enumerate(MODELS):
        lines = []
        for index, (item, key) in enumerate(zip(ids, KEYS, strict=True)):
            said = key.strip("=+-@\t\r'") if (index + number) % 3 else "maybe"
            lines.append(
                json.dumps({"id": item, "model": model, "response": f"Thinking.\n=ANSWER: {said}"})
            )
        (bench / "responses" / f"m{number}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    rules = root / "rules"
    rules.mkdir()
    (rules / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    (rules / "a.lark").write_text(ANSWER_GRAMMAR, encoding="utf-8")
    (rules / "formula.toml").write_text(RULE, encoding="utf-8")
    return bench, rules / "formula.toml"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    return hostile_bench(tmp_path)


def _csv_rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_escape_and_unescape_are_lossless() -> None:
    for start in ["", "'", "''", "x", " ", *FORMULA_STARTS]:
        for rest in ["", "'", "=", "a", "'b", "\n=c"]:
            for lead in ["", "'", "'''"]:
                text = lead + start + rest
                cell = escape_cell(text)
                assert unescape_cell(cell) == text
                # what a spreadsheet sees never begins with a formula character
                assert cell[:1] not in FORMULA_STARTS
    assert escape_cell("=1+1") == "'=1+1" and escape_cell("'=1") == "''=1"
    assert escape_cell("'quoted") == "'quoted" and unescape_cell("'quoted") == "'quoted"


def test_review_csv_cells_cannot_start_a_formula(run_cli, hostile, tmp_path: Path) -> None:
    bench, rule = hostile
    out = tmp_path / "queue.csv"
    result = run_cli("review", str(rule), "--bench", str(bench), "--out", str(out), "--sample", "100")
    assert result.code == 0, result.err
    rows = _csv_rows(out)
    assert len(rows) == 1 + len(MODELS) * len(KEYS)
    cells = [cell for row in rows for cell in row]
    assert not [c for c in cells if c[:1] in FORMULA_STARTS]
    header = rows[0]
    body = [dict(zip(header, row, strict=True)) for row in rows[1:]]
    assert {r["model"] for r in body} == {escape_cell(m) for m in MODELS}
    assert {r["key"] for r in body} == {escape_cell(k) for k in KEYS}
    assert all(r["answer_line"].startswith("'=ANSWER: ") for r in body)


def test_a_review_csv_round_trips_to_the_same_labels_as_jsonl(
    run_cli, hostile, tmp_path: Path
) -> None:
    """Labelled in a spreadsheet (notes that begin with formula characters too) and read back,
    the CSV gives exactly the rows the JSONL gives, and check applies every label."""
    bench, rule = hostile
    as_csv, as_jsonl = tmp_path / "queue.csv", tmp_path / "queue.jsonl"
    for target in (as_csv, as_jsonl):
        args = ("review", str(rule), "--bench", str(bench), "--out", str(target), "--sample", "100")
        assert run_cli(*args).code == 0
    rows = _csv_rows(as_csv)
    header = rows[0]
    notes = ["=1+1", "-x", "@y", "'=z", "plain", "'quoted"]
    for number, row in enumerate(rows[1:]):
        row[header.index("accept")] = "true" if number % 2 else "false"
        row[header.index("note")] = escape_cell(notes[number % len(notes)])
    with as_csv.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)  # CRLF, as spreadsheets write
    records = [json.loads(line) for line in as_jsonl.read_text(encoding="utf-8").splitlines()]
    for number, record in enumerate(records):
        record["accept"] = bool(number % 2)
        record["note"] = notes[number % len(notes)]
    as_jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    from_csv, from_jsonl = read_adjudications(as_csv), read_adjudications(as_jsonl)
    assert len(from_csv) == len(records)
    fields = ("id", "model", "epoch", "key", "answer_line", "selected", "accept", "note")
    assert [tuple(getattr(a, f) for f in fields) for a in from_csv] == [
        tuple(getattr(a, f) for f in fields) for a in from_jsonl
    ]
    assert {a.model for a in from_csv} == set(MODELS) and {a.key for a in from_csv} == set(KEYS)
    report = tmp_path / "audit.json"
    result = run_cli(
        "check", str(rule), "--bench", str(bench), "--adjudications", str(as_csv),
        "--resamples", "50", "--json", str(report),
    )
    assert result.code == 0, result.err
    assert json.loads(report.read_text())["adjudications"]["applied"] == len(records)
