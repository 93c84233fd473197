"""Gaps a mutation-testing pass found in the before → after statistics (issue 39, item 5): each
test fails on mutants of ``engine/stats/design.py`` that the rest of the suite let through
(``bench/mutation.py engine/stats/design.py`` re-runs the pass; bench/results/mutation.md).

The figures are checked against a plain-Python recomputation written from the module's docstring
and docs/statistics.md ("Before → after, for any design"), on designs the older tests lacked: models
that answered only some images (so a draw can leave a model, or a cell, with nothing), a domain
whose baseline is 1, items of two units, two levels, exactly two models, one model, ties.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random

import numpy as np
import pytest

from keyaudit.engine.stats.aggregate import OutcomeColumns
from keyaudit.engine.stats.design import (
    FLIP_CHANGES,
    Interval,
    ItemOutcome,
    PairFlip,
    _draws,
    _mean_adjusted,
    before_after,
    before_after_columns,
)

# --- a plain reference ---------------------------------------------------------------------------


def _adjusted(raw: float, base: float) -> float:
    """metrics.adjusted_score: (raw − baseline) / (1 − baseline), raw − baseline when it is 1."""
    return raw - base if base == 1.0 else (raw - base) / (1.0 - base)


def _percentile(values: list[float], q: float) -> float:
    """numpy's "linear" percentile, by hand."""
    values = sorted(values)
    position = q * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def _tau_b(x: list[float], y: list[float]) -> float:
    """Kendall's τ-b over the models that have both scores; NaN when fewer than two or when one
    side has no ordered pair."""
    kept = [(a, b) for a, b in zip(x, y, strict=True) if not (math.isnan(a) or math.isnan(b))]
    s = nx = ny = 0
    for i in range(len(kept)):
        for j in range(i + 1, len(kept)):
            a = (kept[i][0] > kept[j][0]) - (kept[i][0] < kept[j][0])
            b = (kept[i][1] > kept[j][1]) - (kept[i][1] < kept[j][1])
            s += a * b
            nx += a != 0
            ny += b != 0
    if len(kept) < 2 or nx == 0 or ny == 0:
        return math.nan
    return s / math.sqrt(nx * ny)


def _interval(values: list[float], confidence: float) -> tuple[float, float, float]:
    """(estimate = the full sample, low, high) over the replicates that have a value."""
    tail = (1 - confidence) / 2
    draws = [v for v in values[1:] if not math.isnan(v)]
    if not draws:
        return values[0], math.nan, math.nan
    return values[0], _percentile(draws, tail), _percentile(draws, 1 - tail)


def _reference(items, base_b, base_a, resamples, seed, confidence=0.95):
    """Everything before_after reports, one replicate at a time in plain Python."""
    domains = sorted({i.domain for i in items})
    models = sorted({i.model for i in items})
    images = {d: sorted({i.image for i in items if i.domain == d}) for d in domains}
    draws = {d: _draws(seed, d, len(images[d]), resamples) for d in domains}
    cells = sorted({(i.model, i.domain, i.level) for i in items})
    acc = []  # per replicate: {cell: (before, after)}
    for r in range(resamples + 1):
        weight = {
            (d, name): 1.0 if r == 0 else float(draws[d][r - 1, k])
            for d in domains for k, name in enumerate(images[d])
        }
        row = {}
        for cell in cells:
            own = [i for i in items if (i.model, i.domain, i.level) == cell]
            units = sum(weight[(i.domain, i.image)] * i.n for i in own)
            if units == 0:
                row[cell] = (math.nan, math.nan)
            else:
                row[cell] = (
                    sum(weight[(i.domain, i.image)] * i.before for i in own) / units,
                    sum(weight[(i.domain, i.image)] * i.after for i in own) / units,
                )
        acc.append(row)

    def overall(r: int, model: str, side: int) -> float:
        bases = base_b if side == 0 else base_a
        scores = [
            _adjusted(acc[r][c][side], bases[(c[1], c[2])])
            for c in cells if c[0] == model and not math.isnan(acc[r][c][side])
        ]
        return sum(scores) / len(scores) if scores else math.nan

    reps = range(resamples + 1)
    ob = {m: [overall(r, m, 0) for r in reps] for m in models}
    oa = {m: [overall(r, m, 1) for r in reps] for m in models}
    out = {
        "cells": {
            c: (acc[0][c][0], acc[0][c][1],
                _interval([acc[r][c][1] - acc[r][c][0] for r in reps], confidence),
                len({i.image for i in items if (i.model, i.domain, i.level) == c}))
            for c in cells
        },
        "before": {m: ob[m][0] for m in models},
        "after": {m: oa[m][0] for m in models},
        "change": {m: _interval([oa[m][r] - ob[m][r] for r in reps], confidence) for m in models},
        "rank_before": {m: 1 + sum(ob[o][0] > ob[m][0] for o in models) for m in models},
        "rank_after": {m: 1 + sum(oa[o][0] > oa[m][0] for o in models) for m in models},
        "tau": _interval([_tau_b([ob[m][r] for m in models], [oa[m][r] for m in models]) for r in reps],
                         confidence) if len(models) >= 2 else None,
    }
    flips = []
    for a in models:
        for b in models:
            after, before = oa[a][0] - oa[b][0], ob[a][0] - ob[b][0]
            how = ("reversed" if after > 0 and before < 0 else "tie broken" if after > 0 and before == 0
                   else "now tied" if after == 0 and before > 0 else None)
            if how:
                gap = _interval([oa[a][r] - oa[b][r] for r in reps], confidence)
                flips.append((a, b, how, gap))
    flips.sort(key=lambda f: (-f[3][0], f[0], f[1]))
    out["flips"] = flips
    return out


