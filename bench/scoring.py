"""Scoring throughput: responses per second through the whole scoring path, one core.

    python bench/scoring.py [--repeat 5] [--engine-rev REV] [--baseline-rev REV] [--release-rev REV]

The whole path is what ``check`` and ``score`` run per response: find the answer line, clean it,
parse it with the rule's answer grammar (LALR, contextual lexer, error recovery), read its claims,
evaluate the rule's lets and clauses. For each bundled rule the inputs are every stored response
of its cells in the embedded example plus its labelled phrasings in ``tests/data/phrasings/``.

Two rates per rule, each with a fresh scorer per pass (so no memo carries over):

* *distinct lines* — every response once, as ``check`` meets them: a line repeated across models
  or keys is parsed once (the scorer's parse cache);
* *all unique* — each answer line made unique first (a counter appended after the last word), so
  every response is parsed: the worst case, comparable with a parser that caches nothing.

Rates are responses per second of this process's CPU time (``time.process_time``), not of wall
time: the machine is shared, and another job's load would otherwise read as a slower scorer.

References measured in the same process on the same answer lines: Lark alone (the same grammar,
no recovery, default trees); with ``--engine-rev REV`` the engine as it was at that git revision
(its ``engine/`` extracted into a private temporary folder and imported as a package of its own
name beside ``keyaudit``: the engine imports itself relatively, and finds the bundled rules,
grammars and example through ``keyaudit``, so both engines score the same rules), timed pass for
pass alternately with the current engine; and with ``--baseline-rev REV`` the same rule as it was
at that git revision (its rule file and grammars extracted into a private temporary folder).
Ratios, not absolute rates, are what compare across machines. Results:
``bench/results/scoring.md``.

``--release-rev REV`` compares whole releases — engine *and* rules — on the example's responses
of each rule's cells: the release at REV is installed (``pip install --no-deps --target``) into a
private temporary folder, and the same inputs are timed by ``bench/release_rate.py`` in a fresh
process for each release, alternating (current, release, current, release, …), best per side.
Two releases cannot share one process (both are the package ``keyaudit``), so alternating on the
same machine is the nearest to a same-process reference.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lark
from lark import Lark

from keyaudit.engine.load.answer_line import find_answer_line
from keyaudit.engine.load.benchmark import Benchmark, load_benchmark
from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.reading.grammar import _import_loader, read_grammar_text
from keyaudit.engine.rule_language.rules.rule import Rule, load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer, clean_answer

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "scoring.md"


def cases(benchmark: Benchmark, rule: Rule) -> list[tuple[str, str]]:
    """The rule's cells' stored responses, then its labelled phrasings."""
    found = example_cases(benchmark, rule)
    for path in sorted((ROOT / "tests" / "data" / "phrasings").glob(f"{rule.name}*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                found.append((row["key"], row["response"]))
    return found


def made_unique(items: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each response's last line gets a distinct number appended: no two answer lines repeat."""
    return [(key, f"{response.rstrip()} {number}") for number, (key, response) in enumerate(items)]


def best_rate(function: Callable[[], None], count: int, repeat: int) -> float:
    """The best of ``repeat`` passes, in items per CPU second of this process."""
    best = 0.0
    for _ in range(repeat):
        started = time.process_time()
        function()
        best = max(best, count / max(time.process_time() - started, 1e-9))
    return best


def scoring_pass(scorer: Callable[[Any], Any], rule: Any, items: Sequence[tuple[str, str]]) -> Callable[[], None]:
    """One pass over ``items`` with a fresh scorer (no memo or parse cache carried over)."""

    def run() -> None:
        fresh = scorer(rule)
        for key, response in items:
            fresh.score(key, response)

    return run


def scoring_rate(rule: Rule, items: Sequence[tuple[str, str]], repeat: int) -> float:
    run = scoring_pass(Scorer, rule, items)
    run()  # warm: parser built, grammar cache loaded
    return best_rate(run, len(items), repeat)


def alternating_rates(
    runs: Sequence[Callable[[], None]], count: int, repeat: int
) -> list[float]:
    """Best rates of several passes timed in turn (one of each, ``repeat`` times): a drift of the
    machine's speed then touches every side alike."""
    for run in runs:
        run()  # warm
    best = [0.0] * len(runs)
    for _ in range(repeat):
        for n, run in enumerate(runs):
            best[n] = max(best[n], best_rate(run, count, 1))
    return best


