"""Before → after statistics for any benchmark design (one level or many): per model and cell,
the leaderboard, and the model pairs whose order flips.

The seed's L5−L4 analysis needs two levels; most benchmarks have one. What every design has is
the same items scored twice — by the benchmark's own (strict) verdict *before* and by the rule
*after* — so the questions are paired:

* **per model and cell**: accuracy after − before, with a paired image-cluster bootstrap interval
  (an image's items move together, and each draw keeps an item's two verdicts together);
* **per model**: the overall score (mean adjusted score over the model's cells, each cell's
  constant-answer baseline held fixed, before and after with their own baselines) and its change;
* **the leaderboard**: ranks before and after, Kendall's τ-b between them with an interval, and
  every pair of models whose order changes — reversed, a tie before that the rule breaks, or an
  order before that becomes a tie — with whether the new order is significant (the interval of
  the after-difference between the two excludes 0).

One replicate draws, within each domain, as many image clusters as the domain has, with
replacement, *the same draw for every model* (models answer the same items, so their scores are
correlated; a leaderboard statistic must keep that). Randomness is numpy's PCG64 seeded from
``seed`` and each domain's name, so the result is the same for any model order, thread count or
process; percentile intervals at ``confidence``.

Plain numpy (a weighted sum per replicate is one matrix product); the numba kernel serves the
L5−L4 statistic, whose per-model replicate loop it was built for.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .aggregate import OutcomeColumns, cells_of

__all__ = [
    "FLIP_CHANGES", "DesignStats", "ItemOutcome", "PairFlip", "before_after", "before_after_columns",
]


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """One item of one model: its cell, image cluster, units and right units before and after."""

    model: str
    domain: str
    level: int
    image: str
    n: int
    before: int
    after: int


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class CellChange:
    """One model's before → after accuracy in one cell."""

    model: str
    domain: str
    level: int
    before: float
    after: float
    change: Interval
    clusters: int


#: How a pair's order changes (:attr:`PairFlip.change`).
FLIP_CHANGES = ("reversed", "tie broken", "now tied")


@dataclass(frozen=True)
class PairFlip:
    """Two models whose order differs after. ``change`` says how (:data:`FLIP_CHANGES`):
    ``reversed`` — ``ahead`` leads after, ``behind`` led before; ``tie broken`` — tied before,
    ``ahead`` leads after (a one-level benchmark scored 0% strict ties every model); ``now tied``
    — ``ahead`` led before, the two are tied after."""

    ahead: str
    behind: str
    #: after-score of ``ahead`` minus ``behind``, with its interval
    gap: Interval
    change: str = "reversed"

    @property
    def significant(self) -> bool:
        return self.gap.low > 0


@dataclass(frozen=True)
class DesignStats:
    cells: tuple[CellChange, ...]
    models: tuple[str, ...]
    overall_before: tuple[float, ...]
    overall_after: tuple[float, ...]
    overall_change: tuple[Interval, ...]
    rank_before: tuple[int, ...]
    rank_after: tuple[int, ...]
    kendall_tau: Interval | None
    flips: tuple[PairFlip, ...]
    resamples: int
    confidence: float


