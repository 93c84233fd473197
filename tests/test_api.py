"""The Python API (issue 36, point 1): docs/api.md's examples run, outputs checked; a verdict is
``keyaudit score``'s for the same pair; a rule is frozen by its version; the card; image clusters;
hostile answers and rules are bounded as in ``check``; ``import keyaudit`` loads no framework."""

from __future__ import annotations

import doctest
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import status_rule

import keyaudit
from keyaudit.engine.load.locate import bundled_grammars_dir, bundled_rules_dir, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule as load_rule_file
from keyaudit.engine.rule_language.scoring import scorer as scoring
from keyaudit.engine.rule_language.scoring.answer_limits import MAX_ANSWER_CHARS
from keyaudit.engine.rule_language.scoring.scorer import Scorer
from keyaudit.engine.stats.analytic_se import clustered_mean_se

ROOT = Path(__file__).resolve().parent.parent
BLIND = ROOT / "tests" / "data" / "phrasings" / "physical_stability_blind8.jsonl"
KEY = (
    "unstable; after removing block C, the cumulative center of mass at the joint between block B"
    " and block A lies outside its supporting base"
)
#: ``(a|aa)+b`` backtracks exponentially on a run of a's with no b.
BACKTRACKING = (
    "start: _item*\n_item: status | bad | WORD\nstatus: STATUS\nbad: BAD\n"
    "STATUS.3: /stable|unstable/\nBAD.2: /(a|aa)+b/\nWORD: /\\S+/\n%ignore /\\s+/\n"
)
KEY_GRAMMAR = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"


def backtracking_rule(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    (folder / "a.lark").write_text(BACKTRACKING, encoding="utf-8")
    (folder / "rule.toml").write_text(status_rule(), encoding="utf-8")
    return folder / "rule.toml"


def test_the_examples_of_docs_api_run_with_their_outputs() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 6
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "docs/api.md", "docs/api.md", 0)
    assert len(test.examples) >= 20
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    output: list[str] = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)


def test_every_public_name_is_exported_and_typed() -> None:
    for name in keyaudit.__all__:
        assert getattr(keyaudit, name) is not None, name
    assert keyaudit.load_rule.__annotations__["return"] == "ScoringRule"
    with pytest.raises(AttributeError):
        keyaudit.no_such_name  # noqa: B018


def test_a_verdict_is_keyaudit_scores_for_the_same_pair(run_cli, tmp_path: Path) -> None:
    """172 labelled pairs of a blind set, plus edge cases: the API's record equals the line
    ``keyaudit score`` prints, and every field equals the engine scorer's verdict."""
    cases = [json.loads(line) for line in BLIND.read_text(encoding="utf-8").splitlines()]
    cases += [
        {"id": "none", "key": KEY, "response": "no answer line"},
        {"id": "nokey", "key": "not a key at all", "response": "ANSWER: stable"},
        {"id": "two", "key": KEY, "response": "ANSWER: stable\nthinking again\nANSWER: unstable, B slides off A"},
        {"id": "nul", "key": KEY, "response": "ANSWER: unstable\x00 B\x1b[31m over A\u2028"},
    ]
    file = tmp_path / "cases.jsonl"
    file.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    result = run_cli("score", "physical_stability", "--cases", str(file))
    assert result.code == 0, result.err
    printed = [json.loads(line) for line in result.out.splitlines()]
    rule = keyaudit.load_rule("physical_stability")
    engine = Scorer(load_rule_file(resolve_rule_path("physical_stability")))
    assert len(printed) == len(cases)
    for case, line in zip(cases, printed, strict=True):
        verdict = rule.score(case["key"], case["response"])
        assert {"id": case["id"], **verdict.record()} == line, case["id"]
        own = engine.score(case["key"], case["response"])
        assert (verdict.accept, verdict.reason, verdict.values, verdict.uncertain) == (
            own.accept, own.reason, own.values, own.uncertain
        )
        assert (verdict.answer, verdict.detail) == (own.answer_text, own.detail)
        assert verdict.rule_version == rule.version
    assert sum(line["accept"] for line in printed) > 50  # the set is not all rejections


