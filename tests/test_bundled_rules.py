"""Every bundled rule: loads, passes its own examples and its keys check on the bundled example;
and, for gear_train and gauge_reading L5, a table of hand-written phrasings per rule.

Table rows: (key, answer line, accepted?, reason, extracted values). The phrasings are written for
the variety real models produce, not copied from the example generator, in both directions:
paraphrases that must be accepted and near misses (wrong, missing, conflicting, hedged) that must
be rejected with the named reason.
"""

from __future__ import annotations

from functools import cache

import pytest
from conftest import requires_rule

from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.authoring.rulecheck import keys_check, run_examples
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer


@cache
def _benchmark():
    return load_benchmark(example_benchmark_dir(), with_responses=False)


@cache
def _scorer(name: str) -> Scorer:
    return Scorer(load_rule(resolve_rule_path(name)))


def test_the_first_rule_is_bundled() -> None:
    assert "physical_stability" in bundled_rule_names()


@pytest.mark.parametrize("name", bundled_rule_names())
def test_bundled_rule_passes_its_examples(name: str) -> None:
    results = run_examples(_scorer(name))
    assert len(results) >= 25
    failed = [(r.example.line, r.mismatches) for r in results if not r.passed]
    assert failed == []
    assert {r.verdict.accept for r in results} == {True, False}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=requires_rule(n)) for n in ("gear_train", "gauge_reading")]
)
def test_new_rule_examples_cover_every_reason(name: str) -> None:
    scorer = _scorer(name)
    given = {e.reason for e in scorer.rule.examples if not e.accept}
    own = {r.reason for r in scorer.rule.requirements}
    assert own <= given


@pytest.mark.parametrize("name", bundled_rule_names())
def test_bundled_rule_passes_keys_check(name: str) -> None:
    scorer = _scorer(name)
    for cell in scorer.rule.cells:
        keys = [k.answer for k in _benchmark().keys_in_cell(cell.domain, cell.level)]
        assert keys, cell
        result = keys_check(scorer, keys)
        assert result.unparsed == {}
        assert result.failures == []
        assert result.passed


def _check(name: str, key: str, answer: str, accept: bool, reason: str, values: dict) -> None:
    verdict = _scorer(name).score(key, "Reasoning first.\nANSWER: " + answer)
    assert (verdict.accept, verdict.reason) == (accept, reason), verdict
    assert verdict.values == values


# ---- gear_train L5 ------------------------------------------------------------------------------
INC = "increase; direction unchanged"
DEC = "decrease; direction unchanged"
SAME = "stay the same; direction unchanged"

