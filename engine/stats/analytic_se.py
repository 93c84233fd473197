"""Analytic clustered standard error of the paired-domain adjusted difference, and its design effect.

Follows Miller (2024), "Adding Error Bars to Evals" (arXiv 2411.00640): items that share an image
are not independent, so the standard error is cluster-robust with clusters = images, and the
domains are independent strata. For one model with ``K`` paired domains the statistic is

    D = (1/K) * sum_d [ w_hi,d * (p_hi,d - b_hi,d) - w_lo,d * (p_lo,d - b_lo,d) ],

with ``p = C / T`` a cell's accuracy (a ratio of cluster sums: images may hold several items),
``b`` the fixed baseline and ``w = 1 / (1 - b)`` (``w = 1`` when ``b == 1``, matching
:func:`keyaudit.engine.stats.metrics.adjusted_score`). Baselines are constants, so ``D`` is a linear
combination of the cell means and the delta method is exact up to the ratio linearisation
``p_hat - p ~ sum_c (y_c - p t_c) / T``. Each image ``c`` of domain ``d`` contributes the residual

    e_c = w_hi (y_hi,c - p_hi t_hi,c) / T_hi - w_lo (y_lo,c - p_lo t_lo,c) / T_lo

(both levels of an image in one residual: their covariance is part of the cluster), and

    Var(D) = (1/K^2) * sum_d sum_{c in d} e_c^2.

As in Miller's formula there is no small-sample factor ``n/(n-1)``; that is also what the
cluster bootstrap estimates, which makes the two directly comparable. The **design effect** is
``Var(D)`` divided by the variance the same formula gives when every item is its own cluster,
``(1/K^2) sum_d [w_hi^2 p_hi (1 - p_hi) / T_hi + w_lo^2 p_lo (1 - p_lo) / T_lo]``; above 1 means
image clustering inflates the uncertainty. It is NaN when that independent variance is 0 (every
paired cell at 0% or 100%). With ``--epochs all`` an item's several samples are averaged and an
item weighs ``units`` count units (:class:`~.aggregate.ClusterCounts`); the independent reference
still counts items, not samples, so the design effect compares with independent yes/no items.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .aggregate import Baselines, ClusterCounts, cell_baseline


@dataclass(frozen=True)
class AnalyticSE:
    """Clustered SE of a model's difference, the SE if items were independent, their variance ratio."""

    se: float
    se_independent: float
    design_effect: float


def _weight(b: float) -> float:
    return 1.0 if b == 1.0 else 1.0 / (1.0 - b)


def analytic_difference_se(clusters: ClusterCounts, baselines: Baselines) -> dict[str, AnalyticSE]:
    """Per-model :class:`AnalyticSE` of the paired-domain difference (NaN with no paired domain)."""
    lo, hi = clusters.levels
    out: dict[str, AnalyticSE] = {}
    for m, model in enumerate(clusters.models):
        unit = clusters.item_units(m)
        var = 0.0
        var_ind = 0.0
        k = 0
        for s, domain in enumerate(clusters.domains):
            if not clusters.active[m, s]:
                continue
            rows = clusters.counts[m, clusters.offsets[m, s] : clusters.offsets[m, s + 1]].astype(
                np.float64
            )
            y_lo, t_lo, y_hi, t_hi = rows.T
            big_lo, big_hi = t_lo.sum(), t_hi.sum()
            items_lo, items_hi = big_lo / unit, big_hi / unit
            p_lo, p_hi = y_lo.sum() / big_lo, y_hi.sum() / big_hi
            w_lo = _weight(cell_baseline(baselines, domain, lo))
            w_hi = _weight(cell_baseline(baselines, domain, hi))
            e = w_hi * (y_hi - p_hi * t_hi) / big_hi - w_lo * (y_lo - p_lo * t_lo) / big_lo
            var += float(np.dot(e, e))
            var_ind += (
                w_hi**2 * p_hi * (1 - p_hi) / items_hi + w_lo**2 * p_lo * (1 - p_lo) / items_lo
            )
            k += 1
        if k == 0:
            out[model] = AnalyticSE(math.nan, math.nan, math.nan)
            continue
        deff = float(var / var_ind) if var_ind > 0 else math.nan
        out[model] = AnalyticSE(math.sqrt(var) / k, float(math.sqrt(var_ind)) / k, deff)
    return out


def clustered_mean_se(values: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """The cluster-robust standard error of a plain mean of ``values`` (clusters: images).

    Miller (2024), Appendix A, with the finite-cluster factor ``C/(C-1)``: ``sqrt(C/(C-1) *
    sum_c (sum_{i in c} (x_i - mean))^2) / n``. With every value its own cluster it is the usual
    standard error ``std(ddof=1) / sqrt(n)``; inspect_ai's ``stderr(cluster=...)`` computes the
    same. Used by the scorer integrations, whose accuracy is a mean of 1/0 verdicts; 0.0 with
    fewer than two clusters (nothing to estimate a spread from), NaN with no value."""
    if len(values) != len(clusters):
        raise ValueError("one cluster per value")
    n = len(values)
    if n == 0:
        return math.nan
    mean = math.fsum(values) / n
    sums: dict[Hashable, float] = {}
    for value, cluster in zip(values, clusters, strict=True):
        sums[cluster] = sums.get(cluster, 0.0) + (value - mean)
    count = len(sums)
    if count < 2:
        return 0.0
    variance = math.fsum(s * s for s in sums.values()) * count / (count - 1)
    return math.sqrt(variance) / n
