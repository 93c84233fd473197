from __future__ import annotations

import math

import numpy as np
import pytest

from keyaudit.engine.errors import DataError, UsageError
from keyaudit.engine.stats.aggregate import (
    CellTable,
    Outcome,
    cell_table,
    cluster_counts,
    summarize,
)


def _outcomes(model, domain, level, results, image_prefix=None):
    prefix = image_prefix or domain
    return [Outcome(model, domain, f"{prefix}_{i}", level, bool(c)) for i, c in enumerate(results)]


def test_cell_table_counts():
    outs = (
        _outcomes("m", "a", 5, [1, 0, 1])
        + _outcomes("m", "a", 4, [0])
        + _outcomes("n", "a", 5, [1])
    )
    table = cell_table(outs)
    assert {k: (c.correct, c.n) for k, c in table.cells.items()} == {
        ("m", "a", 4): (0, 1),
        ("m", "a", 5): (2, 3),
        ("n", "a", 5): (1, 1),
    }
    assert table.models == ("m", "n")


def test_from_counts_validates():
    with pytest.raises(DataError):
        CellTable.from_counts({("m", "a", 5): (3, 2)})
    with pytest.raises(DataError):
        CellTable.from_counts({("m", "a", 5): (0, 0)})


BASE = {("a", 4): 0.5, ("a", 5): 0.2, ("b", 4): 0.0, ("b", 5): 1.0, ("c", 5): 0.5, ("c", 3): 0.25}


def test_summarize_hand_computed():
    # a: paired; b: paired with baseline 1 at L5; c: L5 only (not paired); c L3 counts in overall.
    table = CellTable.from_counts(
        {
            ("m", "a", 4): (3, 4),  # raw .75, adj (.75-.5)/.5 = .5
            ("m", "a", 5): (1, 2),  # raw .5, adj (.5-.2)/.8 = .375
            ("m", "b", 4): (1, 4),  # raw .25, adj .25
            ("m", "b", 5): (1, 2),  # raw .5, baseline 1 -> adj .5 - 1 = -.5
            ("m", "c", 5): (1, 1),  # raw 1, adj 1
            ("m", "c", 3): (0, 1),  # raw 0, adj -1/3
        }
    )
    s = summarize(table, BASE)["m"]
    assert s.raw_hi == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert s.adjusted_hi == pytest.approx((0.375 - 0.5) / 2)
    assert s.adjusted_lo == pytest.approx((0.5 + 0.25) / 2)
    assert s.diff == pytest.approx(((0.375 - 0.5) + (-0.5 - 0.25)) / 2)
    assert s.overall == pytest.approx((0.5 + 0.375 + 0.25 - 0.5 + 1.0 - 1 / 3) / 6)
    assert (s.n_hi_cells, s.n_paired, s.n_cells) == (3, 2, 6)
    assert s.paired_domains == ("a", "b")
    assert s.diff == pytest.approx(s.adjusted_hi - s.adjusted_lo)


def test_summarize_missing_cell_is_left_out_not_zero():
    full = {
        ("m", "a", 4): (1, 2),
        ("m", "a", 5): (2, 2),
        ("n", "a", 4): (1, 2),
        ("n", "a", 5): (2, 2),
    }
    full |= {("m", "b", 4): (0, 1), ("m", "b", 5): (0, 1), ("n", "b", 5): (0, 1)}  # n lacks b L4
    out = summarize(CellTable.from_counts(full), BASE)
    assert out["n"].n_paired == 1 and out["m"].n_paired == 2
    assert out["n"].diff == pytest.approx(out["n"].adjusted_hi)
    assert out["n"].diff == pytest.approx(((1.0 - 0.2) / 0.8) - 0.0)
    assert out["n"].raw_hi == pytest.approx((1.0 + 0.0) / 2)


def test_summarize_one_item_and_no_pair():
    s = summarize(CellTable.from_counts({("m", "c", 5): (1, 1)}), BASE)["m"]
    assert s.raw_hi == 1.0 and s.overall == 1.0
    assert s.n_paired == 0 and math.isnan(s.diff) and math.isnan(s.adjusted_hi)


def test_summarize_other_levels():
    table = CellTable.from_counts({("m", "c", 3): (1, 4), ("m", "c", 5): (1, 2)})
    s = summarize(table, BASE, levels=(3, 5))["m"]
    assert s.levels == (3, 5) and s.n_paired == 1
    assert s.diff == pytest.approx(0.0 - (0.25 - 0.25) / 0.75)


def test_summarize_missing_baseline_raises():
    with pytest.raises(DataError, match="no constant-answer baseline for cell zz L5"):
        summarize(CellTable.from_counts({("m", "zz", 5): (1, 1)}), BASE)


def test_summarize_rejects_equal_levels():
    with pytest.raises(UsageError):
        summarize(CellTable.from_counts({("m", "c", 5): (1, 1)}), BASE, levels=(5, 5))


def test_cluster_counts_layout():
    outs = [
        Outcome("m", "a", "a_2", 5, True),
        Outcome("m", "a", "a_1", 4, True),
        Outcome("m", "a", "a_1", 4, False),
        Outcome("m", "a", "a_1", 5, True),
        Outcome("m", "a", "a_1", 3, True),  # other level: ignored
        Outcome("m", "c", "c_1", 5, True),  # c is not paired for anyone: not a stratum
        Outcome("n", "b", "b_1", 4, False),
        Outcome("n", "b", "b_1", 5, True),
        Outcome("n", "a", "a_1", 5, True),  # a at L5 only for n: inactive
    ]
    cc = cluster_counts(outs)
    assert cc.models == ("m", "n") and cc.domains == ("a", "b")
    np.testing.assert_array_equal(cc.active, [[1, 0], [0, 1]])
    np.testing.assert_array_equal(cc.offsets, [[0, 2, 2], [0, 1, 2]])
    np.testing.assert_array_equal(cc.counts[0], [[1, 2, 1, 1], [0, 0, 1, 1]])
    np.testing.assert_array_equal(cc.counts[1], [[0, 0, 1, 1], [0, 1, 1, 1]])
    assert cc.clusters_per_stratum(0) == {"a": 2}
    assert cc.clusters_per_stratum(1) == {"b": 1}


