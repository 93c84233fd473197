"""Gaps a mutation-testing pass found in the statistics (issue 28): each test fails on a mutant that
the rest of the suite let through (``bench/mutation.py`` re-runs the pass)."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from keyaudit.engine.errors import DataError
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer
from keyaudit.engine.stats.aggregate import (
    CellTable,
    ClusterCounts,
    Outcome,
    OutcomeColumns,
    cell_table,
    check_levels,
    cluster_counts,
    summarize,
)
from keyaudit.engine.stats.baselines import _key_groups, rule_baseline, strict_baselines
from keyaudit.engine.stats.wilson import wilson_interval

# --- wilson.py ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("errors", "n", "confidence", "low", "high"),
    [
        # computed once from the textbook formula and pinned: 1 in 10 is 1.79%-40.42%
        (1, 10, 0.95, 0.017876213095072896, 0.40415002679523837),
        (5, 10, 0.95, 0.23659309051256405, 0.763406909487436),
        (3, 7, 0.95, 0.1582198552514697, 0.7495416354723428),
        (0, 20, 0.95, 0.0, 0.1611251580528193),
        (20, 20, 0.95, 0.8388748419471808, 1.0),
        (1, 10, 0.99, 0.011851503411032915, 0.5072317712328934),
        (0, 1, 0.95, 0.0, 0.7934506856227626),
        (1, 1, 0.95, 0.20654931437723745, 1.0),
    ],
)
def test_wilson_interval_exact_values(errors, n, confidence, low, high) -> None:
    got = wilson_interval(errors, n, confidence)
    assert got == (pytest.approx(low, rel=1e-12, abs=1e-15), pytest.approx(high, rel=1e-12))


@pytest.mark.parametrize(("errors", "n"), [(1, 10), (2, 9), (7, 30), (13, 17), (1, 3)])
def test_wilson_bounds_solve_the_score_equation(errors: int, n: int) -> None:
    """Each bound ``q`` solves ``(p - q)² = z² q (1 - q) / n`` (the definition of the Wilson
    interval, the ``p * (1 - p)`` term included), independently of the closed form."""
    z = 1.959963984540054
    p = errors / n
    for q in wilson_interval(errors, n):
        assert (p - q) ** 2 == pytest.approx(z * z * q * (1 - q) / n, rel=1e-9)


def test_wilson_default_confidence_is_95_percent() -> None:
    assert wilson_interval(1, 10) == wilson_interval(1, 10, 0.95)
    assert wilson_interval(1, 10) != wilson_interval(1, 10, 0.9)


def test_wilson_clips_rounding_to_the_unit_interval() -> None:
    # unclipped, 9 of 9 reaches 1.0000000000000002 and 0 of 21 reaches -1.4e-17
    assert wilson_interval(9, 9)[1] == 1.0
    assert wilson_interval(0, 21)[0] == 0.0


@pytest.mark.parametrize("n", [0, -1])
def test_wilson_no_sample_is_nan(n: int) -> None:
    low, high = wilson_interval(0, n)
    assert math.isnan(low) and math.isnan(high)


def test_wilson_errors_must_lie_in_0_to_n() -> None:
    for errors in (-1, 11):
        with pytest.raises(ValueError, match=r"errors must lie in 0\.\.10, got"):
            wilson_interval(errors, 10)
    assert wilson_interval(0, 10)[0] == pytest.approx(0.0, abs=1e-15)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0)


# --- aggregate.py: the columns path against the list path -------------------------------------


def _random_outcomes(seed: int, units: dict[str, int]) -> list[Outcome]:
    """Outcomes of several models, domains, images and levels (1-5), each model's items weighing
    its own unit (epochs averaged: ``correct`` of ``n``); some domains have one level of the pair
    only, so they are not paired."""
    rng = random.Random(seed)
    out = []
    for model, unit in units.items():
        for domain in ("alpha", "beta", "gamma", "delta", "eps"):
            levels = {"alpha": (3, 4, 5), "beta": (4, 5), "gamma": (5,), "delta": (4,),
                      "eps": (2, 4, 5)}[domain]
            for image in rng.sample(range(9), rng.randint(1, 6)):
                for level in rng.sample(levels, rng.randint(1, len(levels))):
                    out.append(Outcome(model, domain, f"{domain}_{image}", level,
                                       rng.randint(0, unit), unit))
    # models missing from some domains entirely
    return [o for o in out if not (o.model == "m2" and o.domain == "beta")]


def _cluster_fields(cc: ClusterCounts) -> tuple:
    return (cc.models, cc.domains, cc.levels, cc.counts.tolist(), cc.offsets.tolist(),
            cc.active.tolist(), cc.units.tolist())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("levels", [(4, 5), (3, 5), (5, 4)])
def test_columns_and_lists_give_the_same_clusters_and_cells(seed: int, levels) -> None:
    units = {"m1": 1, "m2": 3, "m3": 2, "m4": 1}
    outcomes = _random_outcomes(seed, units)
    random.Random(seed).shuffle(outcomes)
    columns = OutcomeColumns.from_outcomes(outcomes)
    assert len(columns) == len(outcomes)
    by_list, by_columns = cluster_counts(outcomes, levels), cluster_counts(columns, levels)
    assert _cluster_fields(by_columns) == _cluster_fields(by_list)
    assert cell_table(columns).cells == cell_table(outcomes).cells


def test_cluster_counts_by_hand_several_models_and_domains() -> None:
    outs = [
        Outcome("m", "a", "a_1", 4, 1, 2), Outcome("m", "a", "a_1", 5, 2, 2),
        Outcome("m", "b", "b_1", 5, 1, 2),  # b only at L5 for m: not paired, no stratum of m
        Outcome("m", "c", "c_1", 4, 0, 2), Outcome("m", "c", "c_2", 5, 1, 2),
        Outcome("n", "b", "b_1", 4, 1, 1), Outcome("n", "b", "b_2", 5, 0, 1),
        Outcome("n", "c", "c_1", 4, 1, 1),  # c only at L4 for n
        Outcome("n", "a", "a_3", 4, 1, 1), Outcome("n", "a", "a_3", 5, 1, 1),
        Outcome("n", "a", "a_2", 5, 0, 1),
    ]
    for given in (outs, OutcomeColumns.from_outcomes(outs)):
        cc = cluster_counts(given)
        assert cc.models == ("m", "n") and cc.domains == ("a", "b", "c")
        assert cc.active.tolist() == [[1, 0, 1], [1, 1, 0]]
        assert cc.offsets.tolist() == [[0, 1, 2, 4], [0, 2, 4, 5]]
        assert cc.counts[0].tolist() == [
            [1, 2, 2, 2], [0, 0, 1, 2], [0, 2, 0, 0], [0, 0, 1, 2], [0, 0, 0, 0],
        ]
        assert cc.counts[1].tolist() == [
            [0, 0, 0, 1], [1, 1, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1], [1, 1, 0, 0],
        ]
        assert cc.units.tolist() == [2, 1]
        assert cc.item_units(0) == 2 and cc.item_units(1) == 1
        assert cc.clusters_per_stratum(0) == {"a": 1, "c": 2}
        assert cc.clusters_per_stratum(1) == {"a": 2, "b": 2}


def test_a_domain_at_the_high_level_only_is_not_paired() -> None:
    """``n_lo > 0`` (not ``>= 0``): a domain without a single low-level item is no stratum."""
    outs = [Outcome("m", "a", "a_1", 4, 1), Outcome("m", "a", "a_1", 5, 1),
            Outcome("m", "z", "z_1", 5, 1)]
    for given in (outs, OutcomeColumns.from_outcomes(outs)):
        cc = cluster_counts(given)
        assert cc.domains == ("a",) and cc.active.tolist() == [[1]]
    low_only = [Outcome("m", "a", "a_1", 4, 1), Outcome("m", "a", "a_1", 5, 1),
                Outcome("m", "z", "z_1", 4, 1)]
    for given in (low_only, OutcomeColumns.from_outcomes(low_only)):
        assert cluster_counts(given).domains == ("a",)


def test_multi_epoch_units_through_outcome_lists() -> None:
    """An item scored over 3 epochs counts as 3 units, ``correct`` of them right; a model's unit is
    the gcd of its items' ``n`` (the analytic SE divides totals by it)."""
    outs = [
        Outcome("m", "a", "a_1", 4, 2, 3), Outcome("m", "a", "a_2", 4, 3, 3),
        Outcome("m", "a", "a_1", 5, 0, 3), Outcome("m", "a", "a_2", 5, 1, 3),
        Outcome("n", "a", "a_1", 4, 2, 4), Outcome("n", "a", "a_1", 5, 1, 6),
        Outcome("o", "a", "a_1", 4, True), Outcome("o", "a", "a_1", 5, False),
        Outcome("o", "a", "a_1", 3, 1, 7),  # another level: not in the unit
    ]
    table = cell_table(outs)
    assert table.cells[("m", "a", 4)].correct == 5 and table.cells[("m", "a", 4)].n == 6
    assert table.cells[("m", "a", 5)].raw == pytest.approx(1 / 6)
    assert table.cells[("n", "a", 5)].n == 6 and table.cells[("o", "a", 3)].n == 7
    for given in (outs, OutcomeColumns.from_outcomes(outs)):
        cc = cluster_counts(given)
        assert cc.units.tolist() == [3, 2, 1]
        assert cc.counts[0].tolist() == [[2, 3, 0, 3], [3, 3, 1, 3]]
        assert cc.counts[1].tolist() == [[2, 4, 1, 6], [0, 0, 0, 0]]


