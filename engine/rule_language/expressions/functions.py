"""The functions a rule expression can call: the fixed table :data:`FUNCTIONS`.

The only way an expression reaches code is through this table; adding an entry extends the
language, and its implementation's first docstring line is its reference line in the README
(:func:`function_reference`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...errors import ExpressionError
from ..reading.number_words import number_from_words
from .limits import MAX_ROUND_DIGITS, Budget, check_int, log2_factor
from .values import (
    _NUMBER_TYPES,
    _SEQUENCE_TYPES,
    MAX_ITEMS,
    _check_chars,
    _check_items,
    _is_node,
    _is_number,
    _sequence,
    type_name,
)

# --------------------------------------------------------------------------- functions


@dataclass(frozen=True)
class Function:
    """One entry of the function table: the implementation and how many arguments it takes.

    ``impl`` receives the evaluated arguments positionally and raises ExpressionError (without a
    location; the call site adds it) for bad input. ``max_args=None`` means variadic. The first
    line of ``impl.__doc__`` is the reference line shown to rule authors.

    ``cost(budget, *args)`` is the number of steps the call is charged *before* it runs (see
    :mod:`.limits`): what it reads of its arguments; ``None`` for a function that reads a
    bounded amount (``len``, ``first``, ``abs``...). ``builds`` says whether it returns a new
    list, tuple or string, which the caller then charges and checks.
    """

    impl: Callable[..., Any]
    min_args: int
    max_args: int | None = -1
    cost: Callable[..., int] | None = None
    builds: bool = False
    doc: str = field(init=False)

    def __post_init__(self) -> None:
        if self.max_args == -1:
            object.__setattr__(self, "max_args", self.min_args)
        lines = (self.impl.__doc__ or "").strip().splitlines()
        object.__setattr__(self, "doc", lines[0].strip() if lines else "")

    def arity(self) -> str:
        """``"1 argument"``, ``"1 to 2 arguments"``, ``"at least 1 argument"``."""
        low, high = self.min_args, self.max_args
        noun = "argument" if (high if high is not None else low) == 1 else "arguments"
        if high is None:
            return f"at least {low} {noun}"
        return f"{low} {noun}" if low == high else f"{low} to {high} {noun}"


def _shown(value: Any) -> str:
    """A value as an error message shows it: short scalars as written, anything else by type."""
    if value is None or type(value) in (bool, int, float) or (
        type(value) is str and len(value) <= 40
    ):
        return repr(value)
    return type_name(value)


def _len(x: Any) -> int:
    """len(xs) → int: elements of a list/tuple or characters of a string; len(null) = 0."""
    return len(_sequence(x, "len()"))


def _unique(xs: Any) -> list:
    """unique(xs) → list: distinct elements in order of first appearance; unique(null) = []."""
    out: list = []
    seen: set = set()
    for item in _sequence(xs, "unique()"):
        try:
            marker = item if type(item) is not list else _frozen(item)
            if marker in seen:
                continue
            seen.add(marker)
        except TypeError:  # holds a list somewhere: compare a frozen copy
            marker = _frozen(item)
            if marker in seen:
                continue
            seen.add(marker)
        out.append(item)
    return out


class _ListMark(tuple):
    """A list, frozen: equal to a list's frozen copy only, never to a tuple (as ``[1] != (1,)``)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is _ListMark and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(("list", tuple(self)))


def _frozen(value: Any) -> Any:
    """A hashable stand-in for ``value`` that is equal exactly when the values are equal, so
    ``unique`` stays linear on lists of lists (it used to compare each with all kept so far)."""
    kind = type(value)
    if kind is list:
        return _ListMark(_frozen(v) for v in value)
    if kind is tuple:
        return tuple(_frozen(v) for v in value)
    return value


def _comparable_values(values: Iterable, name: str) -> list:
    """The non-null values, checked to be mutually orderable (all numbers, all strings...)."""
    present = [v for v in values if v is not None]
    if present:
        first = type(present[0])
        if first in _NUMBER_TYPES:
            same = all(type(v) in _NUMBER_TYPES for v in present)
        else:
            same = first in _SEQUENCE_TYPES and all(type(v) is first for v in present)
        if not same:
            classes = sorted({"number" if _is_number(v) else type_name(v) for v in present})
            raise ExpressionError(f"{name}() cannot order {' and '.join(classes)} values")
    return present


