"""Answer components: what an answer must contain, declared as typed ``[[component]]`` tables.

A rule used to spell out, for every value it reads, the same four steps in its own expressions: the
values the claim layer kept, "missing" when there are none, "hedged", "conflict" when there are
several, "wrong" when the one value differs from the key's. A component declares the value once::

    [[component]]
    name = "speed"                      # binds `speed` (the one value, or null) and `speeds`
    kind = "choice"                     # a closed set of values: [claims] kinds.speed
    hedge = "answer"                    # a hedge anywhere on the answer rejects ("hedged")
    reasons = { hedged = "hedged" }     # the standard reasons, renamed where a rule needs it

and the kind, here in the engine, supplies the rest: the bindings, the requirements in their
standard order (``<name> missing``, ``<name> hedged``, ``<name> conflict``, ``wrong <name>``), the
output, and the comparison with the key. Everything general (negation, hedges, corrections,
alternatives, subjects, the question's options echoed) is the claim layer's and applies to every
kind alike; a rule adds only what is special to its domain, as its own ``[[let]]``, ``[[require]]``
and ``[[uncertain]]`` tables, which come after the components' and may read their bindings.

Kinds:

* ``choice``: one of the claim kind's declared values (increase/decrease/same, yes/no,
  stable/unstable), compared with the key's value as text;
* ``number``: a number, compared within ``tolerance`` (absolute) plus ``relative`` slack; the claim
  values are read with ``number()`` (digits, number words, "4½"), and several claims of the same
  number are one value ("65", "65.0");
* ``angle``: a direction in degrees, compared the shorter way round the circle within
  ``tolerance`` (plus ``relative`` as absolute slack): 359° and 1° are 2° apart;
* ``pair``: an ordered pair of entities (a joint: upper block, lower block), compared as a tuple;
  the right two in the wrong order is its own reason (``<name> reversed``), before ``wrong``;
* ``compound``: one value made of parts (a restated key template: its form and its slots), each
  part compared with ``target.<part>`` by its own kind (choice, number, letter), each with its own
  ``wrong <part>`` reason and output; "missing", "hedged" and "conflict" are the whole value's;
* ``letter``: one of an offered set of letters (no declared values: any letter the grammar reads),
  compared case-insensitively.

A component may give its own ``values`` expression (over the names bound before it, in file order)
where the domain reads values in a way of its own; the kind still gives the reasons and compares.

The kinds compile to the rule language's own expressions (so ``test-rule --explain`` shows each
check as it runs, and a rule file stays data: nothing in it runs code). Why expressions and not
Python closures: the trace, the generated fast path and the certainty reader already work on them,
and one evaluation path is easier to trust than two.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COMPONENT_FIELDS", "Component", "ComponentError", "KINDS", "expand_components"]

#: The standard reasons of every kind, in the order a component checks them (a pair also checks
#: "reversed" before "wrong": the right two entities in the wrong order).
STEPS = ("missing", "hedged", "conflict", "reversed", "wrong")
#: Where a component's hedge check looks: its own claims, any counted claim, or nowhere.
HEDGE_SCOPES = ("own", "answer", "none")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

#: The fields of a ``[[component]]`` table and their TOML types (for the rule loader's schema).
COMPONENT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "kind": str,
    "claim": str,
    "key": str,
    "plural": str,
    "values": str,
    "hedge": str,
    "hedged": str,
    "when": str,
    "reasons": dict,
    "explain": dict,
    "parts": dict,
    "tolerance": (int, float),
    "relative": (int, float),
    "output": bool,
    # the number kind's reading by cues (see _number_reading)
    "tiers": list,
    "percent": str,
    "distance": str,
    "asides": bool,
    "latest": str,
    "fallback": str,
    "said_by": dict,
    "trailing": (str, list),
    "counted": str,
    "within": int,
    "denied": str,
    "arithmetic": dict,
}
#: The number reading's fields (a number component with ``tiers`` reads its values by cues).
READING_FIELDS = ("tiers", "percent", "distance", "asides", "latest", "fallback", "arithmetic")
#: The keys of a number reading's ``arithmetic`` table: node kinds (results, operands, operator)
#: and, optionally, a name bound before (positions of further steps the domain knows).
ARITHMETIC_KEYS = ("results", "operands", "operator", "steps")
#: What a number reading does with percentages: keeps them, drops them, or keeps them only where
#: their tier offers no other number.
PERCENT_RULES = ("keep", "drop", "fallback")


class ComponentError(Exception):
    """A ``[[component]]`` table that cannot be used; ``field`` names the culprit (or None)."""

    def __init__(self, index: int, field_name: str | None, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class Component:
    """One declared component, checked; its expressions come from its kind."""

    index: int
    name: str
    kind: str
    claim: str
    key: str
    plural: str
    hedge: str
    #: The rule's own expression for the list of values, where the kind's reading is not enough
    #: (a size resolved against its subject); the kind still checks and compares them.
    values: str | None
    #: The rule's own expression for "this component is hedged", where the claim layer's hedge
    #: flags are not the whole story (a trailing "?" a grammar keeps on the claim node).
    hedged: str | None
    when: str | None
    reasons: dict[str, str]
    explain: dict[str, str]
    tolerance: float = 0.0
    relative: float = 0.0
    output: bool = True
    #: A compound's parts, in order: (name, kind) — each compared with ``target.<name>`` by its
    #: kind, each with its own "wrong <name>" reason and output.
    parts: tuple[tuple[str, str], ...] = ()
    #: A number's reading by cues: each tier a tuple of node kinds or names bound before (their
    #: lists of nodes), strongest cue first; empty: the kind's plain reading (or ``values``).
    tiers: tuple[tuple[str, ...], ...] = ()
    percent: str = "keep"
    distance: str | None = None
    asides: bool = False
    latest: str | None = None
    fallback: str | None = None
    #: A number reading's arithmetic: (results, operands, operator, steps or None); results that
    #: are steps, not the value, are dropped from every tier.
    arithmetic: tuple[str, str, str, str | None] | None = None
    #: A choice's values by the grammar children that say them, in order: (value, children); the
    #: value with no children is the one said otherwise. Gives the claim node its ``value``.
    said_by: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Node kinds of hedge marks ("HEDGE", "QUESTION") that hedge the component when one starts at
    #: or after the end of its last counted claim ("yes, I think", "270°?"); empty: none.
    trailing: tuple[str, ...] = ()
    #: A name bound in the rule: the claims the component rests on, for ``trailing`` (default: its
    #: claim kind's claims not retracted).
    counted: str | None = None
    #: With ``trailing``: how many characters after that end a mark may start (None: any number).
    within: int | None = None
    #: A choice's own expression for the values its claims deny, beside its own ``values`` (those
    #: asserted): a denial that leaves one declared value asserts it ("won't tip": stable).
    denied: str | None = None
    #: The claim kind's declared values (for ``denied``).
    domain: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expanded:
    """What the components add to a rule, as (table, index, field, name, source) entries, so the
    loader compiles them with the component table's position for any error."""

    lets: list[tuple[int, str, str, str]] = field(default_factory=list)
    requires: list[tuple[int, str, str, str | None, str]] = field(default_factory=list)
    outputs: list[tuple[int, str, str]] = field(default_factory=list)
    #: (index, node kind, attribute name, source): attributes a component gives its claim nodes.
    attributes: list[tuple[int, str, str, str]] = field(default_factory=list)


