"""Authoring says what is wrong (issue 34, item 6), on the made-up one-level benchmark's cell
``circuit_bulbs`` L1 (keys ``bulb {LETTER} goes out``; tests/one_level.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from keyaudit.engine.errors import RuleError
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

RULE_DIR = Path(__file__).parent / "data" / "one_level"

#: Subjects and a claim that is not a value: "bulb C goes out" says C by its subject.
SUBJECT_GRAMMAR = r"""
start: _item*
_item: bulb_name | out | NEG | HEDGE | CORRECTION | ALT | BOUNDARY | _filler
bulb_name: BULB_NAME
out: GOES_OUT
_filler: WORD | NUMBER | OTHER
%part L: /(?-i:[A-D])/
%part L_END: /(?![A-Za-z0-9'’])/
%phrase BULB_NAME.9: [bulb] {L} {L_END}
%phrase GOES_OUT.8: (goes | will go | would go | go | does go) out
NUMBER.2: /[-+]?\d+(?:[.,]\d+)*/
WORD.1: /[A-Za-z][A-Za-z0-9'’-]*/
OTHER.0: /[^\sA-Za-z0-9]/
%import .claims (NEG, HEDGE, CORRECTION, ALT, BOUNDARY)
%import .common (WS)
%ignore WS
"""

SUBJECT_RULE = """
[rule]
name = "circuit_bulbs_subjects"
cells = [{ domain = "circuit_bulbs", level = 1 }]
key_grammar = "circuit_bulbs_key.lark"
answer_grammar = "subjects_answer.lark"

[key]
bulb = "key.letter"

[claims]
subject = "bulb_name"
target = "key.letter"
kinds = { out = ["A", "B", "C", "D"] }
SWITCH

[[attribute]]
node = "bulb_name"
name = "name"
expr = "last(strip(text(self)))"

[[component]]
name = "out"
kind = "letter"
key = "target.bulb"
"""


def _rule(tmp_path: Path, text: str, grammar: str = SUBJECT_GRAMMAR) -> Path:
    folder = tmp_path / "rule"
    folder.mkdir(exist_ok=True)
    shutil.copy(RULE_DIR / "circuit_bulbs_key.lark", folder)
    (folder / "subjects_answer.lark").write_text(grammar, encoding="utf-8")
    (folder / "rule.toml").write_text(text, encoding="utf-8")
    return folder / "rule.toml"


def test_a_claim_kind_takes_its_value_from_its_subject_by_a_declared_switch(tmp_path: Path) -> None:
    """"bulb C goes out" is a claim whose value is its subject. Without the switch every claim
    about a bulb other than the key's is context, so a wrong bulb reads as no answer ('out
    missing') and the right one only because it is the target; with value_from_subject the claim
    says C, about the target, and a wrong bulb is 'wrong out'."""
    without = Scorer(load_rule(_rule(tmp_path, SUBJECT_RULE.replace("SWITCH", ""))))
    assert without.score_answer_text("bulb C goes out", "Bulb A goes out.").reason == "out missing"
    switched = Scorer(load_rule(_rule(tmp_path, SUBJECT_RULE.replace("SWITCH", 'value_from_subject = ["out"]'))))
    verdict = switched.score_answer_text("bulb C goes out", "Bulb A goes out.")
    assert (verdict.accept, verdict.reason, verdict.values["out"]) == (False, "wrong out", "A")
    right = switched.score_answer_text("bulb C goes out", "Bulb C goes out, the others stay lit.")
    assert right.accept and right.values["out"] == "C"
    both = switched.score_answer_text("bulb C goes out", "Bulb C goes out or bulb A goes out.")
    assert both.reason == "out conflict"
    denied = switched.score_answer_text("bulb C goes out", "Bulb A does not go out; bulb C goes out.")
    assert denied.accept, denied


def test_value_from_subject_names_claim_kinds_and_needs_a_subject(tmp_path: Path) -> None:
    bad = SUBJECT_RULE.replace("SWITCH", 'value_from_subject = ["bulb"]')
    with pytest.raises(RuleError, match=r"rule\.toml:\d+:\d+: value_from_subject: 'bulb' is not a claim kind"):
        load_rule(_rule(tmp_path, bad))
    alone = SUBJECT_RULE.replace("SWITCH", 'value_from_subject = ["out"]').replace('subject = "bulb_name"\n', "")
    with pytest.raises(RuleError, match="value_from_subject needs \\[claims\\] subject"):
        load_rule(_rule(tmp_path, alone))


def test_attributes_read_target_per_key(tmp_path: Path) -> None:
    """An attribute may read ``target`` (it could not: 'unknown name target'); a parsed answer's
    attributes then belong to one key, never reused for another."""
    text = (RULE_DIR / "circuit_bulbs.toml").read_text(encoding="utf-8")
    text = text.replace(
        '[[component]]',
        '[[attribute]]\nnode = "bulb"\nname = "is_key"\nexpr = "upper(self.value) == target.bulb"\n\n'
        '[output]\nnames_key = "any([b.is_key for b in find(answer, \'bulb\')])"\n\n[[component]]',
        1,
    )
    folder = tmp_path / "rule"
    shutil.copytree(RULE_DIR, folder)
    (folder / "circuit_bulbs.toml").write_text(text, encoding="utf-8")
    rule = load_rule(folder / "circuit_bulbs.toml")
    assert rule.attributes_read_target
    scorer = Scorer(rule)
    answer = "Bulb A or bulb C goes out."
    assert scorer.score_answer_text("bulb C goes out", answer).values["names_key"] is True
    assert scorer.score_answer_text("bulb D goes out", answer).values["names_key"] is False
    assert scorer.score_answer_text("bulb A goes out", answer).values["names_key"] is True


def test_the_status_is_the_rules_to_choose_and_the_reports_name_it(one_level, run_cli, tmp_path) -> None:
    """The cell's keys are grouped by ``[key] status`` where the rule defines one, else by its
    first ``[key]`` value, which the reports now name ('600 (by bulb: 150 A, …)'; it was
    printed as a status: '150 A, 150 B')."""
    bench, rule = one_level
    result = run_cli("check", str(rule), "--bench", str(bench), "--resamples", "50",
                     "--markdown", str(tmp_path / "a.md"), "--json", str(tmp_path / "a.json"))
    assert result.code == 0, result.err
    assert "Evaluated items: 600 (by bulb: 150 A, 150 B, 150 C, 150 D) of 600 keys" in result.flat
    assert "keys (by their `bulb`)" in (tmp_path / "a.md").read_text(encoding="utf-8")
    import json

    (cell,) = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))["cells"]
    assert cell["status_field"] == "bulb"
    keys = run_cli("keys", "--bench", str(bench), "--rule", str(rule), "--domain", "circuit_bulbs", "--level", "1")
    assert keys.code == 0, keys.err
    assert "bulb: A 150, B 150, C 150, D 150" in keys.flat


def test_explanations_use_the_components_own_words(tmp_path: Path) -> None:
    """A component named ``out`` explained itself as 'The out is hedged'; the default now says
    its reason and what happened."""
    rule = load_rule(_rule(tmp_path, SUBJECT_RULE.replace("SWITCH", 'value_from_subject = ["out"]')))
    explained = {r.reason: r.explain for r in rule.requirements}
    assert explained["out hedged"] == "out hedged: its value is hedged ('probably', 'I think', a '?')."
    assert explained["out missing"].startswith("out missing: no value of it is read")
    assert explained["wrong out"] == "wrong out: the value read differs from the key's."
    assert not any("The out" in text for text in explained.values())


def test_new_rule_reads_most_stored_answers_of_a_one_template_cell(one_level, run_cli, tmp_path) -> None:
    """``new-rule`` on a cell whose 600 keys all read ``bulb {LETTER} goes out`` builds its
    starter on the claim layer from the key's words: the slot is a claim (a choice of the
    letters the keys use), the fixed words filler. The restating starter read only the answers
    that repeat the whole template (680 of 1,800 here; 0 of 600 in the issue); this one reads a
    letter in every stored answer and gives exactly the hand-written rule's verdicts."""
    from keyaudit.engine.load.benchmark import load_benchmark
    from keyaudit.engine.rule_language.authoring.rulecheck import keys_check

    bench, hand_rule = one_level
    made = run_cli("new-rule", "circuit_bulbs", "--level", "1", "--bench", str(bench), "--out", str(tmp_path / "r"))
    assert made.code == 0, made.err
    tested = run_cli("test-rule", str(tmp_path / "r" / "circuit_bulbs.toml"), "--bench", str(bench))
    assert tested.code == 0 and "rule OK" in tested.out, tested.out[-2000:]
    starter = Scorer(load_rule(tmp_path / "r" / "circuit_bulbs.toml"))
    hand = Scorer(load_rule(hand_rule))
    loaded = load_benchmark(bench)
    assert keys_check(starter, [k.answer for k in loaded.keys.values()]).passed
    verdicts = [
        (starter.score(loaded.keys[r.id].answer, r.text), hand.score(loaded.keys[r.id].answer, r.text))
        for r in loaded.responses
    ]
    assert len(verdicts) == 1800
    missing = sum(mine.reason.endswith("missing") for mine, _ in verdicts)
    assert missing == 0
    assert all(mine.accept == theirs.accept for mine, theirs in verdicts)
    assert sum(mine.accept for mine, _ in verdicts) == 1041
    for text, reason in (
        ("A bulb goes out", "letter missing"),  # the article, not bulb A
        ("Not A but C.", ""),
        ("Probably bulb C.", "letter hedged"),
        ("Bulb C or bulb A goes out.", "letter conflict"),
        ("A/B/C/D: C", ""),
    ):
        assert starter.score_answer_text("bulb C goes out", text).reason == reason, text


def test_the_slot_starter_applies_only_where_a_slot_can_be_told_apart() -> None:
    from keyaudit.engine.rule_language.authoring import slot_starter
    from keyaudit.engine.rule_language.authoring.keystructure import induce_templates

    def fits(keys: list[str]) -> bool:
        return slot_starter.fits(tuple(induce_templates(keys)))

    assert fits(["bulb A goes out", "bulb C goes out"])
    assert fits(["no; new value 65", "no; new value 70"])
    assert fits(["bulb A at 5 volts", "bulb C at 7 volts"])  # one letter, one number
    assert not fits(["joint B-A", "joint C-B"])  # two letters: which is which
    assert not fits(["yes; new value 65", "no; new value 70"])  # two templates: restated
    assert not fits(["circuit B: bulb A goes out", "circuit B: bulb C goes out"])  # two letters


def test_a_whole_response_example_is_one_line_in_test_rule(one_level, run_cli, tmp_path) -> None:
    """A ``response = ...`` example printed its raw line breaks into test-rule's list."""
    bench, _ = one_level
    folder = tmp_path / "rule"
    shutil.copytree(RULE_DIR, folder)
    rule = folder / "circuit_bulbs.toml"
    rule.write_text(
        rule.read_text(encoding="utf-8")
        + '\n[[example]]\nkey = "bulb C goes out"\nresponse = "S is in series with C.\\n\\nANSWER: C"\n',
        encoding="utf-8",
    )
    result = run_cli("test-rule", str(rule), "--bench", str(bench))
    assert result.code == 0, result.err
    (line,) = [row for row in result.out.splitlines() if "S is in series with C." in row]
    assert line.rstrip().endswith(r"S is in series with C.\n\nANSWER: C") and "PASS" in line
