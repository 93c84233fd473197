"""Issue 11: a fuzz pass over rule expressions, grammars and benchmark files.

Hypothesis, derandomized (the same examples on every run, no example database) and bounded (a
few seconds per target). Every generated input must end in a value, a verdict or a one-line
error (exit 2) — never an exception of another kind, exit 3 or a traceback — and no single input
may take long (each is timed; the limits are generous, the point is "no hang").
"""

from __future__ import annotations

import gzip
import json
import shutil
import time
from pathlib import Path

import pytest
from hostile import status_rule
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyaudit.engine.errors import ExpressionError, KeyauditError
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.expressions.expression import FUNCTIONS, compile_expression
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring import scorer as scoring
from keyaudit.engine.rule_language.scoring.answer_limits import Outputs
from keyaudit.engine.rule_language.scoring.scorer import Record, Scorer

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=120,
    suppress_health_check=list(HealthCheck),
)
SLOW = 10.0  # seconds one input may take, generously: a hang is minutes

# ---- rule expressions

NAMES = ["answer", "target", "key", "xs", "s", "n", "f", "x", "nested"]
OPERATORS = ["+", "-", "*", "/", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "and", "or"]
LITERALS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: repr(v).replace("inf", "1e999")),
    st.text(max_size=6).map(json.dumps),
    st.sampled_from(["null", "true", "false", "[]", "()", "'stable'", "'LETTER'", "'status'"]),
)
LEAVES = st.one_of(st.sampled_from(NAMES), LITERALS)


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(OPERATORS), children).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(st.sampled_from(sorted(FUNCTIONS)), st.lists(children, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"
        ),
        st.tuples(children, children, st.booleans()).map(
            lambda t: f"[{t[0]} for x in {t[1]}{' if x' if t[2] else ''}]"
        ),
        st.tuples(children, st.sampled_from(["status", "joint", "letter", "x"])).map(
            lambda t: f"{t[0]}.{t[1]}"
        ),
        st.tuples(children, children).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(children, children).map(lambda t: f"{t[0]}[{t[1]}:]"),
        children.map(lambda c: f"not {c}"),
        children.map(lambda c: f"-{c}"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.lists(children, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(children, min_size=2, max_size=3).map(lambda items: "(" + ", ".join(items) + ")"),
    )


EXPRESSIONS = st.one_of(
    st.recursive(LEAVES, _extend, max_leaves=14),
    st.text(max_size=40),  # anything at all
)


@pytest.fixture(scope="module")
def expression_env() -> dict:
    scorer = Scorer(load_rule(resolve_rule_path("physical_stability")))
    key = scorer.rule.examples[1].key
    parsed = scorer.parse_key(key)
    answer = scorer.rule.answer_grammar.parse("Unstable - block D's COM lies beyond block C.")
    nested: list = [1]
    for _ in range(20):
        nested = [nested, nested]
    return {
        "answer": answer,
        "key": parsed.node,
        "target": Record(parsed.target),
        "xs": list(range(20_000)),
        "s": "ab" * 20_000,
        "n": 2**62,
        "f": 1e308,
        "nested": nested,
    }


@FUZZ
@given(source=EXPRESSIONS)
def test_fuzz_expressions(expression_env: dict, source: str) -> None:
    started = time.monotonic()
    try:
        expression = compile_expression(source, names=set(NAMES))
        value = expression.evaluate(expression_env)
        converted = Outputs().convert("x", value)
        json.dumps(converted, allow_nan=False)
    except ExpressionError:
        pass
    assert time.monotonic() - started < SLOW, source


# ---- grammars

ATOMS = ["a", "b", "\\w", "\\s", ".", "[a-z]", "\\d", "(a|aa)", "(?:ab|a)", "x?"]
QUANTIFIERS = ["", "+", "*", "?", "{2,5}", "{0,3}", "+?", "{99999999999}"]


def _regex(depth: int = 0) -> st.SearchStrategy[str]:
    atom = st.sampled_from(ATOMS)
    if depth < 2:
        atom = st.one_of(atom, st.deferred(lambda: _regex(depth + 1)).map(lambda r: f"(?:{r})"))
    piece = st.tuples(atom, st.sampled_from(QUANTIFIERS)).map("".join)
    return st.lists(piece, min_size=1, max_size=3).map("".join)


BASE_GRAMMAR = (
    "start: _item*\n_item: status | t | WORD\nstatus: STATUS\nt: T\n"
    "STATUS.3: /stable|unstable/\nT.2: /{regex}/\nWORD: /\\S+/\n%ignore /\\s+/\n"
)
KEY_GRAMMAR = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"
RULE = status_rule(name="fuzz", outputs="ts = \"[text(t) for t in find(answer, 't')]\"\n")
GRAMMAR_NOISE = st.text(alphabet=":|()[]{}/\\\"'*+?._%-> \nabcTSW0123", max_size=6)


@st.composite
def grammars(draw: st.DrawFn) -> str:
    text = BASE_GRAMMAR.replace("{regex}", draw(_regex()))
    for _ in range(draw(st.integers(0, 2))):  # a few random edits
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(GRAMMAR_NOISE) + text[at + cut :]
    return text


@pytest.fixture(scope="module")
def rule_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz-rule")
    (folder / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    (folder / "rule.toml").write_text(RULE, encoding="utf-8")
    return folder


@FUZZ
@given(grammar=grammars(), answers=st.lists(st.text(max_size=60), min_size=1, max_size=3))
def test_fuzz_grammars(rule_dir: Path, grammar: str, answers: list[str]) -> None:
    from keyaudit.engine.rule_language.reading import grammar as grammar_module

    grammar_module.compile_grammar.cache_clear()  # each example is a new file
    (rule_dir / "a.lark").write_text(grammar, encoding="utf-8")
    started = time.monotonic()
    try:
        rule = load_rule(rule_dir / "rule.toml")
    except KeyauditError as error:
        assert "\n" not in str(error)
        return
    scorer = Scorer(rule)
    original = scoring.ANSWER_SECONDS
    scoring.ANSWER_SECONDS = 0.3  # a catastrophic terminal costs 0.3 s here, not 2 s
    try:
        for answer in [*answers, "stable " + "a" * 40, "stable " + "ab " * 500]:
            verdict = scorer.score("stable", "ANSWER: " + answer)
            json.dumps(verdict.values, allow_nan=False)
    finally:
        scoring.ANSWER_SECONDS = original
    assert time.monotonic() - started < SLOW, grammar


# ---- benchmark files

IDS = st.one_of(
    st.builds(lambda i, lv: f"dom_{i:04d}_q{lv}", st.integers(0, 30), st.integers(1, 6)),
    st.text(max_size=12),
    st.integers(),
)
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _record(fields: list[str]) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {},
        optional={name: (IDS if name == "id" else VALUES) for name in fields},
    )


LINES = st.one_of(
    _record(["id", "answer"]).map(json.dumps),
    st.binary(max_size=30).map(lambda b: b.decode("latin-1")),
    st.sampled_from(["", "{", "[1]", '{"id": NaN}', '{"id": "dom_0001_q5", "answer": "\\ud800"}']),
)
RESPONSE_LINES = st.one_of(
    _record(["id", "model", "response", "correct"]).map(json.dumps),
    st.builds(
        lambda i, r, c: json.dumps(
            {"id": f"dom_{i:04d}_q5", "model": "m", "response": r, "correct": c}
        ),
        st.integers(0, 30),
        st.text(max_size=40),
        st.booleans(),
    ),
    st.binary(max_size=20).map(lambda b: b.decode("latin-1")),
)
TOMLS = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "name = 'x'\n",
            "id_pattern = '^(?P<domain>.+)_(?P<image>\\d+)_q(?P<level>\\d*)$'\n",
            "id_pattern = '(?P<domain>(?:\\w+_?)+)(?P<image>)(?P<level>)'\n",
            "roster = ['a', 'a']\n",
            "[fields]\nid = 'answer'\n",
            "[keys]\npath = 'nowhere'\n",
            "[[responses]]\npath = '../../etc'\n",
        ]
    ),
    st.text(max_size=30),
)