def _same(got: Interval, want: tuple[float, float, float]) -> bool:
    return all(
        (math.isnan(g) and math.isnan(w)) or g == pytest.approx(w, abs=1e-9)
        for g, w in zip((got.estimate, got.low, got.high), want, strict=True)
    )


def _check(items, base_b, base_a, resamples, seed, confidence=0.95):
    stats = before_after(items, base_b, base_a, resamples=resamples, seed=seed, confidence=confidence)
    want = _reference(items, base_b, base_a, resamples, seed, confidence)
    assert stats.models == tuple(sorted(want["before"]))
    assert {(c.model, c.domain, c.level) for c in stats.cells} == set(want["cells"])
    for c in stats.cells:
        before, after, change, clusters = want["cells"][(c.model, c.domain, c.level)]
        assert c.before == pytest.approx(before, abs=1e-12) and c.after == pytest.approx(after, abs=1e-12)
        assert _same(c.change, change), (c, change)
        assert c.clusters == clusters
    for j, m in enumerate(stats.models):
        assert stats.overall_before[j] == pytest.approx(want["before"][m], abs=1e-12)
        assert stats.overall_after[j] == pytest.approx(want["after"][m], abs=1e-12)
        assert _same(stats.overall_change[j], want["change"][m]), m
        assert stats.rank_before[j] == want["rank_before"][m]
        assert stats.rank_after[j] == want["rank_after"][m]
    if want["tau"] is None:
        assert stats.kendall_tau is None
    else:
        assert _same(stats.kendall_tau, want["tau"])
    got_flips = [(f.ahead, f.behind, f.change) for f in stats.flips]
    assert got_flips == [f[:3] for f in want["flips"]]
    for flip, (_, _, _, gap) in zip(stats.flips, want["flips"], strict=True):
        assert _same(flip.gap, gap)
        assert flip.significant == (gap[1] > 0)
        assert flip.change in FLIP_CHANGES
    assert stats.resamples == resamples and stats.confidence == confidence
    return stats, want


