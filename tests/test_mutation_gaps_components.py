"""Gaps a mutation-testing pass found in the answer components (issue 39, item 5): each test
fails on mutants of ``engine/rule_language/reading/components.py`` that the rest of the suite let
through (``bench/mutation.py``; bench/results/mutation.md).

Fast on purpose (no grammar is loaded): a component's lets, requirements and outputs are
evaluated here with the rule language's own expressions, in file order, the first failing
requirement giving the reason (docs/rule-dsl.md), on claims given as plain nodes; and every check
of a ``[[component]]`` table is held to the field it names (the loader points at that field's
line) and to its message.
"""

from __future__ import annotations

import pytest

from keyaudit.engine.rule_language.expressions.expression import SimpleNode, compile_expression
from keyaudit.engine.rule_language.reading.components import (
    COMPONENT_FIELDS,
    KINDS,
    ComponentError,
    expand_components,
)

KINDS_OF_CLAIMS = {"speed": ("increase", "decrease", "same"), "stable": ("stable", "unstable"), "x": ()}


def _node(kind: str, **fields) -> SimpleNode:
    return SimpleNode(kind, fields=fields)


def _claims(hedged: bool = False, **kinds: tuple[list, bool]) -> SimpleNode:
    """claims.<kind>.values / .hedged, and claims.hedged (a hedge anywhere on the answer)."""
    return _node("claims", hedged=hedged, **{k: _node(k, values=v, hedged=h) for k, (v, h) in kinds.items()})


def _score(entries: list[dict], target: dict, claims: SimpleNode) -> tuple[str, dict]:
    """(reason or "", outputs) of the components alone, evaluated in order."""
    expanded = expand_components(entries, KINDS_OF_CLAIMS)
    env = {"claims": claims, "target": _node("target", **target)}
    for _, _, name, source in expanded.lets:
        env[name] = compile_expression(source, names=list(env)).evaluate(env)
    reason = ""
    for _, name, check, when, _ in expanded.requires:
        if when is not None and not compile_expression(when, names=list(env)).evaluate(env):
            continue
        if not compile_expression(check, names=list(env)).evaluate(env):
            reason = name
            break
    outputs = {name: compile_expression(src, names=list(env)).evaluate(env) for _, name, src in expanded.outputs}
    return reason, outputs


# --- each kind, evaluated -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "hedged", "reason"),
    [([], False, "speed missing"), (["decrease"], True, "speed hedged"),
     (["increase", "decrease"], False, "speed conflict"), (["increase"], False, "wrong speed"),
     (["decrease"], False, "")],
)
def test_a_choice_checks_missing_hedged_conflict_wrong_in_order(values, hedged, reason) -> None:
    got, outputs = _score([{"name": "speed", "kind": "choice"}], {"speed": "decrease"},
                          _claims(speed=(values, hedged)))
    assert got == reason
    assert outputs == {"speed": values[0] if len(values) == 1 else None}


def test_hedge_scopes_own_answer_none() -> None:
    anywhere = _claims(hedged=True, speed=(["decrease"], False))
    own = _claims(speed=(["decrease"], True))
    target = {"speed": "decrease"}
    assert _score([{"name": "speed", "kind": "choice"}], target, anywhere)[0] == ""
    assert _score([{"name": "speed", "kind": "choice", "hedge": "answer"}], target, anywhere)[0] == "speed hedged"
    assert _score([{"name": "speed", "kind": "choice", "hedge": "answer"}], target, own)[0] == ""
    assert _score([{"name": "speed", "kind": "choice", "hedge": "none"}], target, own)[0] == ""
    expanded = expand_components([{"name": "speed", "kind": "choice", "hedge": "none"}], KINDS_OF_CLAIMS)
    assert [r[1] for r in expanded.requires] == ["speed missing", "speed conflict", "wrong speed"]


