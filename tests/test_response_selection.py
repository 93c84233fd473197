"""What users' files hold (issue 24, item 2): a JSON Lines key's question shown as a CSV key's,
``--responses`` selections (a glob, an lm-eval task, a format), one inspect run written twice read
once, and two lm-eval tasks with the same ids refused with the way out named."""

from __future__ import annotations

import csv
import json
import shutil
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
            [line for line in result.out.splitlines() if "│ question: " in line or "Question (every" in line],
            json.loads(keys.out)[0]["examples"],
        )
    worked, md_lines, terminal, examples = outputs["jsonl"]
    assert worked and all(w["question"].startswith("If topmost block") for w in worked)
    assert md_lines and terminal and all(e["question"] for e in examples)
    assert outputs["jsonl"] == outputs["csv"]


# ---- --responses selections -----------------------------------------------------------------


def _flag(run_cli, *responses: str):
    args = ["flag", "--bench", str(DATASET), "--json", "-"]
    for value in responses:
        args += ["--responses", value]
    return run_cli(*args)


def _check_sources(run_cli, tmp: Path, *responses: str):
    out = tmp / "sources.json"
    args = ["check", PS, "--bench", str(DATASET), "--json", str(out), *FAST]
    for value in responses:
        args += ["--responses", value]
    result = run_cli(*args)
    data = json.loads(out.read_text(encoding="utf-8")) if result.code == 0 else None
    return result, data


def _one_line_error(result, *parts: str) -> None:
    assert result.code == 2 and not result.out
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    for part in parts:
        assert part in lines[0], lines[0]


def test_a_glob_selects_files(tmp_path: Path, run_cli) -> None:
    # the folder also holds a failed, an errored and a mismatched run: the glob leaves them out
    result, data = _check_sources(run_cli, tmp_path, str(LOGS / "inspect" / "synth-*"))
    assert result.code == 0, result.err
    assert [s["path"] for s in data["sources"]] == [
        str(LOGS / "inspect" / "synth-atlas-xl.eval"),
        str(LOGS / "inspect" / "synth-birch-7b.json"),
    ]
    result = _flag(run_cli, str(LOGS / "**" / "synth-a*.eval"))
    assert result.code == 0, result.err
    missing = str(tmp_path / "logs" / "*.eval")
    _one_line_error(_flag(run_cli, missing), missing, "matches no response file")


def test_format_selects_files_of_one_format(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(EVAL, folder / EVAL.name)
    shutil.copytree(LM_DIR, folder / LM_DIR.name)
    result, data = _check_sources(run_cli, tmp_path, f"format=inspect:{folder}")
    assert result.code == 0, result.err
    assert [s["format"] for s in data["sources"]] == ["inspect"]
    result, data = _check_sources(run_cli, tmp_path, f"format=lm-eval:{folder}")
    assert result.code == 0, result.err
    assert [s["format"] for s in data["sources"]] == ["lm-eval"]
    _one_line_error(_flag(run_cli, f"format=csv:{folder}"), str(folder), "format 'csv'")
    _one_line_error(_flag(run_cli, f"format=xml:{folder}"), "unknown format 'xml'")
    _one_line_error(_flag(run_cli, f"task=:{folder}"), "names no task")


def _two_tasks(tmp: Path) -> Path:
    """One model's lm-eval output with a second task holding the same documents."""
    folder = tmp / "two-tasks"
    shutil.copytree(LM_DIR, folder)
    (samples,) = folder.glob("samples_*.jsonl")
    (results,) = folder.glob("results_*.json")
    stamp = samples.name.rsplit("_", 1)[1]
    shutil.copy(samples, folder / f"samples_grip34_copy_{stamp}")
    data = json.loads(results.read_text(encoding="utf-8"))
    data["configs"]["grip34_copy"] = data["configs"]["grip34_l45"]
    results.write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_two_lm_eval_tasks_with_the_same_ids(tmp_path: Path, run_cli) -> None:
    folder = _two_tasks(tmp_path)
    _one_line_error(
        _flag(run_cli, str(folder)),
        "duplicate sample",
        "lm-eval tasks 'grip34_copy' and 'grip34_l45' hold the same ids",
        "--responses task=grip34_copy:PATH",
    )
    for task in ("grip34_l45", "grip34_copy"):
        result, data = _check_sources(run_cli, tmp_path, f"task={task}:{folder}")
        assert result.code == 0, result.err
        (source,) = data["sources"]
        assert f"samples_{task}_" in source["path"]
    _one_line_error(_flag(run_cli, f"task=nope:{folder}"), "lm-eval task 'nope'", str(folder))


def _as_json_log(tmp: Path, change: bool = False) -> Path:
    """The .eval archive written as inspect's --log-format json (the same run and samples)."""
    from keyaudit.engine.load.responses.zipmember import open_archive, read_member

    with open_archive(EVAL) as archive:
        log = json.loads(read_member(archive, "header.json", EVAL))
        names = sorted(n for n in archive.namelist() if n.startswith("samples/"))
        log["samples"] = [json.loads(read_member(archive, n, EVAL)) for n in names]
    if change:
        log["samples"][3]["output"]["completion"] += "\nANSWER: stable"
    path = tmp / EVAL.with_suffix(".json").name
    path.write_text(json.dumps(log), encoding="utf-8")
    return path


def test_one_inspect_run_as_eval_and_json_is_read_once(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "both"
    folder.mkdir()
    shutil.copy(EVAL, folder / EVAL.name)
    json_log = _as_json_log(folder)
    result, data = _check_sources(run_cli, tmp_path, str(folder))
    assert result.code == 0, result.err
    (source,) = data["sources"]
    assert source["path"] == str(folder / EVAL.name) and source["samples"] == 64
    assert source["read once, also in"] == str(json_log)
    assert f"read once, also in {json_log}" in result.out
    assert all(m["n"] == 8 for m in data["models"])
    # the same figures as the .eval alone
    alone, single = _check_sources(run_cli, tmp_path, str(EVAL))
    assert alone.code == 0 and single["models"] == data["models"]
    _as_json_log(folder, change=True)
    _one_line_error(
        _flag(run_cli, str(folder)), str(json_log), "the same inspect run", "with other samples"
    )


def test_outputs_never_land_in_selected_sources(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(EVAL, folder / EVAL.name)
    for value in (f"format=inspect:{folder}", str(tmp_path / "log*")):
        result = _flag(run_cli, value)
        assert result.code == 0, result.err
        result = run_cli(
            "flag", "--bench", str(DATASET), "--responses", value, "--json", str(folder / "o.json")
        )
        _one_line_error(result, "--json", "which keyaudit only reads")
    assert sorted(p.name for p in folder.iterdir()) == [EVAL.name]


def test_benchmark_toml_selects_a_task(tmp_path: Path, run_cli) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(DATASET, bench / "Dataset")
    shutil.copytree(_two_tasks(tmp_path), bench / "lm")
    toml = bench / "benchmark.toml"
    toml.write_text('[keys]\npath = "Dataset"\n\n[[responses]]\npath = "lm"\n', encoding="utf-8")
    _one_line_error(run_cli("flag", "--bench", str(bench)), "task=grip34_copy:PATH")
    toml.write_text(
        '[keys]\npath = "Dataset"\n\n[[responses]]\npath = "lm"\ntask = "grip34_l45"\n',
        encoding="utf-8",
    )
    result = run_cli("flag", "--bench", str(bench))
    assert result.code == 0, result.err