def _random_design(seed: int) -> tuple[list[ItemOutcome], dict, dict]:
    """Two or three domains of 3-6 images, two levels, items of one or two units, 2-4 models each
    answering a random part of the images (one answered only one image in all), baselines that include
    0 and 1, and a domain with a single outcome."""
    rng = random.Random(seed)
    models = [f"m{k}" for k in range(rng.randint(2, 4))]
    domains = [f"d{k}" for k in range(rng.randint(2, 3))]
    items = []
    for d in domains:
        for image in range(rng.randint(3, 6)):
            for level in (4, 5):
                for m in models:
                    # the last model answered image 0 of the first domain only
                    sparse = m == models[-1] and (image > 0 or d != domains[0])
                    if sparse or rng.random() < 0.15:
                        continue
                    n = rng.choice((1, 1, 2))
                    before = rng.randint(0, n)
                    after = rng.randint(0, n)
                    items.append(ItemOutcome(m, d, level, f"{d}-img{image}", n, before, after))
    items.append(ItemOutcome(models[0], "solo", 5, "solo-img0", 1, 0, 1))
    cell_keys = {(i.domain, i.level) for i in items}
    base_b = {key: rng.choice((0.0, 0.25, 0.5, 1.0)) for key in cell_keys}
    base_a = {key: rng.choice((0.0, 0.2, 0.5, 1.0)) for key in cell_keys}
    return items, base_b, base_a


# --- the figures against the reference -----------------------------------------------------------


@pytest.mark.parametrize("design_seed", [1, 2, 3, 4, 5, 6])
def test_every_figure_matches_a_plain_recomputation_on_sparse_designs(design_seed: int) -> None:
    items, base_b, base_a = _random_design(design_seed)
    _check(items, base_b, base_a, resamples=40, seed=design_seed, confidence=0.9)


def _scored(before: dict[str, int], after: dict[str, int], n: int = 10, domain: str = "d") -> list[ItemOutcome]:
    """One cell of ``n`` images; each model right on its first ``before[m]`` / ``after[m]``."""
    return [
        ItemOutcome(m, domain, 1, f"{domain}-{i:02d}", 1, int(i < before[m]), int(i < after[m]))
        for m in before
        for i in range(n)
    ]


def test_every_kind_of_flip_in_the_order_of_its_gap() -> None:
    """A reversal, a broken tie and a new tie at once, and a tie on the after side only (τ-b
    with ties on one side), sorted by the after-gap, largest first."""
    items = _scored({"a": 2, "b": 5, "c": 5, "d": 8}, {"a": 9, "b": 7, "c": 3, "d": 7})
    base = {("d", 1): 0.0}
    stats, want = _check(items, base, base, resamples=60, seed=3)
    # by hand: before a 0.2, b 0.5, c 0.5, d 0.8; after a 0.9, b 0.7, c 0.3, d 0.7
    assert [(f.ahead, f.behind, f.change) for f in stats.flips] == [
        ("a", "c", "reversed"), ("b", "c", "tie broken"), ("a", "b", "reversed"),
        ("a", "d", "reversed"), ("d", "b", "now tied"),
    ]
    assert [f.gap.estimate for f in stats.flips] == pytest.approx([0.6, 0.4, 0.2, 0.2, 0.0], abs=1e-12)
    assert stats.rank_before == (4, 2, 2, 1) and stats.rank_after == (1, 2, 4, 2)


def test_exactly_two_models_have_a_leaderboard() -> None:
    """Two models are enough for τ-b (docs: undefined only where every model is tied on one
    side): a clean reversal is τ = −1, in every replicate where both orders are strict."""
    items = _scored({"a": 6, "b": 3}, {"a": 3, "b": 6})
    base = {("d", 1): 0.0}
    stats, _ = _check(items, base, base, resamples=50, seed=2)
    assert stats.kendall_tau == Interval(-1.0, -1.0, -1.0)
    assert [(f.ahead, f.behind, f.change) for f in stats.flips] == [("b", "a", "reversed")]
    assert stats.flips[0].gap.estimate == pytest.approx(0.3)
    assert stats.rank_before == (1, 2) and stats.rank_after == (2, 1)


def test_one_model_has_no_tau() -> None:
    stats = before_after(_scored({"a": 2}, {"a": 7}), {("d", 1): 0.0}, {("d", 1): 0.0}, resamples=20)
    assert stats.kendall_tau is None and stats.flips == ()
    assert stats.overall_before == pytest.approx((0.2,)) and stats.overall_after == pytest.approx((0.7,))
    assert stats.rank_before == (1,) and stats.rank_after == (1,)


