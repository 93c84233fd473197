"""A malformed rule fails at load time with one line naming file, line and column (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyaudit.engine.errors import RuleError
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule

GOOD = resolve_rule_path("physical_stability").read_text(encoding="utf-8")


def write(tmp_path: Path, text: str, name: str = "rule.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_the_bundled_rule_loads() -> None:
    rule = load_rule(resolve_rule_path("physical_stability"))
    assert rule.name == "physical_stability" and str(rule.cells[0]) == "physical_stability L5"
    assert "joint reversed" in rule.reasons and "answer missing" in rule.reasons


def test_toml_syntax_error(tmp_path: Path, run_cli) -> None:
    text = GOOD.replace('name = "physical_stability"', 'name = "physical_stability', 1)
    path = write(tmp_path, text)
    result = run_cli("score", str(path), "--cases", "-", stdin="")
    assert (
        result.code == 2
        and f"{path}:{line_of(text, 'name = ')}:" in result.err
        and "TOML error" in result.err
    )


def test_unknown_field_with_suggestion(tmp_path: Path) -> None:
    text = GOOD.replace('reason = "joints conflict"', 'reasn = "joints conflict"', 1)
    with pytest.raises(RuleError) as raised:
        load_rule(write(tmp_path, text))
    message = str(raised.value)
    assert f":{line_of(text, 'reasn =')}:" in message and "did you mean 'reason'" in message


def test_unknown_table(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match=r"unknown table \[requires\]"):
        load_rule(write(tmp_path, GOOD.replace("[[require]]", "[[requires]]", 1)))


def test_bad_expression_points_at_the_column(tmp_path: Path) -> None:
    text = GOOD.replace('check = "len(joints) <= 1"', 'check = "len(joints) <= = 1"', 1)
    with pytest.raises(RuleError) as raised:
        load_rule(write(tmp_path, text))
    line = line_of(text, 'check = "len(joints) <= = 1"')
    column = text.splitlines()[line - 1].index('"') + 1 + len("len(joints) <= =")
    assert f"rule.toml:{line}:{column}:" in str(raised.value)


def test_unknown_name_in_expression(tmp_path: Path) -> None:
    text = GOOD.replace('check = "len(joints) <= 1"', 'check = "len(jionts) <= 1"', 1)
    with pytest.raises(RuleError, match="did you mean 'joints'"):
        load_rule(write(tmp_path, text))


def test_grammar_outside_allowed_folders(tmp_path: Path) -> None:
    text = GOOD.replace(
        'answer_grammar = "physical_stability_answer.lark"',
        'answer_grammar = "../../etc/x.lark"',
        1,
    )
    with pytest.raises(RuleError, match="outside the allowed grammar folders"):
        load_rule(write(tmp_path, text))


def test_grammar_error_names_the_grammar(tmp_path: Path) -> None:
    (tmp_path / "broken.lark").write_text("start: undefined_rule\n", encoding="utf-8")
    text = GOOD.replace(
        'key_grammar = "physical_stability_key.lark"', 'key_grammar = "broken.lark"', 1
    )
    with pytest.raises(RuleError, match="broken.lark"):
        load_rule(write(tmp_path, text))


def test_rule_grammar_may_import_the_common_grammar(tmp_path: Path) -> None:
    (tmp_path / "mine.lark").write_text(
        "?start: status\nstatus: STATUS\n%import .common (STATUS, WS)\n%ignore WS\n",
        encoding="utf-8",
    )
    text = GOOD.replace(
        'key_grammar = "physical_stability_key.lark"', 'key_grammar = "mine.lark"', 1
    ).replace("(key.upper, key.lower) if key.status", "null if key.status", 1)
    rule = load_rule(write(tmp_path, text[: text.index("[[example]]")]))
    assert rule.key_grammar.parse("stable").kind == "status"


def test_wrong_types_and_missing_fields(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="cells must be a list like"):
        load_rule(
            write(
                tmp_path,
                GOOD.replace(
                    'cells = [{ domain = "physical_stability", level = 5 }]', 'cells = ["x"]'
                ),
            )
        )
    with pytest.raises(RuleError, match="missing the required field 'check'"):
        load_rule(write(tmp_path, GOOD.replace('check = "len(joints) <= 1"', "", 1)))
    with pytest.raises(RuleError, match="accept must be a boolean"):
        load_rule(write(tmp_path, GOOD.replace("[[example]]\n", '[[example]]\naccept = "yes"\n', 1)))


def test_rule_files_cannot_run_code(tmp_path: Path) -> None:
    text = GOOD.replace('check = "len(joints) <= 1"', 'check = "joints.__class__ != null"', 1)
    with pytest.raises(RuleError):
        load_rule(write(tmp_path, text))
    text = GOOD.replace('check = "len(joints) <= 1"', "check = \"__import__('os') != null\"", 1)
    with pytest.raises(RuleError):
        load_rule(write(tmp_path, text))


def test_attribute_reading_itself_is_refused_at_load(tmp_path: Path) -> None:
    text = GOOD.replace(
        "expr = \"len(find(self, 'NOT_SUPPORT')) > 0\"", 'expr = "self.inverted"', 1
    )
    assert text != GOOD
    with pytest.raises(RuleError, match="reads itself"):
        load_rule(write(tmp_path, text))


def test_attribute_cycle_gives_a_rule_error_verdict_not_a_crash(tmp_path: Path) -> None:
    from keyaudit.engine.rule_language.scoring.scorer import Scorer

    text = GOOD.replace("expr = \"len(find(self, 'NOT_SUPPORT')) > 0\"", 'expr = "self.failing"', 1)
    rule = load_rule(write(tmp_path, text[: text.index("[[example]]")]))
    key = "unstable; after removing block E, the cumulative center of mass at the joint between block D and block C lies outside its supporting base"
    verdict = Scorer(rule).score(key, "ANSWER: unstable; D's COM is beyond C")
    assert (verdict.accept, verdict.reason) == (False, "rule error")
    assert "depends on itself" in verdict.detail


def test_example_verdict_follows_from_its_reason(tmp_path: Path) -> None:
    """An example with a reason expects that rejection, one without expects acceptance."""
    rule = load_rule(resolve_rule_path("physical_stability"))
    rejected = [e for e in rule.examples if e.reason]
    accepted = [e for e in rule.examples if not e.reason]
    assert rejected and accepted
    assert all(not e.accept for e in rejected) and all(e.accept for e in accepted)


def test_accepted_example_with_a_reason_is_a_load_error(tmp_path: Path) -> None:
    example = 'answer = "unstable"\nreason = "joint missing"'
    text = GOOD.replace(example, 'answer = "unstable"\naccept = true\nreason = "joint missing"', 1)
    with pytest.raises(RuleError) as raised:
        load_rule(write(tmp_path, text))
    message = str(raised.value)
    assert "an accepted [[example]] has no reason" in message
    line = line_of(text, 'accept = true\nreason = "joint missing"') + 1
    assert f":{line}:" in message