GEAR = [
    (INC, "increase; direction unchanged", True, "", "increase", "unchanged"),
    (INC, "Increase — D still turns clockwise.", True, "", "increase", "unchanged"),
    (INC, "It speeds up and keeps the same direction.", True, "", "increase", "unchanged"),
    (
        INC,
        "Gear D rotates faster; it does not change direction.",
        True,
        "",
        "increase",
        "unchanged",
    ),
    (INC, "Faster, same direction of rotation.", True, "", "increase", "unchanged"),
    (
        INC,
        "Increase, and the direction of rotation remains the same.",
        True,
        "",
        "increase",
        "unchanged",
    ),
    (INC, "D's RPM goes up; rotation direction is unchanged.", True, "", "increase", "unchanged"),
    (INC, "Increase; no, the direction does not reverse.", True, "", "increase", "unchanged"),
    (INC, "Speed increases, direction: same", True, "", "increase", "unchanged"),
    (INC, "Increases; direction would not change", True, "", "increase", "unchanged"),
    (INC, "Increase. It would not reverse.", True, "", "increase", "unchanged"),
    (INC, "Increase (direction unchanged)", True, "", "increase", "unchanged"),
    (INC, "D spins faster without changing direction.", True, "", "increase", "unchanged"),
    (INC, "Increase; D still rotates counterclockwise", True, "", "increase", "unchanged"),
    (
        INC,
        "increase; D continues to rotate in the same direction.",
        True,
        "",
        "increase",
        "unchanged",
    ),
    (INC, "Speed: increase. Direction: no change.", True, "", "increase", "unchanged"),
    (INC, "Increase. Direction change: no.", True, "", "increase", "unchanged"),
    (INC, "**Increase** — D turns faster, same direction.", True, "", "increase", "unchanged"),
    (
        INC,
        "Increase — the gear ratio to D rises since A is bigger; direction unchanged.",
        True,
        "",
        "increase",
        "unchanged",
    ),
    (INC, "Gear D accelerates; no reversal of direction.", True, "", "increase", "unchanged"),
    (INC, "Decrease; direction unchanged", False, "wrong speed", "decrease", "unchanged"),
    (INC, "increase; direction reverses", False, "wrong direction", "increase", "reversed"),
    (
        INC,
        "increase; D now turns counterclockwise",
        False,
        "wrong direction",
        "increase",
        "reversed",
    ),
    (INC, "increase; it changes direction", False, "wrong direction", "increase", "reversed"),
    (INC, "increase; opposite direction", False, "wrong direction", "increase", "reversed"),
    (INC, "Increase. Direction change: yes.", False, "wrong direction", "increase", "reversed"),
    (INC, "increase or decrease; direction unchanged", False, "speed conflict", None, "unchanged"),
    (
        INC,
        "either increase or stay the same; direction unchanged",
        False,
        "speed conflict",
        None,
        "unchanged",
    ),
    (INC, "increase", False, "direction missing", "increase", None),
    (INC, "Gear D turns faster.", False, "direction missing", "increase", None),
    (INC, "direction unchanged", False, "speed missing", None, "unchanged"),
    (INC, "The direction is unchanged.", False, "speed missing", None, "unchanged"),
    (INC, "Probably increase; direction unchanged", False, "hedged", "increase", "unchanged"),
    (INC, "I think it increases; same direction", False, "hedged", "increase", "unchanged"),
    (
        INC,
        "increase; direction unchanged or reversed",
        False,
        "direction conflict",
        "increase",
        None,
    ),
    (
        INC,
        "Stays the same; direction unchanged",
        False,
        "wrong speed",
        "stay the same",
        "unchanged",
    ),
    (
        INC,
        "Slower, and it keeps turning the same way.",
        False,
        "wrong speed",
        "decrease",
        "unchanged",
    ),
    (DEC, "decrease; direction unchanged", True, "", "decrease", "unchanged"),
    (DEC, "Decrease — gear D slows down, same direction.", True, "", "decrease", "unchanged"),
    (
        DEC,
        "It turns more slowly; its direction of rotation does not change.",
        True,
        "",
        "decrease",
        "unchanged",
    ),
    (DEC, "D's speed drops; rotation direction stays the same.", True, "", "decrease", "unchanged"),
    (DEC, "Lower speed; still clockwise.", True, "", "decrease", "unchanged"),
    (DEC, "Decreases, and D keeps its direction.", True, "", "decrease", "unchanged"),
    (DEC, "decrease; D would spin the other way", False, "wrong direction", "decrease", "reversed"),
    (DEC, "Decrease, direction reversed", False, "wrong direction", "decrease", "reversed"),
    (DEC, "It slows down.", False, "direction missing", "decrease", None),
    (DEC, "increase; direction unchanged", False, "wrong speed", "increase", "unchanged"),
    (DEC, "Maybe decrease; direction unchanged", False, "hedged", "decrease", "unchanged"),
    (
        DEC,
        "decrease/stay the same; direction unchanged",
        False,
        "speed conflict",
        None,
        "unchanged",
    ),
    (SAME, "stay the same; direction unchanged", True, "", "stay the same", "unchanged"),
    (SAME, "Stays the same; direction unchanged", True, "", "stay the same", "unchanged"),
    (SAME, "It stays constant; same direction.", True, "", "stay the same", "unchanged"),
    (SAME, "No change in speed; no change in direction.", True, "", "stay the same", "unchanged"),
    (SAME, "Speed is unchanged and direction is unchanged", True, "", "stay the same", "unchanged"),
    (SAME, "Remains constant, direction unchanged", True, "", "stay the same", "unchanged"),
    (
        SAME,
        "Neither increases nor decreases; direction unchanged",
        True,
        "",
        "stay the same",
        "unchanged",
    ),
    (
        SAME,
        "The speed of D does not change; D still turns clockwise.",
        True,
        "",
        "stay the same",
        "unchanged",
    ),
    (SAME, "Same speed, same direction.", True, "", "stay the same", "unchanged"),
    (
        SAME,
        "Gear D is unaffected: it keeps its speed and turns the same way.",
        True,
        "",
        "stay the same",
        "unchanged",
    ),
    (
        SAME,
        "stay the same; direction reverses",
        False,
        "wrong direction",
        "stay the same",
        "reversed",
    ),
    (
        SAME,
        "Stays the same, but it spins the opposite way.",
        False,
        "wrong direction",
        "stay the same",
        "reversed",
    ),
    (SAME, "It stays the same.", False, "direction missing", "stay the same", None),
    (SAME, "Unchanged; unchanged", False, "direction missing", "stay the same", None),
    (SAME, "increase; direction unchanged", False, "wrong speed", "increase", "unchanged"),
    (SAME, "decrease; direction unchanged", False, "wrong speed", "decrease", "unchanged"),
    (
        SAME,
        "Possibly stay the same; direction unchanged",
        False,
        "hedged",
        "stay the same",
        "unchanged",
    ),
    (
        SAME,
        "either stay the same or decrease; direction unchanged",
        False,
        "speed conflict",
        None,
        "unchanged",
    ),
]


