"""Scale run: `keyaudit check --all` on a full-size benchmark, wall time and peak memory.

    python bench/scale.py                      # generate into a private temp dir, run, delete
    python bench/scale.py --keep DIR           # generate into DIR (kept), run
    python bench/scale.py --bench DIR          # run on a benchmark generated before
    python bench/scale.py --generate-only DIR  # only write the benchmark

The benchmark: the embedded example's real keys (11 GRIP-Benchmark-34 domains, every image,
levels 1-5: 155,000 items) and stored responses of 16 synthetic models to **every** item, i.e.
16 x 155,000 = 2,480,000 responses. The first ten models are the example's own profiles; the six
roster models the example leaves absent get the profiles of the first six under their own names,
so their draws differ (every draw is seeded by ``seed|model slug|item id``). ``--models 160``
(issue 27's 25 M responses) repeats the sixteen as ``<name> r2`` ... ``r10``, each answering
with its own draws. Responses are made
by the example generator's own :func:`keyaudit.engine.examples.generate.respond` (the same
phrasings, decorations and knowledge draws, so the same duplicate rates per cell as the
embedded example) and written as plain JSON Lines, one file per model, by one process per core.

The run is ``keyaudit check --all --bench DIR --json FILE`` as a subprocess, twice: cold (the
verdict cache emptied first, every other cache warm) and warm (again, every verdict cached), with
``KEYAUDIT_PROFILE=1`` (stage times on stderr), waited for with ``os.wait4``: wall time, the
process's peak RSS (``ru_maxrss``, its own, which includes no worker) and the scoring workers'
largest peak (printed by the profile). Results: ``bench/results/scale.md`` (16 models) and
``bench/results/scale-160-models.md`` (``--models 160``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "scale.md"
SEED = 34


def _profiles(models: int = 16):
    """The first ``models`` profiles: the example's ten, the six roster models it leaves absent
    (the first six profiles under their names), then, past sixteen, the sixteen again as
    ``<name> r2``, ``r3``... (``--models 160``: ten of each; every draw is seeded by the model's
    name, so each copy answers differently)."""
    from keyaudit.engine.examples.models import ABSENT, PROFILES

    extra = [dataclasses.replace(p, name=name) for p, name in zip(PROFILES, ABSENT, strict=False)]
    base = list(PROFILES) + extra
    out = []
    for n in range(models):
        profile = base[n % len(base)]
        copy = n // len(base)
        out.append(profile if copy == 0 else dataclasses.replace(profile, name=f"{profile.name} r{copy + 1}"))
    return out


def _write_model(args: tuple[int, str, int]) -> tuple[str, int, float]:
    """Write one model's responses to every item; returns (file name, rows, seconds)."""
    index, out, models = args
    from keyaudit.engine.examples import generate as g
    from keyaudit.engine.load.strict import strict_correct

    profile = _profiles(models)[index]
    keys = g.load_keys(g.PACKAGE_DIR / "keys")
    started = time.perf_counter()
    rows = 0
    path = Path(out) / "responses" / f"{profile.slug}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for domain in sorted(keys):
            dkeys = keys[domain]
            pools = {
                lv: sorted(v for k, v in dkeys.items() if k.endswith(f"_q{lv}")) for lv in g.LEVELS
            }
            for item_id in sorted(dkeys):
                key = dkeys[item_id]
                text, _ = g.respond(profile, item_id, key, pools[int(item_id.rsplit("q", 1)[1])], SEED)
                row = {
                    "id": item_id,
                    "model": profile.name,
                    "response": text,
                    "correct": strict_correct(text, key),
                }
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                rows += 1
    return path.name, rows, time.perf_counter() - started


