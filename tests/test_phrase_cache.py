"""Compiled phrase lexicons are remembered across runs (issue 38: loading the bundled rules spent
about 1 s of a warm ``check --all`` compiling them): the same text gives the same grammar from
the private cache folder ``phrases/``; a damaged entry is compiled again; ``off`` writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyaudit.engine.rule_language.reading import phrases
from keyaudit.engine.rule_language.reading.grammar import bundled_grammar_dir

TEXT = (bundled_grammar_dir() / "claims.lark").read_text(encoding="utf-8")


@pytest.fixture
def cache(private_cache: Path) -> Path:
    phrases.expand_phrases.cache_clear()
    yield private_cache
    phrases.expand_phrases.cache_clear()


def _refuse(text: str) -> str:
    raise AssertionError("compiled a lexicon the cache holds")


def test_a_compiled_lexicon_comes_back_from_the_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "%phrase" in TEXT
    first = phrases.expand_phrases(TEXT)
    assert len(list((cache / "phrases").iterdir())) == 1
    phrases.expand_phrases.cache_clear()  # as a new process
    monkeypatch.setattr(phrases, "_expand", _refuse)
    assert phrases.expand_phrases(TEXT) == first


def test_a_damaged_entry_is_compiled_again(cache: Path) -> None:
    first = phrases.expand_phrases(TEXT)
    (entry,) = (cache / "phrases").iterdir()
    entry.write_bytes(entry.read_bytes()[:-5] + b"xxxxx")
    phrases.expand_phrases.cache_clear()
    assert phrases.expand_phrases(TEXT) == first


def test_another_text_is_another_entry(cache: Path) -> None:
    phrases.expand_phrases(TEXT)
    phrases.expand_phrases(TEXT + "\n// edited\n")
    assert len(list((cache / "phrases").iterdir())) == 2


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", "off")
    phrases.expand_phrases.cache_clear()
    try:
        assert "%phrase" not in phrases.expand_phrases(TEXT)
    finally:
        phrases.expand_phrases.cache_clear()