def _choice_values(c: Component) -> str:
    return f"claims.{c.claim}.values"


def _number_values(c: Component) -> str:
    # one value per distinct number: "65" and "65.0" (and a number said twice) are one value
    return f"unique([n for n in [number(v) for v in claims.{c.claim}.values] if n != null])"


def _nodes(source: str, kinds: frozenset[str]) -> str:
    """A tier's or fallback's nodes: every node of a grammar kind, or a name bound before."""
    return f"find(answer, {source!r})" if source in kinds else source


def _number_reading(c: Component, kinds: frozenset[str]) -> list[tuple[str, str, str]]:
    """The lets (field, name, source) that read a number component's values by cues.

    Tiers, strongest cue first (a number after 'new value', then a result after '=', then any
    number): the values are the numbers of the first tier that offers one. Each tier's nodes have
    a ``number`` (null: not a number, dropped) and, where ``percent`` is not ``keep``, an
    ``is_percent``. In order, each step optional:

    * ``percent``: ``drop`` drops percentages; ``fallback`` keeps a tier's percentages only where
      it offers no other number (a gauge in %: 'Yes, 105%');
    * ``distance``: the positions (a name bound before, or a node kind: where its nodes start) of
      comparisons; a number ending right before one ('35 psi below the max') is a distance, not the
      value, where its tier offers another;
    * ``asides``: a number inside brackets (after a '(' or '[' boundary not closed before it) is an
      aside where any tier offers a number outside them;
    * ``latest``: a trigger kind (``CORRECTION``); the numbers after its last occurrence win, tier
      by tier ('10.4, sorry, 10.5');
    * ``fallback``: nodes (kind or name) whose numbers are the values where no tier offers any.

    Binds ``<name>_tiers`` (each tier's nodes after the percent step) and ``<name>_tier`` (the
    first tier, from 1, that offers a number; 0: none), for a rule's ``[[uncertain]]`` checks.
    """
    n = c.name
    lets: list[tuple[str, str, str]] = []
    kept = ""
    if c.arithmetic:
        lets.extend(_arithmetic(c))
        kept = f" and start(v) not in {n}_steps"
    tiers = []
    for i, tier in enumerate(c.tiers, 1):
        nodes = " + ".join(_nodes(source, kinds) for source in tier)
        numbers = f"[v for v in {nodes} if v.number != null{kept}]"
        if c.percent == "keep":
            lets.append(("tiers", f"{n}__p{i}", numbers))
        elif c.percent == "drop":
            lets.append(("tiers", f"{n}__p{i}", f"[v for v in {nodes} if v.number != null and not v.is_percent{kept}]"))
        else:
            lets.append(("tiers", f"{n}__n{i}", numbers))
            plain = f"[v for v in {n}__n{i} if not v.is_percent]"
            lets.append(("percent", f"{n}__p{i}", f"{plain} if len({plain}) > 0 else {n}__n{i}"))
        tiers.append(f"{n}__p{i}")
    lets.append(("tiers", f"{n}_tiers", f"[{', '.join(tiers)}]"))
    chosen = "0"
    for i in range(len(tiers), 0, -1):
        chosen = f"{i} if len({tiers[i - 1]}) > 0 else ({chosen})"
    lets.append(("tiers", f"{n}_tier", chosen))
    # a number said in a contrast or a supposition (the claim layer's context spans) is never the
    # answer's ("by 1 (unlike a quick guess: by 0.5)"; "clears (unlike the first throw, which
    # cleared by 2.6 m)" gives no margin of its own)
    spans = "claims.context_spans"
    inside = f"any([s[0] <= start(v) and start(v) < s[1] for s in {spans}])"
    lets.append(("tiers", f"{n}__own", f"[] if len({spans}) == 0 else ([start(v) for v in flatten([{', '.join(tiers)}]) if not {inside}])"))
    owned = []
    for i, tier in enumerate(tiers, 1):
        lets.append(("tiers", f"{n}__c{i}", f"{tier} if len({spans}) == 0 else ([v for v in {tier} if start(v) in {n}__own])"))
        owned.append(f"{n}__c{i}")
    tiers = owned
    if c.distance:
        marks = f"[start(x) for x in {_nodes(c.distance, kinds)}]" if c.distance in kinds else c.distance
        gap = "c - start(v) - len(text(v))"
        lets.append(("distance", f"{n}__near", f"[] if len({marks}) == 0 else ([start(v) for v in flatten({n}_tiers) if any([{gap} >= 0 and {gap} <= 1 for c in {marks}])])"))
        for i, tier in enumerate(tiers, 1):
            far = f"[v for v in {tier} if start(v) not in {n}__near]"
            lets.append(("distance", f"{n}__d{i}", f"{tier} if len({n}__near) == 0 else ({far} if len({far}) > 0 else {tier})"))
        tiers = [f"{n}__d{i}" for i in range(1, len(tiers) + 1)]

    def first(lists: list[str]) -> str:
        expr = lists[-1]
        for name in reversed(lists[:-1]):
            expr = f"{name} if len({name}) > 0 else ({expr})"
        return expr

    picked = first(tiers)
    if c.latest:
        lets.append(("latest", f"{n}__fix", f"max([start(x) for x in {_nodes(c.latest, kinds)}])"))
        late = []
        for i, tier in enumerate(tiers, 1):
            lets.append(("latest", f"{n}__l{i}", f"[] if {n}__fix == null else [v for v in {tier} if start(v) > {n}__fix]"))
            late.append(f"{n}__l{i}")
        lets.append(("latest", f"{n}__late", first(late)))
        picked = f"{n}__late if len({n}__late) > 0 else ({picked})"
    if c.asides:
        bounds = "find(answer, 'BOUNDARY')"
        lets.append(("asides", f"{n}__opens", f"[start(b) for b in {bounds} if text(b) in ['(', '[']]"))
        lets.append(("asides", f"{n}__closes", f"[] if len({n}__opens) == 0 else ([start(b) for b in {bounds} if text(b) in [')', ']']])"))
        open_before = f"any([o < start(v) and not any([o < x and x < start(v) for x in {n}__closes]) for o in {n}__opens])"
        lets.append(("asides", f"{n}__inside", f"[] if len({n}__opens) == 0 else ([start(v) for v in flatten([{', '.join(tiers)}]) if {open_before}])"))
        outs = []
        for i, tier in enumerate(tiers, 1):
            lets.append(("asides", f"{n}__o{i}", f"{tier} if len({n}__inside) == 0 else ([v for v in {tier} if start(v) not in {n}__inside])"))
            outs.append(f"{n}__o{i}")
        lets.append(("asides", f"{n}__out", first(outs)))
        picked = f"{n}__out if len({n}__out) > 0 else ({picked})"
    values = f"unique([v.number for v in ({picked})])"
    if c.fallback:
        drop = " and not r.is_percent" if c.percent != "keep" else ""
        spare = f"unique([r.number for r in {_nodes(c.fallback, kinds)} if r.number != null{drop}])"
        values = f"{values} if {n}_tier > 0 else {spare}"
    lets.append(("tiers", c.plural, values))
    return lets


