"""The HTML page of a big cell: how large it is, how long keyaudit takes to write it, and how fast
Chromium opens it and answers the verdict browser (issue 35, item 3).

    python bench/html_page.py --bench DIR                  # DIR: bench/scale.py --generate-only DIR
    python bench/html_page.py --bench DIR --rule gear_train --rounds 7
    python bench/html_page.py --bench DIR --all --out bench/results/html_page_all.md   # every cell
    python bench/html_page.py --page FILE                  # only open a page written before

``keyaudit check RULE --bench DIR --html FILE`` runs as a fresh process with
``KEYAUDIT_PROFILE=1`` (its stage times, among them "HTML report", on stderr), waited for with
``os.wait4`` (wall time, peak RSS). Then headless Chromium (Debian's, driven by Playwright) opens
the page from disk ``--rounds`` times, each in a fresh browser context: the time from the start
of navigation to the end of the page's script (its ``keyaudit-ready`` performance mark: the data
parsed, the first page of the verdict browser drawn) and to the load event; then, in the page,
each action of the verdict browser timed from the event to the table redrawn and laid out
(filter by a model, by a verdict, sort by the answer line, next page, 200 rows a page, open a
row, find a text). Medians over the rounds. Writes ``bench/results/html_page.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "html_page.md"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

#: Each action: JavaScript run in the page, returning its milliseconds (the table laid out).
ACTIONS = {
    "filter by a model": "const s = $('v-model'); s.value = s.options[3].value; s.dispatchEvent(new Event('change'));",
    "filter by a verdict (right → wrong)": "const s = $('v-verdict'); s.value = 'down'; s.dispatchEvent(new Event('change'));",
    "all verdicts, every model again": "$('v-model').value = ''; const s = $('v-verdict'); s.value = ''; s.dispatchEvent(new Event('change'));",
    "sort by the answer line": "document.querySelector('#v-table th[data-column=answer]').click();",
    "next page": "$('v-next').click();",
    "200 rows a page": "const s = $('v-size'); s.value = '200'; s.dispatchEvent(new Event('change'));",
    "open a row": "document.querySelector('#v-table tr.row').click();",
    "find a text (\"joint\")": "const f = $('v-find'); f.value = 'joint'; f.dispatchEvent(new Event('input'));",
}
TIMED = "() => { const $ = (id) => document.getElementById(id); const t0 = performance.now(); %s document.body.offsetHeight; return performance.now() - t0; }"


def run_check(bench: Path, rule: str, page: Path) -> dict:
    """``rule``: a rule's name, or ``--all``."""
    env = {**os.environ, "KEYAUDIT_PROFILE": "1"}
    keyaudit = shutil.which("keyaudit") or sys.exit("keyaudit is not installed in this environment")
    start = time.perf_counter()
    err_file = page.with_suffix(".err")
    with open(err_file, "w", encoding="utf-8") as err, open(os.devnull, "w") as out:
        process = subprocess.Popen([keyaudit, "check", rule, "--bench", str(bench), "--html", str(page)],
                                   stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    profile = err_file.read_text(encoding="utf-8")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"keyaudit check failed:\n{profile[-2000:]}")
    stage = re.search(r"HTML report: ([\d.]+) s", profile)
    scoring = re.search(r"scoring: .*?\[([^\]]*)\]", profile)
    return {"wall": wall, "peak_mb": usage.ru_maxrss / 1024, "html_seconds": float(stage.group(1)),
            "scoring": scoring.group(1) if scoring else "", "profile": profile.strip()}


