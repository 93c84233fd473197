"""Shared fixtures: run the real console entry point in-process and capture what a user sees."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def _no_columns() -> None:
    """Tests read output at keyaudit's own width when it is not a terminal (100 columns):
    pytest-xdist's workers inherit COLUMNS=80, which the consoles would honour as a user's."""
    import os

    os.environ.pop("COLUMNS", None)


@pytest.fixture(autouse=True, scope="session")
def _private_key_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never touch the user's key cache (engine/load/keycache.py): they get their own folder."""
    import os

    os.environ["KEYAUDIT_CACHE_DIR"] = str(tmp_path_factory.mktemp("keycache"))


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own (``KEYAUDIT_CACHE_DIR``), made as keyaudit makes one."""
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", str(folder))
    return folder


def empty_verdict_cache() -> None:
    """Empty the session's verdict cache (engine/verdict_cache.py)."""
    import shutil

    from keyaudit.engine.load.safe_io import cache_root
    from keyaudit.engine.verdict_cache import FOLDER

    root = cache_root()
    if root is not None:
        shutil.rmtree(root / FOLDER, ignore_errors=True)


@pytest.fixture
def fresh_verdict_cache() -> None:
    """A test that must see its answers scored (on workers, on a cluster) gets nothing from an
    earlier test's run."""
    empty_verdict_cache()


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def flat(self) -> str:
        """``out`` with every run of whitespace one space: a sentence reads whole wherever the
        output's width (100 columns when not a terminal) wrapped it."""
        return " ".join(self.out.split())


@pytest.fixture
def run_cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., CliResult]:
    """Run ``keyaudit ARGS`` through :func:`keyaudit.cli.app.main` (the console script)."""
    from keyaudit.cli.app import main

    def run(*args: str, stdin: str | None = None) -> CliResult:
        monkeypatch.setattr(sys, "argv", ["keyaudit", *args])
        if stdin is not None:
            import io

            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = 0
        try:
            main()
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def requires_rule(name: str) -> pytest.MarkDecorator:
    """Skip a test when the bundled rule ``name`` is absent.

    Rules are data: a domain's rule arrives as .toml and .lark files only, in a change that
    touches no Python, and the tests written for it start to run when it lands.
    """
    from keyaudit.engine.load.locate import bundled_rule_names

    return pytest.mark.skipif(
        name not in bundled_rule_names(), reason=f"bundled rule {name} absent"
    )


@pytest.fixture(scope="session")
def one_level(tmp_path_factory: pytest.TempPathFactory):
    """The made-up one-level benchmark of ``tests/one_level.py`` (600 keys, three models in one
    JSONL file), written once per session, and the hand-written rule for it."""
    from pathlib import Path

    from one_level import write_one_level_benchmark

    root = write_one_level_benchmark(tmp_path_factory.mktemp("one-level") / "bench")
    rule = Path(__file__).parent / "data" / "one_level" / "circuit_bulbs.toml"
    return root, rule
