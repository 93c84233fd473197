from __future__ import annotations

import math

import pytest

from keyaudit.engine.stats.aggregate import Outcome, cluster_counts
from keyaudit.engine.stats.analytic_se import analytic_difference_se
from keyaudit.engine.stats.bootstrap import bootstrap_clusters
from keyaudit.engine.stats.bootstrap_bench import simulate_clusters


def _two_images(domain: str, model: str = "m") -> list[Outcome]:
    # image 0: L4 1/1 correct, L5 1/2; image 1: L4 0/1, L5 1/1  ->  p4 = 1/2, p5 = 2/3
    return [
        Outcome(model, domain, f"{domain}_0", 4, True),
        Outcome(model, domain, f"{domain}_0", 5, True),
        Outcome(model, domain, f"{domain}_0", 5, False),
        Outcome(model, domain, f"{domain}_1", 4, False),
        Outcome(model, domain, f"{domain}_1", 5, True),
    ]


def test_hand_computed_unit_weights():
    se = analytic_difference_se(cluster_counts(_two_images("a")), {("a", 4): 0.0, ("a", 5): 0.0})[
        "m"
    ]
    # e_0 = (1 - 2/3*2)/3 - (1 - 1/2)/2 = -13/36, e_1 = +13/36
    assert se.se == pytest.approx(math.sqrt(2) * 13 / 36)
    # independent items: p5(1-p5)/3 + p4(1-p4)/2 = 43/216
    assert se.se_independent == pytest.approx(math.sqrt(43 / 216))
    assert se.design_effect == pytest.approx(2 * (13 / 36) ** 2 / (43 / 216))


def test_hand_computed_weights_and_strata():
    outs = _two_images("a") + _two_images("b")
    base = {("a", 4): 1.0, ("a", 5): 0.5, ("b", 4): 0.0, ("b", 5): 0.0}
    se = analytic_difference_se(cluster_counts(outs), base)["m"]
    var_a = 2 * (17 / 36) ** 2  # w5 = 1/(1-.5) = 2, w4 = 1 (baseline 1: adjusted = raw - 1)
    var_b = 2 * (13 / 36) ** 2
    assert se.se == pytest.approx(math.sqrt(var_a + var_b) / 2)
    ind_a = 4 * (2 / 9) / 3 + 0.25 / 2
    assert se.se_independent == pytest.approx(math.sqrt(ind_a + 43 / 216) / 2)


def test_one_item_per_cluster_has_design_effect_one():
    outs = [Outcome("m", "a", f"a_{i}", 4 + i % 2, i % 3 == 0) for i in range(12)]
    se = analytic_difference_se(cluster_counts(outs), {("a", 4): 0.2, ("a", 5): 0.4})["m"]
    assert se.design_effect == pytest.approx(1.0)


def test_no_paired_domain_is_nan():
    outs = [Outcome("m", "a", "a_0", 5, True), Outcome("n", "a", "a_0", 4, True)]
    outs += [Outcome("n", "a", "a_0", 5, True)]
    se = analytic_difference_se(cluster_counts(outs), {("a", 4): 0.0, ("a", 5): 0.0})
    assert math.isnan(se["m"].se) and math.isnan(se["m"].design_effect)
    assert se["n"].se == 0.0


def test_bootstrap_and_analytic_se_agree_on_large_clustered_benchmark():
    sim = simulate_clusters(models=3, domains=31, images=100, items_per_level=4, rho=0.8, seed=21)
    est = bootstrap_clusters(sim.clusters, sim.baselines, resamples=4000, seed=4)
    for e in est.values():
        assert e.bootstrap_se == pytest.approx(e.analytic_se, rel=0.10)
        # The clustering is real: an SE that ignored it would be more than 10% too small.
        assert e.design_effect > 1.3
        assert e.bootstrap_se / (e.analytic_se / math.sqrt(e.design_effect)) > 1.1
        assert e.clusters_per_stratum == {d: 100 for d in sim.clusters.domains}
