"""The HTML page's forest plots as inline SVG, laid out so that no label overlaps another or leaves
the picture, at any range of values.

A browser measures text only once the page is drawn, and the page is written before that, so the
layout works from an upper bound of each text's width: the plots draw every text in a monospace
font, whose characters all advance the same (0.6 em in DejaVu Sans Mono, Menlo and Consolas;
:data:`ADVANCE` leaves a margin), two cells for a wide East Asian character. From it:

* model names sit in a column as wide as the widest name (at most :data:`MAX_LABEL` pixels; a
  longer name is cut with "…", its whole name in the row's tooltip);
* the axis is cut into "nice" steps (1, 2, 2.5 or 5 times a power of ten) and the smallest step
  whose labels keep :data:`GAP` pixels apart is chosen; the axis starts and ends on a tick, so
  every value lies inside it, and the plot area stops half a label short of the right edge;
* titles and legends wrap at spaces to the picture's width.

``tests/test_html_report.py`` reads every text's position against the width at many ranges, and the
browser test checks the bound against Chromium's own measure.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import printable
from .markup import escape_text

__all__ = ["ADVANCE", "ForestRow", "Mark", "Series", "forest_svg", "text_width"]

WIDTH = 560
PAD = 8
GAP = 10
MAX_LABEL = 200
FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
#: The font sizes of names and ticks, and of titles.
SIZE = 11
TITLE_SIZE = 12
#: An upper bound of one character's advance, in em, in the monospace fonts above.
ADVANCE = 0.64
LINE = 15
ROW = 20


def text_width(text: str, size: float) -> float:
    """An upper bound of ``text``'s width in pixels at font size ``size`` (see the module
    docstring)."""
    cells = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        cells += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return cells * ADVANCE * size


@dataclass(frozen=True)
class Mark:
    """One estimate with its interval, as fractions (NaN: none)."""

    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class Series:
    name: str
    colour: str


@dataclass(frozen=True)
class ForestRow:
    label: str
    marks: tuple[Mark | None, ...]


def _cut(text: str, width: float, size: float) -> str:
    """``text``, cut with "…" to fit ``width``."""
    if text_width(text, size) <= width:
        return text
    while text and text_width(text + "…", size) > width:
        text = text[:-1]
    return text + "…"


def _wrap(text: str, width: float, size: float) -> list[str]:
    """``text`` in lines no wider than ``width``, broken at spaces (a word too long is cut)."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if text_width(candidate, size) <= width or not line:
            line = candidate
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return [_cut(x, width, size) for x in lines]


def _steps(span: float):
    """Nice steps from about a tenth of ``span`` upwards."""
    power = 10.0 ** math.floor(math.log10(span / 10))
    while True:
        for factor in (1, 2, 2.5, 5):
            yield factor * power
        power *= 10


def _decimals(step: float) -> int:
    """Decimals that write every multiple of ``step`` exactly."""
    for d in range(0, 12):
        scaled = step * 10**d
        if abs(scaled - round(scaled)) < 1e-6 * max(1.0, scaled):
            return d
    return 12


def tick_label(value: float, decimals: int) -> str:
    if abs(value) < 0.5 * 10.0**-decimals:
        return "0"
    return f"{value:+.{decimals}f}"


def _ticks(
    lo: float, hi: float, x0: float, right: float
) -> tuple[list[float], list[str], float, float]:
    """Ticks over [lo, hi] (percentage points) whose labels fit between ``PAD`` and ``right``
    without touching, the axis starting at ``x0`` or later: the values, their labels and the two
    ends of the axis."""
    span = hi - lo
    for step in _steps(span):
        first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        if last == first:
            last += 1
        values = [k * step for k in range(first, last + 1)]
        if len(values) > 12:
            continue
        labels = [tick_label(v, _decimals(step)) for v in values]
        widths = [text_width(t, SIZE) for t in labels]
        start = max(x0, PAD + widths[0] / 2)
        x1 = right - widths[-1] / 2
        spacing = (x1 - start) / (len(values) - 1)
        needed = max(a / 2 + b / 2 + GAP for a, b in zip(widths, widths[1:], strict=False))
        if spacing >= needed:
            return values, labels, start, x1
    raise AssertionError("unreachable: two ticks always fit")  # pragma: no cover


def _texts(lines: list[str], x: float, y: float, size: int, cls: str, anchor: str = "start") -> list[str]:
    return [
        f'<text class="{cls}" x="{x:.1f}" y="{y + n * LINE:.1f}" font-size="{size}" '
        f'text-anchor="{anchor}">{escape_text(line)}</text>'
        for n, line in enumerate(lines)
    ]


