"""Streamed responses (issue 27, item 1): a run keeps of each response its answer lines and its
conclusion, not its reasoning, and everything that reads a response reads the same from that
excerpt as from the whole text."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from keyaudit.engine.load.answer_line import find_answer_line
from keyaudit.engine.load.benchmark import ResponseSource, load_benchmark
from keyaudit.engine.load.excerpt import KEEP_WHOLE, TAIL_CHARS, Excerpter
from keyaudit.engine.rule_language.scoring.scorer import CONCLUSION_CHARS, conclusion_of

DATA = Path(__file__).parent / "data"
DATASET = DATA / "Dataset"
EVAL = DATA / "logs" / "inspect" / "synth-atlas-xl.eval"
FORMATS = (("ANSWER:", "last"), ("ANSWER:", "first"), ("Final answer", "last"), ("Verdict:", "first"))
SEPARATORS = ("\n", "\r\n", "\r", "\n\n", "\u2028", "\x1c", "\x85", "\x0b", "\n  \n")
PIECES = (
    "ANSWER: stable", "**ANSWER:** x", "Final answer: 3", "  answer: no", "blah ANSWER: y",
    "ANSWER:", "", "   ", "reasoning " * 30, "x" * 1500, "Final Answer:: q", "word",
    "> Verdict: fine", "verdict - none",
)  # fmt: skip


def _seen(text: str, label: str, which: str) -> tuple[str, str] | None:
    """What the reports take of a response: the answer text and the line as shown."""
    found = find_answer_line(text, label, which)
    if found is None:
        return None
    return found.text, text.splitlines()[found.line_number - 1].strip()


def _assert_faithful(text: str, kept: str, formats=FORMATS) -> None:
    for label, which in formats:
        assert _seen(kept, label, which) == _seen(text, label, which)
        found = find_answer_line(text, label, which)
        answer = None if found is None else found.text
        assert conclusion_of(kept, answer) == conclusion_of(text, answer)
    assert conclusion_of(kept, None) == conclusion_of(text, None)


def test_the_tail_is_what_the_conclusion_reads() -> None:
    assert TAIL_CHARS == 4 * CONCLUSION_CHARS


def test_excerpts_read_as_the_whole_text() -> None:
    """Random responses built from label lines, decoys, long lines and every line break Python
    splits on: each answer format and the conclusion read the same from the excerpt."""
    excerpter = Excerpter.for_formats(FORMATS)
    rng = random.Random(27)
    kept_chars = total = 0
    for _ in range(4000):
        parts = []
        for _ in range(rng.randint(1, 40)):
            piece = rng.choice(PIECES)
            if rng.random() < 0.3:
                piece = piece[: rng.randint(0, len(piece))]
            parts += [piece, rng.choice(SEPARATORS)]
        if rng.random() < 0.5:
            parts.pop()
        text = "".join(parts)
        kept = excerpter(text)
        assert len(kept) <= len(text)
        _assert_faithful(text, kept)
        kept_chars, total = kept_chars + len(kept), total + len(text)
    assert kept_chars < total / 2


def test_a_long_reasoning_is_not_kept() -> None:
    reasoning = "\n\n".join(f"Step {n}: the block rests on block {n + 1}." * 20 for n in range(400))
    text = f"ANSWER: draft\n{reasoning}\nSo the stack tips over.\n**ANSWER:** unstable\n"
    excerpter = Excerpter.for_formats(FORMATS)
    kept = excerpter(text)
    assert len(text) > 300_000 and len(kept) < 200
    assert kept == "ANSWER: draft\nSo the stack tips over.\n**ANSWER:** unstable\n"
    _assert_faithful(text, kept)
    short = "thinking\nANSWER: x"
    assert excerpter(short) is short and len(short) <= KEEP_WHOLE
    reasoned = (
        "Let me look at the stack carefully.\nStep 1: block C rests on block B, offset to the left."
        "\nStep 2: the joint is past the edge.\nSo it tips.\nANSWER: unstable"
    )
    assert len(reasoned) > KEEP_WHOLE and excerpter(reasoned) == "So it tips.\nANSWER: unstable"
    _assert_faithful(reasoned, excerpter(reasoned))


def test_a_label_that_is_not_a_word_keeps_whole_texts() -> None:
    assert Excerpter.for_formats([("-> :", "last")]) is None
    assert Excerpter.for_formats([]).formats == (("ANSWER:", "last"),)


def _long_responses(tmp: Path) -> Path:
    """The inspect log's responses as keyaudit's own file, each after long reasoning with decoy
    label lines, and ending in several ways."""
    whole = load_benchmark(DATASET, responses=(ResponseSource(EVAL),))
    rng = random.Random(5)
    lines = []
    for n, r in enumerate(whole.responses):
        reasoning = "\n".join(
            rng.choice(("Final answer: maybe", "ANSWER: not yet", "x" * 300, "", "hmm"))
            for _ in range(200)
        )
        endings = (r.text, r.text + "\n\n", r.text.replace("\n", "\r\n"), "y" * 2000 + r.text)
        lines.append(
            json.dumps(
                {
                    "id": r.id,
                    "model": "Synth Long",
                    "response": reasoning + "\n" + endings[n % 4],
                    "correct": r.correct,
                }
            )
        )
    path = tmp / "long.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_loading_for_answer_formats_keeps_excerpts(tmp_path: Path) -> None:
    source = (ResponseSource(_long_responses(tmp_path)),)
    whole = load_benchmark(DATASET, responses=source)
    kept = load_benchmark(DATASET, responses=source, answer_formats=FORMATS)
    assert [(r.id, r.model, r.epoch, r.correct) for r in kept.responses] == [
        (r.id, r.model, r.epoch, r.correct) for r in whole.responses
    ]
    assert sum(map(len, (r.text for r in whole.responses))) > 20 * sum(
        len(r.text) for r in kept.responses
    )
    assert all(len(r.text) <= TAIL_CHARS + 400 for r in kept.responses)
    for a, b in zip(whole.responses, kept.responses, strict=True):
        _assert_faithful(a.text, b.text)


def test_review_and_check_read_the_same_from_excerpts(tmp_path: Path, run_cli) -> None:
    """The review queue (answer lines as shown, verdicts, certainty) from excerpts equals the one
    from whole texts; ``check`` (which loads excerpts) gives the worked examples' answer lines."""
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.review import review_queue
    from keyaudit.engine.rule_language.rules.rule import load_rule

    rules = [load_rule(resolve_rule_path(name)) for name in ("physical_stability", "gear_train")]
    formats = [(r.answer_format.label, r.answer_format.which) for r in rules]
    source = (ResponseSource(_long_responses(tmp_path)),)
    whole = load_benchmark(DATASET, responses=source)
    kept = load_benchmark(DATASET, responses=source, answer_formats=formats)
    queue = review_queue(kept, rules, 10, 0, jobs=1)
    assert queue and queue == review_queue(whole, rules, 10, 0, jobs=1)
    out = tmp_path / "a.json"
    result = run_cli(
        "check", "physical_stability", "--bench", str(DATASET), "--responses",
        str(source[0].path), "--json", str(out), "--resamples", "200", "--jobs", "1",
    )  # fmt: skip
    assert result.code == 0, result.err
    worked = json.loads(out.read_text(encoding="utf-8"))["worked_examples"]
    by_id = {r.id: r.text for r in whole.responses}
    assert worked
    for example in worked:
        assert example["answer_line"] == _seen(by_id[example["id"]], "ANSWER:", "last")[1]


