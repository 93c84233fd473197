"""Gaps a mutation-testing pass found in the extraction-error statistics (issue 39, item 5): each
test fails on mutants of ``engine/stats/extraction_error.py`` or ``engine/stats/corrected.py``
that the rest of the suite let through (``bench/mutation.py``; bench/results/mutation.md).

The expected values are computed here from the modules' docstrings and docs/statistics.md, in
plain Python: a rate is e/n and 0 when unmeasured; the Jeffreys draws follow Beta(e + ½, n − e + ½);
the Rogan–Gladen count is (accepted − fa·n) / (1 − fa − fr) within [0, n], the verdicts as they are
when fa + fr ≥ 1; a corrected L(hi)−L(lo) is the mean over paired domains of the adjusted
difference; a corrected accuracy's draws are the known units plus each side's realised right
units, keyed by (seed, model, domain, level, certain/uncertain).
"""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest

from keyaudit.engine.stats import _extraction_reference
from keyaudit.engine.stats.aggregate import OutcomeColumns
from keyaudit.engine.stats.bootstrap import name_key
from keyaudit.engine.stats.corrected import (
    SIDES,
    CorrectedAccuracies,
    CorrectedDifference,
    CorrectionInputs,
    Interval,
    _interval,
    _parts,
    corrected_accuracies,
    corrected_bootstrap,
    corrected_point_differences,
    corrected_right,
    difference_interval,
    normal_draws,
    normal_draws_python,
    realised_right,
)
from keyaudit.engine.stats.extraction_error import (
    RATES,
    VERDICTS,
    RuleErrorSample,
    point_rates,
    rate_draws,
    rule_key,
)

SAMPLES = (
    RuleErrorSample("one", (40, 25, 3, 0), (2, 0, 3, 0), (300, 200, 5, 7)),
    RuleErrorSample("two", (0, 9, 1, 4), (0, 9, 0, 1), (10, 0, 0, 2)),
    RuleErrorSample("three", (12, 30, 6, 5), (3, 4, 1, 2), (8, 9, 4, 3)),
)


def _rg(a: float, r: float, fa: float, fr: float) -> float:
    """Rogan–Gladen, by hand (corrected.py's docstring; _extraction_reference's branches)."""
    u = a + r
    if u == 0:
        return 0.0
    if 1 - fa - fr <= 0:
        return float(a)
    return min(max((a - fa * u) / (1 - fa - fr), 0.0), float(u))


def _adjusted(raw: float, base: float) -> float:
    return raw - base if base == 1.0 else (raw - base) / (1.0 - base)


def _percentile(values, q: float) -> float:
    values = sorted(values)
    position = q * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


# --- extraction_error.py -------------------------------------------------------------------------


def test_the_names_of_the_rates_and_verdicts_in_array_order() -> None:
    assert RATES == ("certain false accept", "certain false reject", "uncertain false accept",
                     "uncertain false reject")
    assert VERDICTS == ("certain accept", "certain reject", "uncertain accept", "uncertain reject")
    assert SIDES == ("known", "certain accept", "certain reject", "uncertain accept", "uncertain reject")


def test_a_sample_gives_its_rates_measured_and_unmeasured() -> None:
    s = RuleErrorSample("r", (40, 0, 3, 1), (2, 0, 3, 0), (300, 200, 0, 0))
    assert [s.rate(k) for k in range(4)] == [0.05, 0.0, 1.0, 0.0]
    assert [s.measured(k) for k in range(4)] == [True, False, True, True]
    assert s.interval(0, 0.95) == pytest.approx((0.0138, 0.1650), abs=5e-4)  # Wilson, 2 in 40
    low, high = s.interval(1, 0.95)
    assert math.isnan(low) and math.isnan(high)
    # the certain false-reject rate applies (200 certain rejects) but nothing measured it; the
    # uncertain rates have no unlabelled verdict to apply to
    assert s.unmeasured == ("certain false reject",)
    t = RuleErrorSample("t", (5, 6, 0, 0), (0, 0, 0, 0), (0, 0, 0, 1))
    assert t.unmeasured == ("uncertain false accept", "uncertain false reject")
    assert RuleErrorSample("u", (0, 0, 0, 0), (0, 0, 0, 0), (0, 1, 1, 0)).unmeasured == RATES
    assert RuleErrorSample("v", (0, 0, 0, 0), (0, 0, 0, 0), (1, 0, 0, 0)).unmeasured == RATES[:2]
    assert RuleErrorSample("w", (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)).unmeasured == ()
    assert RuleErrorSample("x", (1, 1, 0, 0), (0, 0, 0, 0), (3, 2, 0, 4)).unmeasured == RATES[2:]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.rule = "other"


