"""Phrase lexicons: word patterns compile to regex terminals that match what they say, and only
that; mistakes are load errors at file:line:col."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from keyaudit.engine.errors import RuleError
from keyaudit.engine.rule_language.reading.grammar import compile_grammar
from keyaudit.engine.rule_language.reading.kinds import splice_kinds
from keyaudit.engine.rule_language.reading.phrases import PhraseError, expand_phrases


def phrase_regex(source: str, name: str = "P") -> re.Pattern[str]:
    for line in expand_phrases(source).split("\n"):
        if line.startswith(name):
            body = line.split(": ", 1)[1]
            return re.compile(body[1 : body.rindex("/")].replace("\\/", "/"), re.I)
    raise AssertionError(f"{name} not compiled")


GRAMMAR = """%part SPIN: rotation | spin
%phrase P.8: [its | the] [{SPIN}] direction (stays | is) (unchanged | the same)
           | same [{SPIN}] (direction | way) | speed ":" same | and "/" or
"""


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("its rotation direction stays the same", True),
        ("Direction IS   unchanged", True),
        ("the spin direction is\nthe same", True),
        ("same way", True),
        ("speed: same", True),
        ("speed:same", True),
        ("and/or", True),
        ("same wayward", False),  # whole words only
        ("its direction stays", False),  # a required word is missing
        ("the the direction is unchanged", False),
    ],
)
def test_word_patterns_match_whole_phrases(text: str, matches: bool) -> None:
    assert bool(phrase_regex(GRAMMAR).fullmatch(text)) is matches


def test_lines_keep_their_numbers_and_parts_vanish() -> None:
    out = expand_phrases(GRAMMAR + "x: P\n")
    assert out.count("\n") == (GRAMMAR + "x: P\n").count("\n")
    assert out.split("\n")[1].startswith("P.8: /")
    assert "%part" not in out and "%phrase" not in out


def test_a_raw_lookahead_adds_no_gap() -> None:
    rx = phrase_regex("%phrase P: no change /(?!\\s+in\\s+direction)/\n")
    assert rx.fullmatch("no change")
    assert rx.search("no change in direction") is None


LOOKAHEADS = """%part L: /(?-i:[A-H])(?![A-Za-z0-9])/
%part ONE_LETTER_NEXT: &({L} !({L}))
%phrase P: same !(speed | "=")
%phrase Q: stays &(the same | "," | $)
%phrase R: or {ONE_LETTER_NEXT}
%phrase S: !(not) [a] (good | fine)
%phrase T: done $
"""


@pytest.mark.parametrize(
    ("name", "text", "matched"),
    [
        ("P", "same", "same"),
        ("P", "same size", "same"),
        ("P", "same speed", None),
        ("P", "same \n speed", None),  # the usual gap: any whitespace
        ("P", "same =", None),
        ("P", "same=", None),  # no space needed before a literal
        ("P", "same speedy", "same"),  # whole words inside too
        ("P", "samespeed", None),
        ("Q", "stays the same", "stays"),  # nothing consumed
        ("Q", "stays , yes", "stays"),
        ("Q", "stays", "stays"),  # $: the end of the text
        ("Q", "stays put", None),
        ("Q", "staysthe same", None),
        ("R", "or B", "or"),  # a part that is only a lookahead takes the gap after "or"
        ("R", "or  B.", "or"),
        ("R", "or B C", None),  # a lookahead inside a lookahead
        ("R", "or b", None),
        ("R", "orB", None),
        ("R", "or Be", None),
        ("S", "good", "good"),  # a lookahead first looks where the text starts
        ("S", "a fine", "a fine"),
        ("S", "not good", None),
        ("T", "done", "done"),
        ("T", "done now", None),
    ],
)
def test_lookaheads_look_without_consuming(name: str, text: str, matched: str | None) -> None:
    found = phrase_regex(LOOKAHEADS, name).match(text)
    assert (found and found.group(0)) == matched


def test_lookaheads_keep_the_speed_measures_right() -> None:
    """A lookahead has no first character: a phrase that starts with one is guarded by what
    follows it; a word before a negative lookahead keeps its word-end check."""
    s = phrase_regex(LOOKAHEADS, "S").pattern
    assert s.startswith("(?=[AFGafg])")
    assert phrase_regex(LOOKAHEADS, "P").pattern.startswith("(?=[Ss])")
    assert "same(?![A-Za-z0-9])(?!" in phrase_regex(LOOKAHEADS, "P").pattern
    for name in "PQRST":
        fast = phrase_regex(LOOKAHEADS, name)
        plain = re.compile(plain_regex(fast.pattern), re.I)
        for text in ("not good", "a good", "same speed", "same size", "or B", "stays, so", "done"):
            for position in range(len(text)):
                a, b = fast.match(text, position), plain.match(text, position)
                assert (a and a.span()) == (b and b.span()), (name, text, position)


@pytest.mark.parametrize(
    ("source", "column", "message"),
    [
        ("%phrase P: a &(b\n", 14, "'&(' is never closed"),
        ("%phrase P: a ! b\n", 14, "expected '(' right after '!'"),
        ("%phrase P: a [!(b)]\n", 14, "cannot be optional"),
        ("%phrase P: a (b | &(c))\n", 15, "mixes lookaheads"),
        ("%phrase P: a &()\n", 16, "empty alternative"),
        ("%phrase P: [a] &(b)\n", 20, "needs a required word"),
        ("%phrase P: &(b) | !(c)\n", 12, "only lookaheads"),
    ],
)
def test_lookahead_mistakes_are_located(source: str, column: int, message: str) -> None:
    with pytest.raises(PhraseError) as caught:
        expand_phrases(source)
    assert (caught.value.line, caught.value.column) == (1, column)
    assert message in caught.value.message


@pytest.mark.parametrize(
    ("source", "line", "column", "message"),
    [
        ("%phrase P: (a | b\n", 1, 12, "never closed"),
        ("%phrase P: a | | b\n", 1, 16, "empty alternative"),
        ("%part SPIN: spin\n%phrase P: {SPN} x\n", 2, 12, "did you mean {SPIN}"),
        ("%part A: x {A}\n%phrase P: {A}\n", 1, 12, "includes itself"),
        ("%phrase P: [a] [b]\n", 1, 19, "only of optional"),
        ("%phrase P: a # b\n", 1, 14, "quote punctuation"),
        ("%phrase P: /(/\n", 1, 12, "bad regex"),
        ("%phrase P: a\n%phrase P: b\n", 2, 1, "defined twice"),
        ("%phrase lower: a\n", 1, 1, "expected '%phrase NAME"),
    ],
)
def test_mistakes_are_located(source: str, line: int, column: int, message: str) -> None:
    with pytest.raises(PhraseError) as caught:
        expand_phrases(source)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert message in caught.value.message


def test_grammar_loader_reports_phrase_errors_with_the_file(tmp_path: Path) -> None:
    grammar = tmp_path / "bad.lark"
    grammar.write_text("start: P\n%phrase P: (a | b\n", encoding="utf-8")
    with pytest.raises(RuleError, match=r"bad\.lark:2:12: .*never closed"):
        compile_grammar(grammar)


def test_bundled_grammars_have_no_long_hand_written_pattern_lines() -> None:
    """Issue 10: wording lives in lexicons; every bundled grammar keeps every line readable."""
    grammars = sorted((Path(__file__).resolve().parent.parent / "grammars").glob("*.lark"))
    assert len(grammars) > 20
    for path in grammars:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            assert len(line) <= 120, f"{path.name}:{number} is {len(line)} characters"


_GUARD = re.compile(r"^\(\?=\[(?:\\.|[^\]\\])*\]\)")
_CASED_FIRST = re.compile(r"\(\?-i:\[([a-z])[A-Z]\]\)")


def plain_regex(optimised: str) -> str:
    """The phrase regex without the speed measures: no first-character guard, and every
    first-letter class ``(?-i:[tT])`` back to the letter the case-insensitive flag matches."""
    return _CASED_FIRST.sub(lambda m: m.group(1), _GUARD.sub("", optimised))


def test_speed_measures_change_no_match() -> None:
    """The first-character guard and first-letter classes only make failing faster: on every
    bundled grammar's phrases, at every position of real answer lines (the labelled phrasings of
    the grammar's rule), the optimised and the plain regex match the same span."""
    grammars = Path(__file__).resolve().parent.parent / "grammars"
    phrasings = Path(__file__).resolve().parent / "data" / "phrasings"
    checked = optimised = 0
    for grammar in sorted(grammars.glob("*_answer.lark")):
        rule = grammar.name.removesuffix("_answer.lark")
        lines: list[str] = []
        for path in sorted(phrasings.glob(f"{rule}*.jsonl"))[:2]:
            for row in path.read_text(encoding="utf-8").splitlines()[:60]:
                response = json.loads(row)["response"]
                lines.append(response.rsplit("ANSWER", 1)[-1][:200])
        assert lines, grammar.name
        # with the value kinds it uses (``%use pair``), as read_grammar compiles it
        compiled = expand_phrases(splice_kinds(grammar.read_text(encoding="utf-8")).text).split("\n")
        for line in compiled:
            match = re.match(r"([A-Z_][A-Z0-9_]*)(?:\.-?\d+)?: /(.*)/i$", line)
            if match is None:
                continue
            body = match.group(2).replace("\\/", "/")
            fast, plain = re.compile(body, re.I), re.compile(plain_regex(body), re.I)
            optimised += fast.pattern != plain.pattern
            for text in lines:
                for position in range(len(text)):
                    a, b = fast.match(text, position), plain.match(text, position)
                    assert (a and a.span()) == (b and b.span()), (grammar.name, line[:40], text)
                    checked += 1
    assert checked > 100_000 and optimised > 100