def test_columns_of_nothing() -> None:
    empty = OutcomeColumns.build([])
    assert cell_table(empty).cells == {}
    cc = cluster_counts(empty)
    assert cc.models == () and cc.domains == () and cc.counts.shape == (0, 0, 4)
    lists = cluster_counts([])
    assert lists.models == () and lists.counts.shape == (0, 0, 4)


def test_outcome_columns_build_and_with_correct() -> None:
    cols = OutcomeColumns.build([("m2", "d", "i2", 5, 1, 1), ("m1", "c", "i1", 4, 2, 3)])
    assert (cols.models, cols.domains, cols.images) == (("m1", "m2"), ("c", "d"), ("i1", "i2"))
    assert cols.model.tolist() == [1, 0] and cols.domain.tolist() == [1, 0]
    assert cols.image.tolist() == [1, 0] and cols.level.tolist() == [5, 4]
    assert cols.correct.tolist() == [1, 2] and cols.n.tolist() == [1, 3]
    other = cols.with_correct([0, 3])
    assert other.correct.tolist() == [0, 3] and other.correct.dtype == np.int64
    assert other.n.tolist() == [1, 3] and cols.correct.tolist() == [1, 2]


def test_cell_table_of_columns_several_models_domains_levels() -> None:
    rows = [("m", "a", "a_1", 4, 1, 2), ("m", "a", "a_2", 4, 2, 2), ("m", "b", "b_1", 5, 0, 2),
            ("n", "b", "b_1", 3, 1, 1), ("n", "a", "a_1", 5, 1, 1), ("n", "a", "a_2", 5, 0, 1)]
    table = cell_table(OutcomeColumns.build(rows))
    assert {k: (c.correct, c.n) for k, c in table.cells.items()} == {
        ("m", "a", 4): (3, 4), ("m", "b", 5): (0, 2), ("n", "a", 5): (1, 2), ("n", "b", 3): (1, 1),
    }
    assert table.for_model("n") == {("a", 5): table.cells[("n", "a", 5)],
                                    ("b", 3): table.cells[("n", "b", 3)]}