def test_point_rates_are_e_over_n_with_a_row_of_zeros_for_no_rule() -> None:
    got = point_rates(SAMPLES)
    want = [[2 / 40, 0, 1, 0], [0, 1, 0, 0.25], [0.25, 4 / 30, 1 / 6, 0.4], [0, 0, 0, 0]]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    assert got.shape == (4, 4)


@pytest.mark.parametrize("seed", [3, 2**64 - 5])
def test_rate_draws_follow_their_jeffreys_posteriors(seed: int) -> None:
    """Each measured rate's draws: mean (e + ½)/(n + 1) and the Beta variance; unmeasured rates
    and the no-rule row are 0; the kernel equals the plain-Python specification bit for bit."""
    resamples = 1500
    fast = rate_draws(SAMPLES, resamples, seed)
    assert np.array_equal(fast, rate_draws(SAMPLES, resamples, seed, engine="python"))
    assert fast.shape == (resamples, 4, 4) and (fast[:, 3] == 0).all()
    for g, s in enumerate(SAMPLES):
        for k in range(4):
            n, e = s.labelled[k], s.errors[k]
            if n == 0:
                assert (fast[:, g, k] == 0).all()
                continue
            a, b = e + 0.5, n - e + 0.5
            mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
            draws = fast[:, g, k]
            assert ((draws > 0) & (draws < 1)).all()
            assert abs(draws.mean() - mean) < 4 * math.sqrt(var / resamples), (g, k)
            assert draws.var() == pytest.approx(var, rel=0.15), (g, k)


def test_rate_draws_depend_on_every_bit_of_the_seed_and_only_on_its_low_64() -> None:
    base = rate_draws(SAMPLES, 50, 4, engine="python")
    for other in (5, 6, 2**63 + 4):
        assert not np.array_equal(base, rate_draws(SAMPLES, 50, other, engine="python"))
    assert np.array_equal(base, rate_draws(SAMPLES, 50, 2**64 + 4, engine="python"))
    assert np.array_equal(base, rate_draws(SAMPLES, 50, 2**64 + 4))


def test_a_rules_key_is_its_own() -> None:
    assert rule_key("one") == name_key("extraction error of rule one") != name_key("one")
    draws = rate_draws((SAMPLES[0],), 20, 1, engine="python")
    renamed = rate_draws((dataclasses.replace(SAMPLES[0], rule="uno"),), 20, 1, engine="python")
    assert not np.array_equal(draws, renamed)


# --- corrected.py: the small pieces --------------------------------------------------------------


def test_corrected_right_is_known_plus_both_rogan_gladen_counts() -> None:
    parts = np.array([[5, 40, 10, 3, 4], [2, 0, 0, 0, 0], [0, 10, 0, 0, 7]])
    q = np.array([[0.1, 0.05, 0.2, 0.3], [0.1, 0.05, 0.2, 0.3], [0.6, 0.5, 0.0, 0.0]])
    got = corrected_right(parts, q)
    want = [5 + _rg(40, 10, 0.1, 0.05) + _rg(3, 4, 0.2, 0.3), 2.0, 0 + 10 + 0]
    np.testing.assert_allclose(got, want, rtol=1e-15)
    one = corrected_right(np.array([5, 40, 10, 3, 4]), np.array([0.1, 0.05, 0.2, 0.3]))
    assert float(one) == pytest.approx(want[0], rel=1e-15)


