"""Scoring throughput: responses per second through the whole scoring path, one core.

    python bench/scoring.py [--repeat 5]

The whole path is what ``check`` and ``score`` run per response: find the answer line, clean it,
parse it with the rule's answer grammar (LALR, contextual lexer, error recovery), evaluate the
rule's lets and clauses. Inputs: every stored physical_stability L5 response of the embedded
example plus the labelled phrasings in ``tests/data/phrasings/``. As a reference measured in the
same process on the same answer lines, Lark alone (the same grammar, no recovery, default trees)
— the ratio says how much of the time is keyaudit's own. Results: ``bench/results/scoring.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import time
from pathlib import Path

from lark import Lark

from keyaudit.engine.load.answer_line import find_answer_line
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.grammar import _import_loader
from keyaudit.engine.rule_language.rule import load_rule
from keyaudit.engine.rule_language.scoring import Scorer, clean_answer

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "scoring.md"


def cases() -> list[tuple[str, str]]:
    benchmark = load_benchmark(example_benchmark_dir())
    keys = benchmark.keys
    found = [
        (keys[r.id].answer, r.text)
        for r in benchmark.responses
        if r.ref.domain == "physical_stability" and r.ref.level == 5
    ]
    for name in ("physical_stability.jsonl", "physical_stability_holdout.jsonl"):
        path = ROOT / "tests" / "data" / "phrasings" / name
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                found.append((row["key"], row["response"]))
    return found


def best_rate(function, items, repeat: int) -> float:
    best = 0.0
    for _ in range(repeat):
        started = time.perf_counter()
        for item in items:
            function(item)
        best = max(best, len(items) / (time.perf_counter() - started))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rule = load_rule(resolve_rule_path("physical_stability"))
    scorer = Scorer(rule)
    items = cases()
    for key, response in items:  # warm the parser
        scorer.score(key, response)

    def score_all_fresh(items: list[tuple[str, str]]) -> None:
        # A new Scorer per pass: its memo of (key, answer) verdicts would otherwise make every
        # pass after the first a lookup. Parsing each distinct key again is part of the cost.
        fresh = Scorer(rule)
        for key, response in items:
            fresh.score(key, response)

    whole = best_rate(score_all_fresh, [items], args.repeat) * len(items)
    fmt = scorer.rule.answer_format
    lines = [find_answer_line(r) for _, r in items]
    texts = [clean_answer(line.text, fmt) for line in lines if line is not None]
    path = scorer.rule.answer_grammar.path
    plain = Lark(
        path.read_text(encoding="utf-8"), parser="lalr", import_paths=[_import_loader(path.parent)]
    )

    def lark_only(text: str) -> None:
        # The reference has no error recovery; a failing line still costs its time.
        with contextlib.suppress(Exception):
            plain.parse(text)

    reference = best_rate(lark_only, texts, args.repeat)
    mean_chars = sum(len(t) for t in texts) / len(texts)
    report = f"""# Scoring throughput

Run {time.strftime("%Y-%m-%d %H:%M")} on {platform.machine()}, Python {platform.python_version()}, one core.
{len(items):,} responses (physical_stability L5 of the example + labelled phrasings), answer lines
of {mean_chars:.0f} characters on average; best of {args.repeat} passes.

| run | responses/s | ratio to Lark alone |
|---|---:|---:|
| keyaudit whole scoring path | {whole:,.0f} | {whole / reference:.2f} |
| Lark alone on the cleaned answer lines (reference) | {reference:,.0f} | 1.00 |
"""
    RESULTS.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
