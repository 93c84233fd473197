"""The bounds one answer is scored within: its length, its cleaning, its time, its outputs.

:mod:`.scorer` applies these; they live here so that every limit an answer meets is stated in one
place (README, "Security and limits", lists the same numbers).

* **Length.** The text after the answer label is cut to :data:`MAX_ANSWER_CHARS` characters
  *before anything else* (leading whitespace dropped first): the memo, the cleaning, the parser and
  the rule only ever see that much. A key longer than :data:`MAX_KEY_CHARS` is not parsed (it is
  reported as matching no template).
* **Cleaning.** ``[answer] replace`` pairs may lengthen the text (``"a" → "aaaa"``); each one
  that does is applied only as far as the cut can still see, and the text is cut again after it,
  so cleaning never builds more than about twice the limit plus one replacement.
* **Time.** One answer may take :data:`~keyaudit.engine.load.timelimit.ANSWER_SECONDS` of CPU time
  (finding its line, cleaning, parsing key and answer, the rule's expressions). Beyond that it gets
  the verdict **rule error** naming the limit. After :data:`MAX_SLOW_ANSWERS` such answers a
  rule's remaining answers are not tried (rule error, "not scored"), so a rule whose patterns
  backtrack catastrophically costs a bounded time in all.
* **Outputs.** ``[output]`` values are converted to JSON within :data:`~..expressions.limits.MAX_SIZE`
  elements and characters in all (node text counted) and :data:`~..expressions.limits.MAX_DEPTH` levels;
  a number that is not finite (``Infinity``, ``NaN``: not JSON) is reported as null, and the
  verdict's detail says so.
"""

from __future__ import annotations

import math
from typing import Any

from ..expressions.limits import MAX_DEPTH, MAX_SIZE, LimitError

#: Characters of the answer text kept (after the label and leading whitespace).
MAX_ANSWER_CHARS = 4000
#: Longest key parsed.
MAX_KEY_CHARS = 10_000
#: Answers of one rule allowed to exceed the time limit before the rest are not tried.
MAX_SLOW_ANSWERS = 5
#: ``[output]`` names the ``score`` command prints itself.
RESERVED_OUTPUTS = ("id", "accept", "reason", "detail")


def cut_answer(text: str) -> str:
    """The answer text as scoring sees it: leading whitespace dropped, then cut to the limit."""
    return text.lstrip()[:MAX_ANSWER_CHARS]


def bounded_replace(text: str, old: str, new: str, limit: int = MAX_ANSWER_CHARS) -> str:
    """``text.replace(old, new)``, keeping only the first ``limit`` characters when it grows.

    Only the occurrences that can still land within the first ``limit`` characters are replaced
    (each adds ``len(new)`` characters to the result), so a growing replacement costs
    ``O(len(text) + limit + len(new))`` however often ``old`` occurs.
    """
    if not old or len(new) <= len(old):
        return text.replace(old, new) if old else text
    occurrences = limit // len(new) + 1
    return text.replace(old, new, occurrences)[:limit]


class Outputs:
    """Converts one answer's ``[output]`` values to JSON-ready values within the bounds."""

    def __init__(self) -> None:
        self.left = MAX_SIZE
        self.notes: list[str] = []

    def convert(self, name: str, value: Any, depth: int = 0) -> Any:
        kind = type(value)
        self._charge(1)
        if value is None or kind is bool or kind is int or kind is str:
            if kind is str:
                self._charge(len(value))
                return _valid_text(value, name, self.notes)
            return value
        if kind is float:
            if math.isfinite(value):
                return value
            shown = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            self.notes.append(
                f"output {name!r} is {shown}, which JSON cannot hold: reported as null"
            )
            return None
        if kind is list or kind is tuple:
            if depth >= MAX_DEPTH:
                raise LimitError(f"output {name!r} is nested deeper than {MAX_DEPTH} levels")
            self._charge(len(value))
            return [self.convert(name, item, depth + 1) for item in value]
        text = getattr(value, "text", None)
        result = text() if callable(text) else str(value)
        self._charge(len(result))
        return _valid_text(result, name, self.notes)

    def _charge(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise LimitError(
                f"[output] values larger than {MAX_SIZE:,} elements and characters in all"
            )


def _valid_text(text: str, name: str, notes: list[str]) -> str:
    """``text``, with lone surrogates (not Unicode, not printable, not UTF-8) replaced by U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        notes.append(f"output {name!r} held a lone surrogate: replaced by U+FFFD")
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text