def test_an_interval_reaches_its_estimate_beyond_rounding_only() -> None:
    draws = np.linspace(0.2, 0.6, 101)
    assert _interval(0.4, draws, 0.9) == Interval(0.4, pytest.approx(0.22), pytest.approx(0.58))
    assert _interval(0.1, draws, 0.9) == Interval(0.1, 0.1, pytest.approx(0.58))
    assert _interval(0.7, draws, 0.9) == Interval(0.7, pytest.approx(0.22), 0.7)
    low = float(np.quantile(draws, 0.05))
    high = float(np.quantile(draws, 0.95))
    assert _interval(low - 1e-13, draws, 0.9).low == low  # a rounding gap is no gap
    assert _interval(high + 1e-13, draws, 0.9).high == high
    assert _interval(low - 1e-12, draws, 0.9).low == low  # the edge of rounding too
    assert _interval(high + 1e-12, draws, 0.9).high == high
    assert _interval(low - 1e-11, draws, 0.9).low == low - 1e-11
    assert _interval(high + 1e-11, draws, 0.9).high == high + 1e-11
    assert _interval(low, draws, 0.9) == Interval(low, low, high)
    assert _interval(high, draws, 0.9) == Interval(high, low, high)


def test_difference_interval_is_the_percentile_interval_of_the_difference() -> None:
    rng = random.Random(2)
    a = np.array([rng.random() for _ in range(201)])
    b = np.array([rng.random() * 0.5 for _ in range(201)])
    diff = [x - y for x, y in zip(a, b, strict=True)]
    assert difference_interval(a, b, 0.9) == (
        pytest.approx(_percentile(diff, 0.05), abs=1e-12), pytest.approx(_percentile(diff, 0.95), abs=1e-12)
    )


def _realised(a: int, r: int, fa: float, fr: float, z: float) -> float:
    """realised_right's docstring, scalar by scalar."""
    u = a + r
    centre = _rg(a, r, fa, fr)
    p = centre / u if u > 0 else 0.0
    right_a, wrong_a = p * (1 - fr), (1 - p) * fa
    w = right_a / (right_a + wrong_a) if right_a + wrong_a > 0 else 0.0
    right_r, wrong_r = p * fr, (1 - p) * (1 - fa)
    v = right_r / (right_r + wrong_r) if right_r + wrong_r > 0 else 0.0
    spread = math.sqrt(a * w * (1 - w) + r * v * (1 - v))
    return min(max(centre + z * spread, 0.0), float(u))


def test_realised_right_spreads_the_rogan_gladen_count_by_who_was_misread() -> None:
    cases = [  # a, r, fa, fr, z
        (40, 10, 0.1, 0.05, 0.7), (40, 10, 0.1, 0.05, -1.3), (5, 30, 0.3, 0.2, 2.0),
        (10, 0, 0.2, 0.1, 1.0), (0, 12, 0.05, 0.3, -0.4), (0, 0, 0.1, 0.1, 1.5),
        (20, 20, 0.0, 0.0, 3.0), (3, 1, 0.6, 0.5, 1.0), (30, 20, 0.1, 0.1, -40.0),
        (30, 20, 0.1, 0.1, 40.0), (8, 8, 0.25, 0.0, 0.5), (8, 8, 0.0, 0.25, -0.5),
    ]
    a, r, fa, fr, z = (np.array(col) for col in zip(*cases, strict=True))
    got = realised_right(a, r, fa.astype(float), fr.astype(float), z.astype(float))
    want = [_realised(*c) for c in cases]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert got[8] == 0.0 and got[9] == 50.0  # kept within [0, a + r]
    assert got[1] < _rg(40, 10, 0.1, 0.05) < got[0]  # z moves it both ways


