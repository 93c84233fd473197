"""Simulated benchmarks and the bootstrap speed bench (library code; the CLI renders the rows).

:func:`simulate_clusters` draws a benchmark with known truth and real within-image correlation,
directly as :class:`~keyaudit.engine.stats.aggregate.ClusterCounts` (a full-corpus job has millions of
items; building ``Outcome`` objects for it would measure Python, not the bootstrap).
:func:`simulate_outcomes` expands a small one into outcomes for end-to-end tests.

Correlation model: each image draws ``U ~ Uniform(0, 1)``; each of its items (at either level)
is, with probability ``rho``, correct iff ``U < mu`` (shared), and otherwise correct with an
independent draw of probability ``mu``. Every item is then correct with probability exactly
``mu`` of its cell, and items of one image are positively correlated (correlation ``rho**2``-ish
across levels), so the true L(hi)−L(lo) difference is known in closed form.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from . import _bootstrap_reference as reference
from .aggregate import ClusterCounts, Outcome
from .bootstrap import _kernel_inputs, numba_runner


@dataclass(frozen=True)
class SimulatedBenchmark:
    """Cluster counts, the (domain, level) baselines and each model's true difference."""

    clusters: ClusterCounts
    baselines: dict[tuple[str, int], float]
    true_diff: dict[str, float]
    mu: np.ndarray  # [models, domains, 2] true accuracy at (lo, hi)


def simulate_clusters(
    models: int = 10,
    domains: int = 31,
    images: int = 50,
    items_per_level: int = 1,
    rho: float = 0.6,
    seed: int = 0,
    levels: tuple[int, int] = (4, 5),
    mu: np.ndarray | None = None,
    baselines: np.ndarray | None = None,
) -> SimulatedBenchmark:
    """Simulate a benchmark (see the module docstring); ``mu``/``baselines`` may be fixed."""
    if min(models, domains, images, items_per_level) < 1:
        raise UsageError("models, domains, images and items per level must all be at least 1")
    rng = np.random.default_rng(seed)
    if mu is None:
        mu = rng.uniform(0.2, 0.9, size=(models, domains, 2))
    if baselines is None:
        baselines = rng.uniform(0.05, 0.6, size=(domains, 2))
    shape = (models, domains, images, 2, items_per_level)
    u = rng.random((models, domains, images, 1, 1))
    shared = rng.random(shape) < rho
    own = rng.random(shape)
    p = mu[:, :, None, :, None]
    correct = np.where(shared, u < p, own < p)
    per = correct.sum(axis=4, dtype=np.int32)  # [m, d, i, level]
    counts = np.empty((models, domains * images, 4), dtype=np.int32)
    counts[:, :, 0] = per[..., 0].reshape(models, -1)
    counts[:, :, 1] = items_per_level
    counts[:, :, 2] = per[..., 1].reshape(models, -1)
    counts[:, :, 3] = items_per_level
    offsets = np.tile(np.arange(domains + 1, dtype=np.int64) * images, (models, 1))
    model_names = tuple(f"model_{m:02d}" for m in range(models))
    domain_names = tuple(f"domain_{d:02d}" for d in range(domains))
    clusters = ClusterCounts(
        models=model_names,
        domains=domain_names,
        levels=levels,
        counts=counts,
        offsets=offsets,
        active=np.ones((models, domains), dtype=np.uint8),
    )
    base = {
        (d, levels[j]): float(baselines[s, j]) for s, d in enumerate(domain_names) for j in (0, 1)
    }
    adj = (mu - baselines[None]) / (1.0 - baselines[None])
    true = {name: float(np.mean(adj[m, :, 1] - adj[m, :, 0])) for m, name in enumerate(model_names)}
    return SimulatedBenchmark(clusters, base, true, mu)


def simulate_outcomes(sim: SimulatedBenchmark) -> list[Outcome]:
    """Expand a (small) simulated benchmark into one :class:`Outcome` per item."""
    c = sim.clusters
    lo, hi = c.levels
    out: list[Outcome] = []
    for m, model in enumerate(c.models):
        for s, domain in enumerate(c.domains):
            for i, row in enumerate(c.counts[m, c.offsets[m, s] : c.offsets[m, s + 1]].tolist()):
                image = f"{domain}_{i:04d}"
                for level, k, n in ((lo, row[0], row[1]), (hi, row[2], row[3])):
                    out += [Outcome(model, domain, image, level, j < k) for j in range(n)]
    return out


@dataclass(frozen=True)
class BenchRow:
    """One timed bootstrap run. ``draws`` = clusters drawn, summed over models and resamples."""

    name: str
    threads: int
    resamples: int
    draws: int
    seconds: float
    draws_per_second: float
    ratio_to_numpy: float | None = None
    extrapolated: bool = False


def _draws(clusters: ClusterCounts, resamples: int) -> int:
    sizes = np.diff(clusters.offsets, axis=1) * clusters.active
    return int(sizes.sum()) * resamples


