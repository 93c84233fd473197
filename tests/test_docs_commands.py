"""Every command the manual shows runs (issue 24, item 3): the ``keyaudit …`` lines of the fenced
blocks of README.md and docs/*.md, in order per page, in a scratch folder — except lines with
placeholders (``D``, ``L``, ``X``, ``RULE``, ``FILE``, ``my-benchmark`` …), which name no real input.
A command is expected to exit 0, or 1 where the page shows a failing ``test-rule``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDER = re.compile(
    r"(?<![\w-])(D|L|X|N|P|LOG|RULE|RULE\.\.\.|FILE|DIR|TEXT|KEY|ADDRESS|my-benchmark|my-rule\.toml|my_domain|"
    r"myrules/my_domain\.toml|queue\.jsonl|page\.html|blind\.jsonl|\.\.\.)(?![\w-])|[<>|]"
)


def fenced_commands(page: Path) -> list[str]:
    """The keyaudit commands of the page's fenced blocks, continuation lines joined."""
    commands, inside, block = [], False, []
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            if inside:
                text = "\n".join(block).replace("\\\n", " ")
                for raw in text.splitlines():
                    raw = raw.strip().removeprefix("$ ").split("  #", 1)[0].strip()
                    if raw.startswith("keyaudit "):
                        commands.append(raw)
                block = []
            inside = not inside
        elif inside:
            block.append(line)
    return commands


CASES = [
    (page.name, command)
    for page in PAGES
    for command in fenced_commands(page)
    if not PLACEHOLDER.search(command)
]


def test_the_manual_shows_commands_to_run() -> None:
    assert len(CASES) >= 3, CASES


@pytest.mark.parametrize("page", sorted({p for p, _ in CASES}))
def test_every_command_of_a_page_runs(page: str, run_cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # commands that write (new-rule --out myrules) write here
    for name, command in CASES:
        if name != page:
            continue
        args = shlex.split(command)[1:]
        result = run_cli(*args)
        assert result.code in (0, 1), (command, result.err[-500:])
        assert "Traceback" not in result.err, command