def engine_at(revision: str, folder: Path) -> tuple[Any, Callable[[Path], Any]]:
    """The engine at git ``revision``, imported as the package ``keyaudit_at_rev`` (its
    ``engine`` folder extracted into ``folder``): its ``Scorer`` and ``load_rule``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision, "engine"],
        capture_output=True, check=True,
    ).stdout
    package = folder / "keyaudit_at_rev"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    subprocess.run(["tar", "-x", "-C", str(package)], input=archive, check=True)
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    language = "keyaudit_at_rev.engine.rule_language"
    scorer = importlib.import_module(f"{language}.scoring.scorer")
    return scorer.Scorer, importlib.import_module(f"{language}.rules.rule").load_rule


def lark_rate(rule: Rule, items: Sequence[tuple[str, str]], repeat: int) -> float:
    path = rule.answer_grammar.path
    plain = Lark(read_grammar_text(path), parser="lalr", import_paths=[_import_loader(path.parent)])
    fmt = rule.answer_format
    texts = []
    for _, response in items:
        line = find_answer_line(response, fmt.label, fmt.which)
        if line is not None:
            texts.append(clean_answer(line.text, fmt))

    def run() -> None:
        for text in texts:
            with contextlib.suppress(Exception):  # no recovery: a failing line still costs
                plain.parse(text)

    return best_rate(run, len(texts), repeat)


def baseline_rule(revision: str, name: str, folder: Path) -> Rule | None:
    """The bundled rule ``name`` as it was at git ``revision``, or None if it did not exist."""
    for sub in ("rules", "grammars"):
        listing = subprocess.run(
            ["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{revision}:{sub}"],
            capture_output=True, text=True, check=True,
        ).stdout.split()
        for file in listing:
            if file.endswith((".toml", ".lark")):
                blob = subprocess.run(
                    ["git", "-C", str(ROOT), "show", f"{revision}:{sub}/{file}"],
                    capture_output=True, check=True,
                ).stdout
                (folder / file).write_bytes(blob)
    path = folder / f"{name}.toml"
    return load_rule(path) if path.exists() else None


def example_cases(benchmark: Benchmark, rule: Rule) -> list[tuple[str, str]]:
    """Only the embedded example's stored responses of the rule's cells (what both releases
    have: the labelled phrasings differ between them)."""
    keys = benchmark.keys
    return [
        (keys[r.id].answer, r.text) for r in benchmark.responses if rule.covers(r.ref.domain, r.ref.level)
    ]


def release_rates(
    revision: str, inputs: dict[str, dict[str, list[tuple[str, str]]]], rounds: int, scratch: Path
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Best rates of the current checkout and of the release at ``revision`` on ``inputs``,
    each timed in fresh processes, alternating ``rounds`` times."""
    source, site = scratch / "release-src", scratch / "release-site"
    source.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", revision],
        capture_output=True, check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(source)],
        check=True,
    )
    data = scratch / "inputs.json"
    data.write_text(json.dumps(inputs), encoding="utf-8")
    script = [str(Path(__file__).parent / "release_rate.py"), str(data)]
    # The release runs without ``site`` (-S), on its own folder and the folder Lark is installed
    # in: an editable install of the checkout would otherwise merge both into one package.
    dependencies = str(Path(lark.__file__).resolve().parent.parent)
    release_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), dependencies])}
    sides = (("current", [sys.executable, *script], None), ("release", [sys.executable, "-S", *script], release_env))
    best: dict[str, dict[str, dict[str, float]]] = {"current": {}, "release": {}}
    for _ in range(rounds):
        for side, command, env in sides:
            # Run from the scratch folder: the checkout's own folder must not shadow the release.
            out = subprocess.run(command, capture_output=True, text=True, check=True, env=env, cwd=scratch)
            for name, rates in json.loads(out.stdout).items():
                mine = best[side].setdefault(name, {})
                for which, value in rates.items():
                    mine[which] = max(mine.get(which, 0.0), value)
    return best["current"], best["release"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--engine-rev", help="git revision whose engine to compare with, same process")
    parser.add_argument("--baseline-rev", help="git revision whose rules to compare with")
    parser.add_argument("--release-rev", help="git revision whose whole release to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="alternations for --release-rev")
    parser.add_argument("--note", default="", help="a sentence on the machine, printed under the table")
    args = parser.parse_args()
    benchmark = load_benchmark(example_benchmark_dir())
    rows = []
    with tempfile.TemporaryDirectory(prefix="keyaudit-bench-") as scratch:
        reference = engine_at(args.engine_rev, Path(scratch)) if args.engine_rev else None
        for name in bundled_rule_names():
            path = resolve_rule_path(name)
            rule = load_rule(path)
            items = cases(benchmark, rule)
            unique = made_unique(items)
            distinct = scoring_rate(rule, items, args.repeat)
            engine_worst = None
            if reference is not None:
                old_scorer, old_load = reference
                worst, engine_worst = alternating_rates(
                    [scoring_pass(Scorer, rule, unique), scoring_pass(old_scorer, old_load(path), unique)],
                    len(unique), args.repeat,
                )
            else:
                worst = scoring_rate(rule, unique, args.repeat)
            lark = lark_rate(rule, unique, args.repeat)
            old = baseline_rule(args.baseline_rev, name, Path(scratch)) if args.baseline_rev else None
            old_worst = scoring_rate(old, unique, args.repeat) if old else None
            old_distinct = scoring_rate(old, items, args.repeat) if old else None
            rows.append((name, len(items), distinct, worst, lark, old_distinct, old_worst, engine_worst))
        release = None
        if args.release_rev:
            inputs = {}
            for name in ("gear_train", "gauge_reading", "physical_stability"):
                stored = example_cases(benchmark, load_rule(resolve_rule_path(name)))
                inputs[name] = {"stored": stored, "unique": made_unique(stored)}
            release = release_rates(args.release_rev, inputs, args.rounds, Path(scratch))
    lines = [
        "# Scoring throughput",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, Python "
        f"{platform.python_version()}, one core; best of {args.repeat} passes, a fresh scorer per "
        "pass, rates per second of the process's CPU time. *distinct lines*: the responses as "
        "stored (a repeated answer line is parsed once); *all unique*: every answer line made "
        "unique, so every response is parsed."
        + (
            f" Engine reference: the engine at `{args.engine_rev}`, same process, passes alternating."
            if args.engine_rev
            else ""
        )
        + (f" Baseline: the rules at `{args.baseline_rev}`, same process." if args.baseline_rev else ""),
        "",
        "| rule | responses | distinct lines /s | all unique /s | Lark alone /s | unique ÷ Lark"
        + (" | engine ref. unique /s | unique ÷ engine ref." if args.engine_rev else "")
        + (" | baseline distinct /s | baseline unique /s | unique ÷ baseline" if args.baseline_rev else "")
        + " |",
        "|---|---:|---:|---:|---:|---:"
        + ("|---:|---:" if args.engine_rev else "")
        + ("|---:|---:|---:" if args.baseline_rev else "")
        + "|",
    ]
    for name, n, distinct, worst, lark, old_distinct, old_worst, engine_worst in rows:
        line = f"| {name} | {n:,} | {distinct:,.0f} | {worst:,.0f} | {lark:,.0f} | {worst / lark:.2f}"
        if args.engine_rev:
            line += f" | {engine_worst:,.0f} | {worst / engine_worst:.2f}"
        if args.baseline_rev:
            line += (
                f" | {old_distinct:,.0f} | {old_worst:,.0f} | {worst / old_worst:.2f}"
                if old_worst
                else " | — | — | —"
            )
        lines.append(line + " |")
    if release is not None:
        current, old = release
        lines += [
            "",
            f"Whole release against the release at `{args.release_rev}` (engine and rules), on the "
            "example's responses of each rule's cells, fresh processes alternating "
            f"{args.rounds} times, best per side:",
            "",
            "| rule | responses | this /s (stored) | release /s (stored) | ratio | this /s (unique) "
            "| release /s (unique) | ratio | this without certainty /s (unique) | ratio |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name in current:
            a, b = current[name], old[name]
            bare = a.get("unique_without_certainty")
            lines.append(
                f"| {name} | {len(inputs[name]['stored']):,} | {a['stored']:,.0f} | {b['stored']:,.0f} "
                f"| {a['stored'] / b['stored']:.2f} | {a['unique']:,.0f} | {b['unique']:,.0f} "
                f"| {a['unique'] / b['unique']:.2f} | "
                + (f"{bare:,.0f} | {bare / b['unique']:.2f} |" if bare else "— | — |")
            )
        lines += [
            "",
            "*without certainty*: the same work as the release, which judged no certainty (each "
            "verdict's signs of a misreading: unplaced words, the response's conclusion read as an "
            "answer for a rejection for something missing).",
        ]
    if args.note:
        lines += ["", args.note]
    report = "\n".join(lines) + "\n"
    RESULTS.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
