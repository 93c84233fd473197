"""Issue 11, points 11, 12 and 13 (the command line): options and output paths are checked before
any work, outputs never land in the benchmark, user text is printed literally, usage errors are
one line, a closed pipe ends quietly, and the remaining bounds (seed width, rule load time, the
score memo) hold.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import ENTRY, assert_one_line_error, run_keyaudit

from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring import scorer as scoring
from keyaudit.engine.rule_language.scoring.answer_limits import MAX_ANSWER_CHARS
from keyaudit.engine.rule_language.scoring.scorer import Scorer

PS = "physical_stability"


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture(scope="module")
def bench_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-cli") / "grip34"
    shutil.copytree(example_benchmark_dir(), root)
    return root


# ---- point 11: options


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("--resamples", "1e9"), "--resamples"),
        (("--resamples", "1000000000"), "1000000"),
        (("--resamples", "0"), "--resamples"),
        (("--seed", str(2**64)), "--seed"),
        (("--seed", "-1"), "--seed"),
        (("--confidence", "2"), "--confidence"),
        (("--confidence", "nan"), "--confidence"),
        (("--levels", "4," + "9" * 5000), "--levels"),
        (("--bogus",), "No such option"),
    ],
)
def test_bad_options_are_one_line_errors_before_any_work(run_cli, args, fragment: str) -> None:
    started = time.monotonic()
    result = run_cli("check", PS, *args)
    assert_one_line_error(result.err, result.code, fragment)
    assert result.out == ""
    assert time.monotonic() - started < 10.0  # refused up front, not after the audit


@pytest.mark.parametrize(
    "args",
    [
        ("chek",),
        ("check",),
        ("score", PS),
        ("keys", "--level", "x"),
        ("bench", "bootstrap", "--images", "0"),
    ],
)
def test_usage_errors_are_one_line(run_cli, args) -> None:
    result = run_cli(*args)
    line = assert_one_line_error(result.err, result.code)
    assert "--help" in line and "Usage:" not in result.err


def test_no_arguments_still_shows_the_help(run_cli) -> None:
    result = run_cli()
    assert "Usage:" in result.err + result.out


def test_usage_error_through_the_console_entry_point() -> None:
    run = run_keyaudit("check", PS, "--resamples", "1e9")
    assert_one_line_error(run.err, run.code, "--resamples")


# ---- points 11 and 12: output paths


@pytest.mark.parametrize("option", ["--json", "--markdown", "--plot"])
@pytest.mark.parametrize("case", ["missing-folder", "directory", "in-benchmark", "link-into"])
def test_output_paths_are_checked_before_the_audit(
    tmp_path: Path, run_cli, bench_copy: Path, option: str, case: str
) -> None:
    suffix = {"--json": ".json", "--markdown": ".md", "--plot": ".png"}[option]
    if case == "missing-folder":
        target, fragment = tmp_path / "no" / "such" / f"out{suffix}", "does not exist"
    elif case == "directory":
        target = tmp_path / f"dir{suffix}"
        target.mkdir()
        fragment = "is a directory"
    elif case == "in-benchmark":
        target, fragment = bench_copy / "keys" / f"fbd{suffix}", "which keyaudit only reads"
    else:
        target = tmp_path / f"link{suffix}"
        target.symlink_to(bench_copy / "keys" / "fbd.jsonl.gz")
        fragment = "which keyaudit only reads"
    before = snapshot(bench_copy)
    started = time.monotonic()
    result = run_cli("check", PS, "--bench", str(bench_copy), option, str(target))
    assert_one_line_error(result.err, result.code, option, fragment)
    assert time.monotonic() - started < 10.0 and result.out == ""
    assert snapshot(bench_copy) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_output_folder(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    result = run_cli("check", PS, "--json", str(folder / "x.json"))
    assert_one_line_error(result.err, result.code, "not writable")


def test_outputs_never_overwrite_a_rule_or_a_response_source(tmp_path: Path, run_cli) -> None:
    rule = tmp_path / "rule.toml"
    rule.write_text(resolve_rule_path(PS).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "physical_stability_key.lark").symlink_to(
        resolve_rule_path(PS).parent.parent / "grammars" / "physical_stability_key.lark"
    )
    result = run_cli("check", str(rule), "--markdown", str(rule))
    assert_one_line_error(result.err, result.code, "--markdown", "only reads")
    logs = tmp_path / "logs"
    logs.mkdir()
    result = run_cli("flag", "--responses", str(logs), "--json", str(logs / "flag.json"))
    assert_one_line_error(result.err, result.code, "--json", "only reads")


def test_new_rule_out_inside_the_benchmark_is_refused(
    tmp_path: Path, run_cli, bench_copy: Path
) -> None:
    before = snapshot(bench_copy)
    for out in (bench_copy, bench_copy / "rules"):
        result = run_cli(
            "new-rule", "fbd", "--level", "5", "--bench", str(bench_copy), "--out", str(out)
        )
        assert_one_line_error(result.err, result.code, "--out", "only reads")
    assert snapshot(bench_copy) == before
    result = run_cli("new-rule", "fbd", "--level", "5", "--out", str(tmp_path / "a" / "b"))
    assert result.code == 0, result.err  # a new folder elsewhere is fine


def test_json_and_markdown_cannot_name_one_file(tmp_path: Path, run_cli) -> None:
    target = str(tmp_path / "same")
    result = run_cli("check", PS, "--json", target, "--markdown", target)
    assert_one_line_error(result.err, result.code, "different files")


# ---- point 11: user text printed literally


def test_markup_and_emoji_in_names_are_printed_literally(tmp_path: Path, run_cli) -> None:
    root = tmp_path / "b:x:[red]"
    shutil.copytree(example_benchmark_dir(), root)
    source = root / "responses" / "synth-atlas-xl.jsonl.gz"
    hostile = "Atlas [/] [bold]x[/bold] :x: \x1b[2J"
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    source.unlink()
    with (root / "responses" / "atlas.jsonl").open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps({**row, "model": hostile}) + "\n")
    result = run_cli("check", PS, "--bench", str(root), "--resamples", "200")
    assert result.code == 0, result.err
    assert "Atlas [/] [bold]x[/bold] :x: \\x1b[2J" in result.out
    assert "❌" not in result.out and "\x1b" not in result.out
    result = run_cli("test-rule", PS, "--bench", str(root), "--per-reason", "1")
    assert result.code == 0, result.err
    assert "Atlas [/] [bold]x[/bold] :x:" in result.out


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    row = {
        "key": "stable; after removing block B, every cumulative center of mass remains within its supporting base",
        "response": "ANSWER: stable",
    }
    cases.write_text((json.dumps(row) + "\n") * 20_000, encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "score", PS, "--cases", str(cases)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    first = child.stdout.readline()
    child.stdout.close()  # `| head -1`
    err = child.stderr.read()
    code = child.wait(timeout=60)
    assert json.loads(first)["accept"] is True
    assert code == 0 and err == b"", (code, err)


# ---- point 13


def test_the_largest_seed_is_used_as_given(tmp_path: Path, run_cli) -> None:
    out = tmp_path / "a.json"
    seed = str(2**64 - 1)
    result = run_cli("check", PS, "--seed", seed, "--resamples", "50", "--json", str(out))
    assert result.code == 0, result.err
    assert json.loads(out.read_text(encoding="utf-8"))["settings"]["seed"] == 2**64 - 1


def test_rule_load_time_is_linear_in_lets(tmp_path: Path) -> None:
    base = resolve_rule_path(PS).read_text(encoding="utf-8")
    shutil.copy(
        resolve_rule_path(PS).parent.parent / "grammars" / "physical_stability_key.lark", tmp_path
    )
    shutil.copy(
        resolve_rule_path(PS).parent.parent / "grammars" / "physical_stability_answer.lark",
        tmp_path,
    )
    times = {}
    for n in (500, 4000):
        lets = "".join(f'[[let]]\nname = "v{i}"\nexpr = "said"\n' for i in range(n))
        path = tmp_path / f"r{n}.toml"
        path.write_text(base.replace("[[require]]", lets + "[[require]]", 1), encoding="utf-8")
        started = time.process_time()
        load_rule(path)
        times[n] = time.process_time() - started
    assert times[4000] < 5.0  # was 7 s: quadratic
    assert times[4000] < 8 * times[500] + 1.0, times  # 8x the lets: about 8x the time


def test_the_score_memo_holds_a_bounded_amount(monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = Scorer(load_rule(resolve_rule_path(PS)))
    key = scorer.rule.examples[0].key
    for i in range(300):
        scorer.score(key, f"ANSWER: stable {i} " + "x" * 1_000_000)  # 1 MB answer lines
    held = sum(len(answer) for _, answer in scorer._memo.entries)
    assert all(len(answer) <= MAX_ANSWER_CHARS for _, answer in scorer._memo.entries)
    assert held <= scoring._MEMO_CHARS
    assert sum(len(t) for t in scorer._trees.entries) <= scoring._TREE_CHARS


def test_review_out_is_checked_before_any_work(tmp_path: Path, run_cli, bench_copy: Path) -> None:
    before = snapshot(bench_copy)
    for out, fragment in (
        (bench_copy / "review.jsonl", "only reads"),
        (tmp_path / "missing" / "review.jsonl", "does not exist"),
    ):
        result = run_cli("review", PS, "--bench", str(bench_copy), "--out", str(out))
        assert_one_line_error(result.err, result.code, "--out", fragment)
    assert snapshot(bench_copy) == before


def test_an_emoji_code_in_a_path_is_printed_literally(tmp_path: Path, run_cli) -> None:
    missing = tmp_path / "data :x: [bold]here[/bold]"
    result = run_cli("flag", "--bench", str(missing))
    line = assert_one_line_error(result.err, result.code, ":x: [bold]here[/bold]")
    assert "❌" not in line