def test_score_many_gives_the_verdicts_of_score_in_order() -> None:
    rule = keyaudit.load_rule("physical_stability")
    cases = [json.loads(line) for line in BLIND.read_text(encoding="utf-8").splitlines()][:60]
    pairs = [(c["key"], c["response"]) for c in cases] * 2  # repeated pairs: scored once each
    many = rule.score_many(pairs)
    assert many == [rule.score(k, r) for k, r in pairs]
    assert rule.score_many([]) == []


def test_wrong_arguments_are_type_errors_naming_them() -> None:
    rule = keyaudit.load_rule("physical_stability")
    with pytest.raises(TypeError, match="key must be a string"):
        rule.score(None, "ANSWER: stable")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pair 1: expected a"):
        rule.score_many([(KEY, "x"), (KEY,)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="jobs"):
        rule.score_many([(KEY, "x")], jobs=0)
    with pytest.raises(TypeError, match="rule must be"):
        keyaudit.load_rule(3)  # type: ignore[arg-type]


def test_a_rule_is_frozen_by_its_version(tmp_path: Path) -> None:
    """The version adopted loads; the same rule with one changed byte in a grammar is refused,
    naming the rule file and both versions, in one line."""
    folder = tmp_path / "ps"
    shutil.copytree(bundled_rules_dir(), folder)
    for grammar in bundled_grammars_dir().glob("*.lark"):  # the rule's folder is searched first
        shutil.copy(grammar, folder)
    rule_path = folder / "physical_stability.toml"
    adopted = keyaudit.load_rule(rule_path)
    assert adopted.version == keyaudit.load_rule("physical_stability").version
    assert keyaudit.load_rule(rule_path, version=adopted.version).version == adopted.version
    grammar = load_rule_file(rule_path).answer_grammar.path
    assert grammar.parent == folder  # the copy is changed, never the bundled grammar
    grammar.write_text(grammar.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    changed = keyaudit.load_rule(rule_path)
    assert changed.version != adopted.version
    with pytest.raises(keyaudit.RuleError) as refused:
        keyaudit.load_rule(rule_path, version=adopted.version)
    message = str(refused.value)
    assert "\n" not in message
    assert str(rule_path) in message and changed.version in message and adopted.version in message
    with pytest.raises(keyaudit.RuleError, match="not the adopted version 'x\\\\n"):
        keyaudit.load_rule(rule_path, version="'x\n\x1b[2J")  # shown escaped, never raw


def test_a_rule_that_does_not_load_is_a_one_line_keyaudit_error(tmp_path: Path) -> None:
    with pytest.raises(keyaudit.UsageError, match="not a bundled rule name"):
        keyaudit.load_rule("no_such_rule")
    bad = tmp_path / "bad.toml"
    bad.write_text("[rule]\nname = 3\n", encoding="utf-8")
    with pytest.raises(keyaudit.KeyauditError) as error:
        keyaudit.load_rule(bad)
    assert "\n" not in str(error.value) and str(bad) in str(error.value)


def test_the_card_is_the_rules_card_and_none_without_one(tmp_path: Path) -> None:
    card = keyaudit.load_rule("physical_stability").card()
    assert card.state in ("current", "history", "changed")
    # the headline: the lowest independent set's figure, never pooled (issue 39)
    independent = [s for s in card.sets if s.written_by == "independent"]
    lowest = min(independent, key=lambda s: s.agreement)
    assert card.independent and (card.cases, card.agree) == (lowest.cases, lowest.agree)
    named = lowest.name if lowest.rows == "all" else f"the {lowest.rows} rows of {lowest.name}"
    assert card.headline == named
    assert card.headline in card.figure
    assert card.low is not None and card.high is not None
    assert card.low <= card.agreement <= card.high
    assert card.summary()["figure"] == card.figure and card.summary()["headline"] == card.headline
    lone = keyaudit.load_rule(backtracking_rule(tmp_path / "r")).card()
    assert (lone.state, lone.cases, lone.agreement, lone.sets) == ("none", None, None, ())
    assert lone.figure == "no validation card"


def test_image_of_names_the_image_cluster_within_bounds() -> None:
    assert keyaudit.image_of("gear_train_0042_q4") == "gear_train_0042"
    assert keyaudit.image_of(17) is None
    assert keyaudit.image_of("x" * 5000 + "_0001_q5") is None  # longer than an id may be
    assert keyaudit.image_of("a_1_q1", r"^(?P<domain>\w)_(?P<image>\d)_q(?P<level>\d)$") == "a_1"
    with pytest.raises(keyaudit.UsageError, match="lacks the named group"):
        keyaudit.image_of("a", r"^(?P<domain>.+)$")
    with pytest.raises(keyaudit.UsageError, match="not a valid regex"):
        keyaudit.image_of("a", "(")
    # a pattern that backtracks catastrophically is stopped at the id's time limit: no image
    slow = r"^(?P<domain>(a|aa)+)_(?P<image>\d+)_q(?P<level>\d+)b$"
    assert keyaudit.image_of("a" * 60 + "_1_q1", slow) is None


def test_a_hostile_answer_is_bounded_as_in_check() -> None:
    rule = keyaudit.load_rule("physical_stability")
    huge = rule.score(KEY, "ANSWER: " + " " * 200_000 + "unstable " * 200_000)
    assert huge.answer is not None and len(huge.answer) <= MAX_ANSWER_CHARS
    nested = rule.score(KEY, "ANSWER: " + "(" * 50_000 + "unstable")
    assert nested.accept is False and nested.reason


def test_a_hostile_rule_gives_rule_error_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scoring, "ANSWER_SECONDS", 0.5)
    rule = keyaudit.load_rule(backtracking_rule(tmp_path / "r"))
    assert rule.score("stable", "ANSWER: stable ab").accept  # the rule itself works
    verdict = rule.score("stable", "ANSWER: stable " + "a" * 60)  # unbounded: hours
    assert verdict.reason == "rule error"
    assert "took longer than the limit of 0.5 s" in verdict.detail


def test_importing_keyaudit_imports_no_framework() -> None:
    code = (
        "import sys, keyaudit\n"
        "rule = keyaudit.load_rule('physical_stability')\n"
        "rule.score('stable; x', 'ANSWER: stable'); rule.card()\n"
        "import keyaudit.integrations.lm_eval\n"
        "print(sorted(m for m in ('inspect_ai', 'lm_eval', 'datasets', 'numba') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_clustered_mean_se_is_the_cluster_robust_standard_error() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    # every value its own cluster: the usual standard error, std(ddof=1) / sqrt(n)
    import statistics

    plain = statistics.stdev(values) / len(values) ** 0.5
    assert clustered_mean_se(values, list(range(6))) == pytest.approx(plain, rel=1e-12)
    # by hand: clusters {1,0}, {1,1}, {0,1}; mean 2/3; sums -1/3, 2/3, -1/3
    expected = ((1 / 9 + 4 / 9 + 1 / 9) * 3 / 2) ** 0.5 / 6
    assert clustered_mean_se(values, ["a", "a", "b", "b", "c", "c"]) == pytest.approx(expected)
    assert clustered_mean_se(values, ["a"] * 6) == 0.0
    assert clustered_mean_se([], []) != clustered_mean_se([], [])  # NaN


def test_the_inspect_scorer_without_inspect_ai_says_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['inspect_ai'] = None  # as if it were not installed\n"
        "try:\n"
        "    import keyaudit.integrations.inspect_ai\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "keyaudit's inspect_ai scorer needs inspect_ai: pip install 'keyaudit[inspect]'"