def _arithmetic(c: Component) -> list[tuple[str, str, str]]:
    """The lets that find the results of arithmetic that are steps, not the value, as
    ``<name>_steps`` (their positions). A result is a step when an operator follows it ('= 95 + 30 =
    125': 95), or when its number is used again later as an operand, a number an operator touches
    ('25% of 90 = 22.5, so 90 + 22.5 = 112.5': 22.5); plus the positions the ``steps`` name holds."""
    results, operands, operator, extra = c.arithmetic or ("", "", "", None)
    n = c.name
    found = f"find(answer, {results!r})"
    end = "start({0}) + len(text({0}))"
    touches = f"o[0] - ({end.format('r')}) in [0, 1] or start(r) - o[1] in [0, 1]"
    followed = f"any([o[0] - ({end.format('v')}) in [0, 1] for o in {n}__ops])"
    reused = f"any([u[0] > start(v) and u[1] == v.number for u in {n}__uses])"
    steps = f"[] if len({found}) == 0 else ([start(v) for v in {found} if {followed} or {reused}])"
    return [
        ("arithmetic", f"{n}__ops", f"[(start(o), {end.format('o')}) for o in find(answer, {operator!r})]"),
        ("arithmetic", f"{n}__uses", f"[] if len({n}__ops) == 0 else ([(start(r), r.number) "
         f"for r in find(answer, {operands!r}) if any([{touches} for o in {n}__ops])])"),
        ("arithmetic", f"{n}_steps", f"{steps} + {extra}" if extra else steps),
    ]