def _extreme(choose: Callable[[Any], Any], args: tuple, name: str) -> Any:
    """min/max: Python's own on the non-null values; mixed types are reported, not ordered."""
    values = args[0] if len(args) == 1 else args
    if type(values) not in _SEQUENCE_TYPES:
        values = _sequence(values, name + "() with one argument")
    if None in values:
        values = [v for v in values if v is not None]
    if not values:
        return None
    try:
        return choose(values)
    except TypeError:  # mixed types, or nodes, which have no order
        _comparable_values(values, name)
        raise ExpressionError(f"{name}() cannot order these elements") from None


def _min(*args: Any) -> Any:
    """min(xs) or min(a, b, ...) → smallest value, nulls skipped; null if nothing is left."""
    return _extreme(min, args, "min")


def _max(*args: Any) -> Any:
    """max(xs) or max(a, b, ...) → largest value, nulls skipped; null if nothing is left."""
    return _extreme(max, args, "max")


def _sum(xs: Any) -> Any:
    """sum(xs) → sum of the numbers, nulls skipped; sum([]) = 0; any non-number is an error."""
    total: int | float = 0
    for item in _sequence(xs, "sum()"):
        if item is None:
            continue
        if not _is_number(item):
            raise ExpressionError(f"sum() adds numbers, not {type_name(item)}")
        total += item
    return check_int(total)


def _sorted(xs: Any) -> list:
    """sorted(xs) → new ascending list; elements must be all numbers or all strings (no null)."""
    values = list(_sequence(xs, "sorted()"))
    if any(v is None for v in values):
        raise ExpressionError("sorted() cannot order null; filter it out first")
    _comparable_values(values, "sorted")
    try:
        return sorted(values)
    except TypeError:
        raise ExpressionError("sorted() cannot order these elements") from None


def _first(xs: Any) -> Any:
    """first(xs) → first element (character of a string), or null when empty or null."""
    seq = _sequence(xs, "first()")
    return seq[0] if seq else None


def _last(xs: Any) -> Any:
    """last(xs) → last element (character of a string), or null when empty or null."""
    seq = _sequence(xs, "last()")
    return seq[-1] if seq else None


def _count(xs: Any, value: Any) -> int:
    """count(xs, v) → how many elements equal v (substrings, for a string); count(null, v) = 0."""
    seq = _sequence(xs, "count()")
    if type(seq) is str:
        if type(value) is not str:
            raise ExpressionError(f"count(<string>, v) needs a string v, not {type_name(value)}")
        return seq.count(value)
    return sum(1 for item in seq if item == value)


def _any(xs: Any) -> bool:
    """any(xs) → true if some element is truthy; any([]) = any(null) = false."""
    return any(_sequence(xs, "any()"))


def _all(xs: Any) -> bool:
    """all(xs) → true if every element is truthy; all([]) = all(null) = true."""
    return all(_sequence(xs, "all()"))


def _string_function(name: str, method: Callable[[str], str], doc: str) -> Callable[[Any], Any]:
    def apply(s: Any) -> Any:
        if type(s) is str:
            return method(s)
        if s is None:
            return None
        raise ExpressionError(f"{name}() takes a string, not {type_name(s)}")

    apply.__doc__ = doc
    return apply


_NUMERIC = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


#: Unicode vulgar fractions a number may end in ("4½"): their values.
_VULGAR_FRACTIONS = {
    "½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3, "⅛": 0.125, "⅜": 0.375, "⅝": 0.625,
    "⅞": 0.875,
}


