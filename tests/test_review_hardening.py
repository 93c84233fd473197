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


# ---- the random sample can be verified (issue 26 item 10)


def _review(run_cli, bench: Path, rule: Path, target: Path, *extra: str) -> list[dict]:
    result = run_cli("review", str(rule), "--bench", str(bench), "--out", str(target), *extra)
    assert result.code == 0, result.err
    return [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]


def _write(target: Path, rows: list[dict]) -> Path:
    target.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return target


def _check(run_cli, bench: Path, rule: Path, labels: Path, *extra: str):
    return run_cli(
        "check", str(rule), "--bench", str(bench), "--adjudications", str(labels),
        "--resamples", "50", *extra,
    )


def _labelled(rows: list[dict]) -> list[dict]:
    return [dict(r, accept=r["verdict"] == "accept") for r in rows]


def _sampled(rows: list[dict]) -> list[dict]:
    """The random-sample rows only (the queue also lists every uncertain verdict first)."""
    return [r for r in rows if r["selected"] == "sample"]


def test_each_sample_row_records_the_draw(run_cli, hostile, tmp_path: Path) -> None:
    bench, rule = hostile
    rows = _review(run_cli, bench, rule, tmp_path / "q.jsonl", "--sample", "5", "--seed", "3")
    sample = [r for r in rows if r["selected"] == "sample"]
    assert len(sample) == 5 and all(r["draw"] == sample[0]["draw"] for r in sample)
    draw = sample[0]["draw"]
    uncertain = sum(r["selected"] == "uncertain" for r in rows)
    # the population is every certain verdict: all the benchmark's verdicts less the uncertain rows
    assert (draw["seed"], draw["sample"], draw["population"]) == (
        3, 5, len(MODELS) * len(KEYS) - uncertain,
    )
    assert draw["cells"] == [["dom", 5]] and len(draw["sha256"]) == 64
    labels = _write(tmp_path / "l.jsonl", _labelled(rows))
    report = tmp_path / "audit.json"
    result = _check(run_cli, bench, rule, labels, "--json", str(report))
    assert result.code == 0, result.err
    assert json.loads(report.read_text())["adjudications"]["sample_n"] == 5


def test_a_row_falsely_marked_sample_is_refused(run_cli, hostile, tmp_path: Path) -> None:
    """A certain verdict the draw did not pick, added with the file's own draw record (as someone
    picking the rows that suit them would), is refused naming its line."""
    bench, rule = hostile
    drawn = _review(run_cli, bench, rule, tmp_path / "a.jsonl", "--sample", "5")
    other = _review(run_cli, bench, rule, tmp_path / "b.jsonl", "--sample", "5", "--seed", "1")
    seen = {(r["model"], r["id"]) for r in drawn}
    extra = next(
        r for r in other if r["selected"] == "sample" and (r["model"], r["id"]) not in seen
    )
    forged = _labelled(drawn) + _labelled([dict(extra, draw=_sampled(drawn)[0]["draw"])])
    result = _check(run_cli, bench, rule, _write(tmp_path / "forged.jsonl", forged))
    assert result.code == 2, result.out
    assert f"forged.jsonl:{len(forged)}: marked 'selected: sample' but not drawn" in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"draw": None}, ":1: 'selected' is 'sample' but the row has no 'draw'"),
        ({"draw": "seed=0"}, ":1: 'selected' is 'sample' but the row has a malformed 'draw'"),
        ({"draw": {"seed": 0}}, ":1: 'selected' is 'sample' but the row has a malformed 'draw'"),
    ],
)
def test_a_sample_row_without_its_draw_is_refused(
    run_cli, hostile, tmp_path: Path, change: dict, message: str
) -> None:
    bench, rule = hostile
    rows = _sampled(_labelled(_review(run_cli, bench, rule, tmp_path / "q.jsonl", "--sample", "3")))
    rows[0] = dict(rows[0], **change)
    result = _check(run_cli, bench, rule, _write(tmp_path / "bad.jsonl", rows))
    assert result.code == 2 and "bad.jsonl" + message in result.err, result.err


def test_a_draw_that_does_not_fit_the_verdicts_is_refused(run_cli, hostile, tmp_path: Path) -> None:
    bench, rule = hostile
    rows = _sampled(_labelled(_review(run_cli, bench, rule, tmp_path / "q.jsonl", "--sample", "3")))
    for changed in ({"population": 48}, {"sha256": "0" * 64}):
        draw = dict(rows[0]["draw"], **changed)
        edited = [dict(r, draw=draw) for r in rows]
        result = _check(run_cli, bench, rule, _write(tmp_path / "bad.jsonl", edited))
        assert result.code == 2
        assert "bad.jsonl:1: the random sample cannot be verified" in result.err, result.err
    one_differs = rows[:1] + [dict(rows[1], draw=dict(rows[1]["draw"], seed=9))] + rows[2:]
    result = _check(run_cli, bench, rule, _write(tmp_path / "bad.jsonl", one_differs))
    assert result.code == 2 and "bad.jsonl:2: a different 'draw' than line 1" in result.err


