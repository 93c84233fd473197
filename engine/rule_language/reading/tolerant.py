"""Tolerant words: a value word misspelt by one edit is read as that word, and the verdict says so.

Models and the people who write their answers type "stabel", "orienatble", "posiiton",
"incraese". A grammar's phrase lexicons match words exactly, so each typo became "missing". Here,
once for every rule, a word of five letters or more that the rule's grammars do not know, and
that is one edit away from exactly one word they do know (five letters or more too), is read as
that word. Every such reading is named among the verdict's uncertain reasons ("read 'stabel' as
'stable'"), so a person can check it; a rule whose semantics ask for exact words says
``[answer] exact_words = true`` and reads none (the seed's status is exactly stable or unstable).

Which edits: two neighbouring letters swapped (the commonest typo), anywhere after the first
letter; or one letter extra or missing inside the word, never its first letter; or, in a word of
six letters or more, one letter for the key next to it on a keyboard ("botton", "colunn"). An edit
in the last two letters is read only where neither word ends as English inflects ("slowed" /
"slower", "increases" / "increased", "large" / "larger": another word, not a typo), so "colum" is
"column" and "bottm" "bottom". Any other letter for another is not read: it makes another word too
often ("changes" / "chances", "charge" / "change"), and the grammars' regular expressions know words
their word lists do not show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["TolerantWords", "one_edit"]

#: Only words this long (the misspelt one and the one it is read as) are read tolerantly.
MIN_LETTERS = 5
_WORD = re.compile(r"[A-Za-z]+")


def one_edit(typed: str, known: str) -> bool:
    """Whether ``typed`` is ``known`` with one typo of the kinds the module names (lower case)."""
    if typed == known or typed[0] != known[0]:
        return False
    n, m = len(typed), len(known)
    tail_free = not (_inflected(typed) or _inflected(known))
    if n == m:
        diffs = [i for i in range(n) if typed[i] != known[i]]
        if len(diffs) == 2 and diffs[1] == diffs[0] + 1:
            i = diffs[0]
            return typed[i] == known[i + 1] and typed[i + 1] == known[i]
        if len(diffs) == 1 and m >= MIN_SUBSTITUTED and (diffs[0] < m - 2 or tail_free):
            return _next_keys(typed[diffs[0]], known[diffs[0]])
        return False
    reach = 2 if tail_free else 0  # how far into the last two letters an edit may fall
    if n == m + 1:  # one letter extra in typed
        return any(typed[:i] + typed[i + 1 :] == known for i in range(1, m - 1 + reach))
    if n == m - 1:  # one letter missing from typed
        return any(known[:i] + known[i + 1 :] == typed for i in range(1, m - 2 + reach))
    return False


#: Shortest word in which one letter for its keyboard neighbour is read as a typo.
MIN_SUBSTITUTED = 6
#: Endings where English inflects or derives: an edit there makes another word.
_INFLECTED = ("s", "d", "r", "y", "e", "ing", "en", "st", "ly")
_KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
#: Each letter's place on a keyboard (rows staggered by a quarter and a half key).
_KEY_AT = {c: (row, col + (0, 0.25, 0.75)[row]) for row, keys in enumerate(_KEY_ROWS) for col, c in enumerate(keys)}


def _inflected(word: str) -> bool:
    return word.endswith(_INFLECTED)


def _next_keys(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are neighbouring keys (on a row or diagonally)."""
    if a not in _KEY_AT or b not in _KEY_AT:
        return False
    (ra, ca), (rb, cb) = _KEY_AT[a], _KEY_AT[b]
    return abs(ra - rb) <= 1 and abs(ca - cb) <= 1


#: Most words whose reading one :class:`TolerantWords` remembers before it starts afresh.
MEMO_WORDS = 65_536


