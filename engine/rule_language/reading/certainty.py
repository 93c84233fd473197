"""How sure a verdict is: the signs that the rule may have misread an answer.

A rule that agrees with careful labels on 97% of unseen answers still misreads some; the audit
cannot say which, but it can say where its reading was doubtful. A verdict is *uncertain* when:

* **unplaced words** — the answer line holds words of the rule's own vocabulary (the words its
  answer grammar's phrases are made of: "direction", "joint", "exceeds"...) that no claim,
  trigger or value took: a phrasing the lexicon almost covers;
* **unplaced letters / numbers** — a capital entity letter or a number left as filler (which of
  these a rule watches is set in its ``[certainty]`` table; words are always watched);
* **unresolved subject** — a claim with no subject of its own counted for the target while the
  answer also names other entities;
* **outside the answer line** — a rejection for a missing component, while the response's
  conclusion (the line before the answer line, with it) read as an answer is accepted;
* **rule conditions** — the rule's own ``[[uncertain]]`` clauses (e.g. a value chosen by cue
  precedence over a different number), each with its reason.

The decisions the reading took on a weak cue (a conflict nothing offers, a near word, a typo the
verdict rests on) are marked by :mod:`..scoring.decisions` and the scorer. Each sign is a short
reason string; a verdict with none is *certain*. The signs only flag; they
never change a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .ast import Node
from .kinds import kinds_used

__all__ = ["OFFERING_CLAUSE", "CertaintySpec", "grammar_vocabulary", "unplaced_material"]

#: Words too common to signal anything when left over, whatever the domain.
STOPWORDS = frozenset(
    ["a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "it's", "this", "that", "these", "those", "and", "or", "but", "if", "then", "so", "not", "no", "yes", "any", "all", "some", "each", "both", "either", "neither", "nor", "than", "same", "new", "one", "two", "has", "have", "had", "do", "does", "did", "will", "would", "can", "could", "should", "may", "might", "must", "just", "also", "too", "still", "now", "very", "more", "most", "less", "least", "only", "own", "per", "via", "into", "onto", "over", "under", "up", "down", "out", "off", "there", "here", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "i", "we", "you", "they", "he", "she", "him", "her", "them", "our", "your", "their", "my", "me", "us", "let", "lets", "get", "gets", "got"]
)

#: Letter runs that regex syntax leaves in a grammar file (suffix groups, escapes).
_REGEX_BITS = frozenset({"ing", "ies", "ied", "est", "ses", "zza"})

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_LETTER = re.compile(r"(?<![A-Za-z0-9])[A-H](?![A-Za-z0-9])")
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])\d+(?:[.,]\d+)?(?![A-Za-z0-9])")
_PHRASE_LINE = re.compile(r"^\s*(?:%phrase|%part|[A-Z_][A-Z0-9_]*(?:\.-?\d+)?\s*:)")


@dataclass(frozen=True)
class CertaintySpec:
    """A rule's ``[certainty]`` table: which leftover material makes a verdict uncertain."""

    letters: bool = False
    numbers: bool = False
    #: Terminals whose recovery is part of the grammar's design (a separator ending a list).
    benign: frozenset[str] = frozenset()
    #: Words added to, or removed from, the vocabulary read off the grammar.
    extra_words: frozenset[str] = frozenset()
    ignore_words: frozenset[str] = frozenset()


def grammar_vocabulary(path: Path, spec: CertaintySpec) -> frozenset[str]:
    """The words a grammar's terminals and phrases are made of (lower case, 3+ letters).

    Read from the grammar file itself and the value kinds it uses (its own wording, not the
    shared trigger tables it imports): every word of a ``%phrase``/``%part`` or terminal definition line, including its
    continuation lines, minus :data:`STOPWORDS`. Regex syntax leaves letter runs such as ``s``
    or ``i`` behind; the length floor drops them.
    """
    words: set[str] = set()
    inside = False
    text = path.read_text(encoding="utf-8")
    # the value kinds it takes in (``%use pair``) are its own wording too: the joint nouns that
    # moved from a grammar into grammars/kinds/pair.lark are still words the grammar reads
    lines = text.splitlines() + [
        line for kind in kinds_used(text) for line in kind.read_text(encoding="utf-8").splitlines()
    ]
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("//") or not stripped:
            inside = inside and bool(stripped)
            continue
        start = _PHRASE_LINE.match(line)
        if start:
            # A terminal named with a leading "_" is filler the grammar drops: not vocabulary.
            name = re.sub(r"^\s*(?:%phrase|%part)?\s*", "", line)
            inside = not name.startswith("_")
        elif not (line[:1] in " \t" or stripped.startswith("|")):
            inside = False
        if inside:
            code = re.sub(r"\\[a-zA-Z]", " ", stripped)  # \s, \d, \b are not words
            words.update(w.lower() for w in re.findall(r"[A-Za-z]{3,}", code))
    return frozenset((words | spec.extra_words) - spec.ignore_words - STOPWORDS - _REGEX_BITS)


#: A clause that offers an alternative or a condition ("or between D and C", "opposite if C is
#: compound"): the one kind of leftover that can undo an acceptance.
OFFERING_CLAUSE = re.compile(r"\b(?:or|either|if|unless|otherwise)\b", re.I)

_CLAUSE_END = re.compile(r"[;,.:!?()\[\]—–|]+|\s-+\s")


def _clauses(text: str) -> list[tuple[int, int]]:
    """The answer text cut at punctuation: the places where one statement ends."""
    spans, cursor = [], 0
    for match in _CLAUSE_END.finditer(text):
        if match.start() > cursor:
            spans.append((cursor, match.start()))
        cursor = match.end()
    if cursor < len(text):
        spans.append((cursor, len(text)))
    return spans


def unplaced_material(
    answer: Node,
    triggers: Iterable[str],
    vocabulary: frozenset[str],
    spec: CertaintySpec,
    read: Iterable[tuple[int, int]] = (),
    only: re.Pattern[str] | None = None,
) -> list[str]:
    """Reasons for watched material in clauses where the grammar recognised nothing.

    A clause (text between punctuation) that holds none of the grammar's constructions — only
    filler and shared triggers — but holds words of the rule's vocabulary (or, when watched, an
    entity letter or a number) is a statement the rule could not read. ``read`` spans count as
    recognised (a noun that shared a claim: "..., and neither does its direction"). With
    ``only``, a clause counts only if the pattern finds something in it.
    """
    triggers = set(triggers)
    text = answer.source
    placed = [
        (child.start, child.end)
        for child in answer.children
        if isinstance(child, Node) and child.kind not in triggers
    ] + list(read)
    reasons: list[str] = []
    for start, end in _clauses(text):
        if any(s < end and e > start for s, e in placed):
            continue
        piece = text[start:end]
        if only is not None and not only.search(piece):
            continue
        if text[end : end + 1] == ":" and len(piece.split()) <= 3:
            continue  # a label ("Speed:", "New value:"), read with what follows
        found = [w for w in _WORD.findall(piece) if w.lower().replace("’", "'") in vocabulary]
        if spec.letters:
            found += _LETTER.findall(piece)
        if spec.numbers:
            found += _NUMBER.findall(piece)
        if found:
            reasons.append(f"unread clause {piece.strip()[:60]!r} ({', '.join(found[:3])})")
    return reasons
