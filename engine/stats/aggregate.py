"""Aggregate scored outcomes into cells, per-model summaries and per-image cluster arrays.

Vocabulary (used by every statistic keyaudit reports):

* a **cell** is one (domain, level); a model's *raw accuracy* in a cell is correct / evaluated;
* its **adjusted score** is :func:`keyaudit.engine.stats.metrics.adjusted_score` of that raw accuracy
  against the cell's constant-answer baseline (baselines are keyed by (domain, level) and are the
  same for every model);
* with ``levels=(lo, hi)`` (default (4, 5)), a model's **paired domains** are the domains where it
  has a cell at ``lo`` *and* a cell at ``hi``.

A model that lacks a cell (no evaluated item there) simply does not have that cell in any of its
means; nothing is imputed. A domain a model has at one of the two levels only is not paired: it
counts in ``raw_hi`` / ``overall`` but not in ``adjusted_hi``, ``adjusted_lo`` or ``diff``.

This module must stay free of numba: it is imported by the CLI's fast paths.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import DataError, UsageError
from .metrics import adjusted_score, check_baseline, raw_accuracy

CellKey = tuple[str, str, int]  # (model, domain, level)
Baselines = Mapping[tuple[str, int], float]  # (domain, level) -> constant-answer baseline


@dataclass(frozen=True, slots=True)
class Outcome:
    """One scored item: which model, which item (domain, image cluster, level), correct?

    An item scored once counts as one unit (``n == 1``) that is right or wrong. An item scored
    several times (``--epochs all``: inspect epochs, lm-eval repeats) is averaged: it counts as
    ``n`` units of which ``correct`` are right, with ``n`` the same for every item of the model,
    so a cell's rate is the mean of its items' rates (see :func:`keyaudit.engine.audit`).
    """

    model: str
    domain: str
    image: str
    level: int
    correct: bool | int
    n: int = 1


@dataclass(frozen=True)
class OutcomeColumns:
    """Many outcomes as columns: the same figures as a list of :class:`Outcome`, at a fraction of
    the memory and time (a full benchmark has millions of outcomes, and the audit four variants of
    them that differ only in ``correct``).

    ``models``, ``domains`` and ``images`` are sorted names; ``model``, ``domain`` and ``image``
    index them per outcome, and ``level``, ``n`` and ``correct`` are the outcome's fields.
    """

    models: tuple[str, ...]
    domains: tuple[str, ...]
    images: tuple[str, ...]
    model: np.ndarray
    domain: np.ndarray
    image: np.ndarray
    level: np.ndarray
    n: np.ndarray
    correct: np.ndarray

    @classmethod
    def build(cls, rows: Iterable[tuple[str, str, str, int, int, int]]) -> OutcomeColumns:
        """From ``(model, domain, image, level, correct, n)`` rows."""
        rows = list(rows)
        names = [sorted({r[k] for r in rows}) for k in range(3)]
        index = [{name: i for i, name in enumerate(column)} for column in names]
        arrays = [
            np.fromiter((index[k][r[k]] for r in rows), dtype=np.int64, count=len(rows))
            for k in range(3)
        ]
        level, correct, n = (
            np.fromiter((int(r[k]) for r in rows), dtype=np.int64, count=len(rows))
            for k in (3, 4, 5)
        )
        return cls(tuple(names[0]), tuple(names[1]), tuple(names[2]), *arrays, level, n, correct)

    @classmethod
    def from_outcomes(cls, outcomes: Iterable[Outcome]) -> OutcomeColumns:
        return cls.build((o.model, o.domain, o.image, o.level, o.correct, o.n) for o in outcomes)

    def with_correct(self, correct: np.ndarray) -> OutcomeColumns:
        """The same outcomes with other ``correct`` values (in the type of ``n``)."""
        return replace(self, correct=np.asarray(correct, dtype=self.n.dtype))

    def __len__(self) -> int:
        return len(self.model)


def _wide(codes: np.ndarray) -> np.ndarray:
    """Codes as int64 before they are multiplied into a combined code (columns may be one or
    two bytes wide)."""
    return np.asarray(codes, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class CellCount:
    """Correct and evaluated item counts of one model in one cell (``n >= 1``)."""

    correct: int
    n: int

    @property
    def raw(self) -> float:
        return raw_accuracy(self.correct, self.n)


@dataclass(frozen=True)
class CellTable:
    """Per-(model, domain, level) counts. Build it with :func:`cell_table` or :meth:`from_counts`."""

    cells: Mapping[CellKey, CellCount]

    @classmethod
    def from_counts(cls, counts: Mapping[CellKey, tuple[int, int]]) -> CellTable:
        """Table from ``{(model, domain, level): (correct, n)}``, validating every cell."""
        cells: dict[CellKey, CellCount] = {}
        for key, (correct, n) in counts.items():
            raw_accuracy(correct, n)  # validates 0 <= correct <= n, n >= 1
            cells[key] = CellCount(int(correct), int(n))
        return cls(dict(sorted(cells.items())))

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(sorted({model for model, _, _ in self.cells}))

    def for_model(self, model: str) -> dict[tuple[str, int], CellCount]:
        """``{(domain, level): counts}`` of one model's cells."""
        return {(d, lv): c for (m, d, lv), c in self.cells.items() if m == model}