def test_normal_draws_are_box_muller_on_counter_uniforms() -> None:
    keys = [name_key(k) for k in ("a", "b")]
    fast = normal_draws(keys, 11, 4000)
    assert np.array_equal(fast, normal_draws_python(keys, 11, 4000))
    assert np.array_equal(fast, normal_draws(keys, 11, 4000, engine="python"))
    for row in fast:
        assert abs(row.mean()) < 0.07 and abs(row.std() - 1) < 0.05
        assert abs(np.mean(row > 1.959964) - 0.025) < 0.01  # the normal's tail, not a uniform's
    assert abs(np.corrcoef(fast[0], fast[1])[0, 1]) < 0.07
    assert np.array_equal(normal_draws(keys, 2**64 + 11, 30), fast[:, :30])
    assert not np.array_equal(normal_draws(keys, 12, 30), fast[:, :30])
    assert not np.array_equal(normal_draws(keys, 10, 30), fast[:, :30])
    assert np.array_equal(normal_draws(keys[1:], 11, 30), fast[1:, :30])  # keyed by key only


# --- corrected.py: the figures against plain recomputations -------------------------------------


def _design(seed: int):
    """Rows (model, domain, image, level, side, units) over three models, three domains and two
    levels; side 0 known wrong, 1 known right, 2..5 the unlabelled kinds (SIDES order); a model
    missing a level in one domain (not paired there), a cell no rule changes (only known
    verdicts), items of three units."""
    rng = random.Random(seed)
    rows = []
    for m in ("m0", "m1", "m2"):
        for d in ("d0", "d1", "d2"):
            for image in range(rng.randint(3, 6)):
                for level in (4, 5):
                    if m == "m2" and d == "d1" and level == 4:
                        continue
                    unruled = d == "d2" and level == 4
                    side = rng.randint(0, 1) if unruled else rng.randint(0, 5)
                    rows.append((m, d, f"{d}_i{image}", level, side, rng.choice((1, 1, 3))))
    rule_of_cell = {("d0", 4): 0, ("d0", 5): 1, ("d1", 4): 2, ("d1", 5): 0, ("d2", 5): 2}
    baselines = {(d, lv): rng.choice((0.0, 0.2, 0.5, 1.0)) for d in ("d0", "d1", "d2") for lv in (4, 5)}
    return rows, rule_of_cell, baselines


def _inputs(rows, rule_of_cell, baselines) -> CorrectionInputs:
    sides = tuple(
        OutcomeColumns.build((m, d, i, lv, units if side == k + 1 else 0, units)
                             for m, d, i, lv, side, units in rows)
        for k in range(5)
    )
    return CorrectionInputs(sides, rule_of_cell, SAMPLES, baselines)


def _cell_counts(rows):
    """{(model, domain, level): [total, known right, CA, CR, UA, UR]} in units."""
    out: dict = {}
    for m, d, _, lv, side, units in rows:
        cell = out.setdefault((m, d, lv), [0] * 6)
        cell[0] += units
        if side:
            cell[side] += units
    return out