@FUZZ
@given(
    keys=st.lists(LINES, max_size=6),
    responses=st.one_of(st.none(), st.lists(RESPONSE_LINES, max_size=5)),
    toml=TOMLS,
    gz=st.booleans(),
)
def test_fuzz_benchmark_files(
    tmp_path_factory: pytest.TempPathFactory, run_cli, keys, responses, toml, gz: bool
) -> None:
    root = tmp_path_factory.mktemp("fuzz-bench")
    (root / "keys").mkdir()
    valid = [json.dumps({"id": f"dom_{i:04d}_q5", "answer": "stable"}) for i in range(3)]
    text = "\n".join(valid + keys) + "\n"
    if gz:
        (root / "keys" / "k.jsonl.gz").write_bytes(
            gzip.compress(text.encode("utf-8", "surrogatepass"))
        )
    else:
        (root / "keys" / "k.jsonl").write_bytes(text.encode("utf-8", "surrogatepass"))
    if responses is not None:
        (root / "responses").mkdir()
        (root / "responses" / "m.jsonl").write_bytes(
            ("\n".join(responses) + "\n").encode("utf-8", "surrogatepass")
        )
    if toml is not None:
        (root / "benchmark.toml").write_bytes(toml.encode("utf-8", "surrogatepass"))
    started = time.monotonic()
    try:
        load_benchmark(root)
    except KeyauditError as error:
        assert "\n" not in str(error)
    result = run_cli("flag", "--bench", str(root))
    assert result.code in (0, 2), result.err
    assert "internal error" not in result.err and "Traceback" not in result.err
    if result.code == 2:
        assert len(result.err.splitlines()) == 1, result.err
    assert time.monotonic() - started < SLOW
    shutil.rmtree(root)


# ---- score, end to end


CASES = st.lists(
    st.one_of(
        st.builds(
            lambda k, r, i: json.dumps({"id": i, "key": k, "response": r}),
            st.text(max_size=40),
            st.text(max_size=80).map(lambda t: "ANSWER: " + t),
            VALUES,
        ),
        st.text(max_size=30),
    ),
    max_size=4,
)


@FUZZ
@given(cases=CASES, rule=st.sampled_from(["physical_stability", "gear_train", "gauge_reading"]))
def test_fuzz_score_cases(run_cli, cases: list[str], rule: str) -> None:
    started = time.monotonic()
    result = run_cli("score", rule, "--cases", "-", stdin="\n".join(cases) + "\n")
    assert result.code in (0, 2), result.err
    assert "internal error" not in result.err and "Traceback" not in result.err
    for line in result.out.splitlines():
        json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert time.monotonic() - started < SLOW
