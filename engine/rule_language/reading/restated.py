"""The question restated on the answer line, anywhere on it, set aside before any grammar reads it.

Models often repeat the question before (or after) answering it: "After removing the top block,
is the stack stable? Unstable, at B/A." or "Unstable at B/A; would it stay up? No.". The words
of a restated question are the question's, not the model's claims, yet each rule's grammar would
read them as claims ("stable" above) or, for a rule that reads its status from the first word,
find no status at all. So, once for every rule: a sentence that ends with "?" and whose content
words are mostly the question's own (at least :data:`MIN_WORDS` of them, :data:`SHARE` or more in
the question) is removed before the grammar sees the line.

A lone "Stable?" or "Unstable at B/A?" stays: too few of the question's words, or too many of the
model's own, to be a restatement; it is the model asking, a hedge the claim layer reads. A
restatement of three or more of the question's words answered by a bare yes or no ("Would it exceed
the maximum value on the scale? No.") goes too: the answer stays, read as the answer to the
question the rule asks. A shorter one ("Would its direction change? No.") names the part of the
question its "no" answers, and stays for the domain grammar to read the two together.

The question's instructions are restated too, without a "?" ("Report its Euler characteristic,
followed by whether it is orientable or non-orientable. 0; orientable"): a sentence of at least
:data:`MIN_COPIED` words, :data:`COPIED_SHARE` or more of them inside runs of :data:`RUN` words
copied in order from the question (and no negation outside them), is the question's text, not the model's claim, and goes too.
The runs must be that long because a model's own answer reuses the question's words freely ("when
the driver's RPM and direction stay fixed, D speeds up" keeps its claim: too few of its words are
in a copied run).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .claims import QUESTION_OPENERS

__all__ = ["question_words", "question_runs", "drop_restated_question"]

#: A restatement has at least this many content words ...
MIN_WORDS = 3
#: ... and at least this share of them are words of the question;
SHARE = 0.75
#: or at least this many, every one of them the question's, in a sentence that asks its options
#: back ("Stable, or will it tip? Stable.").
MIN_WORDS_ALL_SHARED = 2

#: A sentence copied from the question has at least this many words, ...
MIN_COPIED = 6
#: ... and at least this share of them lie in runs of RUN words in the question's order.
COPIED_SHARE = 0.9
RUN = 5
_NEGATIONS = frozenset(["not", "no", "never", "isn't", "won't", "doesn't", "wouldn't", "don't", "cannot"])

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
#: Words that say nothing about which question it is.
_STOP = frozenset(
    ["the", "a", "an", "of", "to", "in", "on", "at", "by", "for", "with", "and", "or", "is", "are", "was", "were", "be", "been", "being", "it", "its", "it's", "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom", "whose", "how", "where", "when", "why", "would", "will", "could", "should", "can", "does", "do", "did", "has", "have", "had", "if", "not", "no", "yes", "so", "as", "than", "then", "from", "into", "onto", "over", "under", "about", "also", "state", "whether", "your", "you", "answer"]
)
#: The end of the sentence before a question (the question starts after it).
#: A short sentence of the question's words is a restatement only when it asks the question's
#: options back ("Stable, or will it tip?"), not when it is the model's answer asked back ("Same
#: speed?") or a label its answer needs ("Which is actually bigger? A.").
_ASKING = re.compile(
    r"\bor\s+(?:would|will|does|do|did|is|are|was|can|could|should|has|have)\b", re.IGNORECASE
)
#: A bare yes or no right after a question: the answer to that question.
_BARE_ANSWER = re.compile(r"\W*(?:yes|no|nope|yep|yeah|correct|not)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.;!?:]\s+|\s[-—–]+\s")


def _stem(word: str) -> str:
    """A light stem, so "exceeds" restates "exceed" and "tips" restates "tip"."""
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _content(words: list[str]) -> list[str]:
    return [_stem(w) for w in words if len(w) >= 3 and w not in _STOP]


@lru_cache(maxsize=256)
def question_words(question: str) -> frozenset[str]:
    """The content words of a rule's question (placeholders such as ``{LABEL}`` left out)."""
    text = re.sub(r"\{[^{}]*\}", " ", question or "")
    return frozenset(_content([w.lower().strip("'’-") for w in _WORD.findall(text)]))


