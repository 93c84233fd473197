"""Grammar notes (issue 22, item 4): a shift/reduce resolution that hides part of a rule is
reported to the author with file:line; an optional suffix of the same rule is not."""

from __future__ import annotations

from pathlib import Path

from keyaudit.engine.rule_language.authoring.grammar_notes import shift_reduce_notes

HIDDEN = """start: a Y | c
a: X
c: X Y
X: "x"
Y: "y"
%ignore " "
"""

SUFFIX = """start: value+
value: NUM UNIT?
NUM: /[0-9]+/
UNIT: "psi"
%ignore " "
"""


def test_a_hidden_reduction_is_noted_at_its_rule(tmp_path: Path) -> None:
    path = tmp_path / "g.lark"
    path.write_text(HIDDEN, encoding="utf-8")
    notes, total = shift_reduce_notes(path)
    assert total == 1
    (note,) = notes
    assert (note.rule, note.terminals, note.line) == ("a", ("Y",), 2)
    assert str(note).startswith(f"{path}:2: shift/reduce conflict in rule a: before Y")


def test_an_optional_suffix_is_no_note(tmp_path: Path) -> None:
    path = tmp_path / "g.lark"
    path.write_text(SUFFIX, encoding="utf-8")
    assert shift_reduce_notes(path) == ([], 0)


def test_a_grammar_that_does_not_build_gives_no_notes(tmp_path: Path) -> None:
    path = tmp_path / "g.lark"
    path.write_text("start: undefined_rule\n", encoding="utf-8")
    assert shift_reduce_notes(path) == ([], 0)


def test_test_rule_prints_the_notes(run_cli) -> None:
    result = run_cli("test-rule", "gear_train")
    assert "Grammar notes: no rule reduction hidden" in result.out
    result = run_cli("test-rule", "laser_mirror")
    assert "shift/reduce conflict in rule role" in result.out and "laser_mirror_answer.lark:" in result.out