def test_a_rules_own_hedged_expression_and_renamed_reasons() -> None:
    entry = {"name": "speed", "kind": "choice", "hedged": "target.flag", "plural": "said",
             "reasons": {"hedged": "unsure", "wrong": "bad speed"}, "output": False}
    assert _score([entry], {"speed": "decrease", "flag": True}, _claims(speed=(["decrease"], False))) == ("unsure", {})
    assert _score([entry], {"speed": "decrease", "flag": False}, _claims(speed=(["decrease"], True))) == ("", {})
    assert _score([entry], {"speed": "same", "flag": False}, _claims(speed=(["decrease"], False)))[0] == "bad speed"
    expanded = expand_components([entry], KINDS_OF_CLAIMS)
    assert [name for _, _, name, _ in expanded.lets] == ["said", "speed"]
    explains = {r[1]: r[4] for r in expanded.requires}
    assert explains["unsure"] == "unsure: its value is hedged ('probably', 'I think', a '?')."
    assert explains["speed missing"].startswith("speed missing: no value of it is read")
    assert explains["speed conflict"] == "speed conflict: two or more different values of it are offered."
    assert explains["bad speed"] == "bad speed: the value read differs from the key's."
    own = expand_components([{**entry, "explain": {"wrong": "Not the key's."}}], KINDS_OF_CLAIMS)
    assert {r[1]: r[4] for r in own.requires}["bad speed"] == "Not the key's."


def test_a_components_key_claim_and_when() -> None:
    entry = {"name": "s", "kind": "choice", "claim": "speed", "key": "target.other", "when": "target.ask"}
    claims = _claims(speed=(["same"], False))
    assert _score([entry], {"other": "same", "ask": True}, claims)[0] == ""
    assert _score([entry], {"other": "increase", "ask": True}, claims)[0] == "wrong s"
    assert _score([entry], {"other": "increase", "ask": False}, claims)[0] == ""


@pytest.mark.parametrize(
    ("entry", "key", "values", "reason", "value"),
    [
        ({"name": "x", "kind": "number"}, "65", ["65", "65.0"], "", 65.0),  # one number said twice
        ({"name": "x", "kind": "number"}, "65", ["sixty-five"], "", 65.0),
        ({"name": "x", "kind": "number"}, "65", ["65.00001"], "", 65.00001),  # relative slack 1e-6
        ({"name": "x", "kind": "number"}, "65", ["65.001"], "wrong x", 65.001),
        ({"name": "x", "kind": "number", "tolerance": 0.5}, "65", ["65.4"], "", 65.4),
        ({"name": "x", "kind": "number", "tolerance": 0.5}, "65", ["65.6"], "wrong x", 65.6),
        ({"name": "x", "kind": "number", "relative": 0.1}, "100", ["109"], "", 109.0),
        ({"name": "x", "kind": "number"}, "65", ["64", "66"], "x conflict", None),
        ({"name": "x", "kind": "number"}, "65", ["many"], "x missing", None),
        ({"name": "x", "kind": "angle"}, "1", ["359"], "wrong x", 359.0),
        ({"name": "x", "kind": "angle", "tolerance": 2}, "1", ["359"], "", 359.0),  # the short way
        ({"name": "x", "kind": "angle", "tolerance": 2}, "359", ["721"], "", 1.0),
        ({"name": "x", "kind": "angle", "tolerance": 2}, "90", ["93"], "wrong x", 93.0),
        ({"name": "x", "kind": "angle", "tolerance": 1, "relative": 2}, "90", ["93"], "", 93.0),
        ({"name": "x", "kind": "letter"}, "d", ["D", "d"], "", "D"),
        ({"name": "x", "kind": "letter"}, "B", ["c"], "wrong x", "C"),
    ],
)
def test_numbers_angles_and_letters_compare_by_their_kind(entry, key, values, reason, value) -> None:
    got, outputs = _score([entry], {"x": key}, _claims(x=(values, False)))
    assert (got, outputs["x"]) == (reason, value)


