"""``[keys_check] accepts`` (issue 24, item 2): a rule declares which other keys are right answers
to a key, and the keys check tests exactly that — both ways."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from keyaudit.engine.errors import RuleError
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.authoring.rulecheck import keys_check
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

KEYS = ["decrease; direction unchanged", "decrease; direction reversed", "increase; direction unchanged"]


def _gear_with(tmp_path: Path, table: str) -> Path:
    folder = tmp_path / "rules"
    shutil.copytree(resolve_rule_path("gear_train").parent, folder)
    for grammar in (resolve_rule_path("gear_train").parent.parent / "grammars").glob("*.lark"):
        shutil.copy(grammar, folder / grammar.name)
    path = folder / "gear_train.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[output]", table + "\n[output]", 1) if "[output]" in text
                    else text.replace("[certainty]", table + "\n[certainty]", 1), encoding="utf-8")
    return path


def test_without_the_table_every_other_key_must_be_rejected() -> None:
    result = keys_check(Scorer(load_rule(resolve_rule_path("gear_train"))), KEYS)
    assert result.passed and result.pairs_checked == 6


def test_a_declared_right_answer_that_the_rule_rejects_fails_the_check(tmp_path: Path) -> None:
    """Declared: the same speed is a right answer whatever the direction. The rule rejects it
    (wrong direction), so both such pairs fail, each naming the reason the rule gave."""
    rule = load_rule(_gear_with(tmp_path, '[keys_check]\naccepts = "other.speed == target.speed"\n'))
    result = keys_check(Scorer(rule), KEYS)
    failing = {(f.key, f.answer, f.reason) for f in result.failures}
    assert failing == {
        ("decrease; direction unchanged", "decrease; direction reversed", "wrong direction"),
        ("decrease; direction reversed", "decrease; direction unchanged", "wrong direction"),
    }
    assert all("[keys_check] accepts" in f.problem for f in result.failures)


def test_a_declaration_that_accepts_nothing_is_the_default(tmp_path: Path) -> None:
    rule = load_rule(_gear_with(tmp_path, '[keys_check]\naccepts = "false"\n'))
    assert keys_check(Scorer(rule), KEYS).passed


def test_a_misspelled_field_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="spede"):
        load_rule(_gear_with(tmp_path, '[keys_check]\naccepts = "other.spede == target.speed"\n'))