def test_a_cleared_selected_applies_the_label_without_an_error_rate(
    run_cli, hostile, tmp_path: Path
) -> None:
    bench, rule = hostile
    rows = _sampled(_labelled(_review(run_cli, bench, rule, tmp_path / "q.jsonl", "--sample", "3")))
    cleared = [dict(r, selected="", draw=None) for r in rows]
    report = tmp_path / "audit.json"
    result = _check(run_cli, bench, rule, _write(tmp_path / "l.jsonl", cleared), "--json", str(report))
    assert result.code == 0, result.err
    summary = json.loads(report.read_text())["adjudications"]
    assert (summary["applied"], summary["sample_n"]) == (3, 0)


# ---- strict values: epoch (issue 26 item 10) and accept (issue 25 item 4)


def _one_row_file(tmp_path: Path, suffix: str, **values: object) -> Path:
    row = {
        "id": "dom_0000_q5", "model": "m", "epoch": 1, "key": "stable",
        "answer_line": "ANSWER: stable", "selected": "uncertain", "accept": True, "note": "",
    }
    row.update(values)
    target = tmp_path / f"labels{suffix}"
    if suffix == ".jsonl":
        return _write(target, [row])
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(row))
        writer.writerow(["" if v is None else str(v) if not isinstance(v, bool) else str(v).lower()
                         for v in row.values()])
    return target


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
@pytest.mark.parametrize("epoch", [1.9, True, "1.9", 0, -1, "x", "١", "+1", "1_0", 1e3])
def test_an_epoch_that_is_not_a_whole_number_from_1_is_refused(
    tmp_path: Path, suffix: str, epoch: object
) -> None:
    from keyaudit.engine.errors import DataError

    path = _one_row_file(tmp_path, suffix, epoch=epoch)
    with pytest.raises(DataError) as raised:
        read_adjudications(path)
    line = 1 if suffix == ".jsonl" else 2
    assert str(raised.value).endswith(
        f"labels{suffix}:{line}: 'epoch' must be a whole number from 1 (or empty: 1)"
    )


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_good_epochs_are_read(tmp_path: Path, suffix: str) -> None:
    for given, read in ((None, 1), ("", 1), (1, 1), (3, 3), ("7", 7)):
        if suffix == ".jsonl" and given == "7":
            continue  # a JSON epoch is a number
        (row,) = read_adjudications(_one_row_file(tmp_path, suffix, epoch=given))
        assert row.epoch == read


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
@pytest.mark.parametrize("value", ["yes", "no", "y", "n", "1", "0", 1, 0, "maybe", "accept", "rejected", "t", "truth"])
def test_accept_is_true_or_false_only(tmp_path: Path, suffix: str, value: object) -> None:
    from keyaudit.engine.errors import DataError

    line = 1 if suffix == ".jsonl" else 2
    with pytest.raises(DataError) as raised:
        read_adjudications(_one_row_file(tmp_path, suffix, accept=value))
    assert str(raised.value).endswith(
        f"labels{suffix}:{line}: 'accept' must be true or false (or empty: not labelled)"
    )


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_the_documented_accept_values_are_read(tmp_path: Path, suffix: str) -> None:
    cases = [(True, True), (False, False), ("true", True), ("FALSE", False), (" True ", True)]
    for given, read in cases:
        (row,) = read_adjudications(_one_row_file(tmp_path, suffix, accept=given))
        assert row.accept is read
    for empty in (None, ""):
        assert read_adjudications(_one_row_file(tmp_path, suffix, accept=empty)) == []


def test_accept_yes_through_the_cli_is_file_line_exit_2(run_cli, tmp_path: Path) -> None:
    """Issue 25's case: ``accept=yes`` in a labelled CSV was silently read as true."""
    queue = tmp_path / "q.csv"
    assert run_cli("review", "gear_train", "--out", str(queue), "--sample", "2").code == 0
    with queue.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    rows[1][rows[0].index("accept")] = "yes"
    with queue.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    result = run_cli("check", "gear_train", "--adjudications", str(queue), "--resamples", "50")
    assert result.code == 2
    assert result.err.strip() == (
        f"keyaudit: error: {queue}:2: 'accept' must be true or false (or empty: not labelled)"
    )


def test_a_duplicated_column_is_refused(tmp_path: Path) -> None:
    from keyaudit.engine.errors import DataError

    target = tmp_path / "dup.csv"
    target.write_text("id,model,key,accept,accept\r\nx,m,k,true,false\r\n", encoding="utf-8")
    with pytest.raises(DataError, match="dup.csv:1: column 'accept' appears twice"):
        read_adjudications(target)


def test_the_sample_is_verified_when_check_runs_more_rules_than_review(
    run_cli, tmp_path: Path
) -> None:
    """The draw records the cells it was drawn from: check with another rule besides still
    recomputes the same population (only the reviewed cells' certain verdicts)."""
    queue = tmp_path / "q.jsonl"
    assert run_cli("review", "physical_stability", "--out", str(queue), "--sample", "4").code == 0
    rows = [json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines()]
    labels = _write(tmp_path / "l.jsonl", _labelled(rows))
    report = tmp_path / "audit.json"
    result = run_cli(
        "check", "physical_stability", "gear_train", "--adjudications", str(labels),
        "--resamples", "50", "--json", str(report),
    )
    assert result.code == 0, result.err
    assert json.loads(report.read_text())["adjudications"]["sample_n"] == 4