@pytest.mark.parametrize("verdicts", ["stored", "computed"])
@pytest.mark.parametrize("log", ["jsonl", "inspect", "lm-eval"])
def test_texts_outside_the_rules_cells_are_not_kept(tmp_path: Path, log: str, verdicts: str) -> None:
    """Loaded for some cells, a response in another cell keeps no text; its strict verdict (as
    stored, or computed from its whole text) and everything else are those of a whole load."""
    if log == "jsonl":
        path = _long_responses(tmp_path)
        if verdicts == "computed":
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            for row in rows:
                del row["correct"]
            path.write_text("\n".join(map(json.dumps, rows)) + "\n", encoding="utf-8")
        source = (ResponseSource(path),)
    elif verdicts == "computed":
        pytest.skip("logs carry their scorer's verdicts")
    else:
        found = EVAL if log == "inspect" else DATA / "logs" / "lm-eval" / "synth-dune-mini"
        source = (ResponseSource(found),)
    whole = load_benchmark(DATASET, responses=source)
    cells = {("physical_stability", 5), ("gear_train", 4)}
    kept = load_benchmark(DATASET, responses=source, answer_formats=FORMATS, text_cells=cells)
    assert [(r.id, r.model, r.epoch, r.correct, r.correct_computed) for r in kept.responses] == [
        (r.id, r.model, r.epoch, r.correct, r.correct_computed) for r in whole.responses
    ]
    inside = 0
    for a, b in zip(whole.responses, kept.responses, strict=True):
        if (a.ref.domain, a.ref.level) in cells:
            inside += 1
            _assert_faithful(a.text, b.text)
        else:
            assert b.text == ""
    assert 0 < inside < len(whole.responses)


