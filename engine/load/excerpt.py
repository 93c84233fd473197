"""What a run keeps of a response's text: its answer lines and its conclusion, not the reasoning.

An audit reads a stored response in three ways only (issue 27, item 1):

* the answer line a rule's answer finder takes, :func:`~.answer_line.find_answer_line` with the
  rule's ``label`` and ``which`` (the scoring, the worked examples and the review file, which show
  that line: ``text.splitlines()[line_number - 1]``), and the strict scorer's (``ANSWER:``,
  ``last``) when a file carries no verdict;
* the conclusion the certainty check may read, ``conclusion_of`` in
  :mod:`..rule_language.scoring.scorer`: the last two non-empty lines of the last :data:`TAIL_CHARS`
  characters.

So a response of several kilobytes of reasoning is kept as a short *excerpt*, a string on which
those functions give exactly what they give on the whole text, for every answer format the run
was loaded for (:class:`Excerpter`), and memory grows with models × items, not with response
length. The excerpt is, in order:

1. each line some answer format takes (its first or last ``label`` line) that lies before part 2,
   joined by newlines, in their order in the response;
2. the response's end: from the start of the line holding the second-to-last non-empty line of
   the last :data:`TAIL_CHARS` characters; or, when the window cuts that line (or holds fewer
   than two non-empty lines), the whole window after a :data:`GUARD` character, so the cut line
   can never read as an answer line it is not.

Why it is faithful: a line of part 1 is a whole line of the response; part 2 is whole lines of
it (the guarded first line never matches a label); a line some format takes is in part 1 or 2;
so for each format the first (last) matching line of the excerpt is the response's first (last).
``excerpt[-TAIL_CHARS:]`` ends with part 2, which holds the window's last two non-empty lines
(the whole window when they could differ). A response the excerpt would not shorten is kept
whole. A test holds the excerpt to the whole text on every response of the example, on generated
long ones and on adversarial ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .answer_line import label_pattern

#: Characters of a response's end the certainty check may read: ``4 * CONCLUSION_CHARS`` of
#: :mod:`..rule_language.scoring.scorer` (a test holds them equal).
TAIL_CHARS = 1200
#: Texts this short are kept whole (the excerpt would save little and cost a split). Short
#: texts are cut too: a benchmark's short responses differ mostly in their reasoning lines, so
#: their excerpts (the last two lines) repeat and are kept once (GRIP-style responses of ~160
#: characters: 412 k distinct texts of 2.48 M kept whole, 277 k excerpts, less than half the
#: characters; about 1 µs more per kept response).
KEEP_WHOLE = 80
#: Starts a line cut by the window: no label pattern's first character (labels are words).
GUARD = "\x00"
#: The strict scorer's answer format (the "before" verdict computed when a file has none).
STRICT = ("ANSWER:", "last")

AnswerFormat = tuple[str, str]


@dataclass(frozen=True)
class Excerpter:
    """Keeps what the answer ``formats`` ((label, which) pairs) and the conclusion read."""

    formats: tuple[AnswerFormat, ...]

    @classmethod
    def for_formats(cls, formats: Iterable[AnswerFormat]) -> Excerpter | None:
        """An excerpter for ``formats`` and the strict scorer's; ``None`` (keep whole texts)
        when a label could start with :data:`GUARD`'s character class (not a word)."""
        found = tuple(dict.fromkeys((STRICT, *formats)))
        for label, _ in found:
            word = label.rstrip().rstrip(":").strip()
            if not word or not (word[0].isalnum()) or GUARD in label:
                return None
        return cls(found)

    def __call__(self, text: str) -> str:
        """The excerpt of ``text`` (``text`` itself when it would not be shorter)."""
        if len(text) <= KEEP_WHOLE:
            return text
        return excerpt(text, self.formats)


def excerpt(text: str, formats: tuple[AnswerFormat, ...]) -> str:
    """See the module docstring. One split of the text, with line ends (a label pattern matches
    a line with its end as it matches the line: it never reaches past the text after the colon),
    and one of the window; the window's lines are the text's last ones."""
    cut = max(0, len(text) - TAIL_CHARS)
    lines = text.splitlines(True)
    window = text[cut:].splitlines(True)
    first = len(lines) - len(window)  # window line j is the text's line first + j
    at_start = len(window[0]) == len(lines[first])
    filled = [j for j, line in enumerate(window) if not line.isspace()]
    if len(filled) >= 2 and (filled[-2] >= 1 or at_start):
        start = filled[-2]
        tail_from, guarded = len(text) - sum(map(len, window[start:])), False
        first_whole = first + start
    else:
        tail_from, guarded = cut, not at_start
        first_whole = first + guarded  # the guarded line is no answer line
    head: set[int] = set()
    for label, which in formats:
        match = label_pattern(label).match
        order = range(len(lines)) if which == "first" else range(len(lines) - 1, -1, -1)
        for n in order:
            if match(lines[n]) is not None:
                if n < first_whole:
                    head.add(n)
                break
    tail = (GUARD if guarded else "") + text[tail_from:]
    kept = "\n".join([*(lines[n].splitlines()[0] for n in sorted(head)), tail])
    return kept if len(kept) < len(text) else text