def _number(x: Any) -> float | None:
    """number(x) → float from a number or a string that is wholly numeric ("65", "-3.5", "1,250", "1e3", "−2") or a number in words ("sixty-five", "minus two"), else null ("65 psi" → null); number(node) reads text(node)."""  # noqa: E501
    if type(x) in _NUMBER_TYPES:
        return float(x)
    if x is None:
        return None
    if _is_node(x):
        x = _text(x)
        if x is None:
            return None
    if type(x) is not str:
        raise ExpressionError(f"number() takes a string or a number, not {type_name(x)}")
    text = x.strip().replace("\u2212", "-")  # the typographic minus LLMs like to write
    if len(text) > 100:
        return None
    fraction = _VULGAR_FRACTIONS.get(text[-1:])
    if fraction is not None:  # "4½" → 4.5, "-1½" → -1.5, "½" → 0.5
        sign, digits = (-1.0, text[1:-1]) if text[:1] == "-" else (1.0, text[:-1].lstrip("+"))
        if digits == "" or (digits.isascii() and digits.isdigit() and len(digits) <= 15):
            return sign * (float(digits or 0) + fraction)
        return None
    if not _NUMERIC.fullmatch(text):
        return number_from_words(text) if text[:1].isalpha() else None
    value = float(text.replace(",", ""))
    return value if math.isfinite(value) else None


def _abs(x: Any) -> Any:
    """abs(x) → absolute value of a number; abs(null) = null."""
    if _is_number(x):
        return check_int(abs(x))
    if x is None:
        return None
    raise ExpressionError(f"abs() takes a number, not {type_name(x)}")


def _round(x: Any, digits: Any = None) -> Any:
    """round(x[, n]) → x rounded to n decimals (int when n is omitted), half to even like Python: round(2.5) = 2; round(null) = null."""  # noqa: E501
    if digits is not None and type(digits) is not int:
        raise ExpressionError(f"round(x, n) needs an int n, not {type_name(digits)}")
    if digits is not None and abs(digits) > MAX_ROUND_DIGITS:
        # round(5, -10**9) would compute 10**(10**9): refuse, do not try
        raise ExpressionError(f"round(x, n) needs |n| <= {MAX_ROUND_DIGITS}, not {digits}")
    if _is_number(x):
        if digits is None:
            if not math.isfinite(x):
                raise ExpressionError(f"cannot round {x} to an int")
            return check_int(round(x))
        return check_int(round(x, digits))
    if x is None:
        return None
    raise ExpressionError(f"round() takes a number, not {type_name(x)}")


def _close(a: Any, b: Any, abs_tol: Any = 0.0, rel_tol: Any = 1e-9) -> bool:
    """close(a, b[, abs_tol[, rel_tol]]) → |a−b| ≤ max(abs_tol, rel_tol·max(|a|,|b|)); defaults 0 and 1e-9; false if a or b is null."""  # noqa: E501
    for name, tol in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        if not _is_number(tol) or tol < 0:
            raise ExpressionError(f"close() needs a number ≥ 0 for {name}, not {_shown(tol)}")
    if a is None or b is None:
        return False
    if not (_is_number(a) and _is_number(b)):
        raise ExpressionError(
            f"close() compares numbers, not {type_name(a)} and {type_name(b)}; use number()"
        )
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


def _mod(a: Any, b: Any) -> Any:
    """mod(a, b) → a modulo b with the sign of b, like Python's %: mod(-90, 360) = 270, mod(370.5, 360) = 10.5; null if a or b is null; b = 0 is an error."""  # noqa: E501
    if a is None or b is None:
        return None
    if not (_is_number(a) and _is_number(b)):
        raise ExpressionError(f"mod() takes numbers, not {type_name(a)} and {type_name(b)}")
    if b == 0:
        raise ExpressionError("mod(a, b) needs b != 0")
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ExpressionError(f"mod() needs finite numbers, not {_shown(a)} and {_shown(b)}")
    return check_int(a % b)


_ALPHABETS = ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789")


def _alphabet(c: Any, name: str) -> str:
    if type(c) is str and len(c) == 1:
        for alphabet in _ALPHABETS:
            if c in alphabet:
                return alphabet
    raise ExpressionError(f"{name}() takes one letter, one digit or an int, not {_shown(c)}")


def _step(c: Any, delta: int, name: str) -> Any:
    if type(c) is int:
        return check_int(c + delta)
    if c is None:
        return None
    alphabet = _alphabet(c, name)
    position = alphabet.index(c) + delta
    return alphabet[position] if 0 <= position < len(alphabet) else None


def _succ(c: Any) -> Any:
    """succ(c) → next letter/digit in its own alphabet ("B"→"C", "b"→"c", "8"→"9"), n+1 for an int; null after "Z", "z", "9" and for null."""  # noqa: E501
    return _step(c, 1, "succ")


