"""The before → after statistics as table rows and sentences, shared by the terminal and the
Markdown report (so both say the same; JSON carries the numbers: ``before_after``)."""

from __future__ import annotations

import math

from .findings import Audit
from .formatting import Show, as_is, pct, pp

__all__ = [
    "cell_rows", "flip_sentences", "leaderboard_rows", "no_level_pairs", "one_level", "tau_sentence",
]


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


def no_level_pairs(audit: Audit) -> str | None:
    """The sentence that replaces the L-difference analysis where no model has a domain at both
    of the compared levels (a one-level benchmark), else None: such a benchmark gets no table of
    dashes and no sentence about levels it does not have."""
    lo, hi = audit.settings.levels
    if not audit.aggregates or (lo >= 0 and any(a.n_paired for a in audit.aggregates)):
        return None
    levels = audit.scope.levels
    if len(levels) <= 1:
        where = f"This benchmark has one level ({', '.join(f'L{v}' for v in levels) or 'none'})"
    elif lo < 0:  # --levels L: one level chosen
        where = f"One level was chosen (`--levels {hi}`)"
    else:
        where = f"No domain has items at both L{lo} and L{hi} (`--levels` chooses the two compared)"
    return (
        f"{where}, so no difference of levels applies; the before → after section compares every "
        "model on every cell."
    )


def one_level(audit: Audit) -> bool:
    """Whether the report speaks of one level: no L(hi)−L(lo), no Raw L(hi) sentence."""
    return no_level_pairs(audit) is not None


def _tied_pairs(scores: tuple[float, ...]) -> int:
    values = [v for v in scores if not math.isnan(v)]
    return sum(values[i] == values[j] for i in range(len(values)) for j in range(i + 1, len(values)))


def _order(audit: Audit, show: Show) -> str:
    d = audit.design
    order = sorted(range(len(d.models)), key=lambda j: (d.rank_after[j], d.models[j]))
    return ", ".join(f"{show(d.models[j])} {pct(d.overall_after[j])}" for j in order)


def tau_sentence(audit: Audit, show: Show = as_is) -> str:
    """Kendall's τ-b between the orders before and after, naming ties as ties: a side where
    every model is tied has no order, so τ-b is undefined for that reason, not for want of
    models; ties on a side are counted as τ-b counts them, and said."""
    d = audit.design
    conf = f"{100 * d.confidence:g}%"
    n = len(d.models)
    if n < 2:
        return "Kendall's τ between the rankings before and after: undefined (fewer than two models)."
    pairs = n * (n - 1) // 2
    tied_before, tied_after = _tied_pairs(d.overall_before), _tied_pairs(d.overall_after)
    if tied_before == pairs and tied_after == pairs:
        return (
            f"All {n} models are tied both before and after the rules, so there is no order to"
            " compare (Kendall's τ-b is undefined)."
        )
    if tied_before == pairs:
        return (
            f"All {n} models are tied before the rules (overall {pct(d.overall_before[0])}), so"
            f" Kendall's τ-b, which compares two orders, is undefined; after them the order is"
            f" {_order(audit, show)}."
        )
    if tied_after == pairs:
        return (
            f"All {n} models are tied after the rules (overall {pct(d.overall_after[0])}), so"
            " Kendall's τ-b, which compares two orders, is undefined."
        )
    t = d.kendall_tau
    if t is None or math.isnan(t.estimate):
        return "Kendall's τ-b between the rankings before and after: undefined."
    ties = [
        f"{k} of the {pairs} pairs tied {when}"
        for k, when in ((tied_before, "before"), (tied_after, "after"))
        if k
    ]
    with_ties = f", with ties ({' and '.join(ties)}; τ-b counts a tie as neither order)" if ties else ""
    interval = "" if math.isnan(t.low) else f"{conf} interval {t.low:.3f} to {t.high:.3f}; "
    return (
        f"Kendall's τ-b between the rankings before and after{with_ties}: {t.estimate:.3f} "
        f"({interval}1 = the same order)."
    )


def flip_sentences(audit: Audit, show: Show = as_is) -> list[str]:
    """Every pair of models whose order changes: reversed, a tie the rules break (a change of
    order too), or an order that becomes a tie."""
    d = audit.design
    if not d.flips:
        return ["No pair of models changes order between strict scoring and the rules."]
    conf = f"{100 * d.confidence:g}%"
    out = []
    for f in d.flips:
        ahead, behind = show(f.ahead), show(f.behind)
        if f.change == "now tied":
            out.append(f"{ahead}, ahead of {behind} before, is tied with it after the rules.")
            continue
        verdict = "the new order is significant." if f.significant else "the new order is not significant."
        lead = (
            f"{ahead}, tied with {behind} before, now leads it" if f.change == "tie broken"
            else f"{ahead} now leads {behind}"
        )
        out.append(f"{lead} by {pp(f.gap.estimate)} ({conf} interval {_span(f.gap)}): {verdict}")
    return out