def test_a_raw_lookaround_with_a_top_level_choice_is_one_unit(tmp_path: Path) -> None:
    """Issue 34, item 6: a raw lookaround with a '|' at its top level was pasted ungrouped, so
    the '|' split the whole phrase and Lark refused a zero-width terminal with ~3,000 characters
    of regex and no line. It is one unit now, as every other raw piece is."""
    source = "%part AFTER: /(?<=, )|(?<=; )/\n%phrase P: {AFTER} bulb\n"
    rx = phrase_regex(source)
    text = "no; bulb"
    assert rx.match(text, 4) and rx.match("x, bulb", 3) and rx.match("bulb") is None
    grammar = tmp_path / "g.lark"
    grammar.write_text("start: (P | WORD | \";\")*\nWORD: /[a-z]+/\n%ignore \" \"\n" + source, encoding="utf-8")
    compile_grammar(grammar)  # loads


def test_a_phrase_that_can_match_empty_text_is_refused_at_its_line(tmp_path: Path) -> None:
    grammar = tmp_path / "g.lark"
    grammar.write_text("start: P\n%phrase P: /(?<=, )/ /(?!x)/\n", encoding="utf-8")
    with pytest.raises(RuleError, match=r"g\.lark:2:12: phrase P can match empty text") as caught:
        compile_grammar(grammar)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


