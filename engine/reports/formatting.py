"""How rates and differences are written in every report (terminal and Markdown alike)."""

from __future__ import annotations

import math


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
