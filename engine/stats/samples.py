"""Scored samples → one outcome per (model, item), as columns, for millions of samples.

An audit scores each stored sample (a response; several per item with ``--epochs all``) before,
after, and after with its uncertain verdicts wrong and right. The statistics want one outcome per
(model, item): its samples averaged, in integer units (see :mod:`keyaudit.engine.audit`). This
module does that with numpy over integer-coded samples (model index, item index, a boolean per
variant): a full benchmark has millions of samples, and the Python loop this replaced took
20 seconds and half a gigabyte at 2.48 M.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .aggregate import OutcomeColumns

__all__ = ["KeyPlaces", "outcome_variants"]


class KeyPlaces:
    """Where each item sits, by item index: its domain, image cluster and level, as codes into
    the sorted names (``domains``, ``clusters``) so that outcomes can be built with numpy."""

    __slots__ = ("domains", "clusters", "domain", "cluster", "level")

    def __init__(self, refs: Sequence[tuple[str, str, int]]) -> None:
        """``refs``: ``(domain, cluster, level)`` of every item, by item index."""
        self.domains, self.domain = _codes([r[0] for r in refs])
        self.clusters, self.cluster = _codes([r[1] for r in refs])
        self.level = np.fromiter((r[2] for r in refs), dtype=np.int64, count=len(refs))


def _codes(names: list[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """The sorted distinct names, and each name's index among them."""
    distinct = sorted(set(names))
    at = {name: n for n, name in enumerate(distinct)}
    return tuple(distinct), np.fromiter((at[n] for n in names), dtype=np.int64, count=len(names))


def outcome_variants(
    model_names: Sequence[str],
    model: np.ndarray,
    item: np.ndarray,
    places: KeyPlaces,
    sides: Sequence[np.ndarray],
    grouped: bool = False,
) -> tuple[OutcomeColumns, ...]:
    """One outcome per (model, item) group of samples, in order of the group's first sample, for
    each of ``sides`` (per sample: right or not), as columns that share everything but
    ``correct``. ``model`` and ``item`` give each sample's model (an index into ``model_names``)
    and item (an index of ``places``). A model's item weighs the model's unit, the least common
    multiple of its items' sample counts (1 when each has one), of which ``right · unit /
    samples`` are right; the names (models, domains, images) are those the samples reach, sorted.

    ``grouped`` says the samples of each (model, item) are adjacent (the audit's, in (model, id)
    order): the groups are then the runs, found in one pass instead of a sort (at 25 M samples
    the sort's arrays were gigabytes).

    Memory: each column has the smallest integer type that holds its values (:func:`_fitting`:
    one byte for the levels, the domains and one sample's right or wrong; two for 31,000 images),
    and every per-outcome column is one gather through a per-model or per-item table, so 25 M
    outcomes of a benchmark like GRIP's take about 0.3 GB and few temporaries. Code that combines
    columns widens them first (they are codes and counts, not numbers to compute with).
    """
    n_items = max(len(places.level), 1)
    if grouped:
        new = np.ones(len(model), dtype=bool)
        new[1:] = (model[1:] != model[:-1]) | (item[1:] != item[:-1])
        single = bool(new.all())
        starts = None if single else np.flatnonzero(new)
        del new
        counts = None if single else np.diff(np.append(starts, len(model)))
        g_model = model if single else model[starts]
        g_item = item if single else item[starts]

        def right_counts(side: np.ndarray) -> np.ndarray:
            if single:
                return np.asarray(side, dtype=bool)
            return np.add.reduceat(np.asarray(side, dtype=bool), starts, dtype=np.int64)
    else:
        code = np.asarray(model, dtype=np.int64) * n_items + np.asarray(item, dtype=np.int64)
        distinct, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        del code
        appearance = np.argsort(first, kind="stable")  # groups in order of their first sample
        rank = np.empty_like(appearance)
        rank[appearance] = np.arange(len(appearance))
        groups = rank[inverse.reshape(-1)]
        g_model = np.asarray(model)[first[appearance]]
        g_item = np.asarray(item)[first[appearance]]
        counts = np.bincount(groups, minlength=len(distinct))
        single = bool(counts.max(initial=1) == 1)

        def right_counts(side: np.ndarray) -> np.ndarray:
            weights = np.asarray(side, dtype=np.float64)
            return np.bincount(groups, weights=weights, minlength=len(distinct)).astype(np.int64)

    # names the groups reach, sorted; each group's code among them, through per-name tables
    reached = np.bincount(g_model, minlength=len(model_names)) > 0
    models = tuple(sorted(name for name, hit in zip(model_names, reached.tolist(), strict=True) if hit))
    model_code = _table({name: n for n, name in enumerate(models)}, model_names)
    m_code = model_code.astype(_fitting(len(models)))[g_model]
    item_reached = np.bincount(g_item, minlength=n_items) > 0
    d_present = np.unique(places.domain[item_reached])
    i_present = np.unique(places.cluster[item_reached])
    domains = tuple(places.domains[d] for d in d_present.tolist())
    images = tuple(places.clusters[i] for i in i_present.tolist())
    d_code = _code_table(d_present, places.domain).astype(_fitting(len(domains)))[g_item]
    i_code = _code_table(i_present, places.cluster).astype(_fitting(len(images)))[g_item]
    reached_levels = places.level[item_reached]
    level_type = _fitting(int(reached_levels.min(initial=0)), int(reached_levels.max(initial=0)))
    level = places.level.astype(level_type)[g_item]
    units = np.ones(len(models), dtype=np.int64)
    if not single:
        for at in range(len(models)):
            mine = counts[m_code == at]
            if mine.size and mine.max() > 1:
                units[at] = np.lcm.reduce(mine)
    units = units.astype(_fitting(int(units.max(initial=1))))
    n = units[m_code]
    share = None if single else n // counts  # exact: a unit is a multiple of its items' counts
    del counts, g_model, g_item
    rights = [
        right_counts(side).astype(n.dtype) if share is None else right_counts(side) * share
        for side in sides
    ]
    base = OutcomeColumns(models, domains, images, m_code, d_code, i_code, level, n, rights[0])
    return tuple(base.with_correct(right) for right in rights)


def _table(code_of: dict[str, int], names: Sequence[str]) -> np.ndarray:
    """Per name index, its code (``code_of``), int32; -1 for a name not coded."""
    return np.array([code_of.get(name, -1) for name in names], dtype=np.int32).reshape(-1)


def _code_table(present: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per item, the index of its ``values`` entry among the sorted ``present`` ones (int32)."""
    return np.searchsorted(present, values).astype(np.int32)


def _fitting(*values: int) -> type:
    """The smallest signed integer type that holds ``values`` (and -1)."""
    low, high = min(-1, *values), max(0, *values)
    for kind in (np.int8, np.int16, np.int32):
        info = np.iinfo(kind)
        if info.min <= low and high <= info.max:
            return kind
    return np.int64