@dataclass(frozen=True)
class TolerantWords:
    """The words a rule's grammars know, and the long ones a typo may be read as."""

    known: frozenset[str]
    targets: frozenset[str] = field(init=False)
    #: The targets by (first letter, length): :func:`one_edit` needs the same first letter and a
    #: length at most one apart, so a word is compared with three small groups, not with every
    #: target (a rule knows hundreds; comparing with all of them was an eighth of gauge_reading's
    #: whole scoring path, issue 38).
    _by_start: dict[tuple[str, int], tuple[str, ...]] = field(init=False, repr=False, compare=False)
    #: Each word's reading (or None), once: a line's words are read when it is cleaned and again
    #: when its certainty names the typos, and the same words recur across answers.
    _memo: dict[str, str | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        targets = frozenset(w for w in self.known if len(w) >= MIN_LETTERS and w.isalpha())
        groups: dict[tuple[str, int], list[str]] = {}
        for target in targets:
            groups.setdefault((target[0], len(target)), []).append(target)
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "_by_start", {k: tuple(v) for k, v in groups.items()})
        object.__setattr__(self, "_memo", {})

    def _reading(self, word: str) -> str | None:
        memo = self._memo
        if word in memo:
            return memo[word]
        if len(memo) >= MEMO_WORDS:
            memo.clear()
        reading = memo[word] = self._read(word)
        return reading

    def _read(self, word: str) -> str | None:
        lower = word.lower()
        if len(lower) < MIN_LETTERS or lower in self.known:
            return None
        groups, first, size = self._by_start, lower[0], len(lower)
        found = [
            t
            for length in (size - 1, size, size + 1)
            for t in groups.get((first, length), ())
            if one_edit(lower, t)
        ]
        if len(found) != 1:
            return None
        target = found[0]
        return target.capitalize() if word[0].isupper() else target

    def typos(self, text: str) -> list[tuple[str, str]]:
        """The (word as written, word read) pairs :meth:`correct` would apply, in order."""
        pairs = []
        for match in _WORD.finditer(text):
            reading = self._reading(match.group())
            if reading is not None:
                pairs.append((match.group(), reading))
        return pairs

    def correct(self, text: str) -> str:
        """``text`` with every typo read as the word it misspells."""
        if not self.targets:
            return text
        return _WORD.sub(lambda m: self._reading(m.group()) or m.group(), text)


#: Nouns that name a one-letter label after them ("block b", "gear d", "element a").
LABEL_NOUNS = frozenset(
    ["block", "blocks", "gear", "gears", "bulb", "bulbs", "element", "elements", "option", "options", "landmark", "landmarks", "point", "points", "mirror", "mirrors", "node", "nodes", "vertex"]
)
_LONE_LETTER = re.compile(r"(?<![A-Za-z0-9'’.])([a-z])(?![A-Za-z0-9'’]|\.[A-Za-z])")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)\W*$")
_AFTER_NUMBER = re.compile(r"\d\s?$")


def capital_labels(text: str) -> str:
    """``text`` with one-letter labels written in lower case as the capitals they are ("closest
    to b", "b slides off a", "block c"), for a rule whose answers name things by letters
    (``[answer] labels = true``). "x" stays (a times sign), "i" stays (the pronoun), a letter right
    after a number stays (a unit: "30 s", "12 m"); "a" is a
    label only after a label noun or where no noun follows it ("off a.", "b and a")."""

    def capital(match: re.Match) -> str:
        letter = match.group(1)
        if letter in "xi":
            return letter
        if _AFTER_NUMBER.search(text, 0, match.start()):
            return letter  # "30 s", "12 m": a unit after a number, no label
        if letter == "a":
            before = _WORD_BEFORE.search(text, 0, match.start())
            after = text[match.end() : match.end() + 6]
            named = before is not None and before.group(1).lower() in LABEL_NOUNS
            if not (named or re.match(r"\s*(?:$|[.,;:!?)/–—-]|and\b|or\b)", after)):
                return letter
        return letter.upper()

    return _LONE_LETTER.sub(capital, text)