def test_a_pair_is_wrong_reversed_or_right() -> None:
    entry = {"name": "x", "kind": "pair"}
    target = {"x": ("upper", "lower")}
    assert _score([entry], target, _claims(x=([("upper", "lower")], False)))[0] == ""
    assert _score([entry], target, _claims(x=([("lower", "upper")], False)))[0] == "x reversed"
    assert _score([entry], target, _claims(x=([("upper", "base")], False)))[0] == "wrong x"
    assert _score([entry], target, _claims(x=([("upper", "lower"), ("upper", "lower")], False)))[0] == ""
    reasons = [r[1] for r in expand_components([entry], KINDS_OF_CLAIMS).requires]
    assert reasons == ["x missing", "x hedged", "x conflict", "x reversed", "wrong x"]


def test_a_compound_checks_each_part_and_outputs_them() -> None:
    entry = {"name": "x", "kind": "compound", "parts": {"form": "choice", "n": "number", "l": "letter"},
             "tolerance": 0.5}
    target = {"form": "new value", "n": "75", "l": "b"}
    assert _score([entry], target, _claims(x=([("new value", "75.4", "B")], False))) == (
        "", {"form": "new value", "n": "75.4", "l": "B"})
    assert _score([entry], target, _claims(x=([("old value", "75", "B")], False)))[0] == "wrong form"
    assert _score([entry], target, _claims(x=([("new value", "76", "B")], False)))[0] == "wrong n"
    assert _score([entry], target, _claims(x=([("new value", "75", "c")], False)))[0] == "wrong l"
    assert _score([entry], target, _claims(x=([], False))) == ("x missing", {"form": None, "n": None, "l": None})
    # a number part neither the key nor the answer has is equal
    assert _score([{**entry, "parts": {"n": "number"}}], {"n": None}, _claims(x=([(None,)], False)))[0] == ""
    assert _score([{**entry, "output": False}], target, _claims(x=([("new value", "75", "B")], False)))[1] == {}


def test_denied_asserts_the_one_value_a_denial_leaves() -> None:
    entry = {"name": "s", "kind": "choice", "claim": "stable", "values": "target.said", "denied": "target.denied"}

    def read(said, denied):
        return _score([entry], {"s": "stable", "said": said, "denied": denied}, _claims(stable=([], False)))

    assert read([], ["unstable"]) == ("", {"s": "stable"})  # "won't tip": stable
    assert read(["unstable"], ["unstable"])[0] == "s conflict"  # a contradiction stays visible
    assert read(["stable"], ["unstable"]) == ("", {"s": "stable"})  # said and implied: one value
    assert read([], [])[0] == "s missing"
    assert read([], ["stable", "unstable"])[0] == "s missing"  # denials leave nothing
    three = {**entry, "claim": "speed"}
    assert _score([three], {"s": "same", "said": [], "denied": ["increase"]},
                  _claims(speed=([], False)))[0] == "s missing"  # two values left: none implied
    assert _score([three], {"s": "same", "said": [], "denied": ["increase", "decrease"]},
                  _claims(speed=([], False))) == ("", {"s": "same"})


def test_a_components_own_values_expression() -> None:
    entry = {"name": "x", "kind": "number", "values": "target.read", "hedge": "none"}
    assert _score([entry], {"x": "3", "read": [3.0]}, _claims())[0] == ""
    assert _score([entry], {"x": "3", "read": [4.0]}, _claims())[0] == "wrong x"
    expanded = expand_components([entry], None)  # reads no claims: no [claims] table needed
    assert expanded.lets[0][1] == "values"


def test_every_kind_and_field_is_known() -> None:
    assert set(KINDS) == {"choice", "number", "angle", "pair", "compound", "letter"}
    for name in ("name", "kind", "claim", "key", "plural", "values", "hedge", "hedged", "when", "reasons",
                 "explain", "parts", "tolerance", "relative", "output", "tiers", "percent", "distance",
                 "asides", "latest", "fallback", "said_by", "trailing", "counted", "within", "denied",
                 "arithmetic"):
        assert name in COMPONENT_FIELDS


# --- every check of a table names its field -------------------------------------------------------


def _refused(entries, claims=KINDS_OF_CLAIMS, kinds=frozenset(), fields=frozenset()) -> ComponentError:
    with pytest.raises(ComponentError) as raised:
        expand_components(entries, claims, kinds, fields)
    return raised.value