def generate(out: Path, models: int, jobs: int) -> int:
    from keyaudit.engine.examples import generate as g

    profiles = _profiles(models)
    (out / "responses").mkdir(parents=True, exist_ok=True)
    shutil.copytree(g.PACKAGE_DIR / "keys", out / "keys", dirs_exist_ok=True)
    roster = "".join(f'  "{p.name}",\n' for p in profiles)
    (out / "benchmark.toml").write_text(
        f'name = "GRIP-Benchmark-34 at full size (keyaudit scale bench)"\n'
        f"id_pattern = '{g.ID_PATTERN}'\nroster = [\n{roster}]\n",
        encoding="utf-8",
    )
    started = time.perf_counter()
    total = 0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        work = [(i, str(out), models) for i in range(models)]
        for name, rows, seconds in pool.map(_write_model, work):
            total += rows
            print(f"  {name}: {rows:,} responses in {seconds:.0f} s", flush=True)
    print(f"generated {total:,} responses in {time.perf_counter() - started:.0f} s", flush=True)
    return total


def _keyaudit() -> list[str]:
    exe = shutil.which("keyaudit")
    return [exe] if exe else [sys.executable, "-c", "from keyaudit.cli.app import run; run()"]


def run_check(bench: Path, extra: list[str]) -> dict:
    """Run ``keyaudit check --all`` on ``bench``; wall time, peak RSS and the profile lines."""
    with tempfile.TemporaryDirectory(prefix="keyaudit-scale-out-") as scratch:
        report = Path(scratch) / "audit.json"
        command = [*_keyaudit(), "check", "--all", "--bench", str(bench), "--json", str(report), *extra]
        env = {**os.environ, "KEYAUDIT_PROFILE": "1"}
        started = time.perf_counter()
        with open(Path(scratch) / "stdout", "wb") as out, open(Path(scratch) / "stderr", "wb") as err:
            process = subprocess.Popen(command, stdout=out, stderr=err, env=env)
            _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr = (Path(scratch) / "stderr").read_text(encoding="utf-8", errors="replace")
        if process.returncode != 0:
            raise SystemExit(f"keyaudit exited {process.returncode}:\n{stderr[-3000:]}")
        audit = json.loads(report.read_text(encoding="utf-8"))
    shown = [a if not a.startswith("/") else Path(a).name for a in command[len(_keyaudit()) :]]
    return {
        "command": "keyaudit " + " ".join(shown),
        "wall": wall,
        "maxrss_mb": usage.ru_maxrss / 1024,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "profile": [line for line in stderr.splitlines() if line.startswith("keyaudit profile:")],
        "n_responses": audit["n_responses"],
        "n_keys": audit["n_keys"],
        "models": len(audit["models_found"]),
        "summary": audit["summary"],
    }


def forget_verdicts() -> None:
    """Empty the verdict cache (``verdicts/`` of keyaudit's cache root) and nothing else, so the
    next run is cold for scoring while numba's kernels, the key corpus and the proofs stay warm."""
    from keyaudit.engine.load.safe_io import cache_root
    from keyaudit.engine.verdict_cache import FOLDER

    root = cache_root()
    if root is not None:
        shutil.rmtree(root / FOLDER, ignore_errors=True)