def data_sizes(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="audit-data">(.*?)</script>', text, re.S).group(1)
    data = json.loads(block)
    sizes = {name: len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
             for name, value in data.items() if name != "cells"}
    sizes["cells (per-sample columns, ids, keys)"] = len(json.dumps(data["cells"], ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    rows = sum(len(c["verdict"]) for c in data["cells"])
    return {"bytes": page.stat().st_size, "data_bytes": len(block.encode("utf-8")), "parts": sizes, "rows": rows,
            "cells": [(c["name"], len(c["verdict"])) for c in data["cells"]],
            "distinct": (len(data["verdicts"]), len(data["explanations"]), len(data["strings"]))}


def open_in_chromium(page: Path, rounds: int) -> dict:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"ready": [], "load": [], **{a: [] for a in ACTIONS}}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=FLAGS, headless=True)
        version = browser.version
        for _ in range(rounds):
            context = browser.new_context()
            tab = context.new_page()
            tab.set_viewport_size({"width": 1300, "height": 900})
            tab.goto(page.resolve().as_uri(), wait_until="load", timeout=120_000)
            tab.wait_for_selector("body[data-ready='1']")
            ready, load = tab.evaluate(
                "() => [performance.getEntriesByName('keyaudit-ready')[0].startTime,"
                " performance.getEntriesByType('navigation')[0].loadEventEnd]"
            )
            times["ready"].append(ready)
            times["load"].append(load)
            for name, action in ACTIONS.items():
                times[name].append(tab.evaluate(TIMED % action))
            context.close()
        browser.close()
    return {"version": version, "median": {k: statistics.median(v) for k, v in times.items()},
            "max": {k: max(v) for k, v in times.items()}}


def write_results(
    bench: Path | None, rule: str, check: dict | None, sizes: dict, browser: dict, rounds: int, out: Path
) -> None:
    import numba
    import numpy

    lines = [
        "# The HTML page of " + ("every ruled cell" if rule == "--all" else "a big cell") + " (`bench/html_page.py`)",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')}. Machine: {platform.machine()}, {os.cpu_count()} CPUs "
        f"({len(os.sched_getaffinity(0))} usable), shared with other jobs; Python {platform.python_version()},"
        f" numba {numba.__version__}, numpy {numpy.__version__}; Chromium {browser['version']} (headless).",
        "",
    ]
    if check is not None:
        lines += [
            f"Benchmark: `bench/scale.py`'s full-size one ({bench.name}: 155,000 keys, 16 models, 2,480,000"
            " stored responses); "
            + ("every ruled cell (`--all`: 11 rules, 496,000 ruled responses)." if rule == "--all" else
               "the cell is the largest it has, 16 models × 3,000 items = 48,000 responses."),
            "",
            f"Command: `keyaudit check {rule} --bench {bench.name} --html page.html` (a fresh process,"
            " caches warm, `KEYAUDIT_PROFILE=1`).",
            "",
            "| measure | value |",
            "|---|---:|",
            f"| wall time of the whole check | {check['wall']:.1f} s |",
            f"| of which writing the page (stage \"HTML report\": every verdict explained, rendered) | {check['html_seconds']:.1f} s |",
            f"| peak RSS of the keyaudit process | {check['peak_mb']:,.0f} MB |",
            f"| scoring | {check['scoring']} |",
            "",
        ]
    verdicts, explanations, strings = sizes["distinct"]
    lines += [
        f"The page: **{sizes['bytes'] / 1e6:.2f} MB** ({sizes['bytes']:,} bytes), of which the verdicts' data"
        f" {sizes['data_bytes'] / 1e6:.2f} MB for {sizes['rows']:,} scored responses"
        f" ({', '.join(f'{name}: {n:,}' for name, n in sizes['cells'])}): {verdicts:,} distinct verdicts,"
        f" {explanations:,} explanations, {strings:,} distinct texts.",
        "",
        "| part of the data | bytes |",
        "|---|---:|",
        *(f"| {name} | {n:,} |" for name, n in sizes["parts"].items()),
        "",
        f"Opened from disk in headless Chromium, {rounds} rounds, each in a fresh browser context"
        " (milliseconds; median, and the slowest round):",
        "",
        "| step | median ms | slowest ms |",
        "|---|---:|---:|",
        f"| navigation start → the page's script done (data parsed, first page of verdicts drawn) | {browser['median']['ready']:.0f} | {browser['max']['ready']:.0f} |",
        f"| navigation start → load event | {browser['median']['load']:.0f} | {browser['max']['load']:.0f} |",
        *(f"| {name} | {browser['median'][name]:.1f} | {browser['max'][name]:.1f} |" for name in ACTIONS),
        "",
    ]
    if check is not None:
        lines += ["Stage times of the check (`KEYAUDIT_PROFILE=1`):", "", "```", check["profile"], "```", ""]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"written {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, help="a benchmark bench/scale.py generated")
    parser.add_argument("--rule", default="physical_stability")
    parser.add_argument("--all", action="store_true", help="check --all: every ruled cell in one page")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--page", type=Path, help="only open this page (written before)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="keep the page written here")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    if (args.bench is None) == (args.page is None):
        parser.error("give --bench DIR or --page FILE")
    check = None
    with tempfile.TemporaryDirectory(prefix="keyaudit-html-") as folder:
        page = args.page
        if page is None:
            page = args.keep or Path(folder) / "page.html"
            check = run_check(args.bench.resolve(), "--all" if args.all else args.rule, page)
            print(f"check: {check['wall']:.1f} s, HTML stage {check['html_seconds']:.1f} s, peak {check['peak_mb']:,.0f} MB")
        sizes = data_sizes(page)
        print(f"page: {sizes['bytes']:,} bytes, {sizes['rows']:,} rows")
        browser = open_in_chromium(page, args.rounds)
        print(json.dumps(browser["median"], indent=1))
        if not args.no_record:
            write_results(args.bench, "--all" if args.all else args.rule, check, sizes, browser, args.rounds, args.out)


if __name__ == "__main__":
    main()