def before_after(
    items: Sequence[ItemOutcome],
    baselines_before: Mapping[tuple[str, int], float],
    baselines_after: Mapping[tuple[str, int], float],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> DesignStats:
    """Every before → after statistic above from the items' paired outcomes."""
    rows = [(i.model, i.domain, i.image, i.level, i.before, i.n) for i in items]
    before = OutcomeColumns.build(rows)
    after = before.with_correct(np.array([i.after for i in items], dtype=np.int64))
    return before_after_columns(
        before, after, baselines_before, baselines_after,
        resamples=resamples, seed=seed, confidence=confidence,
    )


def before_after_columns(
    before: OutcomeColumns,
    after: OutcomeColumns,
    baselines_before: Mapping[tuple[str, int], float],
    baselines_after: Mapping[tuple[str, int], float],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> DesignStats:
    """:func:`before_after` on the audit's outcome columns (``after`` shares every column of
    ``before`` but ``correct``): one product per domain, so millions of outcomes cost seconds."""
    models = before.models
    cells, cell_at = cells_of(before)
    tail = (1 - confidence) / 2
    units_sum = np.zeros((resamples + 1, len(cells)))
    before_sum = np.zeros((resamples + 1, len(cells)))
    after_sum = np.zeros((resamples + 1, len(cells)))
    clusters = np.zeros(len(cells), dtype=np.int64)
    for d, domain in enumerate(before.domains):
        mine = np.flatnonzero(before.domain == d)
        if mine.size == 0:
            continue
        # the domain's images (sorted by name: the draw's order) and cells
        images, image_at = np.unique(before.image[mine], return_inverse=True)
        own_cells, own_at = np.unique(cell_at[mine], return_inverse=True)
        shape = (images.size, own_cells.size)
        # per (image, cell) sums; bincount of the flat index (np.add.at is ~30x slower)
        flat = image_at.reshape(-1) * own_cells.size + own_at.reshape(-1)
        units, right_b, right_a = (
            np.bincount(flat, weights=values[mine], minlength=images.size * own_cells.size)
            .reshape(shape)
            for values in (before.n, before.correct, after.correct)
        )
        clusters[own_cells] = np.count_nonzero(units, axis=0)
        counts = np.vstack([np.ones((1, images.size)), _draws(seed, domain, images.size, resamples)])
        units_sum[:, own_cells] = counts @ units
        before_sum[:, own_cells] = counts @ right_b
        after_sum[:, own_cells] = counts @ right_a
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_before = before_sum / units_sum  # row 0: the full sample; NaN where a draw has no item
        acc_after = after_sum / units_sum

    def interval(values: np.ndarray) -> Interval:
        """Estimate (row 0) and percentile interval over the replicates that have a value."""
        draws = values[1:][~np.isnan(values[1:])]
        if draws.size == 0:
            return Interval(float(values[0]), math.nan, math.nan)
        low, high = np.quantile(draws, [tail, 1 - tail], method="linear")
        return Interval(float(values[0]), float(low), float(high))

    cell_changes = tuple(
        CellChange(
            model=m, domain=d, level=lv,
            before=float(acc_before[0, k]), after=float(acc_after[0, k]),
            change=interval(acc_after[:, k] - acc_before[:, k]), clusters=int(clusters[k]),
        )
        for k, (m, d, lv) in enumerate(cells)
    )
    # Overall per model: mean adjusted score over its cells, per replicate (a cell a draw left
    # empty is left out of that replicate's mean, as a missing cell is out of every mean).
    overall_b = np.full((resamples + 1, len(models)), np.nan)
    overall_a = np.full((resamples + 1, len(models)), np.nan)
    for j, model in enumerate(models):
        own = [k for k, c in enumerate(cells) if c[0] == model]
        base_b = np.array([baselines_before[(cells[k][1], cells[k][2])] for k in own])
        base_a = np.array([baselines_after[(cells[k][1], cells[k][2])] for k in own])
        overall_b[:, j] = _mean_adjusted(acc_before[:, own], base_b)
        overall_a[:, j] = _mean_adjusted(acc_after[:, own], base_a)
    change = tuple(interval(overall_a[:, j] - overall_b[:, j]) for j in range(len(models)))
    rank_b, rank_a = _ranks(overall_b[0]), _ranks(overall_a[0])
    tau = None
    if len(models) >= 2:
        taus = np.array([_kendall_tau_b(overall_b[r], overall_a[r]) for r in range(resamples + 1)])
        tau = interval(taus)
    flips = []
    for a in range(len(models)):
        for b in range(len(models)):
            after, before = overall_a[0, a] - overall_a[0, b], overall_b[0, a] - overall_b[0, b]
            how = (
                "reversed" if after > 0 and before < 0
                else "tie broken" if after > 0 and before == 0
                else "now tied" if after == 0 and before > 0
                else None
            )
            if how is not None:
                gap = interval(overall_a[:, a] - overall_a[:, b])
                flips.append(PairFlip(models[a], models[b], gap, how))
    flips.sort(key=lambda f: (-f.gap.estimate, f.ahead, f.behind))
    return DesignStats(
        cells=cell_changes,
        models=models,
        overall_before=tuple(float(x) for x in overall_b[0]),
        overall_after=tuple(float(x) for x in overall_a[0]),
        overall_change=change,
        rank_before=rank_b,
        rank_after=rank_a,
        kendall_tau=tau,
        flips=tuple(flips),
        resamples=resamples,
        confidence=confidence,
    )


def _draws(seed: int, domain: str, n_images: int, resamples: int) -> np.ndarray:
    """How often each image is drawn in each replicate: (resamples, n_images) counts, keyed by
    (seed, domain) only, so a domain's draws do not depend on the other domains or models."""
    digest = hashlib.sha256(f"{seed}\0before_after\0{domain}".encode()).digest()
    rng = np.random.Generator(np.random.PCG64(int.from_bytes(digest[:16], "big")))
    picks = rng.integers(0, n_images, size=(resamples, n_images))
    flat = (np.arange(resamples)[:, None] * n_images + picks).ravel()
    return np.bincount(flat, minlength=resamples * n_images).reshape(resamples, n_images).astype(float)


def _mean_adjusted(acc: np.ndarray, baselines: np.ndarray) -> np.ndarray:
    """Row-wise mean of the adjusted scores of the cells that have a value."""
    base = np.broadcast_to(baselines, acc.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        # metrics.adjusted_score, element-wise: raw − baseline where the baseline is 1
        adjusted = np.where(base == 1.0, acc - base, (acc - base) / np.where(base == 1.0, 1.0, 1.0 - base))
        counts = np.sum(~np.isnan(adjusted), axis=1)
        sums = np.nansum(adjusted, axis=1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _ranks(scores: np.ndarray) -> tuple[int, ...]:
    """1 = best; ties share the better rank (competition ranking)."""
    return tuple(int(1 + np.sum(scores > s)) for s in scores)


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b of two score vectors (ties handled as in τ-b); NaN where undefined."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if x.size < 2:
        return math.nan
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(x.size, k=1)
    dx, dy = dx[upper], dy[upper]
    concordant_minus_discordant = float(np.sum(dx * dy))
    pairs_x, pairs_y = float(np.count_nonzero(dx)), float(np.count_nonzero(dy))
    if pairs_x == 0 or pairs_y == 0:
        return math.nan
    return concordant_minus_discordant / math.sqrt(pairs_x * pairs_y)