def _point_accuracy(counts, q) -> float:
    total, known, ca, cr, ua, ur = counts
    return (known + _rg(ca, cr, q[0], q[1]) + _rg(ua, ur, q[2], q[3])) / total


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_corrected_differences_match_a_plain_recomputation(seed: int) -> None:
    rows, rule_of_cell, baselines = _design(seed)
    inputs = _inputs(rows, rule_of_cell, baselines)
    rates = [[s.rate(k) for k in range(4)] for s in SAMPLES]
    cells = _cell_counts(rows)
    want = {}
    for m in ("m0", "m1", "m2"):
        terms = []
        for d in ("d0", "d1", "d2"):
            if (m, d, 4) not in cells or (m, d, 5) not in cells:
                continue
            p = {
                lv: _point_accuracy(cells[(m, d, lv)], rates[rule_of_cell[(d, lv)]]
                                    if (d, lv) in rule_of_cell else [0.0] * 4)
                for lv in (4, 5)
            }
            terms.append(_adjusted(p[5], baselines[(d, 5)]) - _adjusted(p[4], baselines[(d, 4)]))
        want[m] = sum(terms) / len(terms)
    got = corrected_point_differences(inputs, (4, 5))
    assert got == pytest.approx(want, abs=1e-12)
    # the bootstrap: its estimate is the point figure, its interval the percentiles of the
    # replicates that have a value, its verdict that interval's
    draws = rate_draws(SAMPLES, 120, seed)
    seen = []
    boot = corrected_bootstrap(inputs, (4, 5), draws, 120, seed, 0.9, progress=lambda *a: seen.append(a),
                               chunk_size=50)
    assert seen == [(50, 120), (100, 120), (120, 120)]
    layout, parts, rule_lo, rule_hi, base_lo, base_hi = _parts(inputs, (4, 5))
    reps = _extraction_reference.corrected_resamples_numpy(
        parts, layout.offsets, layout.active.astype(np.uint8), base_lo, base_hi, rule_lo, rule_hi, draws,
        np.array([name_key(m) for m in layout.models], dtype=np.uint64),
        np.array([name_key(d) for d in layout.domains], dtype=np.uint64), seed, 0, 120,
    )
    for j, m in enumerate(layout.models):
        valid = [v for v in reps[j] if not math.isnan(v)]
        c = boot[m]
        assert isinstance(c, CorrectedDifference) and c.n_replicates == len(valid) == 120
        assert c.estimate == pytest.approx(want[m], abs=1e-12)
        assert c.ci_low == pytest.approx(_percentile(valid, 0.05), abs=1e-12)
        assert c.ci_high == pytest.approx(_percentile(valid, 0.95), abs=1e-12)
        assert c.verdict == ("survives" if c.ci_low > 0 else "reverses" if c.ci_high < 0
                             else "indistinguishable from zero")
    assert corrected_bootstrap(inputs, (4, 5), draws, 120, seed, 0.9) == boot  # numba, one chunk
    assert corrected_bootstrap(inputs, (4, 5), draws, 120, seed + 2**64, 0.9, "reference") == boot
    other = corrected_bootstrap(inputs, (4, 5), draws, 120, seed + 2, 0.9, "reference")
    assert [other[m].ci_low for m in layout.models] != [boot[m].ci_low for m in layout.models]
    odd = corrected_bootstrap(inputs, (4, 5), draws, 120, seed + 1, 0.9, "reference")
    assert [odd[m].ci_low for m in layout.models] != [boot[m].ci_low for m in layout.models]
    with pytest.raises(ValueError, match="unknown engine"):
        corrected_bootstrap(inputs, (4, 5), draws, 120, seed, 0.9, "fortran")


def test_a_model_with_no_paired_domain_has_no_difference() -> None:
    rows = [("a", "d", "d_i0", 4, 1, 1), ("a", "d", "d_i0", 5, 2, 1), ("b", "d", "d_i0", 5, 1, 1)]
    inputs = _inputs(rows, {("d", 5): 0}, {("d", 4): 0.0, ("d", 5): 0.0})
    got = corrected_point_differences(inputs, (4, 5))
    # a: L5 one certain accept, fa 2/40 and fr 0: (1 − 0.05) / 0.95 = 1 right; L4 1 known right
    assert got["a"] == pytest.approx(0.0, abs=1e-12) and math.isnan(got["b"])
    boot = corrected_bootstrap(inputs, (4, 5), rate_draws(SAMPLES, 30, 1), 30, 1, 0.95)
    assert math.isnan(boot["b"].ci_low) and boot["b"].n_replicates == 0
    assert boot["b"].verdict == "indistinguishable from zero"


