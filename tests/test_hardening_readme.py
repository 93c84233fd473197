"""Issue 11: README's "Security and limits" states every limit, with the value the code enforces."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyaudit.engine.load import benchmark as benchmark_module
from keyaudit.engine.load import jsondoc, jsonl, keycache, timelimit, tomlfile
from keyaudit.engine.rule_language.expressions import codegen as expr_codegen
from keyaudit.engine.rule_language.expressions import limits as expr_limits
from keyaudit.engine.rule_language.reading import grammar, parser_cache
from keyaudit.engine.rule_language.scoring import answer_limits
from keyaudit.engine.rule_language.scoring import scorer as scoring

#: The manual's "Security and limits" page (the README links it).
SECTION = (Path(__file__).resolve().parent.parent / "docs" / "security-and-limits.md").read_text(encoding="utf-8")


def shown(value: float) -> list[str]:
    """The ways a limit may be written: 1,000,000 / 1000000 / 2 s / 16 MiB..."""
    forms = [f"{value:,}", str(value)]
    if isinstance(value, float):
        forms.append(f"{value:g} s")
    return forms


LIMITS = {
    "JSON Lines line": jsonl.MAX_LINE_BYTES,
    "JSON document": jsondoc.MAX_DOCUMENT_BYTES,
    "TOML file": tomlfile.MAX_TOML_BYTES,
    "grammar file": grammar.MAX_GRAMMAR_BYTES,
    "imports": grammar.MAX_IMPORTS,
    "parser build": grammar.BUILD_SECONDS,
    "id": benchmark_module.MAX_ID_CHARS,
    "level": benchmark_module.MAX_LEVEL,
    "id pattern time": timelimit.ID_SECONDS,
    "answer time": timelimit.ANSWER_SECONDS,
    "answer text": answer_limits.MAX_ANSWER_CHARS,
    "key": answer_limits.MAX_KEY_CHARS,
    "slow answers": answer_limits.MAX_SLOW_ANSWERS,
    "steps": expr_limits.MAX_STEPS,
    "items": expr_limits.MAX_ITEMS,
    "characters": expr_limits.MAX_CHARS,
    "size": expr_limits.MAX_SIZE,
    "depth": expr_limits.MAX_DEPTH,
    "round digits": expr_limits.MAX_ROUND_DIGITS,
    "generated nesting": expr_codegen.MAX_INDENT,
    "generated comprehensions": expr_codegen.MAX_LOOPS,
    "generated nodes": expr_codegen.MAX_NODES,
    "generated on": expr_codegen.WARM_CALLS,
    "memo verdicts": scoring._MEMO_LIMIT,
    "memo characters": scoring._MEMO_CHARS,
    "trees": scoring._TREE_CHARS,
    "keys kept": scoring._KEYS_LIMIT,
    "key corpora kept": keycache.KEEP,
    "parsers kept": parser_cache.KEEP,
}


@pytest.mark.parametrize("name, value", LIMITS.items(), ids=list(LIMITS))
def test_every_limit_is_stated_with_its_value(name: str, value: float) -> None:
    assert any(form in SECTION for form in shown(value)), (name, value)


def test_the_section_says_what_happens_and_how_the_caches_are_trusted() -> None:
    for phrase in (
        "rule error",
        "usage error",
        "never opened",
        "0700",
        "cannot run code",
        "not use Lark's `cache=True`",
        "content",
        "ITIMER_VIRTUAL",
        "one line",
    ):
        assert phrase in SECTION, phrase
    for reserved in answer_limits.RESERVED_OUTPUTS:
        assert f"`{reserved}`" in SECTION
