"""--responses through the real console entry point: the error contract, --epochs, the reports.

Bad input is one line naming the file (and member or line), exit code 2, no traceback, nothing on
stdout and nothing written next to the logs. The figures of ``--epochs all`` are recomputed here
from the .eval archive itself (zstandard + zipfile, not keyaudit's reader).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import pytest
import zstandard

DATA = Path(__file__).parent / "data"
DATASET = DATA / "Dataset"
LOGS = DATA / "logs"
EVAL = LOGS / "inspect" / "synth-atlas-xl.eval"
LM_DIR = LOGS / "lm-eval" / "synth-dune-mini"
(SAMPLES,) = LM_DIR.glob("samples_*.jsonl")
PS, GEAR = "physical_stability", "gear_train"
FAST = ("--resamples", "200")


def _listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*"))


def _bad_inputs(tmp: Path) -> list[tuple[list[str], str, str]]:
    """(extra arguments, where the message points, what it says) for each kind of bad input."""
    truncated = tmp / "truncated.eval"
    truncated.write_bytes(EVAL.read_bytes()[:5000])
    not_zip = tmp / "notes.eval"
    not_zip.write_text("these are notes, not a log\n", encoding="utf-8")
    alone = tmp / "alone" / SAMPLES.name
    alone.parent.mkdir()
    alone.write_bytes(SAMPLES.read_bytes())
    broken = tmp / "broken" / SAMPLES.name
    broken.parent.mkdir()
    lines = SAMPLES.read_text(encoding="utf-8").splitlines()
    broken.write_text("\n".join([*lines[:3], lines[3][:50], *lines[4:]]) + "\n", encoding="utf-8")
    for results in LM_DIR.glob("results_*.json"):
        (broken.parent / results.name).write_bytes(results.read_bytes())
    failed = LOGS / "inspect" / "failed-synth-cedar-pro.eval"
    errored = LOGS / "inspect" / "error-synth-fjord-flash.eval"
    mismatch = LOGS / "inspect" / "mismatch-synth-ember-30b.eval"
    return [
        (["--responses", str(failed)], f"{failed}:", "no header.json"),
        (["--responses", str(truncated)], f"{truncated}:", "not a ZIP archive"),
        (["--responses", str(not_zip)], f"{not_zip}:", "not a ZIP archive"),
        (["--responses", str(alone)], f"{alone}:", "no results_"),
        (["--responses", str(broken)], f"{broken}:4:", "malformed JSON"),
        (
            ["--responses", str(EVAL), "--scorer", "exact"],
            f"{EVAL}:header.json:",
            "unknown scorer 'exact' (scorers: answer_line, includes)",
        ),
        (
            ["--responses", str(SAMPLES), "--filter", "strict-match"],
            f"{SAMPLES}:",
            "unknown filter 'strict-match'",
        ),
        (
            ["--responses", str(mismatch)],
            f"{mismatch}:samples/gear_train_0001_q5_epoch_1.json:",
            "the log's target differs from the benchmark's key",
        ),
        (
            ["--responses", str(errored)],
            f"{errored}:header.json:",
            "run status is 'error', not 'success'",
        ),
        (["--responses", str(LOGS / "inspect")], f"{errored}:", "run status is 'error'"),
        (
            ["--responses", str(EVAL), "--responses", str(EVAL)],
            f"{EVAL}:samples/gear_train_0001_q4_epoch_1.json:",
            "duplicate sample: model 'mockllm/synth-atlas-xl', id 'gear_train_0001_q4', epoch 1",
        ),
        (["--responses", str(tmp / "nowhere")], f"{tmp / 'nowhere'}:", "no such file or folder"),
        (["--responses", str(EVAL), "--epochs", "some"], "--epochs", "must be one of first, all"),
    ]


@pytest.mark.parametrize("command", ["check", "keys", "flag"])
def test_bad_input_is_one_line_exit_2(command: str, tmp_path: Path, run_cli) -> None:
    before = _listing(LOGS)
    rule = [PS] if command == "check" else []
    for extra, where, what in _bad_inputs(tmp_path):
        result = run_cli(
            command, *rule, "--bench", str(DATASET), *extra, *FAST[: 2 * (command == "check")]
        )
        assert result.code == 2, (extra, result.out, result.err)
        assert result.err.startswith("keyaudit: error: "), result.err
        assert result.err.count("\n") == 1, result.err
        assert where in result.err and what in result.err, (where, what, result.err)
        assert "Traceback" not in result.err and result.out == ""
    assert _listing(LOGS) == before  # nothing written next to the logs


def test_no_content_of_the_logs_is_echoed(tmp_path: Path, run_cli) -> None:
    mismatch = LOGS / "inspect" / "mismatch-synth-ember-30b.eval"
    result = run_cli("keys", "--bench", str(DATASET), "--responses", str(mismatch))
    assert result.code == 2
    assert "direction unchanged" not in result.err and "stable" not in result.err


def test_tuning_options_need_responses(run_cli) -> None:
    result = run_cli("keys", "--bench", str(DATASET), "--scorer", "includes")
    assert result.code == 2 and "apply to --responses" in result.err


# ---- --epochs all, recomputed from the archive --------------------------------------------------


def _eval_members(path: Path) -> dict[str, dict]:
    """Every samples/*.json member, decompressed with zstandard directly."""
    out = {}
    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        for info in archive.infolist():
            if not info.filename.startswith("samples/"):
                continue
            raw.seek(info.header_offset)
            name_len, extra_len = struct.unpack("<HH", raw.read(30)[26:30])
            raw.seek(info.header_offset + 30 + name_len + extra_len)
            data = zstandard.ZstdDecompressor().decompress(
                raw.read(info.compress_size), max_output_size=info.file_size
            )
            out[info.filename] = json.loads(data)
    return out


def test_epochs_all_averages_per_item(tmp_path: Path, run_cli) -> None:
    out = tmp_path / "audit.json"
    result = run_cli(
        "check",
        PS,
        GEAR,
        "--bench",
        str(DATASET),
        "--responses",
        str(EVAL),
        "--epochs",
        "all",
        "--json",
        str(out),
        "--markdown",
        str(tmp_path / "audit.md"),
        *FAST,
    )
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["settings"]["epochs"] == "all" and data["max_samples"] == 2
    per_item: dict[tuple[str, int], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for sample in _eval_members(EVAL).values():
        item = sample["id"]
        domain, level = item.rsplit("_", 2)[0], int(item[-1])
        per_item[(domain, level)][item].append(sample["scores"]["answer_line"]["value"] == "C")
    for m in data["models"]:
        items = per_item[(m["domain"], m["level"])]
        expected = sum(sum(v) / len(v) for v in items.values()) / len(items)
        assert m["n"] == len(items) == 8 and m["n_samples"] == 16
        assert m["strict"] == pytest.approx(expected)
        assert all("#" in flip for flip in m["flips_up"] + m["flips_down"])
    raw_before = (
        sum(
            sum(sum(v) / len(v) for v in items.values()) / len(items)
            for (domain, level), items in per_item.items()
            if level == 5
        )
        / 2
    )
    (aggregate,) = data["aggregates"]
    assert aggregate["raw_before"] == pytest.approx(raw_before)
    markdown = (tmp_path / "audit.md").read_text(encoding="utf-8")
    assert "averaged per item (`--epochs all`; up to 2 samples" in markdown
    assert "every epoch" not in result.err
    assert "--epochs all" in result.out


def test_epochs_first_is_the_default_and_said(tmp_path: Path, run_cli) -> None:
    out = tmp_path / "audit.json"
    result = run_cli(
        "check",
        PS,
        "--bench",
        str(DATASET),
        "--responses",
        str(EVAL),
        "--json",
        str(out),
        "--markdown",
        str(tmp_path / "audit.md"),
        *FAST,
    )
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["settings"]["epochs"] == "first"
    assert all(m["n"] == m["n_samples"] == 8 for m in data["models"])
    (source,) = data["sources"]
    assert source == {
        "path": str(EVAL),
        "format": "inspect",
        "model": "mockllm/synth-atlas-xl",
        "samples": 64,
        "scorer": "answer_line",
        "id": "sample id",
    }
    markdown = (tmp_path / "audit.md").read_text(encoding="utf-8")
    assert "the first epoch (`--epochs first`)" in markdown
    assert "Responses were read from the evaluation logs as written" in markdown
    assert "scorer answer_line" in markdown
    # the worked examples show the question the key answers (the CSV's prompt)
    assert "- Question: `If topmost block" in markdown
    worked = data["worked_examples"]
    assert worked and all(w["question"].startswith("If topmost block") for w in worked)
    assert "--epochs first" in result.out and "question: If topmost block" in result.flat


def test_lm_eval_folder_renamed_model_and_other_filter(tmp_path: Path, run_cli) -> None:
    out = tmp_path / "audit.json"
    result = run_cli(
        "check",
        GEAR,
        "--bench",
        str(DATASET),
        "--responses",
        str(LOGS / "lm-eval"),
        "--filter",
        "raw",
        "--model-name",
        "Synth Dune Mini",
        "--json",
        str(out),
        *FAST,
    )
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["models_found"] == ["Synth Dune Mini"]
    (source,) = data["sources"]
    assert (source["filter"], source["log model"]) == ("raw", "synth-dune-mini")
    (model,) = data["models"]
    assert model["strict"] == 0.0  # the raw filter compares the whole generation with the key


def test_flag_and_keys_state_the_sources(run_cli) -> None:
    result = run_cli("flag", "--bench", str(DATASET), "--responses", str(EVAL), "--epochs", "all")
    assert result.code == 0, result.err
    assert "--epochs all" in result.out and "scorer answer_line" in result.out
    result = run_cli("flag", "--bench", str(DATASET), "--responses", str(EVAL), "--json", "-")
    rows = json.loads(result.out)
    assert rows and all(r["epochs"] == "first" for r in rows)
    result = run_cli("keys", "--bench", str(DATASET), "--responses", str(EVAL))
    assert result.code == 0 and "Evaluated" in result.out  # the header, folded at 100 columns


def test_keys_shows_questions_from_the_csv_tree(run_cli) -> None:
    result = run_cli("keys", "--bench", str(DATASET), "--domain", PS, "--level", "5")
    assert result.code == 0, result.err
    assert (
        "question: If topmost block C were removed, would the remaining stack be stable or "
        "unstable? Answer accordingly and briefly state the center-of-mass reason."
    ) in result.out
    result = run_cli("keys", "--bench", str(DATASET), "--domain", PS, "--level", "5", "--json", "-")
    (cell,) = json.loads(result.out)
    assert all(e["question"] for e in cell["examples"])


def test_benchmark_toml_names_sources(tmp_path: Path, run_cli) -> None:
    bench = tmp_path / "bench"
    bench.mkdir()
    # paths in benchmark.toml lie in the benchmark folder (issue 26, item 6)
    shutil.copytree(DATASET, bench / "data" / "Dataset")
    shutil.copytree(LOGS / "lm-eval", bench / "logs" / "lm-eval")
    shutil.copy(EVAL, bench / "logs" / EVAL.name)
    (bench / "benchmark.toml").write_text(
        f"""name = "logs"
[keys]
path = "data/Dataset"
format = "csv"

[[responses]]
path = "logs/{EVAL.name}"
format = "inspect"
scorer = "includes"
model = "Synth Atlas XL"

[[responses]]
path = "logs/lm-eval"
format = "lm-eval"
id_field = "question_id"
""",
        encoding="utf-8",
    )
    out = tmp_path / "audit.json"  # outside the benchmark: keyaudit never writes into it
    result = run_cli("check", PS, "--bench", str(bench), "--json", str(out), *FAST)
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["models_found"] == ["Synth Atlas XL", "synth-dune-mini"]
    assert [s["format"] for s in data["sources"]] == ["inspect", "lm-eval"]
    assert data["sources"][0]["scorer"] == "includes"
    (tmp_path / "benchmark.toml").write_text(
        f'[keys]\npath = "{DATASET}"\n[[responses]]\npath = "x"\nscorer = 1\n', encoding="utf-8"
    )
    result = run_cli("keys", "--bench", str(tmp_path))
    assert result.code == 2 and "benchmark.toml: [[responses]] 'scorer'" in result.err


def test_own_csv_responses(tmp_path: Path) -> None:
    from keyaudit.engine.load.benchmark import ResponseSource, load_benchmark

    path = tmp_path / "m.csv"
    path.write_text(
        "id,model,response,correct\n"
        f'{PS}_0002_q5,M,"x\nANSWER: stable",false\n'
        f"{PS}_0001_q5,M,ANSWER: unstable,\n",
        encoding="utf-8",
    )
    loaded = load_benchmark(DATASET, responses=(ResponseSource(path),))
    by_id = {r.id: r for r in loaded.responses}
    assert by_id[f"{PS}_0002_q5"].correct is False and not by_id[f"{PS}_0002_q5"].correct_computed
    assert by_id[f"{PS}_0001_q5"].correct_computed  # empty cell: computed by the strict scorer


def column_text(lines: list[str], header: str) -> str:
    """The text of one column of a rich table as printed: its pieces on every line, in order,
    joined (a value folded over several lines reads whole)."""
    at = next(n for n, line in enumerate(lines) if header in line and line.startswith("┃"))
    head = lines[at]
    start = head.rindex("┃", 0, head.index(header))
    end = head.index("┃", start + 1)
    rows = []
    for line in lines[at + 1 :]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            rows.append(" ".join(line[start + 1 : end].split()))
    return " ".join(rows)


def test_piped_output_fits_100_columns_and_keeps_table_values_whole() -> None:
    """Through the console script with stdout a pipe and no COLUMNS: every table fits 100
    columns (the old width was 10,000: rows as wide as their longest value), and a long key folds
    in its column, never cut to "…"; COLUMNS, when set, is the width. (Verbatim keys printed as
    lines stay whole: the terminal wraps them.)"""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    script = Path(sys.executable).with_name("keyaudit")
    command = [str(script), "keys", "--bench", str(DATASET), "--domain", PS, "--level", "5"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    long_key = (
        "unstable; after removing block C, the cumulative center of mass at the joint between "
        "block B and block A lies outside its supporting base"
    )
    lines = done.stdout.splitlines()
    table_lines = [line for line in lines if line[:1] in set("┏┃┡│└")]
    assert len(table_lines) > 20 and max(len(line) for line in table_lines) <= 100
    table_rows = [line for line in lines if line.startswith("│")]
    assert not any("…" in line for line in table_rows)
    assert long_key in column_text(lines, "String")
    wide = subprocess.run(
        command, capture_output=True, text=True, env={**env, "COLUMNS": "300"}, check=False, timeout=120
    )
    assert any(len(line) > 100 for line in wide.stdout.splitlines())
    assert any(long_key in line for line in wide.stdout.splitlines() if line.startswith("│"))
