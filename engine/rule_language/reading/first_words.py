"""Which words a terminal's regular expression can start with — read from the regex itself.

The answer lexer (:mod:`.word_dispatch`) tries at each position only the terminals that can match
the word found there, instead of every terminal of the parser state. That is only correct if the
summary computed here is *sound*: every text a pattern can match at a position must begin with a
word the summary admits. So whatever this module cannot read exactly (a backreference, a class of
many letters, a pattern too large to walk) widens the summary; nothing ever narrows it by guess.

A *word* is the maximal run of ASCII letters and digits at a position, lower-cased: the same
definition the phrase lexicons use for their word ends (``(?![A-Za-z0-9])``). A position whose
character is not an ASCII letter or digit has no word; the summary then says which such first
characters the pattern admits.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

if sys.version_info >= (3, 11):
    from re import _constants as sre
    from re import _parser as sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_constants as sre
    import sre_parse

__all__ = ["FirstWords", "first_words", "ASCII_WORD"]

#: The characters a word is made of.
ASCII_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

#: Non-ASCII characters Python's ``re`` matches to an ASCII letter under IGNORECASE, both ways
#: (checked against every code point by ``tests/test_first_words.py``).
_CASE_PARTNERS = {
    "i": "\u0130\u0131",
    "k": "\u212a",
    "s": "\u017f",
    "\u0130": "iI",
    "\u0131": "iI",
    "\u212a": "kK",
    "\u017f": "sS",
}

#: Walking a pattern stops (and the summary widens to "anything") after this many steps.
MAX_STEPS = 20_000
#: Steps for all the terminals of one grammar (the largest bundled grammar takes 14,000): the
#: reading happens on a parser state's first use, inside an answer's time bound.
MAX_GRAMMAR_STEPS = 100_000
#: A character class with more ASCII letters or digits than this is read as "any letter".
_MAX_ENUMERATED = 12
#: A word longer than this is read as a prefix: the walk does not follow it further.
_MAX_WORD = 24
#: A repeat is unrolled at most this many times on one path.
_MAX_UNROLL = 40

_MANY = None  # "too many to list"
#: Other characters: "any non-ASCII character" (a non-ASCII letter's case class under IGNORECASE).
_NON_ASCII = "non-ascii"


@dataclass
class FirstWords:
    """The words a pattern can start with.

    A position holding a word ``w`` can be matched only if ``w in exact``, ``w`` starts with one of
    ``prefixes``, or ``any_word``; a position holding another character ``c`` only if
    ``any_other``, ``c in others``, or ``any_non_ascii`` and ``c`` is not ASCII.
    """

    exact: set[str] = field(default_factory=set)
    prefixes: set[str] = field(default_factory=set)
    any_word: bool = False
    others: set[str] = field(default_factory=set)
    any_non_ascii: bool = False
    any_other: bool = False
    #: Steps the reading took (bounded per pattern and, by the lexer, per grammar).
    steps: int = 0

    def admits_word(self, word: str) -> bool:
        return (
            self.any_word
            or word in self.exact
            or (bool(self.prefixes) and word.startswith(tuple(self.prefixes)))
        )

    def admits_other(self, character: str) -> bool:
        return (
            self.any_other
            or character in self.others
            or (self.any_non_ascii and not character.isascii())
        )

    def widen(self) -> None:
        """Admit everything: the pattern could not be read."""
        self.any_word = self.any_other = True


class _GaveUp(Exception):
    """The walk exceeded its bounds; the summary admits everything."""


def first_words(regex: str, flags: int = 0, max_steps: int = MAX_STEPS) -> FirstWords:
    """The sound summary of the words ``regex`` (compiled with ``flags``) can start with, read in
    at most ``max_steps`` steps (``steps`` on the summary says how many were taken)."""
    summary = FirstWords()
    if max_steps <= 0:
        summary.widen()
        return summary
    try:
        parsed = sre_parse.parse(regex, flags)
    except Exception:  # noqa: BLE001 - an unreadable pattern admits everything
        summary.widen()
        return summary
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)
    walker = _Walker(summary, max_steps)
    try:
        walker.walk(walker.frame(parsed.data, ignore_case, None), "", 0)
    except (_GaveUp, RecursionError):
        summary.widen()
    summary.steps = walker.steps
    return summary


@dataclass(frozen=True)
class _Frame:
    """A point in the pattern: item ``index`` of ``items``, then whatever ``then`` continues.
    ``key`` names the point (equal keys: equal continuations), so that paths can meet."""

    items: list
    index: int
    ignore_case: bool
    then: _Frame | None
    key: int


class _Walker:
    def __init__(self, summary: FirstWords, max_steps: int = MAX_STEPS) -> None:
        self.summary = summary
        self.steps = 0
        self.max_steps = max_steps
        self.seen: set[tuple[int, str]] = set()
        self.keys: dict[tuple, int] = {}
        #: Every item list a frame points into stays alive for the walk, so ids stay unique.
        self.alive: list[list] = []
        self.rests: dict[tuple, list] = {}

    def frame(self, items: list, ignore_case: bool, then: _Frame | None, index: int = 0) -> _Frame:
        self.alive.append(items)
        shape = (id(items), index, ignore_case, then.key if then is not None else -1)
        key = self.keys.setdefault(shape, len(self.keys))
        return _Frame(items, index, ignore_case, then, key)

    def walk(self, frame: _Frame | None, word: str, unrolled: int) -> None:
        """Follow every path from ``frame`` with ``word`` read so far, until the word ends."""
        self.steps += 1
        if self.steps > self.max_steps:
            raise _GaveUp
        while frame is not None and frame.index >= len(frame.items):
            frame = frame.then
        point = (frame.key if frame is not None else -1, word)
        if point in self.seen:  # reached before by another path: nothing new from here
            return
        self.seen.add(point)
        if frame is None:  # the match can end here: the text's word may go on
            if word:
                self._open(word)
            else:  # an empty match: possible anywhere
                self.summary.widen()
            return
        if len(word) > _MAX_WORD:
            self._open(word)
            return
        op, av = frame.items[frame.index]
        ic = frame.ignore_case
        after = self.frame(frame.items, ic, frame.then, frame.index + 1)
        if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
            letters, others = _characters(op, av, ic)
            self._consume(letters, others, after, word, unrolled)
        elif op is sre.BRANCH:
            for alternative in av[1]:
                self.walk(self.frame(alternative.data, ic, after), word, unrolled)
        elif op is sre.SUBPATTERN:
            _group, add, remove, inner = av
            inner_ic = (ic or bool(add & re.IGNORECASE)) and not (remove & re.IGNORECASE)
            self.walk(self.frame(inner.data, inner_ic, after), word, unrolled)
        elif op is getattr(sre, "ATOMIC_GROUP", object()):
            self.walk(self.frame(av.data, ic, after), word, unrolled)
        elif op in _REPEATS:
            self._repeat(av, frame, after, word, unrolled)
        elif op is sre.AT:
            self._anchor(av, after, word, unrolled)
        elif op is sre.ASSERT_NOT:
            if word and av[0] == 1 and _forbids_letters(av[1], ic):
                self._exact(word)  # a word-end check: (?![A-Za-z0-9]), (?!\w)
            else:
                self.walk(after, word, unrolled)
        elif op is sre.ASSERT:  # a lookahead or lookbehind only narrows: read past it
            self.walk(after, word, unrolled)
        elif op is sre.GROUPREF_EXISTS:
            _group, yes, no = av
            self.walk(self.frame(yes.data, ic, after), word, unrolled)
            self.walk(self.frame(no.data if no is not None else [], ic, after), word, unrolled)
        else:  # a backreference or anything unknown: any character may come
            self._consume(_MANY, _MANY, after, word, unrolled)

    def _repeat(self, av: tuple, frame: _Frame, after: _Frame, word: str, unrolled: int) -> None:
        low, high, inner = av
        if unrolled > _MAX_UNROLL:
            self._open(word)
            self._consume(_MANY, _MANY, after, word, unrolled)
            return
        if low == 0:
            self.walk(after, word, unrolled)
        if high == 0:
            return
        items = list(inner)
        if len(items) == 1 and items[0][0] in (sre.LITERAL, sre.IN, sre.ANY, sre.NOT_LITERAL):
            op, av = items[0]
            letters, others = _class(av, frame.ignore_case) if op is sre.IN else _characters(
                op, av, frame.ignore_case
            )
            if letters is _MANY or len({c.lower() for c in letters}) > 1:
                # a run of several letters ([0-9]+, \w*): the word goes on, unknown, after its
                # first letter
                self._consume(set(), others, after, word, unrolled)
                if letters is _MANY:
                    self._open(word)
                else:
                    for letter in {c.lower() for c in letters}:
                        self._open(word + letter)
                return
        remaining = high if high == sre.MAXREPEAT else high - 1
        op = frame.items[frame.index][0]
        shape = (id(inner), op, max(low - 1, 0), remaining)
        rest = self.rests.get(shape)
        if rest is None:  # one list per remaining repeat, so that paths meet again
            rest = self.rests[shape] = [(op, (max(low - 1, 0), remaining, inner))]
        again = self.frame(rest, frame.ignore_case, after)
        self.walk(self.frame(inner.data, frame.ignore_case, again), word, unrolled + 1)

    def _anchor(self, code: object, after: _Frame, word: str, unrolled: int) -> None:
        if code in _WORD_BOUNDARIES and word:
            self._exact(word)
        elif code in _ENDS:
            if word:
                self._exact(word)
            else:
                self.summary.any_other = True
        else:
            self.walk(after, word, unrolled)

    def _consume(self, letters, others, after: _Frame, word: str, unrolled: int) -> None:
        """One character from ``letters`` (ASCII letters/digits) or ``others``; ``_MANY``: a
        set too large to list."""
        if others is _MANY or others:
            if word:
                self._exact(word)  # the word ends at this character
            elif others is _MANY:
                self.summary.any_other = True
            else:
                self.summary.any_non_ascii |= _NON_ASCII in others
                self.summary.others.update(others - {_NON_ASCII})
        if letters is _MANY:
            self._open(word)
        else:
            for letter in sorted(letters):
                self.walk(after, word + letter.lower(), unrolled)

    def _exact(self, word: str) -> None:
        self.summary.exact.add(word)

    def _open(self, word: str) -> None:
        """The text's word starts with ``word`` and may go on."""
        if word:
            self.summary.prefixes.add(word)
        else:
            self.summary.any_word = True