def _said_by(c: Component) -> str:
    """The claim node's ``value``: the first value one of whose children the node has, else the
    value said otherwise ('yes' if self.yes != null or self.changes != null else 'no')."""
    expr = next(repr(value) for value, children in c.said_by if not children)
    for value, children in reversed([(v, ch) for v, ch in c.said_by if ch]):
        test = " or ".join(f"self.{child} != null" for child in children)
        expr = f"{value!r} if {test} else ({expr})"
    return expr


def _remaining(c: Component) -> list[tuple[str, str, str]]:
    """The lets (field, name, source) of a choice with ``denied``: its values are those asserted
    (its ``values``) and, where the denials leave exactly one declared value not asserted, that one
    ("does not change" -> stay the same; "won't tip" -> stable); a contradiction stays visible. The
    claim layer applies the same to a kind's own values (claims.<kind>.values)."""
    n = c.name
    left = f"[v for v in {list(c.domain)!r} if v not in {n}__denied]"
    implied = f"len({n}__denied) > 0 and len({n}__left) == 1 and {n}__left[0] not in {n}__asserted"
    return [
        ("values", f"{n}__asserted", c.values or ""),
        ("denied", f"{n}__denied", c.denied or ""),
        ("denied", f"{n}__left", left),
        ("denied", c.plural, f"{n}__asserted + {n}__left if {implied} else {n}__asserted"),
    ]


def _trailing(c: Component) -> str:
    """True when a hedge mark starts at or after the end of the component's last counted claim
    ("247°, I think", "tips at C-B (?)"): a hedge past the clause the claim layer reads it in."""
    counted = c.counted or f"[c for c in claims.{c.claim}.claims if not c.retracted]"
    marks = " + ".join(f"find(answer, {mark!r})" for mark in c.trailing)
    ends = f"[start(c.node) + len(text(c.node)) for c in {counted}]"
    near = "" if c.within is None else f" and start(h) - max({ends}) <= {c.within}"
    return f"(len([h for h in {marks} if start(h) >= max({ends}){near}]) > 0 if len({counted}) > 0 else false)"


def _letter_values(c: Component) -> str:
    return f"unique([upper(v) for v in claims.{c.claim}.values])"


def _choice_wrong(c: Component) -> str:
    return f"{c.name} == {c.key}"


def _number_wrong(c: Component) -> str:
    return f"close({c.name}, number({c.key}), {c.tolerance!r}, {c.relative!r})"


