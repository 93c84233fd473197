"""Parser builds do not depend on ``interegular`` being installed (issue 22, item 4).

Lark scans every lexer it builds for terminal collisions when ``interegular`` can be imported;
on the bundled grammars that scan took over 60 s of CPU (gear_train), past the build limit, so a
user who had ``lark[interegular]`` installed could not load the bundled rules."""

from __future__ import annotations

import types
import uuid

import lark.lexer
import pytest

from keyaudit.engine.rule_language.reading.parser_cache import build_parser


class _ScanRan(Exception):
    pass


def _fake_interegular() -> types.ModuleType:
    def refuse(*args, **kwargs):
        raise _ScanRan("the collision scan ran during a build")

    module = types.ModuleType("interegular")
    module.Comparator = types.SimpleNamespace(from_regexes=refuse)  # type: ignore[attr-defined]
    return module


def test_a_build_never_runs_the_collision_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lark.lexer, "has_interegular", True)
    monkeypatch.setattr(lark.lexer, "interegular", _fake_interegular(), raising=False)
    unique = uuid.uuid4().hex  # never in the parser cache: this build really runs
    grammar = f'start: WORD+\nWORD: /[a-z]+/\nTAG: "{unique}"\n%ignore " "\n'
    parser = build_parser(
        grammar, loader=None, runtime={}, parser="lalr", lexer="contextual", maybe_placeholders=False
    )
    assert parser.parse("a b c").children
    assert lark.lexer.has_interegular is True  # put back after the build


def test_without_the_guard_the_fake_scan_would_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake is real enough: Lark itself calls it when the flag is on."""
    monkeypatch.setattr(lark.lexer, "has_interegular", True)
    monkeypatch.setattr(lark.lexer, "interegular", _fake_interegular(), raising=False)
    with pytest.raises(_ScanRan):
        lark.Lark('start: WORD\nWORD: /[a-z]+/\n', parser="lalr", lexer="contextual")