def _pred(c: Any) -> Any:
    """pred(c) → previous letter/digit in its own alphabet ("C"→"B"), n−1 for an int; null before "A", "a", "0" and for null."""  # noqa: E501
    return _step(c, -1, "pred")


def _span(a: Any, b: Any) -> Any:
    """span(a, b) → inclusive list from a to b: two ints, or two letters/digits of one alphabet (span("B","D") = ["B","C","D"]); [] if a > b; null if either is null."""  # noqa: E501
    if a is None or b is None:
        return None
    if type(a) is int and type(b) is int:
        if b - a >= MAX_ITEMS:
            raise ExpressionError(f"span({a}, {b}) has more than {MAX_ITEMS} elements")
        return list(range(a, b + 1))
    alphabet = _alphabet(a, "span")
    if _alphabet(b, "span") is not alphabet:
        raise ExpressionError(f"span({_shown(a)}, {_shown(b)}) mixes alphabets")
    return list(alphabet[alphabet.index(a) : alphabet.index(b) + 1])


def _tuple(xs: Any) -> tuple:
    """tuple(xs) → the elements as a tuple (characters, for a string); tuple(null) = ()."""
    return tuple(_sequence(xs, "tuple()"))


def _list(xs: Any) -> list:
    """list(xs) → the elements as a list (characters, for a string); list(null) = []."""
    return list(_sequence(xs, "list()"))


def _str(x: Any) -> str:
    """str(x) → text of a scalar: "null", "true", "false", "65", "65.0", a string as is, text(node) for a node; lists are an error."""  # noqa: E501
    if type(x) is str:
        return x
    if x is None:
        return "null"
    if type(x) is bool:
        return "true" if x else "false"
    if type(x) in _NUMBER_TYPES:
        return _check_chars(repr(x))
    if _is_node(x):
        return _text(x)
    raise ExpressionError(f"str() takes a scalar, not {type_name(x)}")


def _coalesce(*args: Any) -> Any:
    """coalesce(a, b, ...) → the first argument that is not null, else null (all are evaluated)."""
    for arg in args:
        if arg is not None:
            return arg
    return None


def _node(x: Any, name: str) -> Any:
    if not _is_node(x):
        raise ExpressionError(f"{name}() takes a node, not {type_name(x)}")
    return x


def _find(node: Any, kind: Any) -> list:
    """find(node, kind) → every descendant node of that kind (grammar rule name), in document order; find(null, k) = []."""  # noqa: E501
    if type(kind) is not str:
        raise ExpressionError(f"find(node, kind) needs a string kind, not {type_name(kind)}")
    if node is None:
        return []
    return list(_node(node, "find").find(kind))


def _text(node: Any) -> Any:
    """text(node) → the source text the node was parsed from; a string is returned as is; text(null) = null."""  # noqa: E501
    if node is None or type(node) is str:
        return node
    return _node(node, "text").text()


def _kind(node: Any) -> Any:
    """kind(node) → the node's kind (its grammar rule name); kind(null) = null."""
    if node is None:
        return None
    return _node(node, "kind").kind


def _start(node: Any) -> Any:
    """start(node) → character offset where the node begins in the parsed text; start(null) = null."""
    if node is None:
        return None
    value = getattr(_node(node, "start"), "start", None)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ExpressionError(f"start() needs a parsed node, not {type_name(node)}")
    return value


def _flatten(xss: Any) -> list:
    """flatten(xss) → one list of the items of each list in xss, in order; null items skipped."""
    parts = [_sequence(xs, "flatten()") for xs in _sequence(xss, "flatten()") if xs is not None]
    _check_items(range(sum(map(len, parts))))  # refuse before building
    out: list = []
    for part in parts:
        out.extend(part)
    return out


# --------------------------------------------------------------------------- costs
# What each function reads of its arguments, charged before it runs (see .limits).


def _reads_all(budget: Budget, *args: Any) -> int:
    """Every element and character of every argument, nested lists included."""
    return 1 + sum(budget.reading(a) for a in args)


def _reads_items(budget: Budget, *args: Any) -> int:
    """The top-level elements (or characters) of every argument."""
    return 1 + sum(len(a) for a in args if type(a) in _SEQUENCE_TYPES)


