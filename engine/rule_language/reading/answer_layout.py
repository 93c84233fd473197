"""The layout a model gives its answer line, read as the labelled clauses it stands for.

Evaluation harnesses log answer lines that are laid out rather than written: a padding label after
``ANSWER:`` (``Final: C``, ``Result: stable``, ``Final answer - B``), a markdown table on one line
(``| Nearest landmark | Distance | |---|---| | B | ~97 units |``), numbered sub-answers
(``1) χ = 0 2) non-orientable``, ``1. Status: stable 2. Lowest failing joint: none``), and proper
fractions in digits (``by 1/2``). None of it is wording a grammar should have to spell, and each
turns up in every benchmark, so once for every rule such a line is rewritten as plain clauses:
``C``, ``Nearest landmark: B; Distance: ~97 units``, ``χ = 0; non-orientable``, ``by 0.5``.

Only unambiguous layouts are rewritten: a table needs a header row and a row of as many cells; a
numbered list must start at 1 and count up; a fraction must be a proper one whose denominator
makes a short decimal (2, 4, 5, 8, 10), between digits and not part of a date, a path or a ratio
of letters ("C/B" stays). Bounded: a few linear regular-expression passes.
"""

from __future__ import annotations

import re

__all__ = ["read_layout"]

#: A label that only pads the answer line's start ("Final:", "Result -", "Final answer:").
_PADDING = re.compile(
    r"^\s*(?:final(?:\s+answer)?|result|answer|conclusion|verdict|output)\s*(?::|-|–|—|=)\s*(?=\S)",
    re.IGNORECASE,
)
#: A table's separator row cells ("---", ":---:").
_RULE_CELL = re.compile(r"^:?-{2,}:?$")
#: A numbered sub-answer's marker: "1)" or "1." at the start or after a space, before a space.
_ITEM = re.compile(r"(?:^|(?<=\s))(\d{1,2})[.)]\s+")
#: A proper fraction of digits, alone ("1/2", not "1/2/2026", "3/4s" nor "12/5").
_FRACTION = re.compile(r"(?<![\w./])(\d)\s?/\s?(2|4|5|8|10)(?![\w/]|\.\d)")
#: Most items of a numbered list read (more is data, left as it is).
MAX_ITEMS = 9


def read_layout(text: str) -> str:
    """``text`` with its layout read as clauses (see the module docstring)."""
    text = _PADDING.sub("", text, count=1)
    if text.count("|") >= 4:
        text = _table(text)
    if _ITEM.match(text.lstrip()):
        text = _numbered(text)
    if "/" in text:
        text = _FRACTION.sub(_decimal, text)
    return text


def _table(text: str) -> str:
    """``| h1 | h2 | | v1 | v2 |`` (one line, a separator row or none) as ``h1: v1; h2: v2``."""
    stripped = text.strip()
    if not (stripped.startswith("|") and stripped.endswith("|")):
        return text
    cells = [c.strip() for c in stripped[1:-1].split("|")]
    rows: list[list[str]] = [[]]
    for cell in cells:
        if cell == "":  # "| |" between rows: a row ends
            if rows[-1]:
                rows.append([])
            continue
        rows[-1].append(cell)
    rows = [r for r in rows if r and not all(_RULE_CELL.match(c) for c in r)]
    if len(rows) != 2 or len(rows[0]) != len(rows[1]) or len(rows[0]) < 2:
        return text
    return "; ".join(f"{head}: {value}" for head, value in zip(rows[0], rows[1], strict=True))


def _numbered(text: str) -> str:
    """``1) a 2) b`` as ``a; b``, only where the markers count 1, 2, 3 ... in order."""
    markers = list(_ITEM.finditer(text))
    expected = 1
    kept = []
    for marker in markers:
        if int(marker.group(1)) == expected:
            kept.append(marker)
            expected += 1
    if len(kept) < 2 or len(kept) > MAX_ITEMS:
        return text
    parts = []
    for i, marker in enumerate(kept):
        end = kept[i + 1].start() if i + 1 < len(kept) else len(text)
        parts.append(text[marker.end() : end].strip().rstrip(";,"))
    return text[: kept[0].start()] + "; ".join(p for p in parts if p)


def _decimal(match: re.Match) -> str:
    numerator, denominator = int(match.group(1)), int(match.group(2))
    if numerator == 0 or numerator >= denominator:
        return match.group()
    return f"{numerator / denominator:g}"