NODE_KINDS = frozenset({"HEDGE", "QUESTION", "num", "op", "CORRECTION"})
NUMBER_FIELDS = frozenset({"number", "is_percent", "yes", "no"})
BAD = [
    # (entry, field, message fragment)
    ({"name": "x", "kind": "choice", "colour": 1}, "colour", "unknown field 'colour' in [[component]]"),
    ({"name": "x", "kind": "number", "tolerance": True}, "tolerance", "tolerance has the wrong type"),
    ({"name": "x", "kind": "number", "tolerance": "1"}, "tolerance", "tolerance has the wrong type"),
    ({"name": "speed", "kind": "choice", "output": "yes"}, "output", "output has the wrong type"),
    ({"name": "speed", "kind": "choice", "asides": 1}, "asides", "asides has the wrong type"),
    ({"kind": "choice"}, None, "a [[component]] needs 'name'"),
    ({"name": "speed"}, None, "a [[component]] needs 'kind'"),
    ({"name": "2x", "kind": "choice"}, "name", "component name '2x' is not a valid name"),
    ({"name": "x", "kind": "colour"}, "kind", "unknown component kind 'colour' (kinds: choice, number"),
    ({"name": "nope", "kind": "number"}, "claim", "reads claim kind 'nope', which [claims] kinds does not declare"),
    ({"name": "x", "kind": "choice"}, "kind", "a choice needs [claims] kinds.x to list its values"),
    ({"name": "speed", "kind": "choice", "hedge": "maybe"}, "hedge", "hedge is one of own, answer, none, not 'maybe'"),
    ({"name": "speed", "kind": "choice", "reasons": {"lost": "x"}}, "reasons", "reasons maps missing, hedged"),
    ({"name": "speed", "kind": "choice", "reasons": {"wrong": " "}}, "reasons", "not 'wrong'"),
    ({"name": "speed", "kind": "choice", "explain": {"lost": "x"}}, "explain", "explain maps missing"),
    ({"name": "speed", "kind": "choice", "explain": {"wrong": 3}}, "explain", "explain maps missing"),
    ({"name": "speed", "kind": "choice", "tolerance": 0.5}, "tolerance", "number and angle components only"),
    ({"name": "speed", "kind": "choice", "relative": 0.5}, "tolerance", "number and angle components only"),
    ({"name": "x", "kind": "number", "tolerance": -1}, "tolerance", "finite numbers from 0"),
    ({"name": "x", "kind": "number", "relative": float("inf")}, "tolerance", "finite numbers from 0"),
    ({"name": "x", "kind": "number", "tolerance": 2e12}, "tolerance", "finite numbers from 0"),
    ({"name": "x", "kind": "compound", "parts": {"2a": "number"}}, "parts", "parts maps names to choice, letter, number"),
    ({"name": "x", "kind": "compound"}, "parts", "lists its parts"),
    ({"name": "x", "kind": "number", "parts": {"a": "number"}}, "parts", "only a compound has parts"),
    ({"name": "x", "kind": "number", "plural": "x"}, "plural", "plural 'x' is not a valid name distinct from 'x'"),
    ({"name": "x", "kind": "number", "plural": "x s"}, "plural", "plural 'x s'"),
    ({"name": "x", "kind": "number", "counted": "cs"}, "counted", "counted is a setting of a `trailing` hedge"),
    ({"name": "x", "kind": "number", "within": 3}, "within", "within is a setting of a `trailing` hedge"),
    ({"name": "x", "kind": "number", "trailing": "HEDGE", "within": -1}, "within", "a number of characters, from 0"),
    ({"name": "x", "kind": "number", "trailing": "HEDGE", "within": 10_001}, "within", "from 0"),
    ({"name": "x", "kind": "number", "trailing": []}, "trailing", "trailing names one or more node kinds"),
    ({"name": "x", "kind": "number", "trailing": ["HEDGE", "a b"]}, "trailing", "trailing names one or more"),
    ({"name": "x", "kind": "number", "trailing": "MAYBE"}, "trailing", "trailing 'MAYBE' is not a rule or terminal"),
    ({"name": "x", "kind": "number", "trailing": "HEDGE", "counted": "a b"}, "counted", "counted names a list"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "arithmetic": {"result": "num"}}, "arithmetic",
     "arithmetic has results, operands, operator, steps, not 'result'"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "arithmetic": {"results": "a b"}}, "arithmetic",
     "arithmetic.results is a name, not 'a b'"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "arithmetic": {"results": "num", "operands": "num"}},
     "arithmetic", "arithmetic needs 'operator'"),
    ({"name": "x", "kind": "number", "tiers": ["num"],
      "arithmetic": {"results": "num", "operands": "num", "operator": "plus"}}, "arithmetic",
     "arithmetic.operator 'plus' is not a rule or terminal"),
    ({"name": "x", "kind": "number", "said_by": {"a": []}}, "said_by", "said_by belongs to a choice"),
    ({"name": "stable", "kind": "choice", "said_by": {"tips": []}}, "said_by", "'tips' is not a value of claim kind 'stable'"),
    ({"name": "stable", "kind": "choice", "said_by": {"stable": 3, "unstable": []}}, "said_by", "to a child name or a list"),
    ({"name": "stable", "kind": "choice", "said_by": {"stable": ["a b"], "unstable": []}}, "said_by", "to a child name"),
    ({"name": "stable", "kind": "choice", "said_by": {"stable": "maybe", "unstable": []}}, "said_by",
     "no node of the answer grammar has a child 'maybe'"),
    ({"name": "stable", "kind": "choice", "said_by": {"stable": [], "unstable": "no"}}, "said_by", "ends with the one value"),
    ({"name": "stable", "kind": "choice", "said_by": {"stable": "yes", "unstable": "no"}}, "said_by", "ends with the one value"),
    ({"name": "speed", "kind": "choice", "said_by": {"increase": [], "decrease": "no", "same": []}}, "said_by",
     "ends with the one value"),
    ({"name": "speed", "kind": "choice", "percent": "drop"}, "percent", "percent belongs to a number component's reading"),
    ({"name": "x", "kind": "number", "latest": "CORRECTION"}, "latest", "latest is a step of a number's reading by cues"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "values": "[]"}, "values", "by `tiers` or by `values`, not both"),
    ({"name": "x", "kind": "number", "tiers": []}, "tiers", "tiers lists one or more tiers"),
    ({"name": "x", "kind": "number", "tiers": [[]]}, "tiers", "a tier names one or more node kinds or bound names, not []"),
    ({"name": "x", "kind": "number", "tiers": ["a b"]}, "tiers", "tiers names node kinds or bound names, not 'a b'"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "percent": "some"}, "percent", "percent is one of keep, drop, fallback"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "distance": "a b"}, "distance", "distance names node kinds"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "fallback": "a b"}, "fallback", "fallback names node kinds"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "latest": "a b"}, "latest", "latest names node kinds"),
    ({"name": "x", "kind": "number", "tiers": ["num"], "latest": "FIX"}, "latest", "latest 'FIX' is not a rule or terminal"),
    ({"name": "speed", "kind": "choice", "denied": "[]"}, "denied", "denied belongs to a choice with its own `values`"),
    ({"name": "x", "kind": "number", "values": "[]", "denied": "[]"}, "denied", "denied belongs to a choice"),
]