def test_summarize_reports_its_levels_counts_and_pairs() -> None:
    base = {("a", 4): 0.0, ("a", 5): 0.0, ("b", 5): 0.5, ("b", 3): 0.0}
    table = CellTable.from_counts({("m", "a", 4): (1, 4), ("m", "a", 5): (3, 4),
                                   ("m", "b", 5): (3, 4), ("m", "b", 3): (1, 1)})
    s = summarize(table, base)["m"]
    assert s.model == "m" and s.levels == (4, 5)
    assert (s.n_hi_cells, s.n_paired, s.n_cells, s.paired_domains) == (2, 1, 4, ("a",))
    assert s.adjusted_hi == 0.75 and s.adjusted_lo == 0.25 and s.diff == 0.5
    assert s.raw_hi == 0.75 and s.overall == pytest.approx((0.25 + 0.75 + 0.5 + 1) / 4)
    assert check_levels((5, 4)) == (5, 4)


# --- baselines.py ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gear() -> Scorer:
    return Scorer(load_rule(resolve_rule_path("gear_train")))


def test_rule_baseline_fields(gear: Scorer) -> None:
    keys = ["increase; direction unchanged"] * 3 + ["decrease; direction unchanged"] * 2 + [
        "increase; direction reversed"
    ]
    base = rule_baseline(gear, keys)
    assert base.n == 6 and base.correct == 3 and base.accuracy == 0.5
    assert base.best_answer == "increase; direction unchanged"
    assert base.candidates == (
        ("increase; direction unchanged", 3),
        ("decrease; direction unchanged", 2),
        ("increase; direction reversed", 1),
    )


