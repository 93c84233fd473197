"""Every bundled rule, on the example's stored responses, agrees with how they were designed.

The example generator (engine/examples/generate.py) decides for each synthetic response whether a
careful auditor should accept it (its ``intended`` flag, not written to the files). The bundled
rules must reach the same verdict on every stored response of their cells.
"""

from __future__ import annotations

import pytest

from keyaudit.engine.examples import generate
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer


@pytest.fixture(scope="module")
def designed() -> dict[str, bool]:
    rows = generate.generate(generate.load_keys(example_benchmark_dir() / "keys"))
    return {(row["model"], row["id"]): row["intended"] for rows_ in rows.values() for row in rows_}


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark(example_benchmark_dir())


@pytest.mark.parametrize("name", bundled_rule_names())
def test_rule_matches_the_designed_verdicts(name: str, designed, benchmark) -> None:
    rule = load_rule(resolve_rule_path(name))
    scorer = Scorer(rule)
    checked = 0
    disagreements = []
    for response in benchmark.responses:
        if not rule.covers(response.ref.domain, response.ref.level):
            continue
        verdict = scorer.score(benchmark.keys[response.id].answer, response.text)
        checked += 1
        if verdict.accept != designed[(response.model, response.id)]:
            disagreements.append((response.model, response.id, verdict.reason))
    assert checked == 500
    assert disagreements == []
