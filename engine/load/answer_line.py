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
    """Regex for the start of an answer line: optional markdown, the label word, optional
    markdown, a colon, and the spaces after it (the answer text is the rest of the line).

    ``label`` is written as users see it (``"ANSWER:"``); the trailing colon is optional in the
    argument and required in the text. Matching is case-insensitive (``Answer:`` counts too).
    The pattern is anchored and covers only the label, never the answer text: each repeat is
    followed by something it cannot match, so matching is linear in the line (the text after the
    label used to be matched by a lazy ``.*?\\s*$``, quadratic on a line of spaces).
    """
    word = re.escape(label.rstrip().rstrip(":").strip())
    return re.compile(
        rf"{_DECORATION}{word}(?:[*_`]*\s*:|\s*:[*_`]*)[*_`]*[ \t]*",
        re.IGNORECASE,
    )


def find_answer_line(
    response: str, label: str = "ANSWER:", which: str = "last"
) -> AnswerLine | None:
    """Return the ``which`` (``"last"`` or ``"first"``) line carrying ``label``, or ``None``.

    Lines are split on any newline convention. Only the text after the label is returned; the
    label and the markdown around it are dropped, and so is trailing whitespace. Time is linear
    in the length of the response.
    """
    pattern = label_pattern(label)
    lines = response.splitlines()
    numbered = enumerate(lines, start=1)
    if which != "first":
        numbered = zip(range(len(lines), 0, -1), reversed(lines), strict=True)
    for number, line in numbered:
        match = pattern.match(line)
        if match is not None:
            return AnswerLine(line[match.end() :].rstrip(), number)
    return None
