"""Native bodies of the component kinds' general steps: plain Python for the expressions a kind
writes (:mod:`..reading.components`), keyed by the exact source it writes.

Why: every component's values, its one value and its standard checks (missing, hedged, conflict,
reversed, wrong, a compound's parts) and outputs ran through the expression interpreter.
Here each such source has a Python function with the same meaning, built from the same value
functions the language uses (``number``, ``unique``, ``close``, ``mod``, ``==`` ...), so the same
inputs give the same values; the rule keeps the expression (its source is what ``--explain``
prints and certainty reads) and evaluates it this way (:class:`..expressions.native.NativeExpression`).
A native body meets only values the claim layer and the key make; on anything else it raises,
and the expression evaluates the step instead.

Not native, and so still in the sandbox: everything a rule file writes (its own ``values``,
``hedged``, ``when``, ``key`` other than ``target.<name>``, its lets and requires), and the steps
of a number's reading by cues (``tiers``) and of ``denied``, ``said_by`` and ``trailing``, which
are long expressions over the answer's nodes (measured in ``bench/results/native_kinds.md``:
what the simple steps saved did not pay for a second copy of those).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..expressions.functions import _abs, _close, _mod, _number, _round, _unique
from ..expressions.native import Native
from ..expressions.values import _BINARY, _COMPARISONS, _field, _index
from ..reading.components import _PART_COMPARE, KINDS, Component

__all__ = ["native_steps"]

_TARGET_FIELD = re.compile(r"^target\.([A-Za-z][A-Za-z0-9_]*)$")
_PLAIN_LISTS = (list, tuple)


def _strict_list(value: Any) -> list | tuple:
    """A list or tuple as it is; anything else (null, a string) is left to the expression."""
    if type(value) not in _PLAIN_LISTS:
        raise TypeError("not a list")
    return value


def _claim_values(claim: str) -> Native:
    """``claims.<claim>.values``."""
    return lambda env: _field(_field(env["claims"], claim), "values")


def _values(c: Component) -> Native | None:
    """The native of the kind's own values (``KINDS[kind].values``)."""
    read = _claim_values(c.claim)
    if c.kind == "choice":
        return read
    if c.kind in ("pair", "compound"):
        return lambda env: _unique(_strict_list(read(env)))
    if c.kind == "number":
        return lambda env: _unique(
            [n for n in [_number(v) for v in _strict_list(read(env))] if n is not None]
        )
    if c.kind == "angle":
        return lambda env: _unique([
            _round(_mod(n, 360), 6)
            for n in [_number(v) for v in _strict_list(read(env))]
            if n is not None
        ])
    if c.kind == "letter":
        return lambda env: _unique([_upper(v) for v in _strict_list(read(env))])
    return None


def _upper(value: Any) -> Any:
    """``upper(v)`` for the strings and nulls claims hold (anything else: to the expression)."""
    if type(value) is str:
        return value.upper()
    if value is None:
        return None
    raise TypeError("not a string")


def _length(value: Any) -> int:
    """``len(x)`` of a list or tuple (anything else: to the expression)."""
    return len(_strict_list(value))


def _wrong(c: Component, key: Callable[[Mapping[str, Any]], Any]) -> Native | None:
    """The native of the kind's "wrong" check, reading the key's value with ``key``."""
    name = c.name
    if c.kind in ("choice", "pair"):
        return lambda env: env[name] == key(env)
    if c.kind == "letter":
        return lambda env: env[name] == _upper(key(env))
    if c.kind == "number":
        tolerance, relative = c.tolerance, c.relative
        return lambda env: _close(env[name], _number(key(env)), tolerance, relative)
    if c.kind == "angle":
        slack = c.tolerance + c.relative
        add, sub, at_most = _BINARY["+"], _BINARY["-"], _COMPARISONS["<="]
        return lambda env: at_most(_abs(sub(_mod(add(sub(env[name], _number(key(env))), 180), 360), 180)), slack)
    return None


def _target(field_name: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda env: _field(env["target"], field_name)


def native_steps(c: Component) -> dict[str, Native]:
    """The native body of each expression source the component's kind writes for ``c`` (the
    sources of :func:`..reading.components.expand_components`), where it has one."""
    kind = KINDS[c.kind]
    plural, name = c.plural, c.name
    steps: dict[str, Native] = {}
    if not (c.tiers or c.denied or c.values):
        values = _values(c)
        if values is not None:
            steps[kind.values(c)] = values
    steps[f"{plural}[0] if len({plural}) == 1 else null"] = (
        lambda env: _index(env[plural], 0) if _length(env[plural]) == 1 else None
    )
    steps[f"len({plural}) > 0"] = lambda env: _length(env[plural]) > 0
    steps[f"len({plural}) == 1"] = lambda env: _length(env[plural]) == 1
    if not (c.hedged or c.trailing):
        claim = c.claim
        if c.hedge == "own":
            steps[f"not claims.{claim}.hedged"] = lambda env: not _field(_field(env["claims"], claim), "hedged")
        elif c.hedge == "answer":
            steps["not claims.hedged"] = lambda env: not _field(env["claims"], "hedged")
    steps[name] = lambda env: env[name]
    keyed = _TARGET_FIELD.match(c.key)
    if keyed is None:
        return steps
    key = _target(keyed.group(1))
    if kind.wrong is not None:
        wrong = _wrong(c, key)
        if wrong is not None:
            steps[kind.wrong(c)] = wrong
    if kind.reversed is not None:
        steps[kind.reversed(c)] = lambda env: env[name] != (_index(key(env), 1), _index(key(env), 0))
    steps.update(_parts(c))
    return steps


def _parts(c: Component) -> dict[str, Native]:
    """A compound's part checks and outputs (``target.<part>`` is its key's value)."""
    name = c.name
    steps: dict[str, Native] = {}
    for position, (part, part_kind) in enumerate(c.parts):
        value = f"{name}[{position}]"
        source = _PART_COMPARE[part_kind].format(v=value, k=f"target.{part}", tol=c.tolerance, rel=c.relative)
        steps[source] = _part_check(name, position, _target(part), part_kind, c.tolerance, c.relative)
        steps[f"{value} if {name} != null else null"] = (
            lambda env, p=position: _index(env[name], p) if env[name] is not None else None
        )
    return steps


def _part_check(
    name: str, position: int, key: Callable[[Mapping[str, Any]], Any], part_kind: str,
    tolerance: float, relative: float,
) -> Native:
    """The native of one part's comparison (``_PART_COMPARE`` of ``part_kind``)."""
    if part_kind == "choice":
        return lambda env: _index(env[name], position) == key(env)
    if part_kind == "letter":
        return lambda env: _upper(_index(env[name], position)) == _upper(key(env))

    def number(env: Mapping[str, Any]) -> bool:
        value, expected = _index(env[name], position), key(env)
        if value is None and expected is None:
            return True
        return _close(_number(value), _number(expected), tolerance, relative)

    return number
