"""Hidden reductions (issue 22, item 4): a shift/reduce resolution that hides part of a grammar
rule fails the rule's load with the grammar's file:line, unless the rule file reviews it with a
reason; an optional suffix or a repetition that goes on is no note; the analysis is the same in
every process and survives the parser cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import assert_one_line_error

from keyaudit.engine.errors import RuleError
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.reading import parser_cache
from keyaudit.engine.rule_language.reading.grammar import compile_grammar
from keyaudit.engine.rule_language.rules.rule import load_rule

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

REPETITION = """start: item+
item: X Y* | Y
X: "x"
Y: "y"
%ignore " "
"""

OPTICAL = resolve_rule_path("optical_illusion").read_text(encoding="utf-8")
REVIEW_AT = OPTICAL.index("\n# Shift/reduce resolutions")
UNREVIEWED = OPTICAL[:REVIEW_AT] + "\n"


def grammar(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "g.lark"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_hidden_reduction_is_noted_at_its_rule(tmp_path: Path) -> None:
    path = grammar(tmp_path, HIDDEN)
    (note,) = compile_grammar(path).hidden_reductions
    assert (note.rule, note.terminals, note.line) == ("a", ("Y",), 2)
    assert str(note).startswith(f"{path}:2: shift/reduce conflict in rule a: before Y")


@pytest.mark.parametrize("text", [SUFFIX, REPETITION], ids=["optional suffix", "repetition"])
def test_a_longer_reading_of_the_same_rule_is_no_note(tmp_path: Path, text: str) -> None:
    assert compile_grammar(grammar(tmp_path, text)).hidden_reductions == ()


def test_the_notes_come_back_from_the_parser_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    path = grammar(tmp_path, HIDDEN)
    built = compile_grammar(path).hidden_reductions

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("built again: the cache entry was not used")

    monkeypatch.setattr(parser_cache, "Lark", no_build)
    assert compile_grammar(path).hidden_reductions == built and built


def test_the_same_notes_in_every_process(tmp_path: Path) -> None:
    """Lark meets its LALR states in an order that follows string hashing; the notes must not
    (they once did: a capped log kept whichever conflicts came first)."""
    script = (
        "from pathlib import Path\n"
        "from keyaudit.engine.rule_language.reading.grammar import compile_grammar, bundled_grammar_dir\n"
        "g = compile_grammar(bundled_grammar_dir() / 'physical_stability_answer.lark')\n"
        "print([(n.rule, n.terminals) for n in g.hidden_reductions])\n"
    )
    seen = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "KEYAUDIT_CACHE_DIR": str(tmp_path / f"cache{seed}")}
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        seen.add(run.stdout)
    assert len(seen) == 1, seen


def test_an_unreviewed_hidden_reduction_fails_the_load_at_the_grammar_line(tmp_path: Path, run_cli) -> None:
    path = tmp_path / "optical.toml"
    path.write_text(UNREVIEWED, encoding="utf-8")
    with pytest.raises(RuleError, match=r"optical_illusion_answer\.lark:21: shift/reduce conflict in rule _item"):
        load_rule(path)
    result = run_cli("test-rule", str(path))
    assert_one_line_error(result.err, result.code, "optical_illusion_answer.lark:21:", "[reviewed_conflicts]")


def test_a_reviewed_one_loads_and_test_rule_shows_the_reason(run_cli) -> None:
    rule = load_rule(resolve_rule_path("optical_illusion"))
    assert set(rule.reviewed_conflicts) == {"_item"}
    result = run_cli("test-rule", "optical_illusion")
    assert result.code == 0
    assert "shift/reduce conflict in rule _item" in result.out and "reviewed: an element followed by 'or'" in result.out
    result = run_cli("test-rule", "gear_train")
    assert "Grammar notes: no rule reduction hidden" in result.out


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('_item = "why"\nmissing_rule = "why"', "names 'missing_rule', which has no hidden reduction"),
        ('_item = ""', "_item must be a non-empty string"),
        ("_item = 3", "_item must be a non-empty string"),
    ],
)
def test_a_stale_or_malformed_review_is_refused_at_its_line(tmp_path: Path, entry: str, message: str) -> None:
    text = UNREVIEWED + "[reviewed_conflicts]\n" + entry + "\n"
    path = tmp_path / "optical.toml"
    path.write_text(text, encoding="utf-8")
    line = text.count("\n")
    with pytest.raises(RuleError) as raised:
        load_rule(path)
    assert f"{path}:{line}:" in str(raised.value) and message in str(raised.value)


def test_every_bundled_review_names_a_live_conflict() -> None:
    """Each bundled rule loads: every hidden reduction is reviewed and no review is stale."""
    from keyaudit.engine.load.locate import bundled_rule_names

    for name in bundled_rule_names():
        load_rule(resolve_rule_path(name))
