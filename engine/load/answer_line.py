"""Find the answer line of a stored response.

Benchmarks ask models to end with a line such as ``ANSWER: stable``. Models decorate it
(``**ANSWER:** stable``, ``### Answer: stable``, ``> ANSWER: stable``) and sometimes write it
more than once while reasoning; the last one is the one they commit to, so it is the one taken.
A response with no such line has no answer: that is a verdict of its own ("answer missing"), never
an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

#: Markdown that may wrap the label: emphasis, headings, quotes, list bullets, code ticks.
_DECORATION = r"[\s*_#>`~\-]*"


@dataclass(frozen=True)
class AnswerLine:
    """The text after the label on the chosen answer line, and where that line is (1-based)."""

    text: str
    line_number: int


@lru_cache(maxsize=64)
def label_pattern(label: str) -> re.Pattern[str]:
    """Regex for one answer line: optional markdown, the label word, optional markdown, a colon.

    ``label`` is written as users see it (``"ANSWER:"``); the trailing colon is optional in the
    argument and required in the text. Matching is case-insensitive (``Answer:`` counts too).
    """
    word = re.escape(label.rstrip().rstrip(":").strip())
    return re.compile(
        rf"^{_DECORATION}{word}(?:[*_`]*\s*:|\s*:[*_`]*)[*_`]*[ \t]*(?P<text>.*?)\s*$",
        re.IGNORECASE,
    )


def find_answer_line(
    response: str, label: str = "ANSWER:", which: str = "last"
) -> AnswerLine | None:
    """Return the ``which`` (``"last"`` or ``"first"``) line carrying ``label``, or ``None``.

    Lines are split on any newline convention. Only the text after the label is returned; the
    label and the markdown around it are dropped, and so is trailing whitespace.
    """
    pattern = label_pattern(label)
    found: AnswerLine | None = None
    for number, line in enumerate(response.splitlines(), start=1):
        match = pattern.match(line)
        if match is None:
            continue
        found = AnswerLine(match.group("text"), number)
        if which == "first":
            return found
    return found
