"""Run the bootstrap speed bench and record it in ``bench/results/bootstrap.md``.

    python bench/bootstrap.py [--resamples 10000] [--no-corpus]

Draw = one image cluster drawn for one model in one resample. Everything runs in one process on
the same simulated data; the kernel is warmed (JIT-compiled or loaded from cache) before timing.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numba
import numpy as np

from keyaudit.engine.stats.bootstrap_bench import cpu_count, run_bootstrap_bench

RESULTS = Path(__file__).parent / "results" / "bootstrap.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--domains", type=int, default=31)
    parser.add_argument("--images", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-corpus", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows = run_bootstrap_bench(
        args.models, args.domains, args.images, args.resamples, args.seed, corpus=not args.no_corpus
    )
    lines = [
        "# Bootstrap speed bench",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {platform.processor() or platform.machine()}, "
        f"{cpu_count()} CPUs; Python {platform.python_version()}, numba {numba.__version__}, "
        f"numpy {np.__version__}.",
        f"Simulated benchmark: {args.models} models x {args.domains} domains x {args.images} "
        f"images, {args.resamples:,} resamples, seed {args.seed}. A draw is one image cluster "
        "drawn for one model in one resample. Pure Python ran 20 resamples and is extrapolated "
        "per draw. Kernel and numpy outputs were checked bit-identical in the same run. Kernel "
        f"times are the best of 5 runs. The machine is shared (1-min load average {load_before:.2f} "
        f"before, {os.getloadavg()[0]:.2f} after the run): another busy process costs the "
        "2-thread rows most.",
        "",
        "| run | threads | resamples | draws | wall s | M draws/s | x numpy |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ratio = f"{r.ratio_to_numpy:.2f}" if r.ratio_to_numpy is not None else ""
        name = r.name + (" (extrapolated)" if r.extrapolated else "")
        lines.append(
            f"| {name} | {r.threads} | {r.resamples:,} | {r.draws:,} | {r.seconds:.3f} "
            f"| {r.draws_per_second / 1e6:,.1f} | {ratio} |"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
