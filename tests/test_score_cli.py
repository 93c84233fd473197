"""``keyaudit score``: one JSON object per input line, in order, through the one scoring path."""

from __future__ import annotations

import json
from pathlib import Path

S = "stable; after removing block E, every cumulative center of mass remains within its supporting base"
U = "unstable; after removing block E, the cumulative center of mass at the joint between block D and block C lies outside its supporting base"


def test_score_cases_file(tmp_path: Path, run_cli) -> None:
    cases = [
        {
            "id": "a",
            "key": U,
            "response": "thinking...\nANSWER: Unstable — block D's COM lies beyond supporting block C.",
        },
        {"id": 2, "key": U, "response": "ANSWER: unstable (C-D joint)"},
        {"key": S, "response": "ANSWER: probably stable"},
        {"id": "d", "key": S, "response": "no answer line"},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    result = run_cli("score", "physical_stability", "--cases", str(path))
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in result.out.splitlines()]
    expected = [
        {"id": "a", "accept": True, "status": "unstable", "joint": ["D", "C"], "reason": ""},
        {
            "id": 2,
            "accept": False,
            "status": "unstable",
            "joint": ["C", "D"],
            "reason": "joint reversed",
        },
        {"id": None, "accept": False, "status": None, "joint": None, "reason": "status hedged"},
        {"id": "d", "accept": False, "status": None, "joint": None, "reason": "answer missing"},
    ]
    assert [{k: v for k, v in r.items() if k != "uncertain"} for r in rows] == expected
    assert list(rows[0]) == ["id", "accept", "status", "joint", "reason", "uncertain"]
    assert all(r["uncertain"] == [] for r in rows)  # plain answers: every verdict certain


def test_score_reads_stdin(run_cli) -> None:
    line = json.dumps({"id": 1, "key": S, "response": "ANSWER: **Stable**."})
    result = run_cli(
        "score",
        "rules/physical_stability.toml"
        if Path("rules/physical_stability.toml").exists()
        else "physical_stability",
        "--cases",
        "-",
        stdin=line + "\n",
    )
    assert json.loads(result.out) == {
        "id": 1,
        "accept": True,
        "status": "stable",
        "joint": None,
        "reason": "",
        "uncertain": [],
    }


def test_score_bad_input_is_one_line_exit_2(tmp_path: Path, run_cli) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        json.dumps({"key": S, "response": "ANSWER: stable"}) + "\n{bad\n", encoding="utf-8"
    )
    result = run_cli("score", "physical_stability", "--cases", str(path))
    assert result.code == 2 and f"{path}:2:" in result.err and "malformed JSON" in result.err
    path.write_text(json.dumps({"key": S}) + "\n", encoding="utf-8")
    result = run_cli("score", "physical_stability", "--cases", str(path))
    assert result.code == 2 and "missing field 'response'" in result.err
    result = run_cli("score", "no_such_rule", "--cases", str(path))
    assert result.code == 2 and "not a bundled rule name" in result.err


def test_score_does_not_import_numba(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys, io; sys.argv=['keyaudit','score','physical_stability','--cases','-'];"
        "sys.stdin=io.StringIO('');"
        "from keyaudit.cli.app import main\n"
        "try:\n main()\nexcept SystemExit: pass\n"
        "print('numba' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "False"


def test_an_internal_error_is_one_line_exit_3(monkeypatch, run_cli, tmp_path: Path) -> None:
    import keyaudit.cli.score as score_module

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(score_module, "read_cases", broken)
    result = run_cli("score", "physical_stability", "--cases", "-", stdin="")
    assert result.code == 3
    assert result.err.count("\n") == 1 and "internal error: ZeroDivisionError" in result.err
    assert "Traceback" not in result.err


def test_usage_errors_exit_2(run_cli) -> None:
    result = run_cli("score", "physical_stability")
    assert result.code == 2 and "Missing option '--cases'" in result.err
    result = run_cli("check", "physical_stability", "--levels", "x")
    assert result.code == 2 and "--levels must be one level or two" in result.err


def test_console_script_flushes_everything_and_keeps_exit_codes(tmp_path: Path) -> None:
    """``run`` (the console script) leaves with os._exit: output must be complete, codes kept."""
    import subprocess
    import sys

    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "".join(
            json.dumps({"id": i, "key": S, "response": "ANSWER: stable"}) + "\n" for i in range(300)
        ),
        encoding="utf-8",
    )
    script = "import sys; from keyaudit.cli.app import run; sys.argv = ['keyaudit', *sys.argv[1:]]; run()"
    done = subprocess.run(
        [sys.executable, "-c", script, "score", "physical_stability", "--cases", str(cases)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == list(range(300))
    bad = subprocess.run(
        [sys.executable, "-c", script, "score", "no_such_rule", "--cases", str(cases)],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "not a bundled rule name" in bad.stderr
