from __future__ import annotations

import math
import random

import numba
import numpy as np
import pytest

from keyaudit.engine.errors import DataError, UsageError
from keyaudit.engine.stats.aggregate import Outcome, cell_table, cluster_counts, summarize
from keyaudit.engine.stats.bootstrap import (
    bootstrap_clusters,
    bootstrap_difference,
    name_key,
    point_differences,
    replicates,
)
from keyaudit.engine.stats.bootstrap_bench import simulate_clusters, simulate_outcomes
from keyaudit.engine.stats.metrics import INDISTINGUISHABLE, REVERSES, SURVIVES


def random_benchmark(seed: int, models: int, domains: int, max_images: int):
    """Messy outcomes: uneven clusters, items at one level only, missing cells and domains."""
    rng = random.Random(seed)
    outs: list[Outcome] = []
    baselines: dict[tuple[str, int], float] = {}
    for d in range(domains):
        domain = f"dom{d}"
        for level in (3, 4, 5):
            baselines[(domain, level)] = rng.choice([0.0, 0.2, 0.5, 0.75, 1.0, rng.random()])
        for m in range(models):
            if rng.random() < 0.15:
                continue  # model lacks the domain entirely
            drop_level = rng.choice([None, None, None, None, 4, 5])
            for i in range(rng.randint(1, max_images)):
                for level in (3, 4, 5):
                    if level == drop_level:
                        continue
                    for _ in range(rng.choice([0, 1, 1, 2, 3])):
                        outs.append(
                            Outcome(f"model{m}", domain, f"{domain}_{i}", level, rng.random() < 0.6)
                        )
    return outs, baselines


SHAPES = [(1, 1, 1), (2, 3, 4), (3, 6, 12), (5, 4, 30)]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("shape", SHAPES)
def test_kernel_equals_numpy_and_python_exactly(shape, seed):
    outs, base = random_benchmark(seed, *shape)
    cc = cluster_counts(outs)
    kern = replicates(cc, base, 64, seed=seed, engine="numba")
    ref = replicates(cc, base, 64, seed=seed, engine="reference")
    py = replicates(cc, base, 64, seed=seed, engine="python")
    np.testing.assert_array_equal(kern, ref)
    np.testing.assert_array_equal(kern, py)


def test_kernel_equals_reference_on_larger_simulation():
    sim = simulate_clusters(models=4, domains=7, images=40, items_per_level=3, seed=3)
    kern = replicates(sim.clusters, sim.baselines, 300, seed=11, engine="numba")
    ref = replicates(sim.clusters, sim.baselines, 300, seed=11, engine="reference")
    assert kern.tobytes() == ref.tobytes()


def test_thread_count_does_not_change_result():
    sim = simulate_clusters(models=3, domains=5, images=30, seed=1)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = replicates(sim.clusters, sim.baselines, 500, seed=5)
    finally:
        numba.set_num_threads(threads)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        two = replicates(sim.clusters, sim.baselines, 500, seed=5)
    finally:
        numba.set_num_threads(threads)
    assert one.tobytes() == two.tobytes()


def test_model_order_and_other_models_do_not_matter():
    outs, base = random_benchmark(4, 4, 5, 10)
    full = bootstrap_difference(outs, base, resamples=200, seed=2)
    shuffled = list(reversed(outs))
    random.Random(0).shuffle(shuffled)
    again = bootstrap_difference(shuffled, base, resamples=200, seed=2)
    alone = bootstrap_difference(
        [o for o in outs if o.model == "model1"], base, resamples=200, seed=2
    )
    assert full == again
    assert alone["model1"] == full["model1"]


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000])
def test_chunk_size_does_not_change_result(chunk):
    outs, base = random_benchmark(5, 3, 4, 8)
    cc = cluster_counts(outs)
    whole = replicates(cc, base, 150, seed=9, chunk_size=1000)
    calls = []
    chunked = replicates(
        cc, base, 150, seed=9, chunk_size=chunk, progress=lambda d, t: calls.append((d, t))
    )
    assert whole.tobytes() == chunked.tobytes()
    assert calls[-1] == (150, 150) and len(calls) == math.ceil(150 / chunk)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_seeded_reproducibility():
    outs, base = random_benchmark(6, 2, 4, 10)
    a = bootstrap_difference(outs, base, resamples=300, seed=123)
    b = bootstrap_difference(outs, base, resamples=300, seed=123)
    c = bootstrap_difference(outs, base, resamples=300, seed=124)
    assert a == b
    assert any(a[m].ci_low != c[m].ci_low or a[m].ci_high != c[m].ci_high for m in a)


def test_name_key_is_stable():
    assert name_key("Claude Opus 5") == name_key("Claude Opus 5")
    assert name_key("a") != name_key("b")
    assert 0 <= name_key("x") < 2**64
    # Pinned: changing the key derivation would silently change every published interval.
    assert name_key("Claude Opus 5") == 0x1AE6393204D76DC


