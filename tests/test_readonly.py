"""keyaudit never writes inside the benchmark directory.

The example benchmark is copied to a temporary folder; every file is hashed (and the directory
listing, with sizes and modes, recorded) before and after running every command that reads a
benchmark, with all outputs written elsewhere; nothing may change, and nothing may be added.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from keyaudit.cli.app import app
from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path

RUNNER = CliRunner()
RULE = str(resolve_rule_path("physical_stability"))


def _snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    state = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        info = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        state[rel] = (digest, info.st_size if path.is_file() else 0, info.st_mode)
    return state


@pytest.fixture(scope="module")
def bench_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readonly") / "grip34"
    shutil.copytree(example_benchmark_dir(), root)
    return root


def _commands() -> set[str]:
    return set(get_command(app).commands)


def test_no_command_writes_into_the_benchmark(bench_copy: Path, tmp_path: Path) -> None:
    before = _snapshot(bench_copy)
    assert len(before) > 20
    out = tmp_path / "out"
    out.mkdir()
    cases = out / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "id": "x",
                "key": "stable; after removing block E, every cumulative center of mass remains within its supporting base",
                "response": "ANSWER: stable",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    bench = str(bench_copy)
    runs = [
        [
            "check",
            RULE,
            "--bench",
            bench,
            "--resamples",
            "50",
            "--json",
            str(out / "a.json"),
            "--markdown",
            str(out / "a.md"),
        ],
        ["score", RULE, "--cases", str(cases)],
    ]
    commands = _commands()
    if "keys" in commands:
        runs.append(["keys", "--bench", bench, "--json", str(out / "keys.json")])
    if "flag" in commands:
        runs.append(["flag", "--bench", bench, "--json", str(out / "flag.json")])
    if "test-rule" in commands:
        runs.append(["test-rule", RULE, "--bench", bench])
    for args in runs:
        result = RUNNER.invoke(app, args, env={"COLUMNS": "200"})
        assert result.exit_code == 0, (args, result.output)
    assert _snapshot(bench_copy) == before
    assert (out / "a.json").exists() and (out / "a.md").exists()