def test_rule_baseline_ties_go_to_the_first_string(gear: Scorer) -> None:
    keys = ["increase; direction unchanged", "decrease; direction unchanged"]
    base = rule_baseline(gear, keys)
    assert base.best_answer == "decrease; direction unchanged"
    assert base.n == 2 and base.correct == 1 and base.accuracy == 0.5


def test_rule_baseline_of_no_keys_is_a_data_error(gear: Scorer) -> None:
    with pytest.raises(DataError, match="^cannot compute a constant-answer baseline for a cell with no keys$"):
        rule_baseline(gear, [])


def test_a_rule_baseline_is_a_frozen_value(gear: Scorer) -> None:
    import dataclasses

    base = rule_baseline(gear, ["increase; direction unchanged"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.n = 2  # type: ignore[misc]


def test_key_groups_count_items_and_keep_unparsed_keys_apart() -> None:
    compass = Scorer(load_rule(resolve_rule_path("compass_bearing")))
    key = "{}; projected endpoint is closest to {} ({} map units away; bearing difference 9.5 degrees)"
    counts = Counter({key.format("A", "A", "12.0"): 2, key.format("A", "A", "99.5"): 1,
                      key.format("B", "B", "3.0"): 5, "not a key at all": 4, "also no key": 1})
    assert sorted(_key_groups(compass, counts)) == [
        (key.format("A", "A", "12.0"), 3), (key.format("B", "B", "3.0"), 5), ("also no key", 1),
        ("not a key at all", 4),
    ]


def test_strict_baselines_per_cell() -> None:
    pairs = [(("d", 5), "a"), (("d", 5), "a"), (("d", 5), "b"), (("e", 4), "x"), (("d", 4), "y")]
    assert strict_baselines(pairs) == {("d", 4): 1.0, ("d", 5): pytest.approx(2 / 3),
                                       ("e", 4): 1.0}
    assert list(strict_baselines(pairs)) == [("d", 4), ("d", 5), ("e", 4)]


def test_aggregate_records_are_frozen_values() -> None:
    """Outcomes, columns, counts, tables, summaries and cluster arrays are shared between the
    audit's variants and reports: none can be changed in place."""
    import dataclasses

    outcome = Outcome("m", "a", "a_1", 4, 1)
    cols = OutcomeColumns.from_outcomes([outcome, Outcome("m", "a", "a_1", 5, 0)])
    table = cell_table([outcome])
    summary = summarize(CellTable.from_counts({("m", "a", 4): (1, 1), ("m", "a", 5): (1, 1)}),
                        {("a", 4): 0.0, ("a", 5): 0.0})["m"]
    records = [(outcome, "correct"), (cols, "correct"), (table.cells[("m", "a", 4)], "n"),
               (table, "cells"), (summary, "diff"), (cluster_counts(cols), "units")]
    for record, name in records:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, name, None)