def _letter_wrong(c: Component) -> str:
    return f"{c.name} == upper({c.key})"


def _angle_values(c: Component) -> str:
    return f"unique([round(mod(n, 360), 6) for n in [number(v) for v in claims.{c.claim}.values] if n != null])"


def _angle_wrong(c: Component) -> str:
    # the shorter way round the circle: 359° and 1° are 2° apart
    return f"abs(mod({c.name} - number({c.key}) + 180, 360) - 180) <= {c.tolerance + c.relative!r}"


def _pair_values(c: Component) -> str:
    return f"unique(claims.{c.claim}.values)"


def _pair_wrong(c: Component) -> str:
    return f"{c.name} == {c.key}"


def _pair_reversed(c: Component) -> str:
    return f"{c.name} != ({c.key}[1], {c.key}[0])"


def _compound_values(c: Component) -> str:
    return f"unique(claims.{c.claim}.values)"


#: How a compound compares one part with the key's value, by the part's kind.
_PART_COMPARE = {
    "choice": "{v} == {k}",
    "letter": "upper({v}) == upper({k})",
    # a part the template does not have is null on both sides: equal
    "number": "({v} == null and {k} == null) or close(number({v}), number({k}), {tol!r}, {rel!r})",
}


@dataclass(frozen=True)
class Kind:
    """A component kind: how it reads its values and compares the one value with the key's."""

    values: Callable[[Component], str]
    #: The check of the "wrong" step (None: a compound, whose parts each have their own).
    wrong: Callable[[Component], str] | None
    #: Default explanations of each standard reason ({reason} is the reason as the rule names it).
    explain: dict[str, str]
    #: The check of the "reversed" step, for ordered kinds (None: the kind has no such step).
    reversed: Callable[[Component], str] | None = None


#: Default explanations, in the component's own words: its reason (as the rule names it) and
#: what happened, never its name used as an English noun ("The out is hedged" read oddly for a
#: component ``out``).
_EXPLAIN = {
    "missing": "{reason}: no value of it is read from the answer (none is said, or each is denied).",
    "hedged": "{reason}: its value is hedged ('probably', 'I think', a '?').",
    "conflict": "{reason}: two or more different values of it are offered.",
    "wrong": "{reason}: the value read differs from the key's.",
}
KINDS: dict[str, Kind] = {
    "choice": Kind(_choice_values, _choice_wrong, _EXPLAIN),
    "number": Kind(_number_values, _number_wrong, _EXPLAIN),
    "letter": Kind(_letter_values, _letter_wrong, _EXPLAIN),
    "angle": Kind(_angle_values, _angle_wrong, _EXPLAIN),
    "compound": Kind(_compound_values, None, _EXPLAIN),
    "pair": Kind(
        _pair_values, _pair_wrong,
        _EXPLAIN | {"reversed": "{reason}: the right two are named in the wrong order."}, _pair_reversed,
    ),
}


def _check_key_names(c: Component, own_key: bool, key_names: frozenset[str]) -> None:
    """A component without its own ``key`` is compared with ``target.<name>``, a compound's parts
    with ``target.<part>``: one that ``[key]`` does not define would read null and make every
    answer wrong, so it is refused here, not found as a "wrong" on every line."""
    needed = [] if own_key or c.kind == "compound" else [c.name]
    needed += [part for part, _ in c.parts]
    for name in needed:
        if name not in key_names:
            raise ComponentError(
                c.index, "name",
                f"component {c.name!r} is compared with target.{name}, but [key] defines no {name!r} "
                f"(it has {', '.join(sorted(key_names))}): add [key] {name} = \"...\" or give the component a key",
            )


