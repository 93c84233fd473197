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
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["question_words", "drop_restated_question"]

#: A restatement has at least this many content words ...
MIN_WORDS = 3
#: ... and at least this share of them are words of the question;
SHARE = 0.75
#: or at least this many, every one of them the question's, in a sentence that asks its options
#: back ("Stable, or will it tip? Stable.").
MIN_WORDS_ALL_SHARED = 2

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


def drop_restated_question(text: str, words: frozenset[str]) -> str:
    """``text`` without the sentences ending in "?" that restate the question of ``words``."""
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
        # a question of two sentences restated whole ("..., is the stack stable? If not, at which
        # joint does it fail?"): its second sentence, right after the first, is the question's
        # too when every content word of it is ("joint", "fail"), however few
        follows = restated_before and not before[:opening].strip()
        restated = (len(content) >= MIN_WORDS and shared >= SHARE * len(content)) or (
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
