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
    """
    model = np.asarray(model, dtype=np.int64)
    item = np.asarray(item, dtype=np.int64)
    code = model * max(len(places.level), 1) + item
    if grouped:
        starts = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1]))) if len(code) else code
        size = len(starts)
        counts = np.diff(np.append(starts, len(code)))
        g_model, g_item = model[starts], item[starts]

        def right_counts(side: np.ndarray) -> np.ndarray:
            if size == len(side):  # one sample per group: the sides themselves
                return np.asarray(side, dtype=np.int64)
            return np.add.reduceat(np.asarray(side, dtype=bool), starts, dtype=np.int64)
    else:
        distinct, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        appearance = np.argsort(first, kind="stable")  # groups in order of their first sample
        rank = np.empty_like(appearance)
        rank[appearance] = np.arange(len(appearance))
        groups = rank[inverse.reshape(-1)]
        size = len(distinct)
        g_model = model[first[appearance]]
        g_item = item[first[appearance]]
        counts = np.bincount(groups, minlength=size)

        def right_counts(side: np.ndarray) -> np.ndarray:
            weights = np.asarray(side, dtype=np.float64)
            return np.bincount(groups, weights=weights, minlength=size).astype(np.int64)

    del model, item, code
    # names the groups reach, sorted; the codes of each group among them
    model_rank = np.argsort(np.argsort(np.array(model_names, dtype=object), kind="stable"))
    present_models = np.unique(model_rank[g_model]) if size else np.zeros(0, dtype=np.int64)
    by_rank = sorted(model_names)
    models = tuple(by_rank[r] for r in present_models.tolist())
    m_code = np.searchsorted(present_models, model_rank[g_model])
    d_present = np.unique(places.domain[g_item])
    i_present = np.unique(places.cluster[g_item])
    domains = tuple(places.domains[d] for d in d_present.tolist())
    images = tuple(places.clusters[i] for i in i_present.tolist())
    d_code = np.searchsorted(d_present, places.domain[g_item])
    i_code = np.searchsorted(i_present, places.cluster[g_item])
    level = places.level[g_item]
    units = np.ones(len(models), dtype=np.int64)
    for at in range(len(models)):
        mine = counts[m_code == at]
        if mine.size and mine.max() > 1:
            units[at] = np.lcm.reduce(mine)
    n = units[m_code]
    share = n // counts  # exact: a model's unit is a multiple of each of its items' counts
    rights = [right_counts(side) * share for side in sides]
    base = OutcomeColumns(models, domains, images, m_code, d_code, i_code, level, n, rights[0])
    return tuple(base.with_correct(right) for right in rights)
