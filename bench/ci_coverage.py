"""Coverage of the bootstrap's 95% interval on simulated data with a known true difference.

    python bench/ci_coverage.py [--datasets 1000] [--resamples 1000]

Each dataset is the seed's shape for one model: 31 paired domains x 50 image clusters, one item
per level per image, within-image correlation (``rho`` = 0.6, see
:mod:`keyaudit.engine.stats.bootstrap_bench`), with the same true accuracies and baselines in every
dataset, so the true L5−L4 adjusted difference is known exactly. All datasets go through one
kernel call as independent "models" (each model name keys its own random stream). Resamples per
dataset default to 1,000 rather than the 10,000 of a real report, to keep the run short; the
percentile interval's coverage barely depends on that. Writes ``bench/results/coverage.md``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from keyaudit.engine.stats.bootstrap import bootstrap_clusters
from keyaudit.engine.stats.bootstrap_bench import simulate_clusters

RESULTS = Path(__file__).parent / "results" / "coverage.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--domains", type=int, default=31)
    parser.add_argument("--images", type=int, default=50)
    parser.add_argument("--rho", type=float, default=0.6)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    mu_one = rng.uniform(0.2, 0.9, size=(1, args.domains, 2))
    base = rng.uniform(0.05, 0.6, size=(args.domains, 2))
    mu = np.repeat(mu_one, args.datasets, axis=0)
    t0 = time.perf_counter()
    sim = simulate_clusters(
        args.datasets,
        args.domains,
        args.images,
        rho=args.rho,
        seed=args.seed + 1,
        mu=mu,
        baselines=base,
    )
    truth = next(iter(sim.true_diff.values()))
    est = bootstrap_clusters(sim.clusters, sim.baselines, resamples=args.resamples, seed=args.seed)
    seconds = time.perf_counter() - t0
    low = np.array([e.ci_low for e in est.values()])
    high = np.array([e.ci_high for e in est.values()])
    point = np.array([e.estimate for e in est.values()])
    ase = np.array([e.analytic_se for e in est.values()])
    bse = np.array([e.bootstrap_se for e in est.values()])
    deff = np.array([e.design_effect for e in est.values()])
    covered = (low <= truth) & (truth <= high)
    rate = covered.mean()
    se_rate = np.sqrt(rate * (1 - rate) / args.datasets)
    normal = (np.abs(point - truth) <= 1.959964 * ase).mean()
    lines = [
        "# Bootstrap interval coverage",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')}: {args.datasets:,} simulated datasets, each "
        f"{args.domains} paired domains x {args.images} image clusters, one item per level per "
        f"image, within-image correlation rho = {args.rho}; {args.resamples:,} resamples per "
        f"dataset (not 10,000, to keep the run short); seed {args.seed}; {seconds:.1f} s in total.",
        "",
        f"- true L5−L4 adjusted difference: {100 * truth:+.3f} pp",
        f"- **95% percentile interval covers it in {covered.sum()} / {args.datasets} datasets = "
        f"{100 * rate:.1f}%** (binomial SE {100 * se_rate:.1f} pp; target 93–97%)",
        f"- misses below / above: {(high < truth).sum()} / {(low > truth).sum()}",
        f"- mean interval width: {100 * (high - low).mean():.2f} pp; SD of the estimates over "
        f"datasets: {100 * point.std(ddof=1):.2f} pp",
        f"- mean bootstrap SE {100 * bse.mean():.3f} pp vs mean analytic clustered SE "
        f"{100 * ase.mean():.3f} pp; mean design effect {deff.mean():.2f}",
        f"- normal interval estimate ± 1.96 x analytic SE covers it in {100 * normal:.1f}%",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