def test_estimate_equals_summarize_diff():
    outs, base = random_benchmark(7, 4, 6, 10)
    summaries = summarize(cell_table(o for o in outs if o.level in (4, 5)), base)
    cc = cluster_counts(outs)
    for m, value in zip(cc.models, point_differences(cc, base), strict=True):
        assert value == pytest.approx(summaries[m].diff, abs=1e-12)


def test_resample_drawing_every_cluster_once_reproduces_estimate():
    # With one cluster per domain every resample is the full sample: the CI collapses.
    outs = [
        Outcome("m", "a", "a_0", 4, True),
        Outcome("m", "a", "a_0", 4, False),
        Outcome("m", "a", "a_0", 5, True),
        Outcome("m", "b", "b_0", 4, False),
        Outcome("m", "b", "b_0", 5, True),
    ]
    base = {("a", 4): 0.25, ("a", 5): 0.5, ("b", 4): 0.0, ("b", 5): 1.0}
    est = bootstrap_difference(outs, base, resamples=50)["m"]
    expected = ((1.0 - 0.5) / 0.5 - (0.5 - 0.25) / 0.75 + (1.0 - 1.0) - 0.0) / 2
    assert est.estimate == pytest.approx(expected)
    assert est.ci_low == pytest.approx(expected) and est.ci_high == pytest.approx(expected)
    assert est.bootstrap_se == pytest.approx(0.0, abs=1e-15)
    assert est.verdict == SURVIVES
    assert est.clusters_per_stratum == {"a": 1, "b": 1}


def test_all_correct_everywhere_gives_point_interval():
    outs = [Outcome("m", "a", f"a_{i}", lv, True) for i in range(5) for lv in (4, 5)]
    est = bootstrap_difference(outs, {("a", 4): 0.5, ("a", 5): 0.5}, resamples=40)["m"]
    assert (est.estimate, est.ci_low, est.ci_high) == (0.0, 0.0, 0.0)
    assert est.verdict == INDISTINGUISHABLE
    assert math.isnan(est.design_effect) and est.analytic_se == 0.0


def test_empty_resampled_cells_are_dropped_per_replicate():
    # Domain a: image a_0 has only L4 items, a_1 only L5. Resamples drawing a_0 twice have no L5
    # item in a, so a is left out of them and the replicate is domain b's value alone.
    outs = [
        Outcome("m", "a", "a_0", 4, True),
        Outcome("m", "a", "a_1", 5, True),
        Outcome("m", "b", "b_0", 4, False),
        Outcome("m", "b", "b_0", 5, False),
    ]
    base = {("a", 4): 0.0, ("a", 5): 0.0, ("b", 4): 0.0, ("b", 5): 0.0}
    reps = replicates(cluster_counts(outs), base, 400, seed=1)[0]
    assert set(np.unique(reps)) == {0.0}  # (1 - 1 + 0 - 0) / 2 and (0 - 0) / 1 are both 0
    outs[3] = Outcome("m", "b", "b_0", 5, True)  # b now contributes 1
    reps = replicates(cluster_counts(outs), base, 400, seed=1)[0]
    assert set(np.unique(reps)) == {0.5, 1.0}  # (0 + 1) / 2 with a kept, 1 / 1 with a dropped
    assert 0.3 < np.mean(reps == 1.0) < 0.7  # a dropped in about half of the resamples


def test_model_missing_a_level_has_nan_figures():
    outs = [Outcome("m", "a", "a_0", 4, True), Outcome("m", "a", "a_0", 5, True)]
    outs += [Outcome("n", "a", "a_0", 5, True)]
    out = bootstrap_difference(outs, {("a", 4): 0.0, ("a", 5): 0.0}, resamples=20)
    assert out["m"].n_replicates == 20
    n = out["n"]
    assert math.isnan(n.estimate) and math.isnan(n.ci_low) and n.n_replicates == 0
    assert n.verdict == INDISTINGUISHABLE and n.clusters_per_stratum == {}


@pytest.mark.parametrize(
    ("shift", "expected"), [(0.3, SURVIVES), (-0.3, REVERSES), (0.0, INDISTINGUISHABLE)]
)
def test_verdict_on_simulation(shift, expected):
    mu = np.empty((1, 8, 2))
    mu[..., 0] = 0.5
    mu[..., 1] = 0.5 + shift
    sim = simulate_clusters(1, 8, 60, mu=mu, baselines=np.zeros((8, 2)), seed=8)
    est = bootstrap_clusters(sim.clusters, sim.baselines, resamples=1000)["model_00"]
    assert est.verdict == expected
    assert est.ci_low <= est.estimate <= est.ci_high


def test_simulated_outcomes_round_trip():
    sim = simulate_clusters(2, 3, 5, items_per_level=2, seed=2)
    cc = cluster_counts(simulate_outcomes(sim))
    np.testing.assert_array_equal(cc.counts, sim.clusters.counts)
    np.testing.assert_array_equal(cc.offsets, sim.clusters.offsets)


