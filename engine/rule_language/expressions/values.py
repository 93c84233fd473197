"""Values of the rule expression language: types, limits and the operators' semantics.

What ``+``, ``<``, ``in``, ``x[i]``, ``x.name`` and unary ``-`` do for each kind of value, and the
bounds every result is held to. :mod:`.functions` builds the callable functions on these and
:mod:`.evaluate` compiles expressions into calls of both. The semantics (null means "missing") are
stated in :mod:`.evaluate`'s docstring.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ...errors import ExpressionError
from .limits import MAX_CHARS, MAX_ITEMS, MAX_STEPS, check_int

#: Former name of :data:`~.limits.MAX_STEPS` (it counted comprehension steps only).
MAX_ITERATIONS = MAX_STEPS

Scope = dict[str, Any]
Evaluator = Callable[[Scope], Any]

_NUMBER_TYPES = (int, float)  # bool is deliberately not a number here: type(True) is bool
_SEQUENCE_TYPES = (list, tuple, str)
_PLAIN_TYPES = frozenset({type(None), bool, int, float, str, list, tuple})


def type_name(value: Any) -> str:
    """The name a rule author knows a value's type by (``null``, ``string``, ``node``...)."""
    if value is None:
        return "null"
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return {bool: "bool", int: "int", float: "float", str: "string"}.get(kind, kind.__name__)
    return "node"


def _is_number(value: Any) -> bool:
    return type(value) in _NUMBER_TYPES


def _is_node(value: Any) -> bool:
    return type(value) not in _PLAIN_TYPES


def _sequence(value: Any, what: str) -> list | tuple | str:
    """``value`` as a sequence (null → empty), or an error naming ``what`` wanted it."""
    if type(value) in _SEQUENCE_TYPES:
        return value
    if value is None:
        return ()
    raise ExpressionError(f"{what} takes a list, tuple or string, not {type_name(value)}")


def _check_length(a: Any, b: Any) -> None:
    """Refuse ``a + b`` before building it when the result would exceed a limit."""
    total = len(a) + len(b)
    if type(a) is str:
        if total > MAX_CHARS:
            raise ExpressionError(f"string of {total} characters; the limit is {MAX_CHARS}")
    elif total > MAX_ITEMS:
        raise ExpressionError(f"result has {total} elements; the limit is {MAX_ITEMS}")


def _check_items(result: list | tuple) -> list | tuple:
    if len(result) > MAX_ITEMS:
        raise ExpressionError(f"result has {len(result)} elements; the limit is {MAX_ITEMS}")
    return result


def _check_chars(result: str) -> str:
    if len(result) > MAX_CHARS:
        raise ExpressionError(f"string of {len(result)} characters; the limit is {MAX_CHARS}")
    return result


# --------------------------------------------------------------------------- operators


def _add(a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta in _NUMBER_TYPES and tb in _NUMBER_TYPES:
        return check_int(a + b)
    if a is None or b is None:
        return None
    if ta is tb and (ta is str or ta is list or ta is tuple):
        _check_length(a, b)
        return a + b
    raise ExpressionError(f"cannot add {type_name(a)} and {type_name(b)}")


def _arithmetic(symbol: str, function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    verb = {"-": "subtract", "*": "multiply", "/": "divide"}[symbol]

    def apply(a: Any, b: Any) -> Any:
        if type(a) in _NUMBER_TYPES and type(b) in _NUMBER_TYPES:
            try:
                return check_int(function(a, b))
            except ZeroDivisionError:
                raise ExpressionError("division by zero") from None
        if a is None or b is None:
            return None
        raise ExpressionError(f"cannot {verb} {type_name(a)} and {type_name(b)} (numbers only)")

    return apply


_BINARY = {
    "+": _add,
    "-": _arithmetic("-", operator.sub),
    "*": _arithmetic("*", operator.mul),
    "/": _arithmetic("/", operator.truediv),
}


def _orderable(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    return (ta in _NUMBER_TYPES and tb in _NUMBER_TYPES) or (ta is tb and ta in _SEQUENCE_TYPES)


def _ordering(symbol: str, function: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def compare(a: Any, b: Any) -> bool:
        if _orderable(a, b):
            try:
                return function(a, b)
            except TypeError:
                pass  # lists or tuples whose elements do not compare
        elif a is None or b is None:
            return False
        raise ExpressionError(f"cannot compare {type_name(a)} {symbol} {type_name(b)}")

    return compare


def _contains(item: Any, container: Any) -> bool:
    kind = type(container)
    if kind is list or kind is tuple:
        return item in container
    if kind is str:
        if type(item) is str:
            return item in container
        if item is None:
            return False
        raise ExpressionError(f"'in <string>' needs a string on the left, not {type_name(item)}")
    if container is None:
        return False
    raise ExpressionError(
        f"'in' needs a list, tuple or string on the right, not {type_name(container)}"
    )


def _not_contains(item: Any, container: Any) -> bool:
    return not _contains(item, container)


_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": _ordering("<", operator.lt),
    "<=": _ordering("<=", operator.le),
    ">": _ordering(">", operator.gt),
    ">=": _ordering(">=", operator.ge),
    "in": _contains,
    "not in": _not_contains,
}


def _negate(value: Any) -> Any:
    if type(value) in _NUMBER_TYPES:
        return check_int(-value)
    if value is None:
        return None
    raise ExpressionError(f"cannot negate {type_name(value)}")


def _index(value: Any, position: Any) -> Any:
    if type(value) in _SEQUENCE_TYPES:
        if type(position) is not int:
            raise ExpressionError(f"index must be an int, not {type_name(position)}")
        try:
            return value[position]
        except IndexError:
            return None
    if value is None:
        return None
    raise ExpressionError(f"cannot index {type_name(value)}")


def _slice(value: Any, start: Any, stop: Any) -> Any:
    for bound in (start, stop):
        if bound is not None and type(bound) is not int:
            raise ExpressionError(f"slice bounds must be ints, not {type_name(bound)}")
    if type(value) in _SEQUENCE_TYPES:
        return value[start:stop]
    if value is None:
        return None
    raise ExpressionError(f"cannot slice {type_name(value)}")


def _field(value: Any, name: str) -> Any:
    if value is None:
        return None
    if not _is_node(value):
        raise ExpressionError(f"{type_name(value)} has no field {name!r}; only nodes have fields")
    try:
        reader = value.field
    except AttributeError:
        raise ExpressionError(f"{type(value).__name__} value has no fields") from None
    return reader(name)