@pytest.mark.parametrize(("key", "answer", "accept", "reason", "speed", "direction"), GEAR)
@requires_rule("gear_train")
def test_gear_train_phrasings(key, answer, accept, reason, speed, direction) -> None:
    _check("gear_train", key, answer, accept, reason, {"speed": speed, "direction": direction})


@requires_rule("gear_train")
def test_gear_train_table_is_large_and_two_sided() -> None:
    assert len(GEAR) >= 60
    assert sum(row[2] for row in GEAR) >= 25
    assert sum(not row[2] for row in GEAR) >= 25
    reasons = {row[3] for row in GEAR if not row[2]}
    assert reasons == {r.reason for r in _scorer("gear_train").rule.requirements}


# ---- gauge_reading L5 ---------------------------------------------------------------------------
GAUGE = [
    ("no; new value 65", "no; new value 65", True, "", "no", 65.0),
    ("no; new value 65", "No — 65", True, "", "no", 65.0),
    ("no; new value 65", "No, 65.0", True, "", "no", 65.0),
    ("no; new value 65", "No; the needle would read 65 psi.", True, "", "no", 65.0),
    (
        "no; new value 65",
        "No, it would not exceed the maximum; new value ≈65",
        True,
        "",
        "no",
        65.0,
    ),
    (
        "no; new value 65",
        "No — the new value is 65 units, which is below the maximum of 100.",
        True,
        "",
        "no",
        65.0,
    ),
    ("no; new value 65", "No: 40 + 25 = 65, below the max of 100.", True, "", "no", 65.0),
    (
        "no; new value 65",
        "No, the needle goes from 40 to 65, still under the full scale of 100.",
        True,
        "",
        "no",
        65.0,
    ),
    ("no; new value 65", "No. It rises by 25% of the 0-100 range to 65.", True, "", "no", 65.0),
    ("no; new value 65", "No; new value: 65 (max 100)", True, "", "no", 65.0),
    ("no; new value 65", "No. 65 < 100.", True, "", "no", 65.0),
    ("no; new value 65", "No, it stays within the scale at 65.", True, "", "no", 65.0),
    (
        "no; new value 65",
        "It would not exceed the maximum; the new value would be 65.",
        True,
        "",
        "no",
        65.0,
    ),
    ("no; new value 65", "No (new value = 65.0 bar)", True, "", "no", 65.0),
    ("no; new value 65", "No; new value approximately 65", True, "", "no", 65.0),
    ("no; new value 65", "No, 65.04", True, "", "no", 65.04),
    ("no; new value 65", "no; new value 65 (25% of 100 = 25 added to 40)", True, "", "no", 65.0),
    (
        "no; new value 65",
        "No - the needle would move to about 65 psi on a 0–100 psi gauge.",
        True,
        "",
        "no",
        65.0,
    ),
    ("no; new value 65", "No; new reading 65 out of 100", True, "", "no", 65.0),
    ("no; new value 65", "**No** — new value: **65**", True, "", "no", 65.0),
    ("no; new value 65", "No; new value 65.1", False, "wrong value", "no", 65.1),
    ("no; new value 65", "No; new value 64.5", False, "wrong value", "no", 64.5),
    ("no; new value 65", "No; new value 70", False, "wrong value", "no", 70.0),
    ("no; new value 65", "Yes; new value 65", False, "wrong verdict", "yes", 65.0),
    (
        "no; new value 65",
        "Yes, it goes past the top of the scale at 65.",
        False,
        "wrong verdict",
        "yes",
        None,
    ),
    ("no; new value 65", "No; new value 65 or 70", False, "values conflict", "no", None),
    ("no; new value 65", "No; new value 65-70", False, "values conflict", "no", None),
    ("no; new value 65", "No, it stays on the scale.", False, "value missing", "no", None),
    ("no; new value 65", "No.", False, "value missing", "no", None),
    ("no; new value 65", "65", False, "verdict missing", None, 65.0),
    ("no; new value 65", "The new value would be 65 psi.", False, "verdict missing", None, 65.0),
    ("no; new value 65", "Probably no; new value 65", False, "hedged", "no", 65.0),
    ("no; new value 65", "No, I think 65", False, "hedged", "no", 65.0),
    ("no; new value 65", "No, but it exceeds the max; 65", False, "verdict conflict", None, 65.0),
    ("no; new value 65", "No; 25%", False, "value missing", "no", None),
    ("no; new value 65", "No, the maximum is 100.", False, "value missing", "no", None),
    ("yes; new value 10.5", "yes; new value 10.5", True, "", "yes", 10.5),
    ("yes; new value 10.5", "Yes — 10.5 bar exceeds the maximum of 10.", True, "", "yes", 10.5),
    (
        "yes; new value 10.5",
        "Yes, it would read ≈ 10.5, past the top of the scale.",
        True,
        "",
        "yes",
        10.5,
    ),
    ("yes; new value 10.5", "Yes. New value: 10.50", True, "", "yes", 10.5),
    (
        "yes; new value 10.5",
        "It would exceed the maximum of 10: the new value is 10.5.",
        True,
        "",
        "yes",
        10.5,
    ),
    ("yes; new value 10.5", "Yes; 8 + 2.5 = 10.5 > 10", True, "", "yes", 10.5),
    ("yes; new value 10.5", "Yes, off the scale (10.5 on a 0-10 gauge)", True, "", "yes", 10.5),
    (
        "yes; new value 10.5",
        "Yes: the needle moves from 8 to 10.5, beyond the maximum.",
        True,
        "",
        "yes",
        10.5,
    ),
    ("yes; new value 10.5", "Yes; new value 10.55", False, "wrong value", "yes", 10.55),
    ("yes; new value 10.5", "Yes; new value 10", False, "wrong value", "yes", 10.0),
    ("yes; new value 10.5", "Yes; new value 11", False, "wrong value", "yes", 11.0),
    ("yes; new value 10.5", "No; new value 10.5", False, "wrong verdict", "no", 10.5),
    (
        "yes; new value 10.5",
        "No, it does not exceed the maximum; 10.5",
        False,
        "wrong verdict",
        "no",
        10.5,
    ),
    ("yes; new value 10.5", "Yes, it goes off the scale.", False, "value missing", "yes", None),
    ("yes; new value 10.5", "Yes; new value 10.5 or 11", False, "values conflict", "yes", None),
    ("yes; new value 10.5", "Likely yes; new value 10.5", False, "hedged", "yes", 10.5),
    ("yes; new value 10.5", "The needle would read 10.5.", False, "verdict missing", None, 10.5),
    (
        "yes; new value 10.5",
        "Yes but within the scale; 10.5",
        False,
        "verdict conflict",
        None,
        10.5,
    ),
    ("no; new value 17.5", "No; new value 17.5", True, "", "no", 17.5),
    ("no; new value 17.5", "No — about 17.5 units, under the max.", True, "", "no", 17.5),
    ("no; new value 17.5", "no, it would read 17.50 psi", True, "", "no", 17.5),
    ("no; new value 17.5", "No; 17", False, "wrong value", "no", 17.0),
    ("no; new value 17.5", "No; 18", False, "wrong value", "no", 18.0),
    ("yes; new value 135", "yes; new value 135", True, "", "yes", 135.0),
    ("yes; new value 135", "Yes — 135 psi, over the maximum of 120.", True, "", "yes", 135.0),
    (
        "yes; new value 135",
        "Yes. 110 + 25 = 135, which exceeds the 120 limit.",
        True,
        "",
        "yes",
        135.0,
    ),
    ("yes; new value 135", "Yes; new value 135.0 (off-scale)", True, "", "yes", 135.0),
    ("yes; new value 135", "Yes; new value 130", False, "wrong value", "yes", 130.0),
    (
        "yes; new value 135",
        "Yes; the needle would be pegged; 125 to 135",
        False,
        "values conflict",
        "yes",
        None,
    ),
    ("yes; new value 135", "Not sure, maybe yes; 135", False, "hedged", "yes", 135.0),
    ("yes; new value 135", "No; new value 135", False, "wrong verdict", "no", 135.0),
]