def test_invalid_arguments():
    outs, base = random_benchmark(1, 1, 2, 3)
    with pytest.raises(UsageError):
        bootstrap_difference(outs, base, engine="gpu")
    with pytest.raises(UsageError):
        bootstrap_difference(outs, base, resamples=0)
    with pytest.raises(UsageError):
        bootstrap_difference(outs, base, confidence=1.0)
    with pytest.raises(UsageError):
        bootstrap_difference(outs, base, chunk_size=0)
    with pytest.raises(DataError):
        bootstrap_difference([], base)
    with pytest.raises(DataError, match="no constant-answer baseline"):
        bootstrap_difference(outs, {}, resamples=5)


@pytest.mark.parametrize("shape", SHAPES)
def test_packed_and_unpacked_kernels_equal_reference(shape):
    from keyaudit.engine.stats import _bootstrap_reference as ref
    from keyaudit.engine.stats._bootstrap_kernel import (
        diff_resamples,
        diff_resamples_packed,
        pack_counts,
    )
    from keyaudit.engine.stats.bootstrap import _kernel_inputs

    outs, base = random_benchmark(11, *shape)
    counts, *rest = _kernel_inputs(cluster_counts(outs), base)
    packed = pack_counts(counts, rest[0])
    assert packed is not None
    expected = ref.diff_resamples_numpy(counts, *rest, 77, 5, 85)
    unpacked = diff_resamples(counts, *rest, np.uint64(77), 5, 85)
    fast = diff_resamples_packed(packed, *rest, np.uint64(77), 5, 85)
    assert unpacked.tobytes() == expected.tobytes() == fast.tobytes()


def test_large_counts_fall_back_to_unpacked_kernel():
    from keyaudit.engine.stats._bootstrap_kernel import pack_counts

    # 40 images x 2,000 items at L5: a resampled sum can reach 80,000 > 65,535.
    outs = [Outcome("m", "a", f"a_{i}", 4, i % 2 == 0) for i in range(40)]
    outs += [
        Outcome("m", "a", f"a_{i}", 5, (i + j) % 3 == 0) for i in range(40) for j in range(2000)
    ]
    cc = cluster_counts(outs)
    assert pack_counts(cc.counts, cc.offsets) is None
    base = {("a", 4): 0.5, ("a", 5): 0.25}
    kern = replicates(cc, base, 30, seed=3)
    assert kern.tobytes() == replicates(cc, base, 30, seed=3, engine="reference").tobytes()
    assert np.all(np.isfinite(kern))


def test_bench_cli_renders_table():
    from typer.testing import CliRunner

    from keyaudit.cli.bench import app

    args = ["bootstrap", "--models", "2", "--domains", "3", "--images", "5", "--resamples", "50"]
    result = CliRunner().invoke(app, [*args, "--no-corpus"], terminal_width=160)
    assert result.exit_code == 0, result.output
    for text in ("kernel", "numpy reference", "pure Python *", "seed job 10x31x50"):
        assert text in result.output
    assert "full corpus" not in result.output


def test_kernel_source_interpreted_without_jit_equals_reference():
    """The kernel's Python source, run with NUMBA_DISABLE_JIT=1, agrees with the reference.

    This exercises the kernel's lines as plain Python (so coverage tools see them) and proves the
    numba-compiled and interpreted semantics agree (integer widths, unsigned arithmetic).
    """
    import os
    import subprocess
    import sys

    code = (
        "from keyaudit.engine.stats.bootstrap import replicates\n"
        "from keyaudit.engine.stats.bootstrap_bench import simulate_clusters\n"
        "sim = simulate_clusters(models=2, domains=3, images=12, items_per_level=2, seed=5)\n"
        "a = replicates(sim.clusters, sim.baselines, 40, seed=9, engine='numba')\n"
        "b = replicates(sim.clusters, sim.baselines, 40, seed=9, engine='reference')\n"
        "print(a.tobytes() == b.tobytes())\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize("count", [2, 3, 4])
@pytest.mark.parametrize("shape", SHAPES[1:])
def test_the_fused_pass_equals_one_run_per_variant(shape, count, monkeypatch):
    """The audit's before/after/uncertain-ends runs share one kernel pass (the same items, only
    which are right differs); every figure must be the one a separate run gives, bit for bit."""
    from keyaudit.engine.stats import _bootstrap_kernel
    from keyaudit.engine.stats.bootstrap import bootstrap_differences

    passes = []
    fused_kernel = _bootstrap_kernel.diff_resamples_packed4
    monkeypatch.setattr(
        _bootstrap_kernel, "diff_resamples_packed4", lambda *a: passes.append(1) or fused_kernel(*a)
    )

    outs, base = random_benchmark(23, *shape)
    rng = random.Random(5)
    variants = [(outs, base)]
    for v in range(1, count):
        flipped = [Outcome(o.model, o.domain, o.image, o.level, o.correct != (rng.random() < 0.3)) for o in outs]
        variants.append((flipped, {k: min(1.0, b * (1 + v / 10)) for k, b in base.items()}))
    fused = bootstrap_differences(variants, resamples=120, seed=17, chunk_size=50)
    assert len(passes) == 3  # one fused pass per chunk of 50 of the 120 resamples
    for (outcomes, baselines), together in zip(variants, fused, strict=True):
        alone = bootstrap_difference(outcomes, baselines, resamples=120, seed=17, chunk_size=50)
        assert repr(together) == repr(alone)