def expand_components(
    raw: list[dict[str, Any]],
    claim_kinds: dict[str, tuple[str, ...]] | None,
    node_kinds: frozenset[str] = frozenset(),
    fields: frozenset[str] = frozenset(),
    key_names: frozenset[str] | None = None,
) -> Expanded:
    """Check each ``[[component]]`` table and return the bindings, requirements and outputs its
    kind gives it (ComponentError for a table that cannot be used). ``node_kinds`` are the names
    ``find(answer, ...)`` looks for (the answer grammar's rules, aliases and terminals); ``fields``
    what a node may have (those and the rule's attributes), for a reading's ``number``;
    ``key_names`` the rule's ``[key]`` values, which a component without ``key`` is compared with."""
    components = [_component(index, entry, claim_kinds, node_kinds, fields) for index, entry in enumerate(raw)]
    names = [c.name for c in components]
    for c in components:
        if names.count(c.name) > 1:
            raise ComponentError(c.index, "name", f"component {c.name!r} is declared twice")
    if key_names is not None:
        for c, entry in zip(components, raw, strict=True):
            _check_key_names(c, "key" in entry, key_names)
    out = Expanded()
    for c in components:
        kind = KINDS[c.kind]
        if c.said_by:
            out.attributes.append((c.index, c.claim, "value", _said_by(c)))
        if c.tiers:
            out.lets.extend((c.index, at, name, source) for at, name, source in _number_reading(c, node_kinds))
        elif c.denied:
            out.lets.extend((c.index, at, name, source) for at, name, source in _remaining(c))
        else:
            out.lets.append((c.index, "values" if c.values else "kind", c.plural, c.values or kind.values(c)))
        out.lets.append((c.index, "name", c.name, f"{c.plural}[0] if len({c.plural}) == 1 else null"))
        hedged = f"({c.hedged})" if c.hedged else {"own": f"claims.{c.claim}.hedged", "answer": "claims.hedged"}.get(c.hedge)
        if c.trailing:
            hedged = f"{hedged} or {_trailing(c)}" if hedged else _trailing(c)
        checks = {
            "missing": f"len({c.plural}) > 0",
            "hedged": None if hedged is None else f"not {hedged}" if not c.trailing else f"not ({hedged})",
            "conflict": f"len({c.plural}) == 1",
            "reversed": kind.reversed(c) if kind.reversed else None,
            "wrong": kind.wrong(c) if kind.wrong else None,  # a compound: one per part, below
        }
        for step in STEPS:
            if checks[step] is None:
                continue
            default = kind.explain.get(step, "").format(reason=c.reasons[step])
            explain = c.explain.get(step, default)
            out.requires.append((c.index, c.reasons[step], checks[step], c.when, explain))
        for position, (part, part_kind) in enumerate(c.parts):
            value = f"{c.name}[{position}]"
            check = _PART_COMPARE[part_kind].format(
                v=value, k=f"target.{part}", tol=c.tolerance, rel=c.relative
            )
            out.requires.append((c.index, f"wrong {part}", check, c.when, ""))
            if c.output:
                out.outputs.append((c.index, part, f"{value} if {c.name} != null else null"))
        if c.output and not c.parts:
            out.outputs.append((c.index, c.name, c.name))
    return out