def cell_table(outcomes: Iterable[Outcome] | OutcomeColumns) -> CellTable:
    """Count correct and evaluated items per (model, domain, level)."""
    if isinstance(outcomes, OutcomeColumns):
        return _cell_table_columns(outcomes)
    correct: dict[CellKey, int] = defaultdict(int)
    total: dict[CellKey, int] = defaultdict(int)
    for o in outcomes:
        key = (o.model, o.domain, int(o.level))
        total[key] += o.n
        correct[key] += int(o.correct)
    return CellTable({k: CellCount(correct[k], total[k]) for k in sorted(total)})


def _cell_table_columns(cols: OutcomeColumns) -> CellTable:
    """:func:`cell_table` of columns: the same table, counted with numpy."""
    if not len(cols):
        return CellTable({})
    cells, cell_at = cells_of(cols)
    total = np.bincount(cell_at, weights=cols.n, minlength=len(cells))
    right = np.bincount(cell_at, weights=cols.correct, minlength=len(cells))
    return CellTable(
        {cell: CellCount(int(right[k]), int(total[k])) for k, cell in enumerate(cells)}
    )


def cells_of(outcomes: OutcomeColumns) -> tuple[list[CellKey], np.ndarray]:
    """The cells ``(model, domain, level)`` the outcomes reach, in that (sorted) order, and each
    outcome's cell among them. One integer code per outcome is built in place, and its few
    possible values counted rather than sorted (np.unique over rows, axis=0, sorts the same way
    but is several times slower, and a sort of 25 M codes took a gigabyte)."""
    levels = np.unique(outcomes.level)
    n_d, n_l = max(len(outcomes.domains), 1), max(len(levels), 1)
    code = outcomes.model.astype(np.int64)
    code *= n_d
    code += outcomes.domain
    code *= n_l
    code += np.searchsorted(levels, outcomes.level)
    size = max(len(outcomes.models), 1) * n_d * n_l
    if size > 4 * len(code) + 1024:  # many more possible cells than outcomes: sort instead
        codes, cell_at = _sorted_cells(code)
    else:
        codes, cell_at = _counted_cells(code, size)
    cell_model, rest = np.divmod(codes, n_d * n_l)
    cell_domain, cell_level = np.divmod(rest, n_l)
    cells = [
        (outcomes.models[m], outcomes.domains[d], int(levels[lv]))
        for m, d, lv in zip(cell_model.tolist(), cell_domain.tolist(), cell_level.tolist(), strict=True)
    ]
    return cells, cell_at


