"""Evaluate rule expressions: the closure compiler (values in :mod:`.values`, functions in
:mod:`.functions`).

A parsed expression (a Lark tree from :mod:`.parse`) is checked and compiled once into nested
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
:class:`~keyaudit.engine.errors.ExpressionError` with a one-line, located message. Work and values
are bounded (:mod:`.limits`): every operation is charged to the evaluation's budget by the
size of what it touches before it runs, and every value built is checked against the size,
depth and integer bounds.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from lark import Token, Tree

from ...errors import ExpressionError
from .parse import Origin, decode_string, fail

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

from .codegen import FastEvaluator
from .functions import FUNCTIONS, Function, function_reference
from .limits import MAX_INT, MIN_INT, Budget
from .values import (
    _BINARY,
    _COMPARISONS,
    _PLAIN_TYPES,
    MAX_CHARS,
    MAX_ITEMS,
    MAX_ITERATIONS,
    Evaluator,
    Scope,
    _field,
    _index,
    _is_node,
    _negate,
    _sequence,
    _slice,
    type_name,
)

# --------------------------------------------------------------------------- compiler


@dataclass
class Compiled:
    """What compiling a tree gives: the evaluator (the generated fast path, with the closures as
    its fallback and reference) and the free names the expression reads."""

    evaluate: FastEvaluator
    names: frozenset[str]


#: The comprehension variables visible at a point of the tree, each with the one-element list
#: (its slot) the comprehension that binds it stores the current element in.
Locals = dict


class _Compiler:
    """Check a tree (names, functions, arity, chains) and turn it into closures.

    Each ``c_<rule>`` method compiles one kind of tree node. Operations that can fail evaluate
    their operands first, then run the operation inside ``try``, so only the innermost failing
    operation adds its position to the message (``rethrow``); ``try`` costs nothing when nothing
    fails.
    """

    def __init__(self, names: Collection[str], origin: Origin) -> None:
        # A set-like view is used as is (a rule's [[let]]s share one; copying it per let made
        # loading quadratic in the number of lets).
        self.bound = names if isinstance(names, AbstractSet) else frozenset(names)
        self.origin = origin
        self.free: set[str] = set()
        self.needs_budget = False
        #: The budget every closure of this expression charges (reset per evaluation).
        self.budget = Budget()

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
            value = float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise self.error_at(token, f"number literal too long: {text[:20]}...") from None
        if type(value) is int and not MIN_INT <= value <= MAX_INT:
            raise self.error_at(token, f"integer literal {text[:20]}... exceeds 64 bits")
        return value

    def c_string(self, tree: Tree, local: Locals) -> Evaluator:
        value = decode_string(tree.children[0], self.origin)
        return lambda env: value

    def c_null(self, tree: Tree, local: Locals) -> Evaluator:
        return lambda env: None

    def c_true(self, tree: Tree, local: Locals) -> Evaluator:
        return lambda env: True

    def c_false(self, tree: Tree, local: Locals) -> Evaluator:
        return lambda env: False

    # A list or tuple literal has as many elements as the expression has commas: not charged.
    # Its total size (elements that are themselves big lists) is checked when it is read.

    def c_list(self, tree: Tree, local: Locals) -> Evaluator:
        found, value = self.literal(tree)
        if found:  # ['below', 'under']: built once (values are never changed in place)
            return lambda env: list(value)
        items = [self.compile(child, local) for child in tree.children]
        return lambda env: [item(env) for item in items]

    def literal(self, tree: Tree) -> tuple[bool, Any]:
        """``(True, value)`` when ``tree`` is a literal (a number, string, null, boolean, or a
        list or tuple of literals), else ``(False, None)``."""
        kind = str(tree.data)
        if kind in ("number", "string", "null", "true", "false"):
            return True, self.compile(tree, {})(None)
        operand = tree.children[-1] if tree.children else None
        if kind == "neg" and isinstance(operand, Tree) and operand.data == "number":
            return True, -self.number_value(operand.children[0])
        if kind in ("list", "tuple"):
            values = []
            for child in tree.children:
                found, value = self.literal(child)
                if not found:
                    return False, None
                values.append(value)
            return True, values if kind == "list" else tuple(values)
        return False, None

    def c_tuple(self, tree: Tree, local: Locals) -> Evaluator:
        found, value = self.literal(tree)
        if found:
            return lambda env: value
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
        slot = local.get(name)
        if slot is not None:  # a comprehension's variable: read from its slot
            return lambda env: slot[0]
        if name not in self.bound:
            raise self.error_at(token, self.unknown_name(name, set(local) | set(self.bound)))
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
        self.needs_budget = True
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
        budget = self.budget
        left_tree, symbol, right_tree = tree.children
        left = self.compile(left_tree, local)
        right = self.compile(right_tree, local)
        apply = _BINARY[str(symbol)]
        if str(symbol) != "+":  # numbers only: bounded by the 64-bit check in the operator
            return self.binary(symbol, apply, left, right)
        self.needs_budget = True
        convert = self.rethrow(symbol)

        def plus(env: Scope) -> Any:
            a = left(env)
            b = right(env)
            try:
                value = apply(a, b)
                if type(value) in _SEQUENCE_RESULTS:
                    budget.built(value)
                return value
            except Exception as error:
                raise convert(error) from None

        return plus

    def c_compare(self, tree: Tree, local: Locals) -> Evaluator:
        budget = self.budget
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
        convert = self.rethrow(op_tree.children[0])
        if symbol in ("==", "!="):  # total: never raises but for the budget
            equal = symbol == "=="
            compiler = self
            null_side = self.null_compared(left_tree, right_tree, left, right)
            if null_side is not None:  # "x != null": no value of the language equals null but null
                return (lambda env: null_side(env) is None) if equal else (
                    lambda env: null_side(env) is not None
                )

            def compare_equal(env: Scope) -> bool:
                a = left(env)
                b = right(env)
                if type(a) in _SEQUENCE_RESULTS and type(b) in _SEQUENCE_RESULTS:
                    # An expression that charges nothing else runs without a reset budget: one
                    # comparison of bounded values is then charged to a budget of its own.
                    try:
                        (budget if compiler.needs_budget else Budget()).comparing(a, b)
                    except Exception as error:
                        raise convert(error) from None
                return (a == b) is equal

            return compare_equal
        self.needs_budget = True
        apply = _COMPARISONS[symbol]
        containment = symbol in ("in", "not in")
        found, constant = self.literal(right_tree)
        strings = found and type(constant) in (list, tuple) and constant
        if containment and strings and all(type(item) is str for item in constant):
            return self.in_strings(symbol == "in", left, constant, apply, convert)

        def compare(env: Scope) -> Any:
            a = left(env)
            b = right(env)
            try:
                if containment:
                    budget.charge(1 + budget.reading(b) + budget.reading(a))
                else:
                    budget.comparing(a, b)
                return apply(a, b)
            except Exception as error:
                raise convert(error) from None

        return compare

    def null_compared(
        self, left_tree: Tree, right_tree: Tree, left: Evaluator, right: Evaluator
    ) -> Evaluator | None:
        """The side compared with a literal null (``x == null``), if one side is that literal."""
        if self.literal(right_tree) == (True, None):
            return left
        if self.literal(left_tree) == (True, None):
            return right
        return None

    def in_strings(
        self,
        wanted: bool,
        left: Evaluator,
        strings: list | tuple,
        apply: Callable[[Any, Any], bool],
        convert: Callable[[BaseException], ExpressionError],
    ) -> Evaluator:
        """``x in ['a', 'b']``: a set lookup for a string ``x``, charged as the list would be
        (reading the list charges its length, and its size is its length plus one)."""
        budget = self.budget
        members = frozenset(strings)
        fixed = 1 + len(strings) + len(strings) + 1

        def contains(env: Scope) -> Any:
            a = left(env)
            try:
                if type(a) is str:
                    budget.charge(fixed + len(a))
                    return (a in members) is wanted
                b = list(strings)
                budget.charge(1 + budget.reading(b) + budget.reading(a))
                return apply(a, b)
            except Exception as error:
                raise convert(error) from None

        return contains

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
        read = self.direct_read(target_tree, local, target)

        def attribute(env: Scope) -> Any:
            value = read(env)
            if value is None:
                return None
            try:
                if type(value) in _PLAIN_TYPES:
                    return _field(value, name)  # raises the "only nodes have fields" error
                return value.field(name)
            except Exception as error:
                raise convert(_field_failure(error, value, name)) from None

        return attribute

    def direct_read(self, tree: Tree, local: Locals, compiled: Evaluator) -> Evaluator:
        """For ``self.name``: the evaluator of the target, reading a name straight from the scope
        or slot (``compiled`` still reports an unbound name); any other target as compiled."""
        if not (isinstance(tree, Tree) and tree.data == "name"):
            return compiled
        name = str(tree.children[0])
        slot = local.get(name)
        if slot is not None:
            return lambda env: slot[0]

        def read(env: Scope) -> Any:
            try:
                return env[name]
            except KeyError:
                return compiled(env)  # raises the located "not bound" error

        return read

    def c_index(self, tree: Tree, local: Locals) -> Evaluator:
        target = self.compile(tree.children[0], local)
        position = self.compile(tree.children[1], local)
        return self.binary(tree.children[1], _index, target, position)

    def c_slice(self, tree: Tree, local: Locals) -> Evaluator:
        budget = self.budget
        target_tree, start_tree, stop_tree = tree.children
        target = self.compile(target_tree, local)
        start = self.compile(start_tree, local) if start_tree is not None else _constant(None)
        stop = self.compile(stop_tree, local) if stop_tree is not None else _constant(None)
        convert = self.rethrow(tree)
        self.needs_budget = True

        def sliced(env: Scope) -> Any:
            value, low, high = target(env), start(env), stop(env)
            try:
                result = _slice(value, low, high)
                if type(result) in _SEQUENCE_RESULTS:
                    budget.charge(len(result))
                return result
            except Exception as error:
                raise convert(error) from None

        return sliced

    def c_call(self, tree: Tree, local: Locals) -> Evaluator:
        budget = self.budget
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
        cost = function.cost
        builds = function.builds
        convert = self.rethrow(token)
        if cost is None and not builds:  # reads and returns a bounded amount: nothing to charge
            if count == 1:
                (only,) = args

                def plain1(env: Scope) -> Any:
                    value = only(env)
                    try:
                        return impl(value)
                    except Exception as error:
                        raise convert(error) from None

                return plain1
            if count == 2:
                return self.binary(token, impl, args[0], args[1])

        self.needs_budget = True
        if count == 1:
            (only,) = args

            def call1(env: Scope) -> Any:
                value = only(env)
                try:
                    if cost is not None:
                        budget.charge(cost(budget, value))
                    result = impl(value)
                    if builds:
                        budget.built(result)
                    return result
                except Exception as error:
                    raise convert(error) from None

            return call1
        if count == 2:
            first, second = args

            def call2(env: Scope) -> Any:
                a = first(env)
                b = second(env)
                try:
                    if cost is not None:
                        budget.charge(cost(budget, a, b))
                    result = impl(a, b)
                    if builds:
                        budget.built(result)
                    return result
                except Exception as error:
                    raise convert(error) from None

            return call2

        def call(env: Scope) -> Any:
            values = [arg(env) for arg in args]
            try:
                if cost is not None:
                    budget.charge(cost(budget, *values))
                result = impl(*values)
                if builds:
                    budget.built(result)
                return result
            except Exception as error:
                raise convert(error) from None

        return call

    # ---- comprehension

    def c_listcomp(self, tree: Tree, local: Locals) -> Evaluator:
        budget = self.budget
        element_tree, variable, iterable_tree, *rest = tree.children
        condition_tree = rest[0] if rest else None
        name = self.check_name(variable)
        self.needs_budget = True
        iterable = self.compile(iterable_tree, local)  # the iterable sees the outer scope only
        slot: list = [None]
        inner = {**local, name: slot}
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
            try:
                budget.charge(len(items))
            except Exception as error:
                raise error_at(tree, str(error)) from None
            out: list = []
            append = out.append
            # The slot's value is restored after the loop: the same comprehension can run inside
            # itself (a derived attribute read on another node while its elements are read).
            saved = slot[0]
            try:
                if condition is None:
                    for item in items:
                        slot[0] = item
                        append(element(env))
                else:
                    for item in items:
                        slot[0] = item
                        if condition(env):
                            append(element(env))
            finally:
                slot[0] = saved
            try:
                return budget.built(out)
            except Exception as error:
                raise error_at(tree, str(error)) from None

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
    """Check ``tree`` against the bound ``names`` and compile it to closures, plus the generated
    function that runs the same expression faster (:mod:`.codegen`), where it has one."""
    compiler = _Compiler(names, origin)
    try:
        evaluate = compiler.compile(tree, {})
    except RecursionError:
        raise fail(origin, None, None, "expression nests too deeply") from None
    # Closures that charge nothing of their own (names, fields, literals, bounded calls) run
    # without resetting a budget.
    fast = FastEvaluator(
        tree, compiler.literal, evaluate, compiler.budget if compiler.needs_budget else None
    )
    return Compiled(fast, frozenset(compiler.free))


def new_scope(env: Any) -> Scope:
    """The scope of one evaluation: a copy of ``env``."""
    return dict(env)


#: Results an operator may build that are charged and checked like any value built.
_SEQUENCE_RESULTS = frozenset({str, list, tuple})
