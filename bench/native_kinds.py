"""Native component kinds against the rule language's generated expressions, per rule, one process.

    python bench/native_kinds.py [--repeat 5] [RULE ...]

For every bundled rule (or those named): the same rule loaded once, scored as it is (its
components' general steps evaluated by their native bodies, :mod:`keyaudit.engine.rule_language.rules.native_kinds`)
and with those bodies taken off (:func:`~keyaudit.engine.rule_language.rules.native_reference.without_natives`:
every step through the expression interpreter, as before), on the same answers with every answer
line unique (``bench/scoring.py``'s inputs), passes alternating, best per side, rates per second of
the process's CPU time. Also how many of the rule's expressions are native, how often a native body
handed a step back to its expression, and that both sides gave the same verdicts.
Results: ``bench/results/native_kinds.md``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from scoring import alternating_rates, cases, made_unique, scoring_pass  # noqa: E402

from keyaudit.engine.load.benchmark import load_benchmark  # noqa: E402
from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path  # noqa: E402
from keyaudit.engine.rule_language.expressions.native import NativeExpression  # noqa: E402
from keyaudit.engine.rule_language.rules.native_reference import without_natives  # noqa: E402
from keyaudit.engine.rule_language.rules.rule import Rule, load_rule  # noqa: E402
from keyaudit.engine.rule_language.scoring.scorer import Scorer  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "native_kinds.md"


def expressions(rule: Rule) -> list:
    """Every expression the rule evaluates per answer (lets, clauses, outputs)."""
    found = [e for _, e in rule.lets] + list(rule.outputs.values())
    for r in rule.requirements:
        found += [r.check] + ([r.when] if r.when else [])
    return found


def fallbacks(rule: Rule, items: list[tuple[str, str]]) -> int:
    """How many native evaluations handed the step back to the expression on ``items``."""
    count = 0
    natives = [e for e in expressions(rule) if isinstance(e, NativeExpression)]
    for expression in natives:
        body = expression.native

        def counted(env, body=body):
            nonlocal count
            try:
                return body(env)
            except Exception:
                count += 1
                raise

        expression.native = counted
    try:
        scorer = Scorer(rule)
        for key, response in items:
            scorer.score(key, response)
    finally:
        for expression in natives:
            expression.native = expression.native.__defaults__[0]
    return count


def step_costs(rule: Rule, items: list[tuple[str, str]], repeat: int) -> tuple[float, float, bool]:
    """Microseconds per answer of the rule's native steps alone, by their native bodies and by
    their expressions, on the environments of ``items`` (every step evaluated on every answer's
    final environment: an upper bound of what a verdict, which stops at its first failing
    clause, spends on them); and whether both gave the same value everywhere."""
    scorer = Scorer(without_natives(rule))
    envs = []
    for key, response in items:
        scorer._last_env = None
        scorer.score(key, response, certainty=False)
        if scorer._last_env is not None:
            envs.append(scorer._last_env[2])
    steps = [e for e in expressions(rule) if isinstance(e, NativeExpression)]
    same = all(e.evaluate(env) == e.expression.evaluate(env) for env in envs for e in steps)

    def timed(evaluate) -> float:
        best = float("inf")
        for _ in range(repeat):
            started = time.process_time()
            for env in envs:
                for e in steps:
                    evaluate(e, env)
            best = min(best, time.process_time() - started)
        return best / max(len(items), 1) * 1e6

    return (
        timed(lambda e, env: e.evaluate(env)),
        timed(lambda e, env: e.expression.evaluate(env)),
        same,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("rules", nargs="*")
    args = parser.parse_args()
    benchmark = load_benchmark(example_benchmark_dir())
    rows = []
    for name in args.rules or bundled_rule_names():
        rule = load_rule(resolve_rule_path(name))
        reference = without_natives(rule)
        unique = made_unique(cases(benchmark, rule))
        same = all(
            Scorer(rule).score(k, r) == Scorer(reference).score(k, r) for k, r in unique[:300]
        )
        native, plain = alternating_rates(
            [scoring_pass(Scorer, rule, unique), scoring_pass(Scorer, reference, unique)],
            len(unique), args.repeat,
        )
        total = expressions(rule)
        count = sum(isinstance(e, NativeExpression) for e in total)
        native_us, plain_us, same_steps = step_costs(rule, unique, args.repeat)
        rows.append((
            name, len(unique), count, len(total), fallbacks(rule, unique), native, plain,
            same and same_steps, native_us, plain_us,
        ))
        print(rows[-1], flush=True)
    lines = [
        "# Native component kinds against generated expressions",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, Python "
        f"{platform.python_version()}, one core; `python bench/native_kinds.py`: every answer line "
        f"unique, the rule with native steps and the same rule without them in one process, passes "
        f"alternating, best of {args.repeat}, answers per CPU second.",
        "",
        "| rule | answers | native / per-answer expressions | hand-backs | native /s | expressions /s "
        "| native ÷ expressions | steps native µs/answer | steps as expressions µs/answer "
        "| steps: expressions ÷ native | saved, share of the whole path | same verdicts and values |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, n, count, total, back, native, plain, same, native_us, plain_us in rows:
        whole_us = 1e6 / plain
        lines.append(
            f"| {name} | {n:,} | {count} / {total} | {back} | {native:,.0f} | {plain:,.0f} "
            f"| {native / plain:.2f} | {native_us:.1f} | {plain_us:.1f} | {plain_us / native_us:.1f} "
            f"| {(plain_us - native_us) / whole_us:.1%} | {'yes' if same else 'NO'} |"
        )
    report = "\n".join(lines) + "\n"
    RESULTS.write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