def _component(
    index: int,
    entry: dict[str, Any],
    claim_kinds: dict[str, tuple[str, ...]] | None,
    node_kinds: frozenset[str] = frozenset(),
    fields: frozenset[str] = frozenset(),
) -> Component:
    def fail(field_name: str | None, message: str) -> ComponentError:
        return ComponentError(index, field_name, message)

    for name, value in entry.items():
        expected = COMPONENT_FIELDS.get(name)
        if expected is None:
            raise fail(name, f"unknown field {name!r} in [[component]] (fields: {', '.join(COMPONENT_FIELDS)})")
        if not isinstance(value, expected) or isinstance(value, bool) and expected is not bool:
            raise fail(name, f"{name} has the wrong type")
    for required in ("name", "kind"):
        if required not in entry:
            raise fail(None, f"a [[component]] needs {required!r}")
    name = entry["name"]
    if not _NAME.match(name):
        raise fail("name", f"component name {name!r} is not a valid name")
    kind = entry["kind"]
    if kind not in KINDS:
        raise fail("kind", f"unknown component kind {kind!r} (kinds: {', '.join(KINDS)})")
    claim = entry.get("claim", name)
    hedge = entry.get("hedge", "own")
    tiers = _reading(entry, kind, node_kinds, fields, fail)
    said_by = _said(entry, kind, claim_kinds, fields, fail)
    trailing = _trailing_marks(entry, node_kinds, fail)
    # the claim kind is read for the values (unless the rule gives its own), for an own hedge and
    # for the claims a trailing hedge follows
    reads_claims = (
        "values" not in entry and not tiers
        or (hedge == "own" and "hedged" not in entry)
        or "claim" in entry
        or (bool(trailing) and "counted" not in entry)
        or "denied" in entry
    )
    if reads_claims and claim_kinds is None:
        raise fail(None, "components read the claim layer: the rule needs a [claims] table")
    if reads_claims and claim not in claim_kinds:
        raise fail("claim", f"component {name!r} reads claim kind {claim!r}, which [claims] kinds does not declare")
    if kind == "choice" and "values" not in entry and len(claim_kinds[claim]) < 2:
        raise fail(
            "kind",
            f"a choice needs [claims] kinds.{claim} to list its values (two or more), or its own `values`",
        )
    if "denied" in entry and (kind != "choice" or "values" not in entry or len(claim_kinds[claim]) < 2):
        raise fail(
            "denied",
            "denied belongs to a choice with its own `values` (those asserted) and a claim kind listing its values",
        )
    if hedge not in HEDGE_SCOPES:
        raise fail("hedge", f"hedge is one of {', '.join(HEDGE_SCOPES)}, not {hedge!r}")
    reasons = {
        "missing": f"{name} missing", "hedged": f"{name} hedged",
        "conflict": f"{name} conflict", "reversed": f"{name} reversed", "wrong": f"wrong {name}",
    }
    for step, reason in entry.get("reasons", {}).items():
        if step not in reasons or not isinstance(reason, str) or not reason.strip():
            raise fail("reasons", f"reasons maps {', '.join(STEPS)} to reason names, not {step!r}")
        reasons[step] = reason
    explain = entry.get("explain", {})
    if any(step not in reasons or not isinstance(text, str) for step, text in explain.items()):
        raise fail("explain", f"explain maps {', '.join(STEPS)} to explanations")
    tolerance = float(entry.get("tolerance", 0.0))
    relative = float(entry.get("relative", 1e-6 if kind in ("number", "angle") else 0.0))
    if kind not in ("number", "angle", "compound") and ("tolerance" in entry or "relative" in entry):
        raise fail("tolerance", "tolerance and relative apply to number and angle components only")
    if not all(math.isfinite(x) and 0 <= x <= 1e12 for x in (tolerance, relative)):
        raise fail("tolerance", "tolerance and relative are finite numbers from 0")
    parts: list[tuple[str, str]] = []
    for part, part_kind in entry.get("parts", {}).items():
        if not _NAME.match(part) or part_kind not in _PART_COMPARE:
            raise fail("parts", f"parts maps names to {', '.join(_PART_COMPARE)}, not {part!r} = {part_kind!r}")
        parts.append((part, part_kind))
    if (kind == "compound") != bool(parts):
        raise fail("parts", "a compound component lists its parts (and only a compound has parts)")
    plural = entry.get("plural", f"{name}s")
    if not _NAME.match(plural) or plural == name:
        raise fail("plural", f"plural {plural!r} is not a valid name distinct from {name!r}")
    return Component(
        index=index,
        name=name,
        kind=kind,
        claim=claim,
        key=entry.get("key", f"target.{name}"),
        plural=plural,
        values=entry.get("values"),
        hedged=entry.get("hedged"),
        hedge=hedge,
        when=entry.get("when"),
        reasons=reasons,
        explain=explain,
        tolerance=tolerance,
        relative=relative,
        output=entry.get("output", True),
        parts=tuple(parts),
        tiers=tiers,
        percent=entry.get("percent", "keep"),
        distance=entry.get("distance"),
        asides=entry.get("asides", False),
        latest=entry.get("latest"),
        fallback=entry.get("fallback"),
        arithmetic=_arithmetic_fields(entry, node_kinds, fail),
        said_by=said_by,
        trailing=trailing,
        counted=entry.get("counted"),
        within=entry.get("within"),
        denied=entry.get("denied"),
        domain=tuple(claim_kinds[claim]) if "denied" in entry else (),
    )


def _trailing_marks(
    entry: dict[str, Any],
    node_kinds: frozenset[str],
    fail: Callable[[str | None, str], ComponentError],
) -> tuple[str, ...]:
    """Check ``trailing`` (node kinds of hedge marks) and ``counted`` (a name) and ``within`` (a
    number of characters), which go with it."""
    raw = entry.get("trailing")
    if raw is None:
        for name in ("counted", "within"):
            if name in entry:
                raise fail(name, f"{name} is a setting of a `trailing` hedge: it needs `trailing`")
        return ()
    if "within" in entry and not 0 <= entry["within"] <= 10_000:
        raise fail("within", "within is a number of characters, from 0")
    marks = [raw] if isinstance(raw, str) else raw
    if not marks or not all(isinstance(m, str) and _NAME.match(m) for m in marks):
        raise fail("trailing", "trailing names one or more node kinds of hedge marks ('HEDGE', 'QUESTION')")
    unknown = [m for m in marks if node_kinds and m not in node_kinds]
    if unknown:
        raise fail("trailing", f"trailing {unknown[0]!r} is not a rule or terminal of the answer grammar")
    counted = entry.get("counted")
    if counted is not None and not _NAME.match(counted):
        raise fail("counted", f"counted names a list of claims bound in the rule, not {counted!r}")
    return tuple(marks)


