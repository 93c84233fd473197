"""The before → after statistics as table rows and sentences, shared by the terminal and the
Markdown report (so both say the same; JSON carries the numbers: ``before_after``)."""

from __future__ import annotations

import math

from .findings import Audit
from .formatting import Show, as_is, pct, pp

__all__ = ["cell_rows", "flip_sentences", "leaderboard_rows", "tau_sentence"]


def _span(interval) -> str:
    if interval is None or math.isnan(interval.low):
        return "—"
    return f"{pp(interval.low)} to {pp(interval.high)}"


def cell_rows(audit: Audit, show: Show = as_is) -> list[tuple[str, ...]]:
    """(cell, model, before, after, change, interval) for each model in each ruled cell."""
    design = audit.design
    ruled = {(c.domain, c.level) for c in audit.cells}
    return [
        (f"{show(c.domain)} L{c.level}", show(c.model), pct(c.before), pct(c.after), pp(c.change.estimate), _span(c.change))
        for c in design.cells
        if (c.domain, c.level) in ruled
    ]


def leaderboard_rows(audit: Audit, show: Show = as_is) -> list[tuple[str, ...]]:
    """(model, overall before, overall after, change, interval, rank before → after), best after
    first."""
    d = audit.design
    order = sorted(range(len(d.models)), key=lambda j: (d.rank_after[j], d.models[j]))
    return [
        (
            show(d.models[j]), pct(d.overall_before[j]), pct(d.overall_after[j]),
            pp(d.overall_change[j].estimate), _span(d.overall_change[j]),
            f"{d.rank_before[j]} → {d.rank_after[j]}",
        )
        for j in order
    ]


def tau_sentence(audit: Audit) -> str:
    d = audit.design
    conf = f"{100 * d.confidence:g}%"
    if d.kendall_tau is None or math.isnan(d.kendall_tau.estimate):
        return "Kendall's τ between the rankings before and after: undefined (fewer than two models)."
    t = d.kendall_tau
    return (
        f"Kendall's τ-b between the rankings before and after: {t.estimate:.3f} "
        f"({conf} interval {t.low:.3f} to {t.high:.3f}; 1 = the same order)."
    )


def flip_sentences(audit: Audit, show: Show = as_is) -> list[str]:
    d = audit.design
    if not d.flips:
        return ["No pair of models changes order between strict scoring and the rules."]
    conf = f"{100 * d.confidence:g}%"
    return [
        f"{show(f.ahead)} now leads {show(f.behind)} by {pp(f.gap.estimate)} ({conf} interval {_span(f.gap)}): "
        + ("the new order is significant." if f.significant else "the new order is not significant.")
        for f in d.flips
    ]
