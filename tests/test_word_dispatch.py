"""The word-dispatching lexer gives exactly Lark's tokens, and the first-word summaries it relies on
admit every match a pattern can make."""

from __future__ import annotations

import json
import random
import re
from functools import lru_cache
from pathlib import Path

import pytest

from keyaudit.engine.rule_language.reading.fast_lalr import Unparsed
from keyaudit.engine.rule_language.reading.first_words import _CASE_PARTNERS, first_words
from keyaudit.engine.rule_language.reading.grammar import CompiledGrammar, GrammarParseError
from keyaudit.engine.rule_language.reading.word_dispatch import install_word_dispatch

ROOT = Path(__file__).resolve().parent.parent
PHRASINGS = Path(__file__).resolve().parent / "data" / "phrasings"
WORD = re.compile(r"[A-Za-z0-9]+")


def _key(text: str, position: int) -> tuple[str, bool]:
    run = WORD.match(text, position)
    return (run.group().lower(), True) if run else (text[position], False)


# --------------------------------------------------------------------------- first_words


def test_case_partners_are_every_non_ascii_match_of_an_ascii_letter() -> None:
    """The table of non-ASCII characters ``re`` matches to ASCII letters under IGNORECASE (and
    back) is complete, checked against every code point."""
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    found: dict[str, set[str]] = {}
    for letter in "abcdefghijklmnopqrstuvwxyz":
        for char in re.findall("(?i)" + letter, everything):
            if not char.isascii():
                found.setdefault(letter, set()).add(char)
                found.setdefault(char, set()).update({letter, letter.upper()})
    assert {k: set(v) for k, v in _CASE_PARTNERS.items()} == found


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    words = ["same", "speed", "s", "it", "its", "no", "d", "kin", "ſame", "ωmega", "é"]
    pieces = []
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.3 or depth > 2:
            piece = re.escape(rng.choice(words))
        elif roll < 0.45:
            piece = f"(?:{_random_pattern(rng, depth + 1)}|{_random_pattern(rng, depth + 1)})"
        elif roll < 0.55:
            piece = f"(?:{_random_pattern(rng, depth + 1)}){rng.choice('?*+')}"
        elif roll < 0.6:
            piece = f"(?i:{_random_pattern(rng, depth + 1)})"
        else:
            piece = rng.choice(
                [r"\s+", r"\s*", r"\d+", "[-+]?", "[a-c]", "[A-Za-z]+", r"\b", "(?![A-Za-z0-9])",
                 r"(?=\s)", r"\W", ".", "[^a]", r"(?:\.\d+)?", "'", "-", r"\w*", "$", "x{0,2}",
                 r"(?<=s)", "[İı]", "K", r"(a)\1"]
            )
        pieces.append(piece)
    return "".join(pieces)


def test_first_words_admit_every_match_of_random_patterns() -> None:
    """Soundness: wherever a pattern matches in a text, its summary admits the word (or other
    character) at that position — on 1,500 random patterns over texts with the awkward cases
    (case partners ſ İ ı K, non-ASCII digits and spaces, punctuation)."""
    rng = random.Random(7)
    vocabulary = ["same", "Same", "SAME", "ſame", "speed", "speeds", "it", "its", "no", "D", "kin",
                  "Kin", "ωmega", "ΩMEGA", "é", "12", "٣", "3.5", "-4", "'", "-", ",", ".", " ",
                  "\xa0", "\t", "a", "İt", "ıt", "sa", "s_", "x", "xx", "samesame"]
    texts = [
        "".join(rng.choice(vocabulary) + rng.choice(["", " ", " ", ",", "-"]) for _ in range(8))
        for _ in range(40)
    ]
    checked = 0
    for _ in range(1500):
        pattern = _random_pattern(rng)
        for flags in (0, re.I):
            try:
                regex = re.compile(pattern, flags)
            except re.error:
                continue
            summary = first_words(pattern, flags)
            for text in texts:
                for position in range(len(text)):
                    if regex.match(text, position) is None:
                        continue
                    key, is_word = _key(text, position)
                    admitted = summary.admits_word(key) if is_word else summary.admits_other(key)
                    assert admitted, (pattern, flags, text[position:], summary)
                    checked += 1
    assert checked > 20_000


def test_first_words_are_precise_on_phrases() -> None:
    summary = first_words(r"(?=[Ss])(?:[Ss]ame|[Ss]tays?)(?![A-Za-z0-9])\s+(?:way|speed)", re.I)
    assert summary.exact == {"same", "stay", "stays"} and not summary.prefixes
    assert not summary.any_word and not summary.any_other
    assert summary.admits_other("ſ") and not summary.admits_other(" ")
    numbers = first_words(r"[-+]?\d+(?:[.,]\d+)*")
    assert numbers.admits_word("12") and not numbers.admits_word("d12")
    assert numbers.admits_other("-") and numbers.admits_other("٣") and not numbers.admits_other(",")


def test_unreadable_or_huge_patterns_admit_everything() -> None:
    for pattern in ["(", "(?:a|b|c|d|e|f|g|h|i|j)" * 40]:
        summary = first_words(pattern)
        assert summary.any_word and summary.any_other


# --------------------------------------------------------------------------- the lexer