def _tokens(text: str) -> list[str]:
    return [w.lower().strip("'’-") for w in _WORD.findall(text)]


@lru_cache(maxsize=256)
def question_runs(question: str) -> frozenset[tuple[str, ...]]:
    """Every run of :data:`RUN` consecutive words of a rule's question (placeholders left out, so
    a run never spans one)."""
    runs: set[tuple[str, ...]] = set()
    for part in re.split(r"\{[^{}]*\}", question or ""):
        tokens = _tokens(part)
        runs.update(tuple(tokens[i : i + RUN]) for i in range(len(tokens) - RUN + 1))
    return frozenset(runs)


def _copied(sentence: str, runs: frozenset[tuple[str, ...]]) -> bool:
    """Whether ``sentence`` is mostly words copied in order from the question (its runs)."""
    tokens = _tokens(sentence)
    if len(tokens) < MIN_COPIED:
        return False
    covered = [False] * len(tokens)
    for i in range(len(tokens) - RUN + 1):
        if tuple(tokens[i : i + RUN]) in runs:
            covered[i : i + RUN] = [True] * RUN
    # a negation of the model's own inside copied words ("it would not exceed the maximum value
    # on the scale") makes the sentence its claim
    own = {t for t, c in zip(tokens, covered, strict=True) if not c}
    return sum(covered) >= COPIED_SHARE * len(tokens) and not own & _NEGATIONS


def _drop_copied_sentences(text: str, runs: frozenset[tuple[str, ...]]) -> str:
    """``text`` without the sentences that are the question's own text, "?" or not."""
    if not runs:
        return text
    kept: list[str] = []
    start = 0
    for end in [*_SENTENCE_END.finditer(text), None]:
        stop = len(text) if end is None else end.end()
        if not _copied(text[start:stop], runs):
            kept.append(text[start:stop])
        start = stop
    return "".join(kept)


def drop_restated_question(
    text: str, words: frozenset[str], runs: frozenset[tuple[str, ...]] = frozenset()
) -> str:
    """``text`` without the sentences ending in "?" that restate the question of ``words``, and
    without the sentences copied from the question's text (its ``runs``)."""
    text = _drop_copied_sentences(text, runs)
    if not words or "?" not in text:
        return text
    kept: list[str] = []
    start = 0
    restated_before = False
    # "(?)" after a claim is the model's hedge on it, never the end of a question
    for mark in re.finditer(r"(?<!\()\?+(?!\))", text):
        before = text[start : mark.start()]
        # the question sentence opens after the last sentence end before its "?"
        opening = 0
        for end in _SENTENCE_END.finditer(before):
            opening = end.end()
        sentence = before[opening:]
        content = _content([w.lower().strip("'’-") for w in _WORD.findall(sentence)])
        shared = sum(w in words for w in content)
        answered = _BARE_ANSWER.match(text, mark.end()) is not None
        # a short question answered by a bare yes/no ("Would its direction change? No.") names the
        # part of the question the "no" answers: the domain grammar reads the two together
        # a question opens with its question word, or has one after a comma ("After removing
        # block C, is the stack stable?"); "the endpoint is closest to A?" asks the model's own
        # answer back, a hedge the claim layer reads
        clauses = [_tokens(part)[:1] for part in sentence.split(",")]
        asks = any(first and first[0] in QUESTION_OPENERS for first in clauses)
        # a question of two sentences restated whole ("..., is the stack stable? If not, at which
        # joint does it fail?"): its second sentence, right after the first, is the question's
        # too when every content word of it is ("joint", "fail"), however few
        follows = restated_before and not before[:opening].strip()
        restated = (asks and len(content) >= MIN_WORDS and shared >= SHARE * len(content)) or (
            not answered
            and len(content) >= MIN_WORDS_ALL_SHARED
            and shared == len(content)
            and (follows or _ASKING.search(sentence) is not None)
        )
        restated_before = restated
        if restated:
            kept.append(before[:opening])
            start = mark.end()
            continue
        kept.append(text[start : mark.end()])
        start = mark.end()
    kept.append(text[start:])
    return "".join(kept)