def write_results(result: dict, generated: str, warm: dict | None = None) -> str:
    import numba
    import numpy

    # issue 27, item 4: the full-size benchmark in 45 s and 1.2 GB; ten times the models in 4 GB
    full_size = result["n_responses"] <= 2_480_000
    wall_target = "≤ 45 s" if full_size else ""
    rss_target = "≤ 1,200 MB" if full_size else "≤ 4,096 MB"
    lines = [
        "# Scale run: `keyaudit check --all` on a full-size benchmark",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')}. Machine: {platform.machine()}, "
        f"{os.cpu_count()} CPUs ({len(os.sched_getaffinity(0))} usable), "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GB RAM; Python "
        f"{platform.python_version()}, numba {numba.__version__}, numpy {numpy.__version__}.",
        "",
        f"Benchmark: {result['n_keys']:,} keys, {result['models']} models, "
        f"{result['n_responses']:,} stored responses (plain JSON Lines). {generated}",
        "",
        f"Command: `{result['command']}` (a fresh process, numba, key, proof and load caches warm; "
        "`KEYAUDIT_PROFILE=1`; `--jobs` defaults to the usable cores). **Cold**: the verdict cache "
        "empty; **warm**: the same command again, every verdict cached.",
        "",
        "| measure | cold | warm | target |",
        "|---|---:|---:|---:|",
        f"| wall time | {result['wall']:.1f} s | {_of(warm, 'wall', '{:.1f} s')} | {wall_target} cold, ≤ 20 s warm |",
        f"| peak RSS of the keyaudit process (`ru_maxrss`) | {result['maxrss_mb']:,.0f} MB | "
        f"{_of(warm, 'maxrss_mb', '{:,.0f} MB')} | {rss_target} |",
        f"| CPU time (user + sys, the process and its waited-for workers) | {result['user'] + result['sys']:.1f} s | "
        f"{_of(warm, 'cpu', '{:.1f} s')} | |",
        "",
        "Where the time goes, cold (`KEYAUDIT_PROFILE=1`, seconds of wall time since the previous line):",
        "",
        "```",
        *result["profile"],
        "```",
        "",
        *(["Warm:", "", "```", *warm["profile"], "```", ""] if warm else []),
        "Ruled cells:",
        "",
        "| rule | cell | responses | baseline before → after | mean before → after |",
        "|---|---|---:|---:|---:|",
    ]
    for row in result["summary"]:
        lines.append(
            f"| {row['rule']} | {row['domain']} L{row['level']} | {row['n_responses']:,} | "
            f"{row['baseline_before']:.1%} → {row['baseline_after']:.1%} | "
            f"{row['mean_before']:.1%} → {row['mean_after']:.1%} |"
        )
    text = "\n".join(lines) + "\n"
    results_file(result["models"]).write_text(text, encoding="utf-8")
    return text


def _of(result: dict | None, name: str, form: str) -> str:
    """One measure of a run shown by ``form`` ("" when there was no such run)."""
    if result is None:
        return ""
    value = result["user"] + result["sys"] if name == "cpu" else result[name]
    return form.format(value)


def results_file(models: int) -> Path:
    """Where a run is recorded: ``scale.md`` for the full-size 16 models, ``scale-<N>-models.md``
    for another size (the 25 M run keeps its own record)."""
    return RESULTS if models == 16 else RESULTS.with_name(f"scale-{models}-models.md")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, help="run on this benchmark (generated before)")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    parser.add_argument("--generate-only", type=Path, metavar="DIR")
    parser.add_argument("--models", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--no-record", action="store_true", help="do not write bench/results")
    parser.add_argument("extra", nargs="*", help="more options for keyaudit check (after --)")
    args = parser.parse_args()
    if args.generate_only:
        generate(args.generate_only, args.models, args.jobs)
        return
    scratch = None
    generated = "Generated before the run."
    if args.bench is not None:
        bench = args.bench
    else:
        if args.keep is not None:
            bench = args.keep
        else:
            scratch = tempfile.mkdtemp(prefix="keyaudit-scale-")  # 0700: private
            bench = Path(scratch) / "bench"
        started = time.perf_counter()
        generate(bench, args.models, args.jobs)
        generated = f"Generated in {time.perf_counter() - started:.0f} s by this script."
    try:
        run_check(bench, args.extra)  # warm-up: numba kernel, key corpus, proof and load caches
        forget_verdicts()
        result = run_check(bench, args.extra)
        warm = run_check(bench, args.extra)
        if warm["summary"] != result["summary"]:
            raise SystemExit("the warm run's summary differs from the cold run's")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    text = (
        write_results(result, generated, warm)
        if not args.no_record
        else json.dumps({"cold": result, "warm": warm}, indent=1)
    )
    print(text)


if __name__ == "__main__":
    main()