@lru_cache(maxsize=1)
def _texts() -> dict[str, list[str]]:
    """Per rule: answer lines of its labelled phrasings, plus mutated copies (case partners,
    upper case, non-ASCII digits and spaces) that only a wrong summary would lex differently."""
    rng = random.Random(3)
    texts: dict[str, list[str]] = {}
    for path in sorted(PHRASINGS.glob("*.jsonl")):
        rule = re.sub(r"_(blind|dev|holdout)\w*$", "", path.stem)
        lines = texts.setdefault(rule, [])
        for row in path.read_text(encoding="utf-8").splitlines():
            answer = json.loads(row)["response"].rsplit("ANSWER", 1)[-1][:300]
            lines.append(answer)
            if rng.random() < 0.3:
                mutated = answer.translate(str.maketrans({"s": "ſ", "k": "\u212a", "i": "ı"}))
                lines.append(rng.choice([mutated, answer.upper(), answer.replace(" ", "\xa0")]))
                lines.append(answer.replace("1", "١").replace("-", "−"))
    return texts


def _outcome(grammar: CompiledGrammar, text: str) -> object:
    try:
        return _shape(grammar.parse(text))
    except GrammarParseError as error:
        return ("error", str(error))


def _fits(grammar: CompiledGrammar, text: str) -> bool:
    try:
        grammar._fast.parse(text)
    except Unparsed:
        return False
    finally:
        grammar._converted.clear()
    return True


def _shape(node: object) -> object:
    children = getattr(node, "children", None)
    if children is None:
        return (node.kind, node.start, node.end)
    return (node.kind, node.start, node.end, tuple(_shape(c) for c in children))


def _plain(grammar: CompiledGrammar) -> None:
    """Put Lark's own matching back on every state lexer, and Lark's own parser loop."""
    for state_lexer in grammar._lark.parser.lexer.lexers.values():
        state_lexer.__dict__.pop("match", None)
    grammar._fast = None


@pytest.mark.parametrize(
    "path", sorted((ROOT / "grammars").glob("*_answer.lark")), ids=lambda p: p.stem
)
def test_dispatch_gives_the_tokens_lark_gives(path: Path) -> None:
    """Every bundled answer grammar parses every labelled answer (and its mutations) to the same
    tree, or the same error, with word dispatch and the lean LALR driver as with Lark's
    alternation per state and Lark's parser; most answers take the lean driver."""
    rule = path.name.removesuffix("_answer.lark")
    lines = _texts().get(rule, [])
    assert len(lines) > 100, rule
    grammar = CompiledGrammar(path)
    assert grammar._fast is not None
    fast = sum(grammar._fast.parse(text) is not None for text in lines if _fits(grammar, text))
    assert fast > len(lines) / 2, (fast, len(lines))
    dispatched = [_outcome(grammar, text) for text in lines]
    _plain(grammar)
    plain = [_outcome(grammar, text) for text in lines]
    differing = [t for t, a, b in zip(lines, dispatched, plain, strict=True) if a != b]
    assert not differing, differing[:3]
    install_word_dispatch(grammar._lark)  # and it can be installed again
    assert [_outcome(grammar, text) for text in lines[:50]] == plain[:50]


@pytest.mark.parametrize("path", sorted((ROOT / "grammars").glob("*_key.lark")), ids=lambda p: p.stem)
def test_key_grammars_parse_as_lark_parses(path: Path) -> None:
    """Key grammars (strict: no recovery) give Lark's tree or Lark's error for every key of the
    labelled sets, and for keys cut short or with a word changed."""
    rule = path.name.removesuffix("_key.lark")
    keys: set[str] = set()
    for file in sorted(PHRASINGS.glob(f"{rule}_*.jsonl")):
        for row in file.read_text(encoding="utf-8").splitlines():
            key = json.loads(row)["key"]
            keys |= {key, key[: len(key) // 2], key.replace("block", "blok"), key.upper()}
    assert keys, rule
    grammar = CompiledGrammar(path)
    fast = [_outcome(grammar, key) for key in sorted(keys)]
    _plain(grammar)
    assert fast == [_outcome(grammar, key) for key in sorted(keys)]


def test_a_parser_with_a_basic_lexer_is_left_alone() -> None:
    from lark import Lark

    lark = Lark('start: "a" "b"', parser="lalr", lexer="basic")
    install_word_dispatch(lark)
    assert [t.type for t in lark.lex("ab")] == ["A", "B"]


def test_a_grammar_of_pathological_terminals_is_read_within_its_bound() -> None:
    """Forty terminals whose first words explode (nested repeats of alternatives) cost at most
    the grammar's reading budget; terminals past it are tried everywhere, so the tokens are still
    Lark's."""
    from lark import Lark

    from keyaudit.engine.rule_language.reading.first_words import MAX_GRAMMAR_STEPS, MAX_STEPS
    from keyaudit.engine.rule_language.reading.word_dispatch import state_matcher

    terminals = "\n".join(
        f"T{i}.2: /(?:[a-c](?:(?:its|sp{i}d)it)*)*n{i}o/" for i in range(40)
    )
    source = f'start: (T{" | T".join(map(str, range(40)))} | WORD)*\n{terminals}\n' + (
        "WORD: /[a-z0-9]+/\n%ignore /\\s+/\n"
    )
    texts = ["abitsititn3o speed n7o", "cn39o a b c", "aspitit n0o xyz"]
    plain = [Lark(source, parser="lalr").lex(text) for text in texts]
    expected = [[(t.type, str(t)) for t in tokens] for tokens in plain]
    lark = Lark(source, parser="lalr")
    install_word_dispatch(lark)
    got = [[(t.type, str(t)) for t in lark.parse(text).scan_values(lambda _: True)] for text in texts]
    assert got == expected
    matcher = state_matcher(next(iter(lark.parser.lexer.lexers.values())))
    spent = MAX_GRAMMAR_STEPS - matcher.terminals.steps_left
    assert MAX_GRAMMAR_STEPS <= spent <= MAX_GRAMMAR_STEPS + MAX_STEPS + 1  # ran out, no further
    assert sum(summary.steps == 0 for summary in matcher.summaries) >= 30  # not read at all
