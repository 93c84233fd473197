"""Issue 22, item 2: the claim layer's general language, grown from published lexicons, and the
question's options echoed on the answer line, read the same way by every rule."""

from __future__ import annotations

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

GEAR_KEY = "decrease; direction unchanged"
GAUGE_KEY = "no; new value 75"


@pytest.fixture(scope="module")
def gear() -> Scorer:
    return Scorer(load_rule(resolve_rule_path("gear_train")))


@pytest.fixture(scope="module")
def gauge() -> Scorer:
    return Scorer(load_rule(resolve_rule_path("gauge_reading")))


@pytest.mark.parametrize(
    "hedge",
    [
        "I'd guess", "my best guess:", "I'm fairly sure it's", "not 100% sure, but", "not fully sure:",
        "I suppose", "in all likelihood", "if I've read the figure right,", "chances are",
        "as far as I can tell,", "low confidence:", "I could be wrong, but",
    ],
)
def test_hedges_from_the_published_cue_lists_hedge_every_rule(
    hedge: str, gear: Scorer, gauge: Scorer
) -> None:
    assert gear.score(GEAR_KEY, f"ANSWER: {hedge} decrease; direction unchanged").reason == "hedged"
    assert gauge.score(GAUGE_KEY, f"ANSWER: {hedge} no, new value 75").reason == "hedged"


@pytest.mark.parametrize("sure", ["I'm sure:", "definitely", "100% sure:", "confident:"])
def test_certainty_words_are_no_hedge(sure: str, gear: Scorer) -> None:
    assert gear.score(GEAR_KEY, f"ANSWER: {sure} decrease; direction unchanged").accept


@pytest.mark.parametrize("repair", ["hold on,", "on second thoughts,", "nope,", "let me reconsider:"])
def test_self_repairs_keep_the_last_value(repair: str, gear: Scorer) -> None:
    verdict = gear.score(GEAR_KEY, f"ANSWER: increase, {repair} decrease; direction unchanged")
    assert verdict.accept, verdict.reason


@pytest.mark.parametrize(
    "answer",
    [
        "Speed (increase / decrease / stay the same): decrease; direction unchanged",
        "Speed (increase, decrease, or stay the same): decrease. Direction (unchanged/reversed): unchanged",
        "Speed [increase/decrease/stay the same]: decrease; direction unchanged",
    ],
)
def test_the_options_echoed_are_context(answer: str, gear: Scorer) -> None:
    assert gear.score(GEAR_KEY, f"ANSWER: {answer}").accept


@pytest.mark.parametrize(
    "answer, reason",
    [
        ("Yes/No: No; new value 75", ""),
        ("Yes or no: No; new value 75", ""),
        ("Yes/No: new value 75", "verdict missing"),  # only the options: no verdict given
        ("No, over the max: 75", "verdict conflict"),  # two claims, not a list of options
        ("Yes or no, 75", "verdict conflict"),  # no ":" or bracket: offered as the answer
    ],
)
def test_yes_no_echo_and_real_alternatives(answer: str, reason: str, gauge: Scorer) -> None:
    assert gauge.score(GAUGE_KEY, f"ANSWER: {answer}").reason == reason


@pytest.mark.parametrize(
    "answer, reason",
    [
        # a subset of the options in brackets is offered, not echoed
        ("decrease (increase or decrease?); direction unchanged", "speed missing"),
        ("increase or decrease: direction unchanged", "speed conflict"),
        # claims of both values in a bracket with other words: an explanation, not a list
        ("D slows; same direction (it reverses relative to its original sense).", "direction conflict"),
    ],
)
def test_what_is_not_an_echo(answer: str, reason: str, gear: Scorer) -> None:
    assert gear.score(GEAR_KEY, f"ANSWER: {answer}").reason == reason


def test_a_trailing_hedge_hedges_its_own_clause_only() -> None:
    """Found by mutation testing (issue 28): 'Bottom, column 7 probably; yes, it changes.' was
    rejected as 'change hedged' — the hedge on the location reached the next clause."""
    laser = Scorer(load_rule(resolve_rule_path("laser_mirror")))
    verdict = laser.score("yes; exits at bottom, position 7", "ANSWER: Bottom, column 7 probably; yes, it changes.")
    assert verdict.reason == "location hedged"