def _sorted_cells(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cell_codes, cell_at = np.unique(code, return_inverse=True)
    return cell_codes, cell_at.reshape(-1)


def _counted_cells(code: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    present = np.bincount(code, minlength=size) > 0
    cell_of = np.cumsum(present) - 1
    return np.flatnonzero(present), cell_of[code]


@dataclass(frozen=True)
class ModelSummary:
    """One model's aggregates for ``levels=(lo, hi)``; rates are fractions (0.5518, not 55.18).

    * ``raw_hi`` ("Raw L5"): mean raw accuracy over all the model's cells at level ``hi``
      (``n_hi_cells`` of them).
    * ``adjusted_hi`` / ``adjusted_lo`` ("Adjusted L5"/"L4"): mean adjusted score over the model's
      ``n_paired`` paired domains at level ``hi`` / ``lo``.
    * ``diff`` ("L5−L4"): mean over paired domains of (adjusted hi − adjusted lo); equal to
      ``adjusted_hi - adjusted_lo`` up to rounding.
    * ``overall`` ("Overall macro"): mean adjusted score over all ``n_cells`` cells of the model, at
      every level.

    A mean over no cell is NaN (e.g. ``diff`` of a model with no paired domain).
    """

    model: str
    levels: tuple[int, int]
    raw_hi: float
    adjusted_hi: float
    adjusted_lo: float
    diff: float
    overall: float
    n_hi_cells: int
    n_paired: int
    n_cells: int
    paired_domains: tuple[str, ...] = field(default=())


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def check_levels(levels: tuple[int, int]) -> tuple[int, int]:
    """Validate ``(lo, hi)``: two distinct integer levels."""
    if len(levels) != 2 or levels[0] == levels[1]:
        raise UsageError(f"levels must be two distinct levels (lo, hi), got {levels!r}")
    return int(levels[0]), int(levels[1])


def cell_baseline(baselines: Baselines, domain: str, level: int) -> float:
    """The checked baseline of one cell; a missing one is a data error naming the cell."""
    try:
        value = baselines[(domain, level)]
    except KeyError:
        raise DataError(f"no constant-answer baseline for cell {domain} L{level}") from None
    return check_baseline(value, f"{domain} L{level}")


def summarize(
    table: CellTable, baselines: Baselines, levels: tuple[int, int] = (4, 5)
) -> dict[str, ModelSummary]:
    """Per-model aggregates (see :class:`ModelSummary`), models in sorted order.

    Every cell a model has needs a baseline in ``baselines`` (a :class:`DataError` otherwise);
    cells a model does not have are left out of its means, never counted as zero.
    """
    lo, hi = check_levels(levels)
    out: dict[str, ModelSummary] = {}
    for model in table.models:
        cells = table.for_model(model)
        adjusted = {
            cell: adjusted_score(count.raw, cell_baseline(baselines, *cell))
            for cell, count in cells.items()
        }
        hi_raw = [count.raw for (_, level), count in cells.items() if level == hi]
        paired = sorted(d for (d, level) in cells if level == hi and (d, lo) in cells)
        adj_hi = [adjusted[(d, hi)] for d in paired]
        adj_lo = [adjusted[(d, lo)] for d in paired]
        out[model] = ModelSummary(
            model=model,
            levels=(lo, hi),
            raw_hi=_mean(hi_raw),
            adjusted_hi=_mean(adj_hi),
            adjusted_lo=_mean(adj_lo),
            diff=_mean([h - low for h, low in zip(adj_hi, adj_lo, strict=True)]),
            overall=_mean(list(adjusted.values())),
            n_hi_cells=len(hi_raw),
            n_paired=len(paired),
            n_cells=len(cells),
            paired_domains=tuple(paired),
        )
    return out


@dataclass(frozen=True)
class ClusterCounts:
    """Per-image-cluster counts at levels (lo, hi), laid out for the bootstrap kernel.

    This is the one definition of the cluster/strata partition; the bootstrap (numba, numpy and
    pure Python) and the analytic SE all consume it.

    * Strata are ``domains`` (sorted), the domains that are paired for at least one model.
    * Model ``m``'s clusters in stratum ``s`` are the images of that domain where the model has at
      least one item at ``lo`` or ``hi``, sorted by image id; they occupy rows
      ``offsets[m, s]:offsets[m, s + 1]`` of ``counts[m]``. Each model has its own cluster list, so
      a model's result never depends on which images other models answered.
    * ``counts[m, c]`` is ``(correct_lo, total_lo, correct_hi, total_hi)`` as int32; rows past a
      model's last cluster are zero padding.
    * ``active[m, s]`` is 1 when domain ``s`` is paired for model ``m`` in the full sample.
    * ``units[m]`` is how many count units one item of model ``m`` weighs (the outcomes' common
      ``n``: 1, or the epochs averaged per item); the analytic SE's independent-items variance
      divides totals by it. ``None`` means 1 for every model.
    """

    models: tuple[str, ...]
    domains: tuple[str, ...]
    levels: tuple[int, int]
    counts: np.ndarray
    offsets: np.ndarray
    active: np.ndarray
    units: np.ndarray | None = None

    def item_units(self, m: int) -> int:
        return 1 if self.units is None else int(self.units[m])

    def clusters_per_stratum(self, m: int) -> dict[str, int]:
        """``{domain: number of clusters}`` of model index ``m`` over its paired domains."""
        sizes = np.diff(self.offsets[m])
        return {d: int(sizes[s]) for s, d in enumerate(self.domains) if self.active[m, s]}


def cluster_counts(
    outcomes: Iterable[Outcome] | OutcomeColumns, levels: tuple[int, int] = (4, 5)
) -> ClusterCounts:
    """Build :class:`ClusterCounts` from outcomes; items at other levels are ignored."""
    lo, hi = check_levels(levels)
    if isinstance(outcomes, OutcomeColumns):
        return _cluster_counts_columns(outcomes, lo, hi)
    slot = {lo: 0, hi: 2}
    per: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    unit: dict[str, int] = {}
    for o in outcomes:
        if o.level not in slot:
            continue
        row = per[(o.model, o.domain, o.image)]
        j = slot[int(o.level)]
        row[j] += int(o.correct)
        row[j + 1] += o.n
        unit[o.model] = math.gcd(unit.get(o.model, 0), o.n)
    has: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for (model, domain, _), row in per.items():
        has[(model, domain)][0] += row[1]
        has[(model, domain)][1] += row[3]
    paired = {key for key, (n_lo, n_hi) in has.items() if n_lo > 0 and n_hi > 0}
    models = tuple(sorted({m for m, _, _ in per}))
    domains = tuple(sorted({d for _, d in paired}))
    s_index = {d: s for s, d in enumerate(domains)}
    m_index = {m: i for i, m in enumerate(models)}
    rows: list[list[list[list[int]]]] = [[[] for _ in domains] for _ in models]
    for (model, domain, _), row in sorted(per.items()):
        if domain in s_index:
            rows[m_index[model]][s_index[domain]].append(row)
    n_clusters = [sum(len(r) for r in by_s) for by_s in rows]
    counts = np.zeros((len(models), max(n_clusters, default=0), 4), dtype=np.int32)
    offsets = np.zeros((len(models), len(domains) + 1), dtype=np.int64)
    active = np.zeros((len(models), len(domains)), dtype=np.uint8)
    for m, by_s in enumerate(rows):
        c = 0
        for s, cluster_rows in enumerate(by_s):
            offsets[m, s] = c
            if cluster_rows:
                counts[m, c : c + len(cluster_rows)] = cluster_rows
            c += len(cluster_rows)
            active[m, s] = (models[m], domains[s]) in paired
        offsets[m, len(domains)] = c
    units = np.array([unit.get(m, 1) or 1 for m in models], dtype=np.int64)
    return ClusterCounts(models, domains, (lo, hi), counts, offsets, active, units)


def _cluster_counts_columns(cols: OutcomeColumns, lo: int, hi: int) -> ClusterCounts:
    """:func:`cluster_counts` of columns: the same arrays, counted with numpy."""
    keep = (cols.level == lo) | (cols.level == hi)
    model, domain, image = cols.model[keep], cols.domain[keep], cols.image[keep]
    n, right, at_hi = cols.n[keep], cols.correct[keep], cols.level[keep] == hi
    n_d, n_i = len(cols.domains), max(len(cols.images), 1)
    # One group per (model, domain, image), in that (sorted-name) order.
    groups, group = np.unique((_wide(model) * n_d + domain) * n_i + image, return_inverse=True)
    rows = np.zeros((len(groups), 4), dtype=np.int64)
    for j, mask in ((0, ~at_hi), (2, at_hi)):
        rows[:, j] = np.bincount(group[mask], weights=right[mask], minlength=len(groups))
        rows[:, j + 1] = np.bincount(group[mask], weights=n[mask], minlength=len(groups))
    g_model, g_domain = groups // (n_d * n_i), (groups // n_i) % n_d
    pair = g_model * n_d + g_domain
    n_lo = np.bincount(pair, weights=rows[:, 1], minlength=len(cols.models) * n_d)
    n_hi = np.bincount(pair, weights=rows[:, 3], minlength=len(cols.models) * n_d)
    paired = (n_lo > 0) & (n_hi > 0)
    present = np.unique(g_model)
    models = tuple(cols.models[m] for m in present)
    strata = [d for d in range(n_d) if paired[d::n_d].any()]
    domains = tuple(cols.domains[d] for d in strata)
    sizes = np.zeros((len(present), len(strata)), dtype=np.int64)
    starts = np.searchsorted(pair, np.arange(len(cols.models) * n_d))
    ends = np.searchsorted(pair, np.arange(len(cols.models) * n_d), side="right")
    for i, m in enumerate(present):
        for s, d in enumerate(strata):
            sizes[i, s] = ends[m * n_d + d] - starts[m * n_d + d]
    width = int(sizes.sum(axis=1).max(initial=0))
    counts = np.zeros((len(present), width, 4), dtype=np.int32)
    offsets = np.zeros((len(present), len(strata) + 1), dtype=np.int64)
    active = np.zeros((len(present), len(strata)), dtype=np.uint8)
    units = np.ones(len(present), dtype=np.int64)
    for i, m in enumerate(present):
        c = 0
        for s, d in enumerate(strata):
            offsets[i, s] = c
            a, b = starts[m * n_d + d], ends[m * n_d + d]
            counts[i, c : c + b - a] = rows[a:b]
            c += b - a
            active[i, s] = bool(paired[m * n_d + d])
        offsets[i, len(strata)] = c
        units[i] = int(np.gcd.reduce(n[model == m])) or 1
    return ClusterCounts(models, domains, (lo, hi), counts, offsets, active, units)
