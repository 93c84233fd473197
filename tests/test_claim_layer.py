"""The claim layer: negation scope, hedges, subjects, corrections, alternatives and implied values,
decided once for every domain (exercised through the gear_train and gauge_reading rules), and the
authoring tools built on it (test-rule --cases / --explain, misspelled fields)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keyaudit.engine.errors import RuleError
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

GEAR = "increase; direction unchanged"


@pytest.fixture(scope="module")
def gear() -> Scorer:
    return Scorer(load_rule(resolve_rule_path("gear_train")))


@pytest.fixture(scope="module")
def gauge() -> Scorer:
    return Scorer(load_rule(resolve_rule_path("gauge_reading")))


@pytest.mark.parametrize(
    ("answer", "speed", "direction", "reason"),
    [
        # negation scope and contrast
        ("D won't get slower - it gets faster; same direction", "increase", "unchanged", ""),
        ("Faster, not slower; direction unchanged", "increase", "unchanged", ""),
        ("not slower but faster; direction unchanged", "increase", "unchanged", ""),
        ("faster rather than slower; direction unchanged", "increase", "unchanged", ""),
        ("D does not lose speed; it gains speed. Direction unchanged", "increase", "unchanged", ""),
        # a denial that leaves one value implies it
        ("neither faster nor slower; direction unchanged", "stay the same", "unchanged", "wrong speed"),
        ("faster; it does not reverse", "increase", "unchanged", ""),
        # "not yet": "yet" stays inside the negation (elsewhere it ends a clause)
        ("faster; it has not yet reversed", "increase", "unchanged", ""),
        ("faster; it does not yet reverse", "increase", "unchanged", ""),
        # asserting and denying one value is a conflict
        ("faster; it does not change direction, yet it turns the opposite way", "increase", None,
         "direction conflict"),
        # subjects: another gear's claims are context
        ("C turns slower, but D turns faster; direction unchanged", "increase", "unchanged", ""),
        ("The driver keeps its speed; D speeds up and keeps its direction", "increase", "unchanged", ""),
        # corrections
        ("slower - no, wait: faster; direction unchanged", "increase", "unchanged", ""),
        # alternatives
        ("speed: increase/decrease; direction unchanged", None, "unchanged", "speed conflict"),
        # modal hedges
        ("D may turn faster; direction unchanged", "increase", "unchanged", "hedged"),
        ("could be faster; direction unchanged", "increase", "unchanged", "hedged"),
        ("faster, I think; direction unchanged", "increase", "unchanged", "hedged"),
        # a trailing hedge with no claim after it hedges the last claim's clause
        ("faster; direction unchanged, I think", "increase", "unchanged", "hedged"),
        ("faster; direction unchanged (probably)", "increase", "unchanged", "hedged"),
        # word order and non-native grammar
        ("Faster speed; direction no change", "increase", "unchanged", ""),
        ("faster; spin sense kept", "increase", "unchanged", ""),
        ("faster; the direction too is unaffected", "increase", "unchanged", ""),
        # shared predicates: one predicate for two kinds' nouns
        ("speed and direction both unchanged", "stay the same", "unchanged", "wrong speed"),
        ("Neither D's speed nor its direction changes", "stay the same", "unchanged", "wrong speed"),
        ("no change in speed or direction", "stay the same", "unchanged", "wrong speed"),
        ("it does not change speed or direction", "stay the same", "unchanged", "wrong speed"),
        ("D's speed does not change, and neither does its direction", "stay the same", "unchanged",
         "wrong speed"),
        ("the speed would stay the same, and so would its direction", "stay the same", "unchanged",
         "wrong speed"),
        ("D's speed and direction both change", None, "reversed", "speed conflict"),
        ("C's speed and direction are unchanged; faster", "increase", None, "direction missing"),
        # ... but a noun that is an object shares nothing
        ("Increase in speed and direction unchanged", "increase", "unchanged", ""),
        ("D turns at double speed, in the same direction", "increase", "unchanged", ""),
        # a bare predicate is about the kind named before it
        ("faster; direction: the same", "increase", "unchanged", ""),
        ("faster; the direction is no longer the same", "increase", "reversed", "wrong direction"),
        ("faster; direction either unchanged or reversed", "increase", None, "direction conflict"),
        ("faster; direction reversed - sorry, unchanged", "increase", "unchanged", ""),
        ("the speed of D is change; same direction", None, "unchanged", "speed conflict"),
        # a hedge on an elided claim about another gear
        ("faster; direction unchanged (C probably too)", "increase", "unchanged", ""),
        ("faster; direction unchanged (probably)", "increase", "unchanged", "hedged"),
        # another quantity's change is no speed claim
        ("D's torque doubles; direction unchanged", None, "unchanged", "speed missing"),
    ],
)
def test_gear_claims(gear: Scorer, answer: str, speed, direction, reason: str) -> None:
    verdict = gear.score(GEAR, f"ANSWER: {answer}")
    assert (verdict.values["speed"], verdict.values["direction"]) == (speed, direction), answer
    assert verdict.reason == reason, answer


@pytest.mark.parametrize(
    ("key", "answer", "verdict", "value", "reason"),
    [
        ("no; new value 41.5", "Not exceeding, new reading 41.5", "no", 41.5, ""),
        ("no; new value 65", "It won't go over the max; 65", "no", 65.0, ""),
        ("no; new value 160", "Yes - no, wait: no; new value 160", "no", 160.0, ""),
        ("yes; new value 13", "No... actually yes, it exceeds: new value 13", "yes", 13.0, ""),
        ("yes; new value 135", "Yes. New value = 100 + 35 = 135", "yes", 135.0, ""),
        ("yes; new value 220", "Yes, it might exceed; new value 220", "yes", 220.0, "hedged"),
        ("no; new value 65", "Probably not; new value 65", "no", 65.0, "hedged"),
        ("no; new value 15", "Exceeds max: No | New value: 15 bar", "no", 15.0, ""),
        ("no; new value 65", "No, 40 + 25 stays under 100.", "no", None, "value missing"),
    ],
)
def test_gauge_claims(gauge: Scorer, key: str, answer: str, verdict, value, reason: str) -> None:
    scored = gauge.score(key, f"ANSWER: {answer}")
    assert (scored.values["verdict"], scored.values["value"], scored.reason) == (verdict, value, reason)


@pytest.mark.parametrize(
    ("key", "answer", "reason"),
    [
        # a claimless hedge clause opened by a contrast qualifies the claim before it ...
        ("no; exits at bottom, position 7", "No, but I might be wrong; bottom, column 7.", "change hedged"),
        ("no; exits at bottom, position 7", "No, though I'm not sure; bottom, column 7.", "change hedged"),
        # ... one with a claim of its own hedges that claim ...
        ("yes; exits at bottom, position 7", "Yes, but it might exit at the bottom, column 7.",
         "location hedged"),
        # ... and any other claimless hedge clause still hedges the next claim's clause
        ("yes; exits at bottom, position 7", "Yes, I think; bottom, column 7.", "location hedged"),
        # a bare "seems" is a hedge
        ("yes; exits at bottom, position 7", "Yes; it seems to exit at the bottom, column 7.",
         "location hedged"),
        ("yes; exits at bottom, position 7", "The exit seems different: bottom, column 7.", "change hedged"),
    ],
)
def test_hedge_scope_on_laser_mirror(key: str, answer: str, reason: str) -> None:
    scored = Scorer(load_rule(resolve_rule_path("laser_mirror"))).score(key, f"ANSWER: {answer}")
    assert scored.reason == reason, answer


def test_explain_shows_each_claim_and_why(run_cli) -> None:
    result = run_cli(
        "test-rule", "gear_train", "--key", GEAR, "--explain",
        "C turns faster, but D won't get faster - it gets slower; direction: no change",
    )
    assert result.code == 0, result.err
    assert "subject=C (context)" in result.out
    assert "denied" in result.out and "subject=D (target)" in result.out
    assert "FAIL  wrong speed" in result.out and "verdict: reject: wrong speed" in result.out


def test_cases_agreement_confusion_and_threshold(run_cli, tmp_path: Path) -> None:
    cases = [
        {"id": "a", "key": GEAR, "response": "ANSWER: faster; direction unchanged", "accept": True},
        {"id": "b", "key": GEAR, "response": "ANSWER: slower; direction unchanged", "accept": False,
         "reason": "wrong speed"},
        # mislabelled on purpose: the rule accepts it
        {"id": "c", "key": GEAR, "response": "ANSWER: faster; same direction", "accept": False},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    result = run_cli("test-rule", "gear_train", "--cases", str(path))
    assert result.code == 0, result.err
    assert "accept agreement: 2/3 = 66.67%" in result.out
    assert "disagreements (1):" in result.out and "  c key=" in result.out
    assert "claim speed" in result.out  # the claims the rule read
    assert run_cli("test-rule", "gear_train", "--cases", str(path), "--min-agreement", "66").code == 0
    assert run_cli("test-rule", "gear_train", "--cases", str(path), "--min-agreement", "67").code == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"key": GEAR, "response": "x"}) + "\n")
    result = run_cli("test-rule", "gear_train", "--cases", str(bad))
    assert result.code == 2 and "bad.jsonl:1" in result.err and "accept" in result.err


def test_a_misspelled_field_is_a_load_error_with_a_suggestion(tmp_path: Path) -> None:
    source = resolve_rule_path("gear_train")
    text = Path(source).read_text()
    folder = tmp_path / "r"
    folder.mkdir()
    for name in ("gear_train_key.lark", "gear_train_answer.lark"):
        (folder / name).write_text((Path(source).parent.parent / "grammars" / name).read_text()
                                   if (Path(source).parent.parent / "grammars" / name).exists()
                                   else "")
    broken = text.replace("'increase' if self.up != null", "'increase' if self.upp != null", 1)
    (folder / "gear_train.toml").write_text(broken)
    if not (folder / "gear_train_answer.lark").read_text():
        pytest.skip("grammars not beside the rules in this install")
    with pytest.raises(RuleError, match=r"gear_train\.toml:\d+:\d+: .*'upp'.*did you mean 'up'"):
        load_rule(folder / "gear_train.toml")


def _rule_copy(tmp_path: Path, name: str, edit: tuple[str, str]) -> Path:
    """The bundled rule ``name`` with one edit, beside a copy of every bundled grammar."""
    source = Path(resolve_rule_path(name))
    grammars = source.parent.parent / "grammars"
    if not grammars.is_dir():
        pytest.skip("grammars not beside the rules in this install")
    folder = tmp_path / "r"
    folder.mkdir()
    for grammar in grammars.glob("*.lark"):
        (folder / grammar.name).write_text(grammar.read_text(encoding="utf-8"), encoding="utf-8")
    text = source.read_text(encoding="utf-8")
    assert edit[0] in text
    (folder / source.name).write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    return folder / source.name


def test_within_names_a_grammar_rule_or_is_a_load_error(tmp_path: Path) -> None:
    path = _rule_copy(tmp_path, "physical_stability", ('within = "opening"', 'within = "openin"'))
    with pytest.raises(RuleError, match=r"physical_stability\.toml:\d+:\d+: .*'openin'.*did you mean 'opening'"):
        load_rule(path)


def test_within_reads_claims_only_inside_its_nodes() -> None:
    """``within``: the claims, hedges and alternatives outside the named nodes are not read (the
    seed's physical_stability rule reads the status from the opening only)."""
    from keyaudit.engine.rule_language.reading.ast import Leaf, Node
    from keyaudit.engine.rule_language.reading.claims import ClaimSpec, read_claims

    text = "stable or unstable probably"
    status = Node("status", [Leaf("STATUS", "stable", 0, 6)], text, 0, 6)
    other = Node("status", [Leaf("STATUS", "unstable", 10, 18)], text, 10, 18)
    hedge = Leaf("HEDGE", "probably", 19, 27)
    opening = Node("opening", [status], text, 0, 6)
    answer = Node("start", [opening, Leaf("ALT", "or", 7, 9), other, hedge], text, 0, 27)
    values = {status: "stable", other: "unstable"}
    for node in values:
        node._memo["value"] = values[node]  # the rule's `value` attribute, as the hook sets it
    everything = read_claims(answer, ClaimSpec({"status": ("stable", "unstable")}), None)
    assert everything.kinds["status"].values == ["stable", "unstable"]
    assert everything.kinds["status"].hedged
    inside = read_claims(answer, ClaimSpec({"status": ("stable", "unstable")}, within="opening"), None)
    assert inside.kinds["status"].values == ["stable"] and not inside.kinds["status"].hedged