@pytest.mark.parametrize(
    ("source", "column", "before"),
    [
        # the letter is never followed by the space the lookbehind wants
        ("%part L: /(?-i:[A-D])/\n%phrase P: {L} /(?<=[A-D] )/ goes out\n", 16, "'A', 'B', 'C', …"),
        ("%phrase P: bulb /(?<= )/ x\n", 17, "'bulb'"),
        ('%phrase P: "," /(?<=[,;] )/ y\n', 16, "','"),
        ("%phrase P: (bulb | lamb) /(?<!b)/ x\n", 26, "'bulb', 'lamb'"),
    ],
)
def test_a_lookbehind_that_can_never_hold_where_it_is_used_is_a_load_error(
    source: str, column: int, before: str
) -> None:
    """Issue 34, item 6: a raw lookbehind glued to a piece whose every ending it rules out
    loaded, and its phrase never matched any answer (found only with --tree)."""
    with pytest.raises(PhraseError) as caught:
        expand_phrases(source)
    assert caught.value.column == column
    assert "can never hold here" in caught.value.message and before in caught.value.message


@pytest.mark.parametrize(
    "source",
    [
        "%phrase P: bulb /(?<=lb)/ x\n",  # holds
        "%phrase P: (bulb | lamp) /(?<!b)/ x\n",  # holds after 'lamp'
        "%phrase P: [bulb] /(?<= )/ x\n",  # the piece before is optional: the text before decides
        "%phrase P: /\\w+/ /(?<= )/ x\n",  # unknown endings
        "%phrase P: goes out /(?<=s out)/ x\n",  # a gap inside the window
        "%phrase P: out /(?<=s out)/ x\n",  # looks back past the piece: 'goes out' holds
        "%phrase P: out /(?<=[a-z]\\s)/ x\n",  # what it accepts is not listed
        "%phrase P: /(?<=bulb )/ x\n",  # first: the text before the phrase decides
    ],
)
def test_a_lookbehind_that_may_hold_loads(source: str) -> None:
    expand_phrases(source)


def test_a_hand_written_terminal_that_can_match_empty_text_is_located(tmp_path: Path) -> None:
    grammar = tmp_path / "g.lark"
    grammar.write_text("start: X+\n\nX: /a*/\n", encoding="utf-8")
    with pytest.raises(RuleError, match=r"g\.lark:3: terminal X can match empty text") as caught:
        compile_grammar(grammar)
    assert "\n" not in str(caught.value)