def test_a_baseline_of_one_scores_raw_minus_baseline() -> None:
    """metrics.adjusted_score: when the baseline is 1 the adjusted score is raw − 1 (0/0
    otherwise); other cells keep (raw − b) / (1 − b)."""
    items = _scored({"a": 6, "b": 3}, {"a": 8, "b": 4}) + _scored(
        {"a": 5, "b": 10}, {"a": 10, "b": 10}, domain="e"
    )
    base_b = {("d", 1): 1.0, ("e", 1): 0.5}
    base_a = {("d", 1): 0.5, ("e", 1): 1.0}
    stats, _ = _check(items, base_b, base_a, resamples=30, seed=4)
    # by hand: a before (0.6 − 1 + (0.5 − 0.5) / 0.5) / 2, b (0.3 − 1 + (1 − 0.5) / 0.5) / 2;
    # after a ((0.8 − 0.5) / 0.5 + 1 − 1) / 2, b ((0.4 − 0.5) / 0.5 + 1 − 1) / 2
    assert stats.overall_before == pytest.approx(((0.6 - 1 + 0.0) / 2, (0.3 - 1 + 1.0) / 2))
    assert stats.overall_after == pytest.approx(((0.6 + 0.0) / 2, (-0.2 + 0.0) / 2))


def test_a_draw_that_leaves_a_model_nothing_is_left_out_not_zero() -> None:
    """A model that answered one image of ten has no score in a draw without that image: the
    replicate is left out of its interval (and of τ's), not counted as 0."""
    items = _scored({"a": 6, "b": 3}, {"a": 3, "b": 6}) + [ItemOutcome("c", "d", 1, "d-05", 1, 1, 0)]
    base = {("d", 1): 0.0}
    stats, want = _check(items, base, base, resamples=80, seed=5)
    draws = _draws(5, "d", 10, 80)
    assert (draws[:, 5] == 0).any() and (draws[:, 5] > 0).any()  # both kinds of draw happen
    c = stats.models.index("c")
    assert stats.overall_change[c] == Interval(-1.0, -1.0, -1.0)  # every draw that has it: 1 → 0


def test_mean_adjusted_leaves_out_missing_cells_and_gives_nan_for_none() -> None:
    acc = np.array([[0.5, np.nan, 1.0], [np.nan, np.nan, np.nan], [np.nan, 0.25, np.nan]])
    got = _mean_adjusted(acc, np.array([0.0, 0.5, 1.0]))
    assert got[0] == pytest.approx((0.5 + 0.0) / 2) and math.isnan(got[1])
    assert got[2] == pytest.approx((0.25 - 0.5) / 0.5)


def test_a_single_outcome_domain_and_a_domain_with_none_listed() -> None:
    """Columns may name a domain no outcome reaches (it is skipped); a domain of one outcome is a
    cell of its own."""
    cols = OutcomeColumns(
        ("a", "b"), ("d", "empty", "one"), ("d-0", "d-1", "d-2", "one-0"),
        np.array([0, 0, 0, 1, 1, 1, 0]), np.array([0, 0, 0, 0, 0, 0, 2]),
        np.array([0, 1, 2, 0, 1, 2, 3]), np.ones(7, dtype=np.int64), np.ones(7, dtype=np.int64),
        np.array([1, 0, 0, 1, 1, 0, 0]),
    )
    after = cols.with_correct(np.array([1, 1, 0, 0, 0, 0, 1]))
    base = {("d", 1): 0.0, ("one", 1): 0.0}
    stats = before_after_columns(cols, after, base, base, resamples=25, seed=1)
    assert [(c.model, c.domain, c.before, c.after, c.clusters) for c in stats.cells] == [
        ("a", "d", pytest.approx(1 / 3), pytest.approx(2 / 3), 3), ("a", "one", 0.0, 1.0, 1),
        ("b", "d", pytest.approx(2 / 3), 0.0, 3),
    ]
    # a: before (1/3 + 0) / 2, after (2/3 + 1) / 2; the one-image cell is in every draw
    assert stats.overall_before == pytest.approx((1 / 6, 2 / 3))
    assert stats.overall_after == pytest.approx((5 / 6, 0.0))
    one = next(c for c in stats.cells if c.domain == "one")
    assert one.change == Interval(1.0, 1.0, 1.0)


