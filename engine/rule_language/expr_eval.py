"""Evaluate rule expressions: the value semantics, the function table, and the closure compiler.

A parsed expression (a Lark tree from :mod:`.expr_parse`) is checked and compiled once into nested
Python closures, each taking the scope mapping and returning a value. Nothing here calls ``eval``,
``exec``, ``getattr`` on user-chosen names or imports anything by name: operators dispatch to the
functions below, calls go through the fixed :data:`FUNCTIONS` table, and ``x.name`` calls
``x.field(name)`` on nodes only.

Values are null (``None``), booleans, ints, floats, strings, lists, tuples and nodes (anything
else the caller binds; the interpreter only calls ``field``, ``find``, ``text`` and reads
``kind``). **null means "missing"**, and the semantics are built so that a missing part of an LLM
answer gives a value, not a crash:

* ``x.name`` and ``x[i]`` on null are null; ``x[i]`` out of range is null;
* ``+ - * /`` and unary ``-`` with a null operand give null;
* ``< <= > >=`` with a null operand are false; ``==``/``!=`` compare null like any value;
* a sequence (list, tuple or string) is expected by ``in``, comprehensions and the collection
  functions; null counts as an empty sequence there (``x in null`` is false, and so is
  ``null in "text"``);
* ``and``/``or``/``not``/``if`` use Python truthiness (null, 0, "" and [] are false); ``and``/``or``
  return one of their operands, as in Python.

Everything else that goes wrong (``"a" + 1``, ``1 / 0``, ``len(5)``, an unbound name) raises
:class:`~keyaudit.engine.errors.ExpressionError` with a one-line, located message. Results are
bounded: no list over :data:`MAX_ITEMS` elements, no string built over :data:`MAX_CHARS`
characters, and no more than :data:`MAX_ITERATIONS` comprehension steps in one evaluation.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from lark import Token, Tree

from ..errors import ExpressionError
from .expr_parse import Origin, decode_string, fail

__all__ = [
    "FUNCTIONS",
    "Function",
    "MAX_CHARS",
    "MAX_ITEMS",
    "MAX_ITERATIONS",
    "Compiled",
    "compile_tree",
    "function_reference",
    "new_scope",
    "type_name",
]

#: Longest list or tuple an expression may build (``+``, comprehensions, ``span``...).
MAX_ITEMS = 100_000
#: Longest string an expression may build (``+``, ``str``).
MAX_CHARS = 100_000
#: Most comprehension steps (items iterated over, all comprehensions together) per evaluation.
MAX_ITERATIONS = 1_000_000

Scope = dict[str, Any]
Evaluator = Callable[[Scope], Any]

_NUMBER_TYPES = (int, float)  # bool is deliberately not a number here: type(True) is bool
_SEQUENCE_TYPES = (list, tuple, str)
_PLAIN_TYPES = frozenset({type(None), bool, int, float, str, list, tuple})
#: Scope key of the iteration budget; "$" cannot start a name, so no expression can read it.
_BUDGET = "$budget"


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
        return a + b
    if a is None or b is None:
        return None
    if ta is tb:
        if ta is str:
            return _check_chars(a + b)
        if ta is list or ta is tuple:
            return _check_items(a + b)
    raise ExpressionError(f"cannot add {type_name(a)} and {type_name(b)}")


def _arithmetic(symbol: str, function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    verb = {"-": "subtract", "*": "multiply", "/": "divide"}[symbol]

    def apply(a: Any, b: Any) -> Any:
        if type(a) in _NUMBER_TYPES and type(b) in _NUMBER_TYPES:
            try:
                return function(a, b)
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
        return -value
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


# --------------------------------------------------------------------------- functions


@dataclass(frozen=True)
class Function:
    """One entry of the function table: the implementation and how many arguments it takes.

    ``impl`` receives the evaluated arguments positionally and raises ExpressionError (without a
    location; the call site adds it) for bad input. ``max_args=None`` means variadic. The first
    line of ``impl.__doc__`` is the reference line shown to rule authors.
    """

    impl: Callable[..., Any]
    min_args: int
    max_args: int | None = -1
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


def _len(x: Any) -> int:
    """len(xs) → int: elements of a list/tuple or characters of a string; len(null) = 0."""
    return len(_sequence(x, "len()"))


def _unique(xs: Any) -> list:
    """unique(xs) → list: distinct elements in order of first appearance; unique(null) = []."""
    out: list = []
    seen: set = set()
    for item in _sequence(xs, "unique()"):
        try:
            if item in seen:
                continue
            seen.add(item)
        except TypeError:  # unhashable (a list): fall back to equality
            if item in out:
                continue
        out.append(item)
    return out


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
    return total


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


def _number(x: Any) -> float | None:
    """number(x) → float from a number or a string that is wholly numeric ("65", "-3.5", "1,250", "1e3", "−2"), else null ("65 psi" → null); number(node) reads text(node)."""  # noqa: E501
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
    if len(text) > 100 or not _NUMERIC.fullmatch(text):
        return None
    value = float(text.replace(",", ""))
    return value if math.isfinite(value) else None


def _abs(x: Any) -> Any:
    """abs(x) → absolute value of a number; abs(null) = null."""
    if _is_number(x):
        return abs(x)
    if x is None:
        return None
    raise ExpressionError(f"abs() takes a number, not {type_name(x)}")


def _round(x: Any, digits: Any = None) -> Any:
    """round(x[, n]) → x rounded to n decimals (int when n is omitted), half to even like Python: round(2.5) = 2; round(null) = null."""  # noqa: E501
    if digits is not None and type(digits) is not int:
        raise ExpressionError(f"round(x, n) needs an int n, not {type_name(digits)}")
    if _is_number(x):
        if digits is None:
            if not math.isfinite(x):
                raise ExpressionError(f"cannot round {x} to an int")
            return round(x)
        return round(x, digits)
    if x is None:
        return None
    raise ExpressionError(f"round() takes a number, not {type_name(x)}")


def _close(a: Any, b: Any, abs_tol: Any = 0.0, rel_tol: Any = 1e-9) -> bool:
    """close(a, b[, abs_tol[, rel_tol]]) → |a−b| ≤ max(abs_tol, rel_tol·max(|a|,|b|)); defaults 0 and 1e-9; false if a or b is null."""  # noqa: E501
    for name, tol in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        if not _is_number(tol) or tol < 0:
            raise ExpressionError(f"close() needs a number ≥ 0 for {name}, not {tol!r}")
    if a is None or b is None:
        return False
    if not (_is_number(a) and _is_number(b)):
        raise ExpressionError(
            f"close() compares numbers, not {type_name(a)} and {type_name(b)}; use number()"
        )
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


_ALPHABETS = ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789")


def _alphabet(c: Any, name: str) -> str:
    if type(c) is str and len(c) == 1:
        for alphabet in _ALPHABETS:
            if c in alphabet:
                return alphabet
    raise ExpressionError(f"{name}() takes one letter, one digit or an int, not {c!r}")


def _step(c: Any, delta: int, name: str) -> Any:
    if type(c) is int:
        return c + delta
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
        raise ExpressionError(f"span({a!r}, {b!r}) mixes alphabets")
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
    out: list = []
    for xs in _sequence(xss, "flatten()"):
        if xs is None:
            continue
        out.extend(_sequence(xs, "flatten()"))
    return list(_check_items(out))


#: The only functions an expression can call. Add an entry to extend the language; its
#: implementation's first docstring line is the reference line (see :func:`function_reference`).
FUNCTIONS: dict[str, Function] = {
    "len": Function(_len, 1),
    "unique": Function(_unique, 1),
    "min": Function(_min, 1, None),
    "max": Function(_max, 1, None),
    "sum": Function(_sum, 1),
    "sorted": Function(_sorted, 1),
    "first": Function(_first, 1),
    "last": Function(_last, 1),
    "count": Function(_count, 2),
    "any": Function(_any, 1),
    "all": Function(_all, 1),
    "lower": Function(
        _string_function("lower", str.lower, "lower(s) → s in lower case; lower(null) = null."), 1
    ),
    "upper": Function(
        _string_function("upper", str.upper, "upper(s) → s in upper case; upper(null) = null."), 1
    ),
    "strip": Function(
        _string_function(
            "strip",
            str.strip,
            "strip(s) → s without leading/trailing whitespace; strip(null) = null.",
        ),
        1,
    ),
    "number": Function(_number, 1),
    "abs": Function(_abs, 1),
    "round": Function(_round, 1, 2),
    "close": Function(_close, 2, 4),
    "succ": Function(_succ, 1),
    "pred": Function(_pred, 1),
    "span": Function(_span, 2),
    "tuple": Function(_tuple, 1),
    "list": Function(_list, 1),
    "str": Function(_str, 1),
    "coalesce": Function(_coalesce, 1, None),
    "find": Function(_find, 2),
    "text": Function(_text, 1),
    "kind": Function(_kind, 1),
    "flatten": Function(_flatten, 1),
    "start": Function(_start, 1),
}


def function_reference() -> str:
    """The DSL function reference as Markdown, one bullet per function, in table order."""
    return "\n".join(f"- `{name}`: {function.doc}" for name, function in FUNCTIONS.items())


# --------------------------------------------------------------------------- compiler


@dataclass
class Compiled:
    """What compiling a tree gives: the evaluator and facts the Expression needs."""

    evaluate: Evaluator
    names: frozenset[str]
    has_comprehension: bool


Locals = frozenset  # the comprehension variables visible at a point of the tree


class _Compiler:
    """Check a tree (names, functions, arity, chains) and turn it into closures.

    Each ``c_<rule>`` method compiles one kind of tree node. Operations that can fail evaluate
    their operands first, then run the operation inside ``try``, so only the innermost failing
    operation adds its position to the message (``rethrow``); ``try`` costs nothing when nothing
    fails.
    """

    def __init__(self, names: Collection[str], origin: Origin) -> None:
        self.bound = frozenset(names)
        self.origin = origin
        self.free: set[str] = set()
        self.has_comprehension = False

    # ---- errors

    def error_at(self, where: Tree | Token | None, message: str) -> ExpressionError:
        line = column = None
        if isinstance(where, Token):
            line, column = where.line, where.column
        elif isinstance(where, Tree) and not where.meta.empty:
            line, column = where.meta.line, where.meta.column
        return fail(self.origin, line, column, message)

    def rethrow(self, where: Tree | Token) -> Callable[[BaseException], ExpressionError]:
        """A function turning an exception raised at ``where`` into a located ExpressionError."""
        error_at = self.error_at

        def convert(error: BaseException) -> ExpressionError:
            if isinstance(error, RecursionError):
                return error_at(where, "expression nests too deeply")
            message = " ".join(str(error).split()) or type(error).__name__
            return error_at(where, message)

        return convert

    # ---- dispatch

    def compile(self, tree: Tree, local: Locals) -> Evaluator:
        method = getattr(self, "c_" + str(tree.data), None)
        if method is None:  # pragma: no cover - the grammar and this class change together
            raise self.error_at(tree, f"internal error: no compiler for {tree.data}")
        return method(tree, local)

    # ---- literals

    def c_number(self, tree: Tree, local: Locals) -> Evaluator:
        value = self.number_value(tree.children[0])
        return lambda env: value

    def number_value(self, token: Token) -> int | float:
        text = str(token)
        try:
            return float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise self.error_at(token, f"number literal too long: {text[:20]}...") from None

    def c_string(self, tree: Tree, local: Locals) -> Evaluator:
        value = decode_string(tree.children[0], self.origin)
        return lambda env: value

    def c_null(self, tree: Tree, local: Locals) -> Evaluator:
        return lambda env: None

    def c_true(self, tree: Tree, local: Locals) -> Evaluator:
        return lambda env: True

    def c_false(self, tree: Tree, local: Locals) -> Evaluator:
        return lambda env: False

    def c_list(self, tree: Tree, local: Locals) -> Evaluator:
        items = [self.compile(child, local) for child in tree.children]
        return lambda env: [item(env) for item in items]

    def c_tuple(self, tree: Tree, local: Locals) -> Evaluator:
        items = [self.compile(child, local) for child in tree.children]
        if len(items) == 2:
            first, second = items
            return lambda env: (first(env), second(env))
        return lambda env: tuple([item(env) for item in items])

    # ---- names

    def check_name(self, token: Token, what: str = "names") -> str:
        name = str(token)
        if name.startswith("_"):
            raise self.error_at(token, f"{what} starting with '_' are not allowed: {name!r}")
        return name

    def c_name(self, tree: Tree, local: Locals) -> Evaluator:
        token = tree.children[0]
        name = self.check_name(token)
        if name not in local:
            if name not in self.bound:
                raise self.error_at(token, self.unknown_name(name, local | self.bound))
            self.free.add(name)
        error_at = self.error_at

        def lookup(env: Scope) -> Any:
            try:
                return env[name]
            except KeyError:
                raise error_at(token, f"name {name!r} is not bound in this evaluation") from None

        return lookup

    def unknown_name(self, name: str, visible: Collection[str]) -> str:
        literals = {"True": "true", "False": "false", "None": "null", "NULL": "null"}
        if name in literals:
            return f"unknown name {name!r}; write {literals[name]}"
        if name in FUNCTIONS:
            return f"{name!r} is a function; call it: {name}(...)"
        return f"unknown name {name!r}" + _suggest(name, visible)

    # ---- operators

    def c_neg(self, tree: Tree, local: Locals) -> Evaluator:
        minus, operand = tree.children
        if isinstance(operand, Tree) and operand.data == "number":
            value = -self.number_value(operand.children[0])
            return lambda env: value
        inner = self.compile(operand, local)
        convert = self.rethrow(minus)

        def negative(env: Scope) -> Any:
            value = inner(env)
            try:
                return _negate(value)
            except Exception as error:
                raise convert(error) from None

        return negative

    def binary(self, where: Token, apply: Callable, left: Evaluator, right: Evaluator) -> Evaluator:
        convert = self.rethrow(where)

        def binary(env: Scope) -> Any:
            a = left(env)
            b = right(env)
            try:
                return apply(a, b)
            except Exception as error:
                raise convert(error) from None

        return binary

    def c_binary(self, tree: Tree, local: Locals) -> Evaluator:
        left_tree, symbol, right_tree = tree.children
        left = self.compile(left_tree, local)
        right = self.compile(right_tree, local)
        return self.binary(symbol, _BINARY[str(symbol)], left, right)

    def c_compare(self, tree: Tree, local: Locals) -> Evaluator:
        if len(tree.children) > 3:
            second = tree.children[3].children[0]
            raise self.error_at(
                second,
                "chained comparisons are not supported; write 'a < b and b < c'"
                " (or parenthesise: '(a == b) == c')",
            )
        left_tree, op_tree, right_tree = tree.children
        symbol = " ".join(str(t) for t in op_tree.children)
        left = self.compile(left_tree, local)
        right = self.compile(right_tree, local)
        if symbol == "==":  # total: never raises, no guard needed
            return lambda env: left(env) == right(env)
        if symbol == "!=":
            return lambda env: left(env) != right(env)
        return self.binary(op_tree.children[0], _COMPARISONS[symbol], left, right)

    def c_not_(self, tree: Tree, local: Locals) -> Evaluator:
        inner = self.compile(tree.children[0], local)
        return lambda env: not inner(env)

    def c_and_(self, tree: Tree, local: Locals) -> Evaluator:
        left = self.compile(tree.children[0], local)
        right = self.compile(tree.children[1], local)
        return lambda env: left(env) and right(env)

    def c_or_(self, tree: Tree, local: Locals) -> Evaluator:
        left = self.compile(tree.children[0], local)
        right = self.compile(tree.children[1], local)
        return lambda env: left(env) or right(env)

    def c_ternary(self, tree: Tree, local: Locals) -> Evaluator:
        then = self.compile(tree.children[0], local)
        condition = self.compile(tree.children[1], local)
        otherwise = self.compile(tree.children[2], local)
        return lambda env: then(env) if condition(env) else otherwise(env)

    # ---- postfix

    def c_attr(self, tree: Tree, local: Locals) -> Evaluator:
        target_tree, token = tree.children
        name = self.check_name(token, "fields")
        target = self.compile(target_tree, local)
        convert = self.rethrow(token)

        def attribute(env: Scope) -> Any:
            value = target(env)
            if value is None:
                return None
            try:
                if type(value) in _PLAIN_TYPES:
                    return _field(value, name)  # raises the "only nodes have fields" error
                return value.field(name)
            except Exception as error:
                raise convert(_field_failure(error, value, name)) from None

        return attribute

    def c_index(self, tree: Tree, local: Locals) -> Evaluator:
        target = self.compile(tree.children[0], local)
        position = self.compile(tree.children[1], local)
        return self.binary(tree.children[1], _index, target, position)

    def c_slice(self, tree: Tree, local: Locals) -> Evaluator:
        target_tree, start_tree, stop_tree = tree.children
        target = self.compile(target_tree, local)
        start = self.compile(start_tree, local) if start_tree is not None else _constant(None)
        stop = self.compile(stop_tree, local) if stop_tree is not None else _constant(None)
        convert = self.rethrow(tree)

        def sliced(env: Scope) -> Any:
            value, low, high = target(env), start(env), stop(env)
            try:
                return _slice(value, low, high)
            except Exception as error:
                raise convert(error) from None

        return sliced

    def c_call(self, tree: Tree, local: Locals) -> Evaluator:
        token, *arg_trees = tree.children
        name = self.check_name(token)
        function = FUNCTIONS.get(name)
        if function is None:
            if name in local or name in self.bound:
                message = f"{name!r} is not a function; only table functions can be called"
            else:
                message = f"unknown function {name!r}" + _suggest(name, FUNCTIONS)
            raise self.error_at(token, message)
        count = len(arg_trees)
        low, high = function.min_args, function.max_args
        if count < low or (high is not None and count > high):
            raise self.error_at(token, f"{name}() takes {function.arity()}, got {count}")
        args = [self.compile(arg, local) for arg in arg_trees]
        impl = function.impl
        convert = self.rethrow(token)
        if count == 1:
            (only,) = args

            def call1(env: Scope) -> Any:
                value = only(env)
                try:
                    return impl(value)
                except Exception as error:
                    raise convert(error) from None

            return call1
        if count == 2:
            return self.binary(token, impl, args[0], args[1])

        def call(env: Scope) -> Any:
            values = [arg(env) for arg in args]
            try:
                return impl(*values)
            except Exception as error:
                raise convert(error) from None

        return call

    # ---- comprehension

    def c_listcomp(self, tree: Tree, local: Locals) -> Evaluator:
        element_tree, variable, iterable_tree, *rest = tree.children
        condition_tree = rest[0] if rest else None
        name = self.check_name(variable)
        self.has_comprehension = True
        iterable = self.compile(iterable_tree, local)  # the iterable sees the outer scope only
        inner = local | {name}
        element = self.compile(element_tree, inner)
        condition = self.compile(condition_tree, inner) if condition_tree is not None else None
        convert = self.rethrow(iterable_tree)
        error_at = self.error_at

        def comprehension(env: Scope) -> list:
            value = iterable(env)
            try:
                items = _sequence(value, "a comprehension")
                if len(items) > MAX_ITEMS:
                    raise ExpressionError(f"comprehension over more than {MAX_ITEMS} elements")
            except Exception as error:
                raise convert(error) from None
            budget = env[_BUDGET]
            budget[0] -= len(items)
            if budget[0] < 0:
                message = f"evaluation exceeds {MAX_ITERATIONS} comprehension steps in total"
                raise error_at(tree, message)
            scope = dict(env)
            out: list = []
            append = out.append
            if condition is None:
                for item in items:
                    scope[name] = item
                    append(element(scope))
            else:
                for item in items:
                    scope[name] = item
                    if condition(scope):
                        append(element(scope))
            return out

        return comprehension


def _field_failure(error: Exception, value: Any, name: str) -> Exception:
    """The error to report for ``value.name``: a node type without ``field`` says so plainly."""
    if _is_node(value) and not callable(getattr(type(value), "field", None)):
        kind = getattr(value, "kind", type(value).__name__)  # e.g. a terminal leaf
        return ExpressionError(f"{kind} has no fields (reading {name!r})")
    return error


def _constant(value: Any) -> Evaluator:
    return lambda env: value


def _suggest(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def compile_tree(tree: Tree, names: Collection[str], origin: Origin) -> Compiled:
    """Check ``tree`` against the bound ``names`` and compile it to a closure."""
    compiler = _Compiler(names, origin)
    try:
        evaluate = compiler.compile(tree, frozenset())
    except RecursionError:
        raise fail(origin, None, None, "expression nests too deeply") from None
    return Compiled(evaluate, frozenset(compiler.free), compiler.has_comprehension)


def new_scope(env: Any) -> Scope:
    """The scope of one evaluation: a copy of ``env`` plus a fresh comprehension budget."""
    scope = dict(env)
    scope[_BUDGET] = [MAX_ITERATIONS]
    return scope