_REPEATS = tuple(
    op
    for op in (
        sre.MAX_REPEAT,
        sre.MIN_REPEAT,
        getattr(sre, "POSSESSIVE_REPEAT", None),
    )
    if op is not None
)
_WORD_BOUNDARIES = (sre.AT_BOUNDARY, sre.AT_LOC_BOUNDARY, sre.AT_UNI_BOUNDARY)
_ENDS = (sre.AT_END, sre.AT_END_LINE, sre.AT_END_STRING)


def _characters(op: object, av: object, ignore_case: bool):
    """The characters one item can consume: (ASCII letters and digits, other characters), each a
    set or ``_MANY``."""
    if op is sre.LITERAL:
        return _split({chr(av)}, ignore_case)
    if op is sre.IN:
        letters, others = _class(av, ignore_case)
        if letters is not _MANY and len({c.lower() for c in letters}) > _MAX_ENUMERATED:
            letters = _MANY
        return letters, others
    return _MANY, _MANY  # ANY or NOT_LITERAL


def _class(items: list, ignore_case: bool):
    """The characters a class ``[...]`` admits, as :func:`_characters` gives them."""
    chars: set[str] = set()
    letters: set[str] | None = set()
    others: set[str] | None = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(chr(av))
        elif op is sre.RANGE and av[1] - av[0] <= 256:
            chars.update(chr(code) for code in range(av[0], av[1] + 1))
        elif op is sre.CATEGORY and av in _SPACE_CATEGORIES:
            chars.update(_ASCII_SPACE)
            if others is not _MANY:
                others.add(_NON_ASCII)
        elif op is sre.CATEGORY and av in _DIGIT_CATEGORIES:
            chars.update("0123456789")
            if others is not _MANY:
                others.add(_NON_ASCII)
        else:  # NEGATE, a word category, a large range
            return _MANY, _MANY
    found_letters, found_others = _split(chars, ignore_case)
    letters = _MANY if letters is _MANY else letters | found_letters
    others = _MANY if others is _MANY or found_others is _MANY else others | found_others
    return letters, others