@pytest.mark.parametrize(("entry", "field", "fragment"), BAD)
def test_a_bad_table_names_its_field(entry: dict, field: str | None, fragment: str) -> None:
    error = _refused([entry], kinds=NODE_KINDS, fields=NUMBER_FIELDS)
    assert fragment in error.message and error.field == field and error.index == 0
    assert str(error) == error.message


def test_the_errors_name_the_table_and_its_checks_in_order() -> None:
    error = _refused([{"name": "speed", "kind": "choice"}, {"name": "speed", "kind": "choice"}])
    assert (error.field, error.message) == ("name", "component 'speed' is declared twice")
    assert _refused([{"name": "speed", "kind": "choice"}, {"name": "x", "kind": "colour"}]).index == 1
    assert "needs a [claims] table" in _refused([{"name": "x", "kind": "number"}], claims=None).message
    # a choice's values need two declared ones, or its own values
    assert _refused([{"name": "x", "kind": "choice"}], claims={"x": ("one",)}).field == "kind"
    assert expand_components([{"name": "x", "kind": "choice", "values": "[]"}], {"x": ("one",)}).requires
    assert expand_components([{"name": "x", "kind": "choice"}], {"x": ("a", "b")}).requires
    # a reading's attributes
    reading = {"name": "x", "kind": "number", "tiers": ["num"], "hedge": "none"}
    assert _refused([reading], claims=None, kinds=NODE_KINDS, fields=frozenset({"is_percent"})).field == "tiers"
    assert _refused([{**reading, "percent": "drop"}], claims=None, kinds=NODE_KINDS,
                    fields=frozenset({"number"})).field == "percent"
    assert expand_components([reading], None, NODE_KINDS, frozenset({"number"})).lets
    assert expand_components([{**reading, "latest": "CORRECTION"}], None, NODE_KINDS, frozenset({"number"})).lets
    # without the grammar's names (a rule checked alone), unknown node kinds are not refused
    assert expand_components([{**reading, "latest": "FIX", "trailing": "MAYBE", "counted": "cs"}], None).lets


