"""How rates and differences are written in every report (terminal and Markdown alike)."""

from __future__ import annotations

import math
from collections.abc import Callable

#: How a report writes a string from data (a model or rule name, a path) inside a sentence or a
#: table row that several reports share: the terminal and JSON keep it as it is (the console
#: escapes what it prints), Markdown escapes it (``markdown_text.text``).
Show = Callable[[str], str]


def as_is(value: str) -> str:
    """The terminal's and JSON's :data:`Show`: the string unchanged."""
    return value


def pct(value: float | None, digits: int = 2) -> str:
    """A fraction as ``55.18%``; ``—`` when it does not exist (None or NaN)."""
    if value is None or math.isnan(value):
        return "—"
    return f"{100 * value:.{digits}f}%"


def pp(value: float | None, digits: int = 2) -> str:
    """A difference of fractions as signed percentage points: ``+6.90 pp``; ``—`` if missing."""
    if value is None or math.isnan(value):
        return "—"
    return f"{100 * value:+.{digits}f} pp"


def accuracy_span(model_cell) -> str:
    """A model cell's proposed accuracy with its uncertain verdicts all wrong – all right, or
    ``—`` when none is uncertain (``ModelCell``: terminal and Markdown tables alike)."""
    if not model_cell.uncertain:
        return "—"
    low, high = model_cell.structured_bounds
    return f"{pct(low)}–{pct(high)}"


def corrected_span(model_cell) -> str:
    """A model cell's accuracy corrected for the measured extraction error, with its interval
    (``ModelCell.corrected``), or ``—`` when there is none."""
    span = model_cell.corrected
    if span is None:
        return "—"
    return f"{pct(span.estimate)} ({pct(span.low)}–{pct(span.high)})"


def bounds_cells(bounds) -> list[str]:
    """The figures of a ``Bounds`` as table cells, each "all wrong … all right": Raw, Adjusted,
    the L5−L4 difference, its two verdicts, Overall."""
    return [
        f"{pct(bounds.raw[0])} … {pct(bounds.raw[1])}",
        f"{pct(bounds.adjusted[0])} … {pct(bounds.adjusted[1])}",
        f"{pp(bounds.diff[0])} … {pp(bounds.diff[1])}",
        " … ".join(bounds.verdicts),
        f"{pct(bounds.overall[0])} … {pct(bounds.overall[1])}",
    ]


#: Slot values shown per slot in reports; a numeric slot can have thousands of distinct values.
MAX_SLOT_VALUES = 12


def slot_values_text(values: dict[str, int], show=str, count=lambda n: f"{n:,}") -> str:
    """A slot's commonest values with their key counts, at most :data:`MAX_SLOT_VALUES` of them,
    then how many more there are (the JSON report keeps them all)."""
    items = list(values.items())
    shown = [f"{show(v)} {count(n)}" for v, n in items[:MAX_SLOT_VALUES]]
    if len(items) > MAX_SLOT_VALUES:
        shown.append(f"… {len(items) - MAX_SLOT_VALUES:,} more distinct values")
    return ", ".join(shown)
