"""What users' files hold (issue 24, item 2): a JSON Lines key's question shown as a CSV key's,
``--responses`` selections (a glob, an lm-eval task, a format), one inspect run written twice read
once, and two lm-eval tasks with the same ids refused with the way out named."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from keyaudit.engine.errors import DataError
from keyaudit.engine.load.benchmark import load_benchmark

DATA = Path(__file__).parent / "data"
DATASET = DATA / "Dataset"
LOGS = DATA / "logs"
EVAL = LOGS / "inspect" / "synth-atlas-xl.eval"
LM_DIR = LOGS / "lm-eval" / "synth-dune-mini"
PS = "physical_stability"
FAST = ("--resamples", "200", "--jobs", "1")


def _jsonl_bench(tmp: Path, field: str) -> Path:
    """The CSV tree's keys as ``keys/keys.jsonl``, the question under ``field``."""
    bench = tmp / f"jsonl-{field}"
    (bench / "keys").mkdir(parents=True)
    lines = []
    for path in sorted(DATASET.glob("*/answer_key.csv")):
        with path.open(encoding="utf-8", newline="") as stream:
            for row in csv.DictReader(stream):
                record = {"id": row["question_id"], "answer": row["groundtruth"]}
                record[field] = row["prompt"]
                lines.append(json.dumps(record))
    (bench / "keys" / "keys.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return bench


@pytest.mark.parametrize("field", ["question", "prompt"])
def test_jsonl_question_is_read_as_the_csv_prompt(tmp_path: Path, field: str) -> None:
    from_csv = load_benchmark(DATASET, with_responses=False)
    bench = _jsonl_bench(tmp_path, field)
    for _ in range(2):  # parsed, then from the key cache: the questions survive both
        from_jsonl = load_benchmark(bench, with_responses=False)
        assert from_jsonl.keys == from_csv.keys
        assert from_jsonl.keys[f"{PS}_0001_q5"].question.startswith("If topmost block C")


def test_jsonl_question_of_another_type_is_an_error(tmp_path: Path) -> None:
    bench = tmp_path / "b"
    (bench / "keys").mkdir(parents=True)
    (bench / "keys" / "k.jsonl").write_text(
        '{"id": "a_1_q1", "answer": "x", "question": "Q?"}\n'
        '{"id": "a_1_q2", "answer": "y", "question": ["secret"]}\n',
        encoding="utf-8",
    )
    with pytest.raises(DataError) as caught:
        load_benchmark(bench, with_responses=False)
    message = str(caught.value)
    assert "k.jsonl:2:" in message and "'question'" in message and "secret" not in message
    (bench / "keys" / "k.jsonl").write_text(
        '{"id": "a_1_q1", "answer": "x", "prompt": ""}\n{"id": "a_1_q2", "answer": "y"}\n',
        encoding="utf-8",
    )
    loaded = load_benchmark(bench, with_responses=False)
    assert [k.question for k in loaded.keys.values()] == [None, None]


def test_jsonl_question_reaches_the_reports_as_the_csv_one(tmp_path: Path, run_cli) -> None:
    """The worked examples (terminal, JSON, Markdown) and ``keys`` show a JSONL key's question
    exactly as they show the CSV's prompt."""
    outputs = {}
    for name, bench in (("csv", DATASET), ("jsonl", _jsonl_bench(tmp_path, "question"))):
        json_out, md_out = tmp_path / f"{name}.json", tmp_path / f"{name}.md"
        result = run_cli(
            "check", PS, "--bench", str(bench), "--responses", str(EVAL),
            "--json", str(json_out), "--markdown", str(md_out), *FAST,
        )  # fmt: skip
        assert result.code == 0, result.err
        keys = run_cli("keys", "--bench", str(bench), "--domain", PS, "--level", "5", "--json", "-")
        assert keys.code == 0, keys.err
        data = json.loads(json_out.read_text(encoding="utf-8"))
        markdown = md_out.read_text(encoding="utf-8")
        outputs[name] = (
            data["worked_examples"],
            [line for line in markdown.splitlines() if "Question:" in line],
            [line for line in result.out.splitlines() if "Question:" in line],
            json.loads(keys.out)[0]["examples"],
        )
    worked, md_lines, terminal, examples = outputs["jsonl"]
    assert worked and all(w["question"].startswith("If topmost block") for w in worked)
    assert md_lines and terminal and all(e["question"] for e in examples)
    assert outputs["jsonl"] == outputs["csv"]