@pytest.mark.parametrize("label", ["ANSWER:", "Final answer"])
def test_strict_verdicts_computed_from_excerpts(tmp_path: Path, label: str) -> None:
    """A file without verdicts: the strict scorer reads the excerpt as it reads the text."""
    path = _long_responses(tmp_path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        del row["correct"]
    path.write_text("\n".join(map(json.dumps, rows)) + "\n", encoding="utf-8")
    source = (ResponseSource(path),)
    whole = load_benchmark(DATASET, responses=source)
    kept = load_benchmark(DATASET, responses=source, answer_formats=[(label, "first")])
    assert [r.correct for r in kept.responses] == [r.correct for r in whole.responses]
    assert all(r.correct_computed for r in kept.responses)


LINES = [
    b'{"a": 1, "a": 2}',
    b'{"big": 123456789012345678901234567890, "neg": -0.0, "tiny": 1.5e-400}',
    b'{"inf": 1e400, "nan": NaN}',
    b'{"s": "\\ud800"}',
    b'{"s": "\\ud83d\\ude00 ok", "e": "\\u00e9\\n\\t"}',
    b'\xef\xbb\xbf{"bom": 1}',
    b'{"a": 1} trailing',
    b'[1, 2]',
    b'{"deep": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"long": 1' + b"0" * 5000 + b"}",
    b'{"bad": "\xff"}',
    b'  {"spaced": true}  \r',
    b'{"ctl": "\x01"}',
]


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_the_fast_json_reader_reads_as_json_does(line: bytes, monkeypatch) -> None:
    """msgspec (when installed) takes what json takes, builds the same values, and every line it
    refuses gets json's message or json's value."""
    import io

    from keyaudit.engine.errors import DataError
    from keyaudit.engine.load import jsonl

    def read(fast) -> object:
        monkeypatch.setattr(jsonl, "_FAST_DECODE", fast)
        try:
            return list(jsonl.parse_lines(io.BytesIO(line + b"\n"), "f.jsonl"))
        except DataError as error:
            return str(error)

    fast = jsonl._FAST_DECODE
    if fast is None:
        pytest.skip("msgspec not installed")
    with_fast, without = read(fast), read(None)
    assert repr(with_fast) == repr(without)  # repr: NaN != NaN, but both print as nan


def test_epochs_past_int32_widen_the_column() -> None:
    """Integer columns start at one byte and widen when a value needs it; none is ever cut."""
    from keyaudit.engine.load.response_table import TableBuilder

    keys = load_benchmark(DATASET, with_responses=False).keys
    first, second = list(keys)[:2]
    builder = TableBuilder(keys)
    builder.add("m", first, 3, True, False, "a")
    small = builder.table()
    assert small.epoch.dtype == small.model.dtype == np.int8
    assert small.item.dtype == (np.int8 if len(keys) <= 128 else np.int16)
    builder = TableBuilder(keys)
    builder.add("m", first, 3, True, False, "a")
    builder.add("m", second, 2**40 + 1, False, True, "b")
    for n in range(300):  # 300 models: the model column widens to int16
        builder.add(f"model {n}", first, 1, False, False, "c")
    table = builder.table()
    assert table.epoch.tolist()[:2] == [3, 2**40 + 1] and table.epoch.dtype == np.int64
    assert table.model.dtype == np.int16 and table.model.tolist()[-1] == 300
    assert table.models[300] == "model 299"
    assert [(r.id, r.epoch, r.correct, r.correct_computed) for r in table][:2] == [
        (first, 3, True, False), (second, 2**40 + 1, False, True)
    ]
