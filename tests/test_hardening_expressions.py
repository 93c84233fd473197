"""Issue 11, points 4 and 10: bounded CPU and memory inside the expression language, and outputs
that are always valid JSON.

Every built-in and operator is charged by the size of what it touches, values are bounded in
size, depth and integer width, and each limit is a ``rule error`` verdict naming it, never a
crash or exit 3. Peak memory is measured with ``tracemalloc`` in-process and with the child's
peak RSS through the console entry point.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path

import pytest
from hostile import assert_one_line_error, run_keyaudit

from keyaudit.engine.errors import ExpressionError
from keyaudit.engine.rule_language.expressions.expression import compile_expression
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

MB = 1024 * 1024
XS = list(range(50_000))


def _nested(depth: int) -> list:
    value: list = [1]
    for _ in range(depth):
        value = [value]
    return value


NESTED = _nested(40)

LIMIT_CASES = [
    # (expression, environment, the limit the error names)
    ("99999999 * 99999999 * 99999999", {}, "64 bits"),  # repeated squaring
    ("-9223372036854775807 - 2", {}, "64 bits"),
    ("sum([9223372036854775807, 1])", {}, "64 bits"),
    ("round(1e300)", {}, "64 bits"),
    ("round(5, -1000000000)", {}, "|n| <= 400"),  # 10**(10**9) would be computed
    ("abs(-9223372036854775807 - 1)", {}, "64 bits"),
    ("succ(9223372036854775807)", {}, "64 bits"),
    ("len(flatten([xs for x in xs]))", {"xs": XS}, "steps"),  # 2.5 x 10^9 elements
    ("len(unique([xs for x in xs]))", {"xs": XS}, "steps"),
    ("[xs for x in xs] == [list(xs) for x in span(1, 20)]", {"xs": XS}, "steps"),
    ("count([xs for x in xs], xs)", {"xs": XS}, "steps"),
    ("xs in [xs for x in xs]", {"xs": XS}, "steps"),
    ("sorted([xs for x in xs])", {"xs": XS}, "steps"),
    ("len([s + s for x in span(1, 100000)])", {"s": "x" * 50_000}, "steps"),
    ("len([[y for y in span(1, 1000)] for x in span(1, 1000)])", {}, "steps"),
    ("span(1, 100001)", {}, "more than 100000 elements"),
    ("s + s + s", {"s": "x" * 50_000}, "characters; the limit is 100000"),
    ("xs + xs + xs", {"xs": XS}, "elements; the limit is 100000"),
    ("sorted([t, t, t, t, t, t, t, t, t, t, t, t])", {"t": [XS] * 19}, "larger than 1,000,000"),
    ("unique([d])", {"d": NESTED}, "deeper than 32"),
]


@pytest.mark.parametrize("source, env, limit", LIMIT_CASES, ids=[c[0][:40] for c in LIMIT_CASES])
def test_every_limit_is_an_expression_error_naming_it(source: str, env: dict, limit: str) -> None:
    expression = compile_expression(source, names=set(env))
    tracemalloc.start()
    started = time.process_time()
    try:
        with pytest.raises(ExpressionError, match=limit.replace("|", r"\|").replace("^", r"\^")):
            expression.evaluate(env)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.process_time() - started < 10.0
    assert peak < 64 * MB, peak


def test_quadratic_built_ins_are_now_linear() -> None:
    """unique() on lists of lists compared each with all kept so far: 60,000 took minutes."""
    expression = compile_expression("len(unique([[x, [x]] for x in span(1, 60000)]))", names=())
    started = time.process_time()
    assert expression.evaluate({}) == 60_000
    assert time.process_time() - started < 5.0
    assert compile_expression("unique([[1], (1,), [1], [(1,)], [[1]]])", names=()).evaluate({}) == [
        [1],
        (1,),
        [(1,)],
        [[1]],
    ]


RULE = """[rule]
name = "t"
cells = [{{domain = "dom", level = 5}}]
key_grammar = "k.lark"
answer_grammar = "a.lark"
{answer}
[key]
status = "key.status"
[[let]]
name = "said"
expr = "first([s.status for s in find(answer, 'status')])"
{lets}
[[require]]
reason = "wrong"
check = "said == target.status"
[output]
status = "said"
{outputs}
"""
KEY = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"
ANSWER = (
    "start: _item*\n_item: status | WORD\nstatus: STATUS\nSTATUS.2: /stable|unstable/\n"
    "WORD: /\\S+/\n%ignore /\\s+/\n"
)


def make_rule(folder: Path, lets: str = "", outputs: str = "", answer: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.lark").write_text(KEY, encoding="utf-8")
    (folder / "a.lark").write_text(ANSWER, encoding="utf-8")
    path = folder / "rule.toml"
    path.write_text(RULE.format(lets=lets, outputs=outputs, answer=answer), encoding="utf-8")
    return path


def let(name: str, expr: str) -> str:
    return f"[[let]]\nname = {json.dumps(name)}\nexpr = {json.dumps(expr)}\n"


def test_repeated_squaring_across_lets_is_a_rule_error(tmp_path: Path) -> None:
    lets = let("a", "99999999") + "".join(
        let(f"v{i}", f"{'a' if i == 0 else f'v{i - 1}'} * {'a' if i == 0 else f'v{i - 1}'}")
        for i in range(40)
    )
    scorer = Scorer(load_rule(make_rule(tmp_path / "r", lets=lets)))
    started = time.process_time()
    verdict = scorer.score_answer_text("stable", "stable")
    assert verdict.reason == "rule error" and "64 bits" in verdict.detail
    assert "rule.toml:" in verdict.detail  # located in the rule file
    assert time.process_time() - started < 2.0


def test_a_growing_replacement_is_applied_only_as_far_as_the_cut(tmp_path: Path) -> None:
    answer = '[answer]\nreplace = [["q", "' + "b" * 100_000 + '"]]\n'
    rule = make_rule(tmp_path / "r", answer=answer)
    plain = json.dumps({"key": "stable", "response": "ANSWER: stable"}) + "\n"
    cases = json.dumps({"key": "stable", "response": "ANSWER: stable " + "q" * 100_000}) + "\n"
    baseline = run_keyaudit("score", str(rule), "--cases", "-", stdin=plain)
    run = run_keyaudit("score", str(rule), "--cases", "-", stdin=cases)
    assert run.code == 0, run.err
    assert json.loads(run.out)["accept"] is True
    # unbounded: 100,000 x 100,000 characters (10 GB); bounded: a few MB over the baseline
    assert run.peak_mb < baseline.peak_mb + 100, (run.peak_mb, baseline.peak_mb)


@pytest.mark.parametrize("name", ["accept", "id", "reason", "detail"])
def test_reserved_output_names_are_refused_at_load(tmp_path: Path, run_cli, name: str) -> None:
    rule = make_rule(tmp_path / "r", outputs=f'{name} = "said"')
    result = run_cli("score", str(rule), "--cases", "-", stdin="")
    assert_one_line_error(
        result.err, result.code, "rule.toml:", f"[output] name {name!r} is reserved"
    )


def test_non_finite_outputs_are_null_with_a_reason(tmp_path: Path, run_cli) -> None:
    outputs = 'big = "1e308 * 10"\nsmall = "-1e308 * 10"\nnan = "(1e308 * 10) - (1e308 * 10)"\n'
    rule = make_rule(tmp_path / "r", outputs=outputs)
    case = json.dumps({"id": 1, "key": "stable", "response": "ANSWER: stable"}) + "\n"
    result = run_cli("score", str(rule), "--cases", "-", stdin=case)
    assert result.code == 0, result.err

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the output: not JSON")

    record = json.loads(result.out, parse_constant=refuse)
    assert record["accept"] is True and record["big"] is None and record["nan"] is None
    assert "'big' is Infinity" in record["detail"] and "'nan' is NaN" in record["detail"]
    assert "'small' is -Infinity" in record["detail"]


@pytest.mark.parametrize(
    "outputs, fragment",
    [
        ('x = "99999999 * 99999999 * 99999999"', "64 bits"),
        ('x = "[answer for i in span(1, 100000)]"', "larger than 1,000,000"),
    ],
)
def test_hostile_outputs_are_rule_errors(
    tmp_path: Path, run_cli, outputs: str, fragment: str
) -> None:
    rule = make_rule(tmp_path / "r", outputs=outputs)
    case = json.dumps({"key": "stable", "response": "ANSWER: stable " + "w " * 1000}) + "\n"
    result = run_cli("score", str(rule), "--cases", "-", stdin=case)
    assert result.code == 0, result.err
    record = json.loads(result.out)
    assert record["reason"] == "rule error" and fragment in record["detail"]


def test_a_deeply_nested_output_is_a_rule_error(tmp_path: Path, run_cli) -> None:
    lets = let("d0", "[said]") + "".join(let(f"d{i}", f"[d{i - 1}]") for i in range(1, 60))
    rule = make_rule(tmp_path / "r", lets=lets, outputs='x = "d59"')
    case = json.dumps({"key": "stable", "response": "ANSWER: stable"}) + "\n"
    result = run_cli("score", str(rule), "--cases", "-", stdin=case)
    assert result.code == 0, result.err
    record = json.loads(result.out)
    assert record["reason"] == "rule error" and "deeper than 32" in record["detail"]


def test_a_lone_surrogate_in_an_expression_is_a_load_error(tmp_path: Path, run_cli) -> None:
    rule = make_rule(tmp_path / "r", outputs="x = '\"\\ud800\"'")
    result = run_cli("score", str(rule), "--cases", "-", stdin="")
    assert_one_line_error(result.err, result.code, "rule.toml:", "surrogate")


def test_a_lone_surrogate_in_a_case_is_a_data_error(tmp_path: Path, run_cli) -> None:
    rule = make_rule(tmp_path / "r")
    case = '{"key": "stable", "response": "ANSWER: stable \\ud800"}\n'
    result = run_cli("score", str(rule), "--cases", "-", stdin=case)
    assert_one_line_error(result.err, result.code, "<stdin>:1:", "lone surrogate")


def test_an_id_json_cannot_write_back_is_null(tmp_path: Path, run_cli) -> None:
    rule = make_rule(tmp_path / "r")
    case = '{"id": NaN, "key": "stable", "response": "ANSWER: stable"}\n'
    result = run_cli("score", str(rule), "--cases", "-", stdin=case)
    assert result.code == 0 and json.loads(result.out)["id"] is None
