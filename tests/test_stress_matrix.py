"""The behavioural test matrix (issue 33, item 5): answers built from a cell's keys in each kind
of wording, with the verdict each must get by construction (CheckList's minimum functionality,
invariance and directional tests)."""

from __future__ import annotations

import shutil

import pytest

from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.authoring import stress as matrix
from keyaudit.engine.rule_language.reading.grammar import bundled_grammar_dir
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

#: Each bundled rule's agreement on the example's keys when the matrix was built (issue 33's
#: target is 99% for every rule; the gaps are named in the issue's closing note). A rule that
#: falls below its figure has lost a kind of wording it read.
FLOORS = {
    "compass_bearing": 1.0,
    "fbd": 1.0,
    "gauge_reading": 1.0,
    "gauge_reading_l4": 1.0,
    "gear_train": 1.0,
    "laser_mirror": 1.0,
    "optical_illusion": 1.0,
    "physical_stability": 1.0,
    "physical_stability_l4": 1.0,
    "projectile_motion": 1.0,
    "surface_topology_l4": 1.0,
}


@pytest.fixture(scope="module")
def example():
    return load_benchmark(example_benchmark_dir())


def cell_keys(rule, benchmark) -> list[str]:
    return [k.answer for c in rule.cells for k in benchmark.keys_in_cell(c.domain, c.level)]


def test_every_bundled_rule_has_a_floor() -> None:
    assert set(FLOORS) == set(bundled_rule_names())


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_bundled_rules_keep_their_matrix_figure(name: str, example) -> None:
    rule = load_rule(resolve_rule_path(name))
    result = matrix.stress(Scorer(rule), cell_keys(rule, example))
    assert result.n >= 50 and not result.unusable_keys
    assert {w.wording for w in result.wordings} >= {"plain right", "plain wrong", "hedge", "alternative"}
    assert result.rate >= FLOORS[name] - 1e-9, [(w.wording, w.rate) for w in result.wordings if w.rate < 1]


def test_the_matrix_is_the_same_on_every_run(example) -> None:
    rule = load_rule(resolve_rule_path("gear_train"))
    first, _ = matrix.build_probes(Scorer(rule), cell_keys(rule, example))
    again, _ = matrix.build_probes(Scorer(rule), list(reversed(cell_keys(rule, example))))
    assert first == again


def test_a_wrong_partner_answers_the_same_question(example) -> None:
    rule = load_rule(resolve_rule_path("fbd"))
    probes, _ = matrix.build_probes(Scorer(rule), cell_keys(rule, example))
    for probe in probes:
        if probe.wording == "plain wrong" and probe.key in ("yes", "no"):
            assert probe.answer.removeprefix("ANSWER: ") in ("yes", "no")
        elif probe.wording == "plain wrong":
            assert "degrees" in probe.answer


class _DeafToQuestions(Scorer):
    """physical_stability with its reading of a final "?" taken away: a rule that cannot tell an
    answer asked from one said, so the matrix has a kind of wording to report as failing."""

    def score(self, key, answer, **options):
        return super().score(key, answer.rstrip("?"), **options)


def test_a_failing_kind_is_reported_with_an_example(example) -> None:
    rule = load_rule(resolve_rule_path("physical_stability"))
    result = matrix.stress(_DeafToQuestions(rule), cell_keys(rule, example))
    asked = next(w for w in result.wordings if w.wording == "question mark")
    assert asked.rate < 1 and asked.failure is not None
    probe, read = asked.failure
    assert probe.answer.endswith("?") and probe.expect is False and read == "accepted"
    assert next(w for w in result.wordings if w.wording == "hedge").rate == 1.0


@pytest.mark.parametrize(
    ("text", "words"),
    [("45", "forty-five"), ("253", "two hundred fifty-three"), ("100", "one hundred"), ("7", "seven")],
)
def test_number_words(text: str, words: str) -> None:
    assert matrix.number_words(int(text)) == words


def test_probe_transformations() -> None:
    assert matrix._with_number_words("-4; orientable") == "minus four; orientable"
    assert matrix._with_number_words("downward (270 degrees; 0=right, 90=up)") == (
        "downward (two hundred seventy degrees; 0=right, 90=up)"
    )
    assert matrix._with_number_words("clears; by 2.6 m") is None
    assert matrix._lower_labels("joint between block B and block A") == "joint between block b and block A"
    assert matrix._typo("decrease; direction unchanged") == "decrease; diretcion unchanged"
    # another object's value, said in a relative clause: one clause, no comma or ";" to end it
    assert matrix._one_clause("unstable; after removing block E, the joint") == (
        "unstable and after removing block E the joint"
    )
    other = next(b for name, b, _ in matrix.WORDINGS if name == "another object's claim")
    assert other("stable", "unstable; at D-C", "") == ("stable, unlike the other one, which is unstable and at D-C", True)


def test_stress_on_the_command_line(run_cli, tmp_path) -> None:
    result = run_cli("test-rule", "gear_train", "--stress")
    assert result.code == 0, result.err
    assert "behavioural test matrix" in result.out and "correction to right" in result.out
    # every bundled rule reads 100%: a copy of fbd that cannot read corrections has gaps
    rule = tmp_path / "fbd.toml"
    shutil.copy(resolve_rule_path("fbd"), rule)
    for grammar in ("fbd_key.lark", "fbd_answer.lark"):
        text = (bundled_grammar_dir() / grammar).read_text(encoding="utf-8")
        (tmp_path / grammar).write_text(text.replace("| HEDGE | CORRECTION |", "| HEDGE |"), encoding="utf-8")
    failing = run_cli("test-rule", str(rule), "--stress", "--min-agreement", "99")
    assert failing.code == 1, failing.err
    assert "below --min-agreement 99%" in failing.out and "correction to right" in failing.out
    refused = run_cli("test-rule", "gear_train", "--stress", "--cases", "x.jsonl")
    assert refused.code == 2