def _split(chars: set[str], ignore_case: bool):
    """(ASCII letters and digits, other characters) that ``chars`` match. Under IGNORECASE a
    non-ASCII character may match others of its case class, which are not listed: ``_MANY``."""
    letters = {c for c in chars if c in ASCII_WORD}
    others: set[str] | None = chars - letters
    if ignore_case:
        letters |= {c.upper() for c in letters} | {c.lower() for c in letters}
        for char in list(letters) + list(others):
            partners = _CASE_PARTNERS.get(char.lower(), "") + _CASE_PARTNERS.get(char, "")
            letters |= {p for p in partners if p in ASCII_WORD}
            others |= {p for p in partners if p not in ASCII_WORD}
        if any(not c.isascii() and c not in _CASE_PARTNERS for c in others):
            others.add(_NON_ASCII)  # its case class is not listed, but it is never ASCII
    return letters, others


def _forbids_letters(inner: list, ignore_case: bool) -> bool:
    """Whether a negative lookahead's body is one character class covering every ASCII letter
    and digit (so the word cannot go on)."""
    items = list(inner)
    if len(items) != 1 or items[0][0] is not sre.IN:
        return False
    av = items[0][1]
    if any(op is sre.CATEGORY and a in _WORD_CATEGORIES for op, a in av):
        return True
    letters, _others = _class(av, ignore_case)
    return letters is not _MANY and letters >= ASCII_WORD


_WORD_CATEGORIES = (sre.CATEGORY_WORD, sre.CATEGORY_LOC_WORD, sre.CATEGORY_UNI_WORD)
_SPACE_CATEGORIES = (sre.CATEGORY_SPACE, sre.CATEGORY_UNI_SPACE)
_ASCII_SPACE = frozenset(c for c in map(chr, range(128)) if re.match(r"\s", c))
_DIGIT_CATEGORIES = (sre.CATEGORY_DIGIT, sre.CATEGORY_UNI_DIGIT)