def _time(fn, *args, repeats: int = 1) -> tuple[float, np.ndarray]:
    """Best wall time of ``repeats`` calls, and the last result."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best, out


def multinomial_numpy(
    counts: np.ndarray,
    offsets: np.ndarray,
    active: np.ndarray,
    base_lo: np.ndarray,
    base_hi: np.ndarray,
    seed: int,
    resamples: int,
) -> np.ndarray:
    """The fastest numpy form of the same bootstrap, for the speed comparison only.

    Per model and stratum, one call draws every cluster index of every resample, one flat
    ``bincount`` turns them into per-resample weights (how often each cluster is picked; the
    multinomial weights), and a matrix product turns weights into resampled counts. Of the numpy
    forms tried (``multinomial``, fancy-index gather, ``add.at``, row-wise ``bincount``) this was
    the fastest by ~8x. It uses
    numpy's own generator, so its replicates are not comparable draw for draw with the kernel's
    (the reference, :func:`reference.diff_resamples_numpy`, is); only its speed is.
    """
    rng = np.random.default_rng(seed)
    n_models, n_strata = active.shape
    out = np.full((n_models, resamples), np.nan)
    w_lo = np.where(base_lo < 1, 1 / (1 - np.minimum(base_lo, 0.999999)), 1.0)
    w_hi = np.where(base_hi < 1, 1 / (1 - np.minimum(base_hi, 0.999999)), 1.0)
    for m in range(n_models):
        total = np.zeros(resamples)
        used = np.zeros(resamples)
        for s in range(n_strata):
            if not active[m, s]:
                continue
            rows = counts[m, offsets[m, s] : offsets[m, s + 1]].astype(np.float64)
            n = rows.shape[0]
            picks = rng.integers(0, n, size=(resamples, n))
            flat = (picks + (np.arange(resamples) * n)[:, None]).ravel()
            weights = np.bincount(flat, minlength=resamples * n).reshape(resamples, n)
            sums = weights @ rows  # (resamples, 4): correct_lo, total_lo, correct_hi, total_hi
            ok = (sums[:, 1] > 0) & (sums[:, 3] > 0)
            with np.errstate(invalid="ignore", divide="ignore"):
                adj_lo = (sums[:, 0] / sums[:, 1] - base_lo[s]) * w_lo[s]
                adj_hi = (sums[:, 2] / sums[:, 3] - base_hi[s]) * w_hi[s]
            total += np.where(ok, adj_hi - adj_lo, 0.0)
            used += ok
        with np.errstate(invalid="ignore", divide="ignore"):
            out[m] = total / used
    return out


def run_bootstrap_bench(
    models: int = 10,
    domains: int = 31,
    images: int = 50,
    resamples: int = 10_000,
    seed: int = 0,
    python_resamples: int = 20,
    corpus: bool = True,
    repeats: int = 5,
) -> list[BenchRow]:
    """Time the bootstrap engines on one simulated benchmark, in this process.

    Rows: kernel on 1 thread, kernel on all threads (``numba.get_num_threads()`` at call time),
    numpy reference, pure Python (``python_resamples`` resamples, extrapolated per draw), then the
    seed job (10 models x 31 domains x 50 images) and, if ``corpus``, the full-corpus job
    (16 x 34 x 3,000), both at ``resamples`` on all threads. The kernel is compiled (or loaded from
    cache) and warmed before timing; kernel times are the best of ``repeats`` runs (the full-corpus
    job runs once); the kernel and numpy results are checked to be identical.
    """
    import numba

    sim = simulate_clusters(models, domains, images, seed=seed)
    args = _kernel_inputs(sim.clusters, sim.baselines)
    run = numba_runner(args)
    draws = _draws(sim.clusters, resamples)
    run(*args, seed, 0, 2)  # compile / load from cache, warm threads
    threads = numba.get_num_threads()
    rows: list[BenchRow] = []
    numba.set_num_threads(1)
    try:
        t1, out1 = _time(run, *args, seed, 0, resamples, repeats=repeats)
    finally:
        numba.set_num_threads(threads)
    tn, outn = _time(run, *args, seed, 0, resamples, repeats=repeats)
    tr, outr = _time(reference.diff_resamples_numpy, *args, seed, 0, resamples)
    if not (
        np.array_equal(out1, outr, equal_nan=True) and np.array_equal(outn, outr, equal_nan=True)
    ):
        raise AssertionError("kernel and numpy reference disagree")  # pragma: no cover
    tb, _ = _time(multinomial_numpy, *args[:5], seed, resamples)
    py_draws = _draws(sim.clusters, python_resamples)
    tp, _ = _time(reference.diff_resamples_python, *args, seed, 0, python_resamples)
    # Ratios are to the fastest numpy form (multinomial weights times counts), as the issue asks; the
    # bit-exact numpy reference is slower because it replays the kernel's generator per draw.
    numpy_rate = draws / tb
    for name, n_threads, secs in (
        ("kernel", 1, t1),
        ("kernel", threads, tn),
        ("numpy weights (fastest numpy form)", 1, tb),
        ("numpy reference (bit-exact)", 1, tr),
    ):
        rows.append(
            BenchRow(
                name, n_threads, resamples, draws, secs, draws / secs, (draws / secs) / numpy_rate
            )
        )
    py_rate = py_draws / tp
    rows.append(
        BenchRow(
            "pure Python",
            1,
            resamples,
            draws,
            draws / py_rate,
            py_rate,
            py_rate / numpy_rate,
            extrapolated=True,
        )
    )
    jobs = [("seed job 10x31x50", 10, 31, 50)]
    if corpus:
        jobs.append(("full corpus 16x34x3000", 16, 34, 3000))
    for name, m, d, i in jobs:
        job = simulate_clusters(m, d, i, seed=seed)
        job_args = _kernel_inputs(job.clusters, job.baselines)
        job_draws = _draws(job.clusters, resamples)
        job_run = numba_runner(job_args)
        job_run(*job_args, seed, 0, 2)
        secs, _ = _time(
            job_run, *job_args, seed, 0, resamples, repeats=repeats if m * d * i < 10**6 else 1
        )
        rows.append(BenchRow(name, threads, resamples, job_draws, secs, job_draws / secs))
    return rows


def cpu_count() -> int:
    """CPUs this process may run on (for reporting)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