def forest_svg(title: str, axis: str, series: Sequence[Series], rows: Sequence[ForestRow]) -> str:
    """One forest plot: per row its marks (one per series) with their intervals, in percentage
    points of the fractions given; "" when no row has a value."""
    values = [
        100 * v
        for row in rows
        for mark in row.marks
        if mark is not None
        for v in (mark.estimate, mark.low, mark.high)
        if math.isfinite(v)
    ]
    if not values:
        return ""
    values.append(0.0)
    lo, hi = min(values), max(values)
    if hi - lo < 1e-6 * max(1.0, abs(hi)):
        lo, hi = lo - 1.0, hi + 1.0
    inner = WIDTH - 2 * PAD
    out: list[str] = []
    y = PAD + TITLE_SIZE
    title_lines = _wrap(printable(title), inner, TITLE_SIZE)
    out += _texts(title_lines, PAD, y, TITLE_SIZE, "title")
    y += LINE * len(title_lines) + 4
    if len(series) > 1:  # the legend: a dot and a name per series, wrapped
        x = PAD
        for s in series:
            name = _cut(printable(s.name), inner - 12, SIZE)
            width = 12 + text_width(name, SIZE)
            if x > PAD and x + width > WIDTH - PAD:
                x, y = PAD, y + LINE
            out.append(f'<circle cx="{x + 4:.1f}" cy="{y - 4:.1f}" r="4" fill="{s.colour}"/>')
            out += _texts([name], x + 12, y, SIZE, "legend")
            x += width + 2 * GAP
        y += LINE
    labels = [_cut(printable(r.label), MAX_LABEL, SIZE) for r in rows]
    label_width = max(text_width(t, SIZE) for t in labels)
    x0 = PAD + label_width + GAP
    ticks, tick_labels, x0, x1 = _ticks(lo, hi, x0, WIDTH - PAD)
    lo, hi = ticks[0], ticks[-1]

    def at(value: float) -> str:
        return f"{x0 + (100 * value - lo) / (hi - lo) * (x1 - x0):.1f}"

    row_height = ROW + 8 * (len(series) - 1)
    top = y + 2
    axis_y = top + row_height * len(rows) + 4
    zero = at(0.0)
    out.append(f'<line x1="{zero}" y1="{top}" x2="{zero}" y2="{axis_y}" stroke="#8c959f" stroke-dasharray="3,3"/>')
    for n, (row, label) in enumerate(zip(rows, labels, strict=True)):
        middle = top + row_height * n + row_height / 2
        out.append(
            f'<text class="label" x="{x0 - GAP:.1f}" y="{middle + 4:.1f}" font-size="{SIZE}" '
            f'text-anchor="end"><title>{escape_text(printable(row.label))}</title>{escape_text(label)}</text>'
        )
        offsets = [8 * (k - (len(series) - 1) / 2) for k in range(len(series))]
        for mark, s, offset in zip(row.marks, series, offsets, strict=True):
            if mark is None or not math.isfinite(mark.estimate):
                continue
            my = middle + offset
            if math.isfinite(mark.low) and math.isfinite(mark.high):
                out.append(
                    f'<line x1="{at(mark.low)}" y1="{my:.1f}" x2="{at(mark.high)}" y2="{my:.1f}" '
                    f'stroke="{s.colour}" stroke-width="2"/>'
                )
            tip = f"{printable(row.label)}, {printable(s.name)}: {100 * mark.estimate:+.2f} pp"
            if math.isfinite(mark.low):
                tip += f" ({100 * mark.low:+.2f} to {100 * mark.high:+.2f} pp)"
            out.append(
                f'<circle cx="{at(mark.estimate)}" cy="{my:.1f}" r="3.5" fill="{s.colour}">'
                f"<title>{escape_text(tip)}</title></circle>"
            )
    out.append(f'<line x1="{x0:.1f}" y1="{axis_y}" x2="{x1:.1f}" y2="{axis_y}" stroke="#57606a"/>')
    for value, label in zip(ticks, tick_labels, strict=True):
        x = at(value / 100)
        out.append(f'<line x1="{x}" y1="{axis_y}" x2="{x}" y2="{axis_y + 4}" stroke="#57606a"/>')
        out.append(
            f'<text class="tick" x="{x}" y="{axis_y + 16}" font-size="{SIZE}" '
            f'text-anchor="middle">{escape_text(label)}</text>'
        )
    axis_lines = _wrap(printable(axis), inner, SIZE)
    out += _texts(axis_lines, PAD, axis_y + 16 + LINE, SIZE, "axis")
    height = axis_y + 16 + LINE * len(axis_lines) + PAD
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" font-family="{FONT}" role="img" '
        f'aria-label="{escape_text(printable(title))}">'
    )
    return "\n".join([head, *out, "</svg>"])