def _arithmetic_fields(
    entry: dict[str, Any],
    node_kinds: frozenset[str],
    fail: Callable[[str | None, str], ComponentError],
) -> tuple[str, str, str, str | None] | None:
    """Check a number reading's ``arithmetic``: results, operands and operator (node kinds of the
    answer grammar) and, optionally, steps (a name bound before)."""
    raw = entry.get("arithmetic")
    if raw is None:
        return None
    for key, value in raw.items():
        if key not in ARITHMETIC_KEYS:
            raise fail("arithmetic", f"arithmetic has {', '.join(ARITHMETIC_KEYS)}, not {key!r}")
        if not isinstance(value, str) or not _NAME.match(value):
            raise fail("arithmetic", f"arithmetic.{key} is a name, not {value!r}")
    for key in ARITHMETIC_KEYS[:3]:
        if key not in raw:
            raise fail("arithmetic", f"arithmetic needs {key!r} (a node kind of the answer grammar)")
        if node_kinds and raw[key] not in node_kinds:
            raise fail("arithmetic", f"arithmetic.{key} {raw[key]!r} is not a rule or terminal of the answer grammar")
    return raw["results"], raw["operands"], raw["operator"], raw.get("steps")


def _said(
    entry: dict[str, Any],
    kind: str,
    claim_kinds: dict[str, tuple[str, ...]] | None,
    fields: frozenset[str],
    fail: Callable[[str | None, str], ComponentError],
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Check a choice's ``said_by``: each declared value of its claim kind mapped to the answer
    grammar's children that say it (a name or a list), exactly one mapped to [] (otherwise)."""
    raw = entry.get("said_by")
    if raw is None:
        return ()
    if kind != "choice":
        raise fail("said_by", "said_by belongs to a choice component")
    claim = entry.get("claim", entry["name"])
    declared = (claim_kinds or {}).get(claim, ())
    said = []
    for value, children in raw.items():
        names = [children] if isinstance(children, str) else children
        if value not in declared:
            raise fail("said_by", f"said_by: {value!r} is not a value of claim kind {claim!r} ({', '.join(declared)})")
        if not isinstance(names, list) or not all(isinstance(n, str) and _NAME.match(n) for n in names):
            raise fail("said_by", f"said_by maps {value!r} to a child name or a list of them")
        unknown = [n for n in names if fields and n not in fields]
        if unknown:
            raise fail("said_by", f"said_by: no node of the answer grammar has a child {unknown[0]!r}")
        said.append((value, tuple(names)))
    if [bool(names) for _, names in said].count(False) != 1 or said[-1][1]:
        raise fail("said_by", "said_by ends with the one value said otherwise, mapped to []")
    return tuple(said)


def _reading(
    entry: dict[str, Any],
    kind: str,
    node_kinds: frozenset[str],
    fields: frozenset[str],
    fail: Callable[[str | None, str], ComponentError],
) -> tuple[tuple[str, ...], ...]:
    """Check a number component's reading by cues (``tiers`` and the steps that go with it) and
    return its tiers (empty: no such reading)."""
    used = [f for f in READING_FIELDS if f in entry]
    if not used:
        return ()
    if kind != "number":
        raise fail(used[0], f"{used[0]} belongs to a number component's reading (kind = \"number\")")
    if "tiers" not in entry:
        raise fail(used[0], f"{used[0]} is a step of a number's reading by cues: it needs `tiers`")
    if "values" in entry:
        raise fail("values", "a component reads its values by `tiers` or by `values`, not both")

    def source(value: Any, field_name: str) -> str:
        if not isinstance(value, str) or not _NAME.match(value):
            raise fail(field_name, f"{field_name} names node kinds or bound names, not {value!r}")
        return value

    tiers = []
    raw = entry["tiers"]
    if not raw:
        raise fail("tiers", "tiers lists one or more tiers, strongest cue first")
    for tier in raw:
        names = tier if isinstance(tier, list) else [tier]
        if not names:
            raise fail("tiers", "a tier names one or more node kinds or bound names, not []")
        tiers.append(tuple(source(name, "tiers") for name in names))
    percent = entry.get("percent", "keep")
    if percent not in PERCENT_RULES:
        raise fail("percent", f"percent is one of {', '.join(PERCENT_RULES)}, not {percent!r}")
    if fields:
        for needed, why in (("number", "every tier's nodes"), ("is_percent", "percent")):
            if needed == "is_percent" and percent == "keep":
                continue
            if needed not in fields:
                raise fail(
                    "tiers" if needed == "number" else "percent",
                    f"{why} read each node's {needed}: declare an [[attribute]] {needed!r}",
                )
    for name in ("distance", "fallback"):
        if name in entry:
            source(entry[name], name)
    if "latest" in entry:
        latest = source(entry["latest"], "latest")
        if node_kinds and latest not in node_kinds:
            raise fail("latest", f"latest {latest!r} is not a rule or terminal of the answer grammar")
    return tuple(tiers)
