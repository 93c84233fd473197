"""The worker pool behind ``--jobs``: the hand-written one against the standard library's.

    python bench/pool.py [--rounds 3]

Both pools score the same inputs in fresh processes, alternating (hand-written, standard,
hand-written, ...), best and median per side:

* ``keyaudit check --all --jobs 2 --resamples 300`` on the embedded example with
  ``KEYAUDIT_PARALLEL_MIN=0`` (workers start for every batch: the keys check, the answer lines,
  the conclusions), wall time of the whole process;
* a scoring-heavy batch: every bundled rule's stored responses of the example with each answer
  line made unique (every line parsed), ``score_many(..., jobs=2)`` timed in a fresh process
  (the pool's start included), its verdicts checked equal between the pools.

``KEYAUDIT_POOL=standard`` selected the standard pool while both existed in
``engine/rule_language/scoring/batch.py`` (the measurement that decided which one ships, on top of commit
0db950d); the hand-written pool was removed after it, so a run now times the standard pool on
both sides. Results: ``bench/results/pool.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "pool.md"

HEAVY = r"""
import hashlib, pickle, sys, time
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.scoring import batch
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

benchmark = load_benchmark(example_benchmark_dir())
rules = [load_rule(resolve_rule_path(n)) for n in bundled_rule_names()]
work = []
for i, rule in enumerate(rules):
    for r in benchmark.responses:
        if rule.covers(r.ref.domain, r.ref.level):
            work.append((i, benchmark.keys[r.id].answer, f"{r.text.rstrip()} {len(work)}"))
scorers = [Scorer(rule) for rule in rules]
start = time.perf_counter()
stats = {}
verdicts = batch.score_many(scorers, work, jobs=2, stats=stats)
took = time.perf_counter() - start
digest = hashlib.sha256(repr([tuple(v.__dict__.values()) for v in verdicts]).encode()).hexdigest()
print(took, len(work), stats["line_items"], stats["workers"], digest[:16])
"""


def run_check(pool: str, folder: str) -> float:
    env = dict(os.environ, KEYAUDIT_PARALLEL_MIN="0")
    env.pop("KEYAUDIT_POOL", None)
    if pool == "standard":
        env["KEYAUDIT_POOL"] = "standard"
    out = os.path.join(folder, f"audit-{pool}.json")
    start = time.perf_counter()
    subprocess.run(
        ["keyaudit", "check", "--all", "--jobs", "2", "--resamples", "300", "--json", out],
        env=env, cwd=folder, check=True, capture_output=True,
    )
    return time.perf_counter() - start


def run_heavy(pool: str) -> tuple[float, str, str]:
    env = dict(os.environ)
    env.pop("KEYAUDIT_POOL", None)
    if pool == "standard":
        env["KEYAUDIT_POOL"] = "standard"
    done = subprocess.run(
        [sys.executable, "-c", HEAVY], env=env, check=True, capture_output=True, text=True
    )
    took, responses, items, workers, digest = done.stdout.split()
    return float(took), f"{int(responses):,} responses, {int(items):,} distinct lines, {workers} workers", digest


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pools = ("hand-written", "standard")
    check: dict[str, list[float]] = {p: [] for p in pools}
    heavy: dict[str, list[float]] = {p: [] for p in pools}
    digests: dict[str, set[str]] = {p: set() for p in pools}
    audits: dict[str, set[str]] = {p: set() for p in pools}
    what = ""
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.rounds):
            for pool in pools:
                check[pool].append(run_check(pool, folder))
                data = Path(folder, f"audit-{pool}.json").read_bytes()
                audits[pool].add(hashlib.sha256(data).hexdigest())
                took, what, digest = run_heavy(pool)
                heavy[pool].append(took)
                digests[pool].add(digest)
                print(pool, f"check {check[pool][-1]:.2f} s, heavy {took:.2f} s", flush=True)
    same = len(set().union(*digests.values())) == 1 and len(set().union(*audits.values())) == 1
    lines = [
        "# `--jobs` pool: hand-written against `concurrent.futures` (spawn)",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')}. Machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs ({len(os.sched_getaffinity(0))} usable), shared with other jobs; "
        f"Python {platform.python_version()}. Fresh processes, alternating, {args.rounds} rounds.",
        "",
        "| case | pool | best | median |",
        "|---|---|---:|---:|",
    ]
    for name, table in (("`check --all --jobs 2` (PARALLEL_MIN=0), wall", check),
                        (f"`score_many` jobs=2, unique lines ({what}), pool start included", heavy)):
        for pool in pools:
            lines.append(
                f"| {name} | {pool} | {min(table[pool]):.2f} s | {statistics.median(table[pool]):.2f} s |"
            )
    lines += ["", f"Same JSON report and same verdicts from both pools: {'yes' if same else 'NO'}.", ""]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