def test_no_replicates_keep_the_estimates_and_give_no_interval() -> None:
    items = _scored({"a": 6, "b": 3}, {"a": 3, "b": 6})
    base = {("d", 1): 0.0}
    stats = before_after(items, base, base, resamples=0)
    assert stats.overall_change[0].estimate == pytest.approx(-0.3)
    assert math.isnan(stats.overall_change[0].low) and math.isnan(stats.overall_change[0].high)
    assert stats.kendall_tau.estimate == -1.0 and math.isnan(stats.kendall_tau.low)
    one = before_after(items, base, base, resamples=1, seed=9)
    assert not math.isnan(one.overall_change[0].low)
    assert one.overall_change[0].low == one.overall_change[0].high


def test_all_tied_on_one_side_has_no_tau_in_that_replicate() -> None:
    items = _scored({"a": 0, "b": 0, "c": 0}, {"a": 7, "b": 5, "c": 2})
    base = {("d", 1): 0.0}
    stats, _ = _check(items, base, base, resamples=30, seed=1)
    assert math.isnan(stats.kendall_tau.estimate) and math.isnan(stats.kendall_tau.low)


def test_defaults_are_2000_resamples_at_95_percent_seed_0() -> None:
    items, base_b, base_a = _random_design(2)
    stats = before_after(items, base_b, base_a)
    assert stats.resamples == 2000 and stats.confidence == 0.95
    assert stats == before_after(items, base_b, base_a, resamples=2000, seed=0, confidence=0.95)
    assert stats != before_after(items, base_b, base_a, resamples=2000, seed=1, confidence=0.95)
    rows = [(i.model, i.domain, i.image, i.level, i.before, i.n) for i in items]
    before = OutcomeColumns.build(rows)
    after = before.with_correct(np.array([i.after for i in items]))
    assert before_after_columns(before, after, base_b, base_a) == stats


# --- the draws -----------------------------------------------------------------------------------


def test_draws_are_seeded_by_seed_and_domain_only() -> None:
    """numpy's PCG64, seeded from the sha256 of (seed, domain): (resamples, images) counts, each
    replicate drawing as many images as the domain has, any of them."""
    got = _draws(7, "stoich", 5, 400)
    digest = hashlib.sha256(b"7\0before_after\0stoich").digest()
    rng = np.random.Generator(np.random.PCG64(int.from_bytes(digest[:16], "big")))
    picks = rng.integers(0, 5, size=(400, 5))
    want = np.array([[np.sum(row == k) for k in range(5)] for row in picks], dtype=float)
    np.testing.assert_array_equal(got, want)
    assert (got.sum(axis=1) == 5).all() and (got > 0).any(axis=0).all()
    assert not np.array_equal(got, _draws(7, "stoichX", 5, 400))


# --- the small types -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "excludes"),
    [(0.01, 0.2, True), (0.5, 0.9, True), (-0.2, -0.01, True), (-0.9, -0.5, True),
     (-0.1, 0.1, False), (0.0, 0.2, False), (-0.2, 0.0, False), (0.0, 0.0, False)],
)
def test_an_interval_excludes_zero_only_strictly(low: float, high: float, excludes: bool) -> None:
    assert Interval(0.0, low, high).excludes_zero is excludes


@pytest.mark.parametrize(("low", "significant"), [(0.3, True), (1e-9, True), (0.0, False), (-0.1, False)])
def test_a_flip_is_significant_when_its_gap_interval_is_above_zero(low: float, significant: bool) -> None:
    assert PairFlip("a", "b", Interval(0.4, low, 0.8)).significant is significant


def test_the_kinds_of_flip_and_the_results_are_frozen() -> None:
    assert FLIP_CHANGES == ("reversed", "tie broken", "now tied")
    assert PairFlip("a", "b", Interval(0.1, 0.0, 0.2)).change == "reversed"
    stats = before_after(_scored({"a": 6, "b": 3}, {"a": 3, "b": 6}), {("d", 1): 0.0}, {("d", 1): 0.0},
                         resamples=5)
    for value, name in ((ItemOutcome("a", "d", 1, "i", 1, 0, 1), "n"), (stats.kendall_tau, "low"),
                        (stats.cells[0], "after"), (stats.flips[0], "ahead"), (stats, "flips")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, 0)
