"""Figures corrected for the rule's measured extraction error, with intervals that carry it.

Each response after the rule is either *known* — a labelled verdict (the label is the truth), or
a cell no rule changes (the benchmark's strict verdict) — or an *unlabelled* verdict of a rule,
certain or uncertain, accept or reject (in units: an item's samples share it, as everywhere).
Per cell and level, the truly right count among the unlabelled certain verdicts is the
Rogan–Gladen estimate

    (accepted − fa · n) / (1 − fa − fr),  kept within [0, n]

with n of them, ``accepted`` accepted, and the rule's certain false-accept rate fa (wrong
answers it accepts) and false-reject rate fr (right answers it rejects) from
:mod:`.extraction_error`; the same for the uncertain verdicts with their own rates. These rates
are the rule's, the same for every model and cell; the share of *accepts* that are wrong is not
(it grows as accuracy falls), so weighting each verdict by it would bias every comparison between
cells or models of unequal accuracy — on simulation it pulled the L5−L4 interval off the truth.
The point figures use the rates as observed, e/n (e misread of n labelled): the plain
Rogan–Gladen estimate, so where the adjudications found no misreading the corrected figure *is*
the uncorrected one and only its interval, from the Jeffreys draws, widens. (The rates' posterior
means (e + ½)/(n + 1) were used before: with 0 misread in 50 they still corrected by about 1%
of each rate, so 67.50% became 68.88% on the prior Beta(½, ½) alone.)

Intervals:

* the L(hi)−L(lo) difference: the domain-stratified image-cluster bootstrap of
  :mod:`.bootstrap`, each replicate also drawing every rule's rates
  (:func:`~.extraction_error.rate_draws`) — sampling error and extraction error together. The
  clusters are drawn with the very hashes of the uncorrected run;
* a model's corrected accuracy and its before→after change: the stored responses are not a
  sample, so their interval carries the extraction error alone: the rates' draws, and given them
  which of the unlabelled answers were misread (:func:`realised_right`), as a percentile interval
  over the replicates. Every model sees the same draw in a replicate, so a difference
  between two models has an interval too: a model order that the interval of its difference
  straddles could change within the measured error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from . import _bootstrap_reference as reference
from . import _extraction_reference
from .aggregate import Baselines, OutcomeColumns, cell_baseline, cell_table, cluster_counts
from .bootstrap import ENGINES, name_key
from .extraction_error import RuleErrorSample, point_rates, rate_draws
from .metrics import adjusted_score, verdict

#: The five sides of the after outcomes the correction reads: known right units, then the
#: unlabelled certain accepts, certain rejects, uncertain accepts, uncertain rejects.
SIDES = ("known", "certain accept", "certain reject", "uncertain accept", "uncertain reject")
_TWO53 = 1.0 / 9007199254740992.0
#: Below this an estimate and a draw differ by summation order only (accuracies are in [0, 1]).
_ROUNDING = 1e-12
_TAU = 2.0 * math.pi
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class CorrectionInputs:
    """The after outcomes split by side (:data:`SIDES`, each an :class:`OutcomeColumns` whose
    ``correct`` counts that side's units), which rule rules each cell (its index in ``samples``),
    the rules' adjudicated samples, and the baselines after the rule."""

    sides: tuple[OutcomeColumns, ...]
    rule_of_cell: Mapping[tuple[str, int], int]
    samples: tuple[RuleErrorSample, ...]
    baselines: Baselines


@dataclass(frozen=True)
class CorrectedDifference:
    """A model's L(hi)−L(lo) with the extraction error: plug-in estimate, interval, verdict."""

    estimate: float
    ci_low: float
    ci_high: float
    verdict: str
    n_replicates: int


@dataclass(frozen=True)
class Interval:
    """A corrected figure and its interval over the rate draws (extraction error alone)."""

    estimate: float
    low: float
    high: float


def corrected_right(parts: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Expected right units from ``parts[..., (known, CA, CR, UA, UR)]`` and rates
    ``q[..., (certain fa, certain fr, uncertain fa, uncertain fr)]`` (broadcast), as the kernel
    computes them."""
    kk, ca, cr, ua, ur = (np.asarray(parts[..., f]) for f in range(5))
    shape = np.broadcast_shapes(kk.shape, q[..., 0].shape)
    kk, ca, cr, ua, ur = (np.broadcast_to(x, shape) for x in (kk, ca, cr, ua, ur))
    q0, q1, q2, q3 = (np.broadcast_to(q[..., f], shape) for f in range(4))
    return (
        kk.astype(np.float64)
        + _extraction_reference.rogan_gladen(ca, cr, q0, q1)
        + _extraction_reference.rogan_gladen(ua, ur, q2, q3)
    )


# ---- the L(hi)−L(lo) bootstrap with the extraction error ------------------------------------------


def _parts(inputs: CorrectionInputs, levels: tuple[int, int]):
    """The kernel's arrays: 12 count columns per cluster, the strata (domains), and each stratum's
    rule row at the low and the high level."""
    counted = [cluster_counts(side, levels) for side in inputs.sides]
    layout = counted[0]
    parts = np.zeros((*layout.counts.shape[:2], 12), dtype=np.int32)
    for level, base in ((0, 0), (2, 6)):
        parts[..., base] = counted[0].counts[..., level]
        parts[..., base + 1] = counted[0].counts[..., level + 1]
        for f in range(1, 5):
            parts[..., base + 1 + f] = counted[f].counts[..., level]
    lo, hi = levels
    none = len(inputs.samples)
    rule_lo = np.array([inputs.rule_of_cell.get((d, lo), none) for d in layout.domains], dtype=np.int64)
    rule_hi = np.array([inputs.rule_of_cell.get((d, hi), none) for d in layout.domains], dtype=np.int64)
    base_lo = np.array([cell_baseline(inputs.baselines, d, lo) for d in layout.domains])
    base_hi = np.array([cell_baseline(inputs.baselines, d, hi) for d in layout.domains])
    return layout, parts, rule_lo, rule_hi, base_lo, base_hi


def corrected_point_differences(inputs: CorrectionInputs, levels: tuple[int, int]) -> dict[str, float]:
    """Each model's corrected L(hi)−L(lo) at the observed rates e/n (NaN: no paired domain)."""
    layout, parts, rule_lo, rule_hi, base_lo, base_hi = _parts(inputs, levels)
    q = point_rates(inputs.samples)
    out = {}
    for m, model in enumerate(layout.models):
        terms = []
        for s in range(len(layout.domains)):
            if not layout.active[m, s]:
                continue
            sums = parts[m, layout.offsets[m, s] : layout.offsets[m, s + 1]].sum(axis=0, dtype=np.int64)
            p_lo = corrected_right(sums[[0, 2, 3, 4, 5]], q[rule_lo[s]]) / sums[1]
            p_hi = corrected_right(sums[[6, 8, 9, 10, 11]], q[rule_hi[s]]) / sums[7]
            terms.append(adjusted_score(float(p_hi), base_hi[s]) - adjusted_score(float(p_lo), base_lo[s]))
        out[model] = math.fsum(terms) / len(terms) if terms else math.nan
    return out


def corrected_bootstrap(
    inputs: CorrectionInputs,
    levels: tuple[int, int],
    rates: np.ndarray,
    resamples: int,
    seed: int,
    confidence: float,
    engine: str = "numba",
    progress: Progress | None = None,
    chunk_size: int = 2_000,
) -> dict[str, CorrectedDifference]:
    """Each model's corrected L(hi)−L(lo), its bootstrap interval with the rates redrawn in every
    replicate (``rates`` from :func:`~.extraction_error.rate_draws`) and its verdict."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}")
    layout, parts, rule_lo, rule_hi, base_lo, base_hi = _parts(inputs, levels)
    model_keys = np.array([name_key(m) for m in layout.models], dtype=np.uint64)
    stratum_keys = np.array([name_key(d) for d in layout.domains], dtype=np.uint64)
    args = (
        np.ascontiguousarray(parts), np.ascontiguousarray(layout.offsets, dtype=np.int64),
        np.ascontiguousarray(layout.active, dtype=np.uint8), base_lo, base_hi, rule_lo, rule_hi,
        np.ascontiguousarray(rates), model_keys, stratum_keys,
    )
    if engine == "numba":
        from ._extraction_kernel import corrected_resamples

        def run(start: int, stop: int) -> np.ndarray:
            return corrected_resamples(*args, np.uint64(int(seed) & ((1 << 64) - 1)), start, stop)
    else:

        def run(start: int, stop: int) -> np.ndarray:
            return _extraction_reference.corrected_resamples_numpy(*args, int(seed), start, stop)

    reps = np.empty((len(layout.models), resamples), dtype=np.float64)
    for start in range(0, resamples, chunk_size):
        stop = min(start + chunk_size, resamples)
        reps[:, start:stop] = run(start, stop)
        if progress is not None:
            progress(stop, resamples)
    points = corrected_point_differences(inputs, levels)
    alpha = 1.0 - confidence
    out = {}
    for m, model in enumerate(layout.models):
        valid = reps[m][~np.isnan(reps[m])]
        if valid.size:
            low, high = (float(v) for v in np.quantile(valid, [alpha / 2, 1 - alpha / 2]))
        else:
            low = high = math.nan
        out[model] = CorrectedDifference(points[model], low, high, verdict(low, high), int(valid.size))
    return out


# ---- accuracies: extraction error alone ------------------------------------------------------------


@dataclass(frozen=True)
class CorrectedAccuracies:
    """Corrected accuracies over the rate draws: per (model, domain, level) ruled cell, and per
    model the mean over its cells at level ``hi`` (Raw L(hi)). ``draws_hi[m]`` are model ``m``'s
    Raw L(hi) per draw (for differences between models)."""

    cells: dict[tuple[str, str, int], Interval]
    raw_hi: dict[str, Interval]
    raw_hi_draws: dict[str, np.ndarray]


def _interval(point: float, draws: np.ndarray, confidence: float) -> Interval:
    """The percentile interval of the draws, reaching the estimate where every draw lies on one
    side of it: with no misreading observed the estimate is the uncorrected figure, while each
    Jeffreys draw of a rate is above 0, so where only one rate applies every draw moves the
    figure the same way."""
    alpha = 1.0 - confidence
    low, high = (float(v) for v in np.quantile(draws, [alpha / 2, 1 - alpha / 2]))
    point = float(point)
    if point < low - _ROUNDING:  # (a mean of the same counts summed another way is no gap)
        low = point
    elif point > high + _ROUNDING:
        high = point
    return Interval(point, low, high)


def normal_draws_python(keys: Sequence[int], seed: int, resamples: int) -> np.ndarray:
    """The reference of ``_extraction_kernel.normal_draws`` (plain Python, bit for bit)."""
    mix, mask, gamma = reference.mix64_python, reference.MASK, reference.GAMMA
    out = np.empty((len(keys), resamples), dtype=np.float64)
    seed_key = mix((seed + gamma) & mask)
    for c, key in enumerate(keys):
        kk = mix(int(key) ^ seed_key)
        for r in range(resamples):
            u1 = ((mix((kk + (2 * r + 1) * gamma) & mask) >> 11) + 0.5) * _TWO53
            u2 = ((mix((kk + (2 * r + 2) * gamma) & mask) >> 11) + 0.5) * _TWO53
            out[c, r] = math.sqrt(-2.0 * math.log(u1)) * math.cos(_TAU * u2)
    return out


def normal_draws(keys: Sequence[int], seed: int, resamples: int, engine: str = "numba") -> np.ndarray:
    """Counter-based standard normals ``[len(keys), resamples]``, one row per key."""
    seed_u = int(seed) & reference.MASK
    if engine == "numba":
        from ._extraction_kernel import normal_draws as kernel

        return kernel(np.array(list(keys), dtype=np.uint64), np.uint64(seed_u), resamples)
    return normal_draws_python(keys, seed_u, resamples)


def realised_right(
    a: np.ndarray, r: np.ndarray, fa: np.ndarray, fr: np.ndarray, z: np.ndarray
) -> np.ndarray:
    """Truly right units among ``a`` accepted and ``r`` rejected unlabelled verdicts, one draw per
    replicate: the Rogan–Gladen count ``n·p`` plus the spread of which answers were misread,
    ``z·√(a·w(1−w) + r·v(1−v))``, w = P(right | accepted) = p(1−fr)/(p(1−fr) + (1−p)fa) and
    v = P(right | rejected) = p·fr/(p·fr + (1−p)(1−fa)), kept within [0, a + r]. The stored
    responses are these, not a sample; but which of them the rule misread is unknown, and that
    uncertainty is binomial given the rates."""
    u = a + r
    centre = _extraction_reference.rogan_gladen(a, r, fa, fr)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(u > 0, centre / np.maximum(u, 1), 0.0)
        right_a = p * (1.0 - fr)
        w = np.where(right_a + (1.0 - p) * fa > 0, right_a / (right_a + (1.0 - p) * fa), 0.0)
        right_r = p * fr
        v = np.where(right_r + (1.0 - p) * (1.0 - fa) > 0, right_r / (right_r + (1.0 - p) * (1.0 - fa)), 0.0)
    spread = np.sqrt(a * w * (1.0 - w) + r * v * (1.0 - v))
    return np.clip(centre + z * spread, 0.0, u.astype(np.float64))


def corrected_accuracies(
    inputs: CorrectionInputs,
    hi: int,
    rates: np.ndarray,
    confidence: float,
    seed: int = 0,
    engine: str = "numba",
) -> CorrectedAccuracies:
    """Every ruled cell's corrected accuracy and each model's corrected Raw L(hi), each with its
    interval over the rate draws and which answers were misread (:func:`realised_right`; the
    responses are the stored ones: no resampling of them). The normals are keyed by (seed,
    model, domain, level, certain/uncertain): any order, any thread count, the same draws."""
    tables = [cell_table(side) for side in inputs.sides]
    totals = {key: count.n for key, count in tables[0].cells.items()}
    q_point = point_rates(inputs.samples)
    none = len(inputs.samples)
    ruled = [key for key in sorted(totals) if (key[1], key[2]) in inputs.rule_of_cell]
    keys = [
        name_key(f"extraction draw\0{model}\0{domain}\0{level}\0{kind}")
        for model, domain, level in ruled
        for kind in ("certain", "uncertain")
    ]
    z = normal_draws(keys, seed, rates.shape[0], engine) if keys else np.empty((0, rates.shape[0]))
    row = {key: 2 * i for i, key in enumerate(ruled)}
    cells: dict[tuple[str, str, int], Interval] = {}
    by_model: dict[str, list[tuple[float, np.ndarray]]] = {}
    for key in sorted(totals):
        model, domain, level = key
        counts = np.array(
            [t.cells[key].correct if key in t.cells else 0 for t in tables], dtype=np.int64
        )
        g = inputs.rule_of_cell.get((domain, level), none)
        total = totals[key]
        point = float(corrected_right(counts, q_point[g])) / total
        if g != none:
            i = row[key]
            q = rates[:, g, :]
            draws = (
                counts[0]
                + realised_right(
                    np.full(len(q), counts[1]), np.full(len(q), counts[2]), q[:, 0], q[:, 1], z[i]
                )
                + realised_right(
                    np.full(len(q), counts[3]), np.full(len(q), counts[4]), q[:, 2], q[:, 3], z[i + 1]
                )
            ) / total
            cells[key] = _interval(point, draws, confidence)
        else:
            draws = np.full(rates.shape[0], counts[0] / total)
        if level == hi:
            by_model.setdefault(model, []).append((point, draws))
    raw_hi, raw_draws = {}, {}
    for model, items in by_model.items():
        point = math.fsum(p for p, _ in items) / len(items)
        draws = np.sum([d for _, d in items], axis=0) / len(items)
        raw_hi[model] = _interval(point, draws, confidence)
        raw_draws[model] = draws
    return CorrectedAccuracies(cells, raw_hi, raw_draws)


def difference_interval(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile interval of ``a − b`` over the same draws."""
    alpha = 1.0 - confidence
    low, high = np.quantile(a - b, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


__all__ = [
    "SIDES",
    "CorrectedAccuracies",
    "CorrectedDifference",
    "CorrectionInputs",
    "Interval",
    "corrected_accuracies",
    "corrected_bootstrap",
    "corrected_point_differences",
    "corrected_right",
    "difference_interval",
    "point_rates",
    "rate_draws",
]