@pytest.mark.parametrize(("key", "answer", "accept", "reason", "verdict", "value"), GAUGE)
@requires_rule("gauge_reading")
def test_gauge_reading_phrasings(key, answer, accept, reason, verdict, value) -> None:
    _check("gauge_reading", key, answer, accept, reason, {"verdict": verdict, "value": value})


@requires_rule("gauge_reading")
def test_gauge_reading_table_is_large_and_two_sided() -> None:
    assert len(GAUGE) >= 60
    assert sum(row[2] for row in GAUGE) >= 25
    assert sum(not row[2] for row in GAUGE) >= 25
    reasons = {row[3] for row in GAUGE if not row[2]}
    assert reasons == {r.reason for r in _scorer("gauge_reading").rule.requirements}


@pytest.mark.parametrize(
    ("answer", "accept"),
    [
        ("No; new value 65.05", True),  # the tolerance edge: |a - b| = 0.05
        ("No; new value 64.95", True),
        ("No; new value 65.06", False),
        ("No; new value 64.94", False),
    ],
)
@requires_rule("gauge_reading")
def test_gauge_reading_tolerance_is_0_05(answer: str, accept: bool) -> None:
    verdict = _scorer("gauge_reading").score_answer_text("no; new value 65", answer)
    assert verdict.accept is accept