@pytest.mark.parametrize("seed", [4, 5])
def test_corrected_accuracies_match_a_plain_recomputation(seed: int) -> None:
    rows, rule_of_cell, baselines = _design(seed)
    inputs = _inputs(rows, rule_of_cell, baselines)
    resamples, confidence = 200, 0.9
    draws = rate_draws(SAMPLES, resamples, seed)
    got = corrected_accuracies(inputs, 5, draws, confidence, seed=seed)
    assert isinstance(got, CorrectedAccuracies)
    cells = _cell_counts(rows)
    rates = [[s.rate(k) for k in range(4)] for s in SAMPLES]
    per_model: dict = {}
    for key in sorted(cells):
        m, d, lv = key
        counts = cells[key]
        total = counts[0]
        if (d, lv) in rule_of_cell:
            g = rule_of_cell[(d, lv)]
            point = _point_accuracy(counts, rates[g])
            z_c, z_u = (normal_draws_python([name_key(f"extraction draw\0{m}\0{d}\0{lv}\0{kind}")], seed,
                                            resamples)[0] for kind in ("certain", "uncertain"))
            series = [
                (counts[1]
                 + _realised(counts[2], counts[3], draws[r, g, 0], draws[r, g, 1], z_c[r])
                 + _realised(counts[4], counts[5], draws[r, g, 2], draws[r, g, 3], z_u[r])) / total
                for r in range(resamples)
            ]
            low, high = _percentile(series, 0.05), _percentile(series, 0.95)
            assert got.cells[key].estimate == pytest.approx(point, abs=1e-12)
            assert got.cells[key].low == pytest.approx(min(low, point), abs=1e-12), key
            assert got.cells[key].high == pytest.approx(max(high, point), abs=1e-12), key
        else:
            assert key not in got.cells
            point = counts[1] / total
            series = [point] * resamples
        if lv == 5:
            per_model.setdefault(m, []).append((point, series))
    assert set(got.raw_hi) == set(per_model)
    for m, items in per_model.items():
        point = sum(p for p, _ in items) / len(items)
        series = [sum(s[r] for _, s in items) / len(items) for r in range(resamples)]
        np.testing.assert_allclose(got.raw_hi_draws[m], series, rtol=0, atol=1e-12)
        interval = got.raw_hi[m]
        assert interval.estimate == pytest.approx(point, abs=1e-12)
        assert interval.low == pytest.approx(min(_percentile(series, 0.05), point), abs=1e-12)
        assert interval.high == pytest.approx(max(_percentile(series, 0.95), point), abs=1e-12)
    assert _same(corrected_accuracies(inputs, 5, draws, confidence, seed=seed, engine="python"), got)


def _same(one: CorrectedAccuracies, two: CorrectedAccuracies) -> bool:
    return (one.cells == two.cells and one.raw_hi == two.raw_hi and one.raw_hi_draws.keys() == two.raw_hi_draws.keys()
            and all(np.array_equal(one.raw_hi_draws[m], two.raw_hi_draws[m]) for m in one.raw_hi_draws))


def test_corrected_accuracies_default_seed_is_0() -> None:
    rows, rule_of_cell, baselines = _design(6)
    inputs = _inputs(rows, rule_of_cell, baselines)
    draws = rate_draws(SAMPLES, 40, 6)
    default = corrected_accuracies(inputs, 5, draws, 0.95)
    assert _same(default, corrected_accuracies(inputs, 5, draws, 0.95, seed=0))
    assert not _same(default, corrected_accuracies(inputs, 5, draws, 0.95, seed=1))


def test_with_no_ruled_cell_the_accuracies_are_the_known_ones() -> None:
    rows = [("a", "d", "d_i0", 5, 1, 2), ("a", "d", "d_i1", 5, 0, 2)]
    inputs = _inputs(rows, {}, {("d", 5): 0.0})
    got = corrected_accuracies(inputs, 5, rate_draws(SAMPLES, 10, 1), 0.95)
    assert got.cells == {} and got.raw_hi == {"a": Interval(0.5, 0.5, 0.5)}


def test_the_results_are_frozen() -> None:
    for value, name in ((Interval(0.1, 0.0, 0.2), "low"), (CorrectedDifference(0.1, 0, 0.2, "x", 3), "verdict"),
                        (CorrectedAccuracies({}, {}, {}), "cells"),
                        (CorrectionInputs((), {}, (), {}), "samples")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, None)
