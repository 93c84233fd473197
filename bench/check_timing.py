"""Time ``keyaudit check rules/physical_stability.toml`` on the bundled example, cold and warm.

    python bench/check_timing.py [--warm 5] [--resamples 10000]

* **cold**: the first run with an empty cache folder (``KEYAUDIT_CACHE_DIR`` pointed at a fresh
  temporary folder), so the bootstrap kernels are JIT-compiled (their cache is keyaudit's own
  ``numba-kernels/`` there) and the key corpus is parsed;
* **warm**: the next runs, which load the compiled kernel and the parsed key corpus from those caches.

Each run is a fresh ``keyaudit`` process (wall time, output to /dev/null, as a user would run
it). A last in-process run splits the warm time by stage. Results go to
``bench/results/check_timing.md``. Targets on the 2-core reference machine: cold < 5 s, warm < 2 s.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULE = "rules/physical_stability.toml"
RESULTS = ROOT / "bench" / "results" / "check_timing.md"


def _keyaudit() -> list[str]:
    exe = shutil.which("keyaudit")
    return [exe] if exe else [sys.executable, "-c", "from keyaudit.cli.app import run; run()"]


def run_once(env: dict[str, str], resamples: int) -> float:
    start = time.perf_counter()
    subprocess.run(
        [*_keyaudit(), "check", RULE, "--resamples", str(resamples)],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


STAGES = r"""
import gc, io, sys, time
T = time.perf_counter
t0 = T()
from keyaudit.engine.audit import Settings, prove_rules, run_audit
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer
from rich.console import Console
from keyaudit.cli.check import render_audit, render_rules
t1 = T()
rule = load_rule("rules/physical_stability.toml")
t2 = T()
bench = load_benchmark(example_benchmark_dir())
gc.freeze()
t3 = T()
scorers = [Scorer(rule)]
proofs = prove_rules(bench, [rule], scorers)
t4 = T()
import keyaudit.engine.stats._bootstrap_kernel
t5 = T()
audit = run_audit(bench, [rule], Settings(resamples=RESAMPLES), proofs=proofs, scorers=scorers)
t6 = T()
out = Console(file=io.StringIO(), width=120)
render_rules(out, proofs)
render_audit(out, audit)
t7 = T()
for name, value in [("imports (typer, rich, lark, numpy)", t1 - t0), ("rule load (grammars)", t2 - t1),
                    ("benchmark load (155,000 keys, 27,500 responses)", t3 - t2),
                    ("rule proof (examples, keys check)", t4 - t3), ("numba import + kernel cache load", t5 - t4),
                    ("audit (score, baselines, structure, flags, 2 bootstraps)", t6 - t5),
                    ("terminal rendering", t7 - t6)]:
    print(f"{name}\t{value:.3f}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=5, help="Warm runs after the cold one.")
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="keyaudit-numba-cache-") as cache:
        # A first run on a fresh machine: no compiled kernel and no key cache either.
        env = {**os.environ, "KEYAUDIT_CACHE_DIR": cache + "/keyaudit"}
        cold = run_once(env, args.resamples)
        warm = [run_once(env, args.resamples) for _ in range(args.warm)]
        stages = subprocess.run(
            [sys.executable, "-c", STAGES.replace("RESAMPLES", str(args.resamples))],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    import numba
    import numpy

    lines = [
        "# `keyaudit check` timing",
        "",
        f"Command: `keyaudit check {RULE} --resamples {args.resamples:,}` on the bundled example"
        " (GRIP-Benchmark-34: 155,000 keys, 27,500 stored responses of 10 models).",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs; Python {platform.python_version()},"
        f" numba {numba.__version__}, numpy {numpy.__version__}. Each run is a fresh process; wall"
        " time includes interpreter start-up and imports.",
        "",
        "| run | wall s | target |",
        "|---|---:|---:|",
        f"| cold (empty numba cache: JIT compile) | {cold:.2f} | < 5 |",
        f"| warm, median of {len(warm)} | {statistics.median(warm):.2f} | < 2 |",
        f"| warm, min | {min(warm):.2f} | |",
        f"| warm, max | {max(warm):.2f} | |",
        "",
        "Warm run split by stage (one in-process run, numba cache warm):",
        "",
        "| stage | s |",
        "|---|---:|",
    ]
    for row in stages.strip().splitlines():
        name, value = row.split("\t")
        lines.append(f"| {name} | {float(value):.3f} |")
    lines += [
        "",
        "Notes:",
        "",
        "- Benchmark load: a warm run reads the validated key corpus from keyaudit's key cache"
        " (`engine/load/keycache.py`, outside the benchmark); parsing the 155,000 key lines themselves"
        " takes about 0.9 s more, which is what the cold run pays on top of the JIT compile.",
        "- Audit: scoring the 500 ruled responses, the rule baseline, the key structure, the §5"
        " flags over all keys, and two bootstraps (10 models x 11 domains x 50 images x 10,000"
        " resamples each, ~0.1 s each in the kernel).",
        "- Imports and interpreter start-up (~0.35 s) and the rule's grammars (~0.2 s, Lark LALR"
        " table construction for three grammars) are paid on every run.",
        "- The cold run adds the numba JIT compile of the parallel kernel (about 1.5-3 s).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
