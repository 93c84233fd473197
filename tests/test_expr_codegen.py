"""The generated fast path of rule expressions gives the closures' values, charges at least their
budget, and its source holds nothing of the rule file.

The closure compiler is the reference (every expression test runs through the fast path and
checks its results against the documented semantics); here every expression a bundled rule
evaluates while scoring every labelled answer is run both ways and compared, random expressions
over random values too, and every generated function is tokenized.
"""

from __future__ import annotations

import io
import json
import keyword
import math
import random
import re
import tokenize
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.expressions import codegen as expr_codegen
from keyaudit.engine.rule_language.expressions.codegen import HELPERS, FastEvaluator
from keyaudit.engine.rule_language.expressions.expression import SimpleNode, compile_expression
from keyaudit.engine.rule_language.expressions.limits import MAX_STEPS
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

PHRASINGS = Path(__file__).resolve().parent / "data" / "phrasings"
RULES = sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "rules").glob("*.toml"))


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types all the way down (1, 1.0 and true differ); nodes by identity."""
    if type(a) is not type(b):
        return False
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is float and math.isnan(a):
        return math.isnan(b)
    if type(a) in (str, int, float, bool, type(None)):
        return a == b
    return a is b


class _Recorder:
    """Replaces FastEvaluator.__call__: runs the fast path and the closures on every evaluation
    and records any difference in value or a fast path that charged less."""

    def __init__(self) -> None:
        self.evaluations = 0
        self.fallbacks: Counter[str] = Counter()
        self.differences: list[str] = []
        self.closures_only = 0

    def __call__(self, evaluator: FastEvaluator, env: Any) -> Any:
        self.evaluations += 1
        if not evaluator.build():  # at once, not on the expression's 16th evaluation
            self.closures_only += 1
            return evaluator.reference(env)
        fast_budget = type(evaluator.budget)()
        try:
            fast_value = evaluator.fast(env, fast_budget)
            fast_failed = False
        except Exception as error:  # noqa: BLE001 - the fast path may fail; the closures decide
            self.fallbacks[type(error).__name__] += 1
            fast_failed = True
        value, steps = evaluator.reference_with_steps(env)
        if not fast_failed:
            if not _same(fast_value, value):
                self.differences.append(f"{evaluator.source!r}: fast {fast_value!r}, closures {value!r}")
            elif MAX_STEPS - fast_budget.left < steps:
                self.differences.append(f"{evaluator.source!r}: fast charged {MAX_STEPS - fast_budget.left} < {steps}")
        return value


def _cases(rule: str) -> list[tuple[str, str]]:
    cases = []
    for path in sorted(PHRASINGS.glob("*.jsonl")):
        if re.sub(r"_(blind|dev|holdout)\w*$", "", path.stem) == rule:
            for row in path.read_text(encoding="utf-8").splitlines():
                data = json.loads(row)
                cases.append((data["key"], data["response"]))
    return cases


@pytest.mark.parametrize("name", RULES)
def test_every_expression_of_a_rule_agrees_with_the_closures_on_its_labelled_answers(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = load_rule(resolve_rule_path(name))
    recorder = _Recorder()
    monkeypatch.setattr(FastEvaluator, "__call__", lambda self, env: recorder(self, env))
    scorer = Scorer(rule)
    cases = _cases(name) + [(example.key, example.response) for example in rule.examples]
    assert cases
    for key, response in cases:
        scorer.score(key, response)
    assert recorder.differences == []
    assert recorder.closures_only == 0
    assert recorder.evaluations > 2 * len(cases)
    # The fast path is the path: it gives up (and the closures answer) on a few odd answers only.
    assert sum(recorder.fallbacks.values()) <= recorder.evaluations // 200, recorder.fallbacks


def _expressions_of(name: str) -> list[Any]:
    rule = load_rule(resolve_rule_path(name))
    found = [expr for _, expr in rule.lets]
    found += [check for _, check in rule.uncertain]
    found += [req.check for req in rule.requirements]
    found += list(rule.outputs.values())
    found += [expr for table in rule.attributes.values() for expr in table.values()]
    return found


@pytest.mark.parametrize("name", RULES)
def test_every_expression_of_a_bundled_rule_has_a_fast_path(name: str) -> None:
    expressions = _expressions_of(name)
    assert expressions
    assert all(e._evaluate.build() for e in expressions)


# --------------------------------------------------------------------------- the source is ours

_GENERATED = re.compile(r"_[tv]\d+\Z")
_PYTHON = {"def", "return", "if", "else", "elif", "for", "in", "not", "and", "or", "is", "None",
           "True", "False"}


def _check_tokens(source: str) -> None:
    allowed = set(HELPERS) | expr_codegen.ATTRIBUTES | _PYTHON | {"_fast", "env", "B"}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME:
            assert token.string in allowed or _GENERATED.match(token.string), token.string
            assert not keyword.iskeyword(token.string) or token.string in _PYTHON, token.string
        elif token.type == tokenize.NUMBER:
            assert token.string.isdigit(), token.string
        elif token.type == tokenize.OP:
            assert token.string in set("()[]:.,=<>+-") | {"-=", "==", "!=", "<=", ">=", "<", ">"}, token.string
        else:
            assert token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
                                  tokenize.ENDMARKER), tokenize.tok_name[token.type]


@pytest.mark.parametrize("name", RULES)
def test_generated_sources_hold_only_the_generators_vocabulary(name: str) -> None:
    for expression in _expressions_of(name):
        assert expression._evaluate.build()
        _check_tokens(expression._evaluate.source)


def test_strings_names_and_fields_of_the_rule_never_reach_the_source() -> None:
    hostile = "__import__('os').system('echo pwned')"
    expression = compile_expression(
        f"[x.evil for x in items if x.name == {json.dumps(hostile)}] + [{json.dumps(hostile)}, 1e999]",
        names={"items"},
    )
    assert expression._evaluate.build()
    source = expression._evaluate.source
    _check_tokens(source)
    assert "import" not in source and "evil" not in source and "items" not in source
    node = SimpleNode("item", fields={"name": hostile, "evil": 3})
    assert expression.evaluate({"items": [node]}) == [3, hostile, math.inf]


# --------------------------------------------------------------------------- random expressions

_NAMES = ("a", "b", "s", "xs", "n")


def _random_expression(rng: random.Random, depth: int = 0) -> str:
    leaves = ["a", "b", "s", "xs", "n", "null", "true", "1", "2.5", "-3", "'ab'", "''", "[1, 2]",
              "['x', 'ab']", "n.word", "n.count"]
    if depth > 3 or rng.random() < 0.3:
        return rng.choice(leaves)
    e = lambda: f"({_random_expression(rng, depth + 1)})"  # noqa: E731
    forms = [
        lambda: f"{e()} + {e()}", lambda: f"{e()} - {e()}", lambda: f"{e()} * {e()}",
        lambda: f"{e()} / {e()}", lambda: f"-{e()}", lambda: f"({e()}) == ({e()})",
        lambda: f"({e()}) != null", lambda: f"({e()}) < ({e()})", lambda: f"({e()}) >= 2",
        lambda: f"({e()}) in ({e()})", lambda: f"({e()}) not in ['ab', 'x']",
        lambda: f"not {e()}", lambda: f"({e()}) and ({e()})", lambda: f"({e()}) or ({e()})",
        lambda: f"({e()}) if ({e()}) else ({e()})", lambda: f"({e()})[{rng.choice(['0', '-1', '5', 'a'])}]",
        lambda: f"({e()})[0:2]", lambda: f"({e()})[a:]", lambda: f"len({e()})",
        lambda: f"lower({e()})", lambda: f"strip({e()})", lambda: f"first({e()})",
        lambda: f"text({e()})", lambda: f"start({e()})", lambda: f"unique({e()})",
        lambda: f"[v + 1 for v in {e()}]", lambda: f"[v for v in {e()} if v]",
        lambda: f"[[w for w in xs if w != v] for v in {e()}]", lambda: f"({e()}, {e()})",
        lambda: f"[{e()}, {e()}]", lambda: f"number({e()})", lambda: f"any({e()})",
        lambda: f"flatten([{e()}, xs])", lambda: f"max({e()})", lambda: "find(n, 'item')",
    ]
    return rng.choice(forms)()


def test_random_expressions_give_the_closures_values_and_errors() -> None:
    rng = random.Random(11)
    recorder = _Recorder()
    outcomes = Counter()
    for _ in range(3000):
        source = _random_expression(rng)
        expression = compile_expression(source, names=set(_NAMES))
        env = {
            "a": rng.choice([0, 1, 2, -1, 2.5, None, True]),
            "b": rng.choice([3, "ab", None, [1, "x"], (1, 2)]),
            "s": rng.choice(["ab", "", " X y ", "ſ", None]),
            "xs": rng.choice([[1, 2, 3], ["ab", "x"], [], None, [[1], [2]], ("x", "y")]),
            "n": SimpleNode("item", "word 12", fields={"word": "hello", "count": 3}),
        }
        expression._evaluate.build()
        try:
            expected = expression.evaluate_by_closures(env)
        except Exception as error:  # noqa: BLE001 - an error must be the same error either way
            with pytest.raises(type(error)) as raised:
                expression.evaluate(env)
            assert str(raised.value) == str(error)
            outcomes["error"] += 1
            continue
        assert _same(expression.evaluate(env), expected), source
        if expression._evaluate.build():
            recorder(expression._evaluate, env)
            outcomes["fast"] += 1
    assert recorder.differences == []
    assert outcomes["fast"] > 1000 and outcomes["error"] > 300, outcomes


def test_a_tree_too_deep_for_a_generated_function_runs_on_the_closures() -> None:
    deep = compile_expression("a and (" * 70 + "a" + ")" * 70, names={"a"})
    assert not deep._evaluate.build()
    assert deep.evaluate({"a": 1}) == 1
    loops = compile_expression("[" * 18 + "x" + " for x in xs]" * 18, names={"xs"})
    assert not loops._evaluate.build()
    assert loops.evaluate({"xs": [7]}) == loops.evaluate_by_closures({"xs": [7]})
    shallower = compile_expression("[" * 15 + "x" + " for x in xs]" * 15, names={"xs"})
    assert shallower._evaluate.build()
    assert shallower.evaluate({"xs": [7]}) == shallower.evaluate_by_closures({"xs": [7]})
    huge = compile_expression(" + ".join(f"len([x for x in xs if x == {i}])" for i in range(200)),
                              names={"xs"})
    assert not huge._evaluate.build()
    assert huge.evaluate({"xs": [3, 3]}) == 2


def test_the_fast_function_is_generated_on_the_sixteenth_evaluation() -> None:
    expression = compile_expression("[x + 1 for x in xs]", names={"xs"})
    evaluator = expression._evaluate
    for count in range(1, 20):
        assert expression.evaluate({"xs": [count]}) == [count + 1]
        assert (evaluator.fast is not None) == (count >= expr_codegen.WARM_CALLS), count


def test_an_evaluation_over_its_budget_fails_as_the_closures_fail() -> None:
    expression = compile_expression("[[a + b for a in xs] for b in xs]", names={"xs"})
    assert expression._evaluate.build()
    big = list(range(2000))
    with pytest.raises(Exception) as fast:
        expression.evaluate({"xs": big})
    with pytest.raises(Exception) as closures:
        expression.evaluate_by_closures({"xs": big})
    assert str(fast.value) == str(closures.value)
    assert "steps" in str(fast.value)