def test_outcome_variants_weigh_each_models_items_by_its_own_unit():
    """Samples of one (model, item) are averaged; each model's items weigh the lcm of that model's
    sample counts; outcomes keep the order in which (model, item) first appears; a sample's four
    verdicts (before, after, low, high) land in the four variants."""
    from keyaudit.engine.stats.samples import KeyPlaces, outcome_variants

    # items: 0 = a (d, d_1, L5), 1 = b (d, d_2, L5), 2 = c (e, e_1, L4); models: 0 = n, 1 = m
    places = KeyPlaces([("d", "d_1", 5), ("d", "d_2", 5), ("e", "e_1", 4)])
    # model m: item a has 2 samples, item b has 3 (unit 6); model n: item c has 1 sample (unit 1).
    samples = [  # (model, item, before, after, low, high)
        (1, 0, True, True, True, True),
        (0, 2, False, True, False, True),
        (1, 1, True, False, False, False),
        (1, 0, False, True, False, True),
        (1, 1, True, True, True, True),
        (1, 1, False, True, True, True),
    ]
    model = np.array([s[0] for s in samples])
    item = np.array([s[1] for s in samples])
    sides = tuple(np.array([s[k] for s in samples]) for k in range(2, 6))
    before, after, low, high = outcome_variants(("n", "m"), model, item, places, sides)
    assert before.models == ("m", "n") and before.domains == ("d", "e")
    assert before.model.tolist() == [0, 1, 0] and before.domain.tolist() == [0, 1, 0]
    assert before.image.tolist() == [0, 2, 1] and before.level.tolist() == [5, 4, 5]
    assert before.n.tolist() == [6, 1, 6]
    assert before.correct.tolist() == [3, 0, 4]  # a: 1 of 2 -> 3 of 6; b: 2 of 3 -> 4 of 6
    assert after.correct.tolist() == [6, 1, 4]
    assert low.correct.tolist() == [3, 0, 4]
    assert high.correct.tolist() == [6, 1, 4]


@pytest.mark.parametrize("shape", ["one sample each", "several samples"])
def test_outcome_variants_of_grouped_samples_equal_the_sorting_path(shape: str):
    """Samples whose (model, item) groups are adjacent (``grouped=True``: runs, no sort) give the
    outcomes the general path gives, in the same order, for every variant."""
    from keyaudit.engine.stats.samples import KeyPlaces, outcome_variants

    rng = np.random.default_rng(3)
    places = KeyPlaces([(f"d{k % 3}", f"img{k % 7}", 4 + k % 2) for k in range(40)])
    pairs = [(m, k) for m in rng.permutation(5).tolist() for k in rng.permutation(40)[:30].tolist()]
    repeats = [1] * len(pairs) if shape == "one sample each" else rng.integers(1, 4, len(pairs))
    model = np.repeat([m for m, _ in pairs], repeats)
    item = np.repeat([k for _, k in pairs], repeats)
    sides = [rng.random(len(model)) < p for p in (0.3, 0.5, 0.7)]
    names = ("e", "a", "d", "b", "c")
    general = outcome_variants(names, model, item, places, sides)
    runs = outcome_variants(names, model, item, places, sides, grouped=True)
    for a, b in zip(general, runs, strict=True):
        assert (a.models, a.domains, a.images) == (b.models, b.domains, b.images)
        for column in ("model", "domain", "image", "level", "n", "correct"):
            np.testing.assert_array_equal(getattr(a, column), getattr(b, column))
    assert len(general[0]) == len(pairs)
    assert (general[0].n > 1).any() == (shape == "several samples")


def test_outcome_columns_take_the_smallest_type_that_holds_them():
    """One sample per item: one-byte columns. Items of 1..23 samples: the model's unit is their
    lcm, 5,354,228,880, past int32, and n and correct become int64 with exact values."""
    import math

    from keyaudit.engine.stats.samples import KeyPlaces, outcome_variants

    places = KeyPlaces([("d", f"img{k}", 5) for k in range(23)])
    model = np.zeros(23, dtype=np.int64)
    item = np.arange(23)
    (single,) = outcome_variants(("m",), model, item, places, [item % 2 == 0], grouped=True)
    assert {getattr(single, c).dtype for c in ("model", "domain", "level", "n", "correct")} == {
        np.dtype(np.int8)
    }
    assert single.correct.tolist() == [1 - k % 2 for k in range(23)]
    counts = np.arange(1, 24)
    model = np.zeros(counts.sum(), dtype=np.int64)
    item = np.repeat(np.arange(23), counts)
    right = np.concatenate([np.arange(k) == 0 for k in counts])  # one right sample per item
    unit = math.lcm(*range(1, 24))
    for grouped in (True, False):
        (several,) = outcome_variants(("m",), model, item, places, [right], grouped=grouped)
        assert several.n.dtype == np.int64 and unit > np.iinfo(np.int32).max
        assert several.n.tolist() == [unit] * 23
        assert several.correct.tolist() == [unit // k for k in range(1, 24)]