def _extreme_cost(budget: Budget, *args: Any) -> int:
    return _reads_all(budget, *args)


def _sorted_cost(budget: Budget, xs: Any) -> int:
    n = len(xs) if type(xs) in _SEQUENCE_TYPES else 0
    return 1 + budget.reading(xs) * log2_factor(n)


def _count_cost(budget: Budget, xs: Any, value: Any) -> int:
    if type(xs) is str:
        return 1 + len(xs) + (len(value) if type(value) is str else 0)
    n = len(xs) if type(xs) in _SEQUENCE_TYPES else 0
    return 1 + budget.reading(xs) + n * budget.reading(value)


def _span_cost(budget: Budget, a: Any, b: Any) -> int:
    if type(a) is int and type(b) is int:
        return 1 + max(0, min(b - a + 1, MAX_ITEMS + 1))
    return 1


def _node_cost(budget: Budget, node: Any, *rest: Any) -> int:
    """A walk over a node's subtree: charged by the length of the text it spans."""
    start, end = getattr(node, "start", None), getattr(node, "end", None)
    if type(start) is int and type(end) is int:
        return 1 + max(0, end - start)
    source = getattr(node, "source", None)
    return 1 + (len(source) if type(source) is str else 0)


def _text_cost(budget: Budget, x: Any) -> int:
    if type(x) is str:
        return 1 + len(x)
    return _node_cost(budget, x) if _is_node(x) else 1


def _flatten_cost(budget: Budget, xss: Any) -> int:
    if type(xss) not in _SEQUENCE_TYPES:
        return 1
    return 1 + len(xss) + sum(len(xs) for xs in xss if type(xs) in _SEQUENCE_TYPES)


#: The only functions an expression can call. Add an entry to extend the language; its
#: implementation's first docstring line is the reference line (see :func:`function_reference`).
FUNCTIONS: dict[str, Function] = {
    "len": Function(_len, 1),
    "unique": Function(_unique, 1, cost=_reads_all, builds=True),
    "min": Function(_min, 1, None, cost=_extreme_cost),
    "max": Function(_max, 1, None, cost=_extreme_cost),
    "sum": Function(_sum, 1, cost=_reads_items),
    "sorted": Function(_sorted, 1, cost=_sorted_cost, builds=True),
    "first": Function(_first, 1),
    "last": Function(_last, 1),
    "count": Function(_count, 2, cost=_count_cost),
    "any": Function(_any, 1, cost=_reads_items),
    "all": Function(_all, 1, cost=_reads_items),
    "lower": Function(
        _string_function("lower", str.lower, "lower(s) → s in lower case; lower(null) = null."),
        1,
        cost=_reads_items,
        builds=True,
    ),
    "upper": Function(
        _string_function("upper", str.upper, "upper(s) → s in upper case; upper(null) = null."),
        1,
        cost=_reads_items,
        builds=True,
    ),
    "strip": Function(
        _string_function(
            "strip",
            str.strip,
            "strip(s) → s without leading/trailing whitespace; strip(null) = null.",
        ),
        1,
        cost=_reads_items,
        builds=True,
    ),
    "number": Function(_number, 1, cost=_text_cost),
    "abs": Function(_abs, 1),
    "round": Function(_round, 1, 2),
    "close": Function(_close, 2, 4),
    "mod": Function(_mod, 2),
    "succ": Function(_succ, 1),
    "pred": Function(_pred, 1),
    "span": Function(_span, 2, cost=_span_cost, builds=True),
    "tuple": Function(_tuple, 1, cost=_reads_items, builds=True),
    "list": Function(_list, 1, cost=_reads_items, builds=True),
    "str": Function(_str, 1, builds=True),
    "coalesce": Function(_coalesce, 1, None),
    "find": Function(_find, 2, cost=_node_cost, builds=True),
    "text": Function(_text, 1, builds=True),
    "kind": Function(_kind, 1),
    "flatten": Function(_flatten, 1, cost=_flatten_cost, builds=True),
    "start": Function(_start, 1),
}


def function_reference() -> str:
    """The DSL function reference as Markdown, one bullet per function, in table order."""
    return "\n".join(f"- `{name}`: {function.doc}" for name, function in FUNCTIONS.items())