def test_defaults_of_a_component() -> None:
    """A number's and an angle's relative slack is 1e-6 by default (0 for the other kinds), its
    tolerance 0; the plural is the name with an s; output is on."""
    (number,) = [r for r in expand_components([{"name": "x", "kind": "number"}], KINDS_OF_CLAIMS).requires
                 if r[1] == "wrong x"]
    assert number[2] == "close(x, number(target.x), 0.0, 1e-06)"
    (angle,) = [r for r in expand_components([{"name": "x", "kind": "angle"}], KINDS_OF_CLAIMS).requires
                if r[1] == "wrong x"]
    assert angle[2].endswith("<= 1e-06")
    compound = expand_components([{"name": "x", "kind": "compound", "parts": {"n": "number"}}], KINDS_OF_CLAIMS)
    assert compound.requires[-1][2].endswith("close(number(x[0]), number(target.n), 0.0, 0.0)")
    expanded = expand_components([{"name": "speed", "kind": "choice"}], KINDS_OF_CLAIMS)
    assert [(name, source) for _, _, name, source in expanded.lets][0] == ("speeds", "claims.speed.values")
    assert expanded.outputs == [(0, "speed", "speed")]


def test_every_binding_and_requirement_is_located_at_a_field_of_its_table() -> None:
    """The loader reports an error in a generated expression at the line of the field named with
    it (Expanded's docstring), so that field must be one a [[component]] table has."""
    reading = {"name": "x", "kind": "number", "tiers": [["num", "num"], "num"], "percent": "fallback",
               "distance": "op", "asides": True, "latest": "CORRECTION", "fallback": "num",
               "arithmetic": {"results": "num", "operands": "num", "operator": "op", "steps": "extra"},
               "trailing": "HEDGE", "counted": "cs", "hedge": "none"}
    denied = {"name": "s", "kind": "choice", "claim": "stable", "values": "[]", "denied": "[]"}
    expanded = expand_components([reading, denied, {"name": "speed", "kind": "choice"}],
                                 KINDS_OF_CLAIMS, NODE_KINDS, NUMBER_FIELDS)
    fields = {at for _, at, _, _ in expanded.lets}
    assert fields <= set(COMPONENT_FIELDS) and {"tiers", "percent", "distance", "asides", "latest",
                                               "arithmetic", "values", "denied", "kind", "name"} <= fields
    names = [name for _, _, name, _ in expanded.lets]
    assert {"x_tiers", "x_tier", "x_steps", "xs", "x", "ss", "s"} <= set(names)
    assert len(names) == len(set(names))


def test_within_0_keeps_only_a_mark_right_at_the_claims_end() -> None:
    """within is a number of characters "from 0": 0 is allowed."""
    entry = {"name": "x", "kind": "number", "trailing": "HEDGE", "counted": "cs", "within": 0, "hedge": "none",
             "values": "[]"}
    assert expand_components([entry], None, NODE_KINDS).requires
