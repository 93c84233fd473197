"""Rule expressions as generated Python functions: the fast path beside the closures.

Why: the closure compiler (:mod:`.evaluate`) turns every operation into a Python call, and every
charge to the budget into another; a rule with thirty ``[[let]]``s spends most of its time in those
calls (gauge_reading's value tiers: ~140 µs per answer). Here the same checked tree becomes the
statements of one Python function, with the frequent operations written inline: gauge_reading's
lets take ~90 µs per answer instead of ~140 (attribute evaluation and tree walks included; the
evaluation alone is two to three times faster).

**Safety.** The generated source is made of this module's templates only: no character of the rule
file reaches it. Constants (numbers, strings, literal lists), bound names and field names are passed
in tuples and read by index (``_K[3]``, ``_N[0]``), and so are the functions of
:data:`~.functions.FUNCTIONS` it calls; the function runs with empty builtins in a namespace of the
helpers below. ``tests/test_expr_codegen.py`` tokenizes the function of every expression of the
bundled rules (and of a hostile one) and checks every token against that vocabulary.

**Semantics.** Where the fast function returns, its value is the closures' value: every operation
does what the closure does, charges the budget at least as much and checks the same bounds. Any
exception at all — a type error, an unbound name, an exceeded bound, an error inside a derived
attribute, Python's recursion limit — abandons the fast path, and the closures evaluate the
expression again from the start: they give the value or the located error message. So the fast
path never has to produce an error itself, only to be right when nothing goes wrong; a tree it
cannot express within Python's compiler limits (deep nesting) has no fast path and runs on the
closures alone.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from lark import Tree

from ..reading.ast import Node
from .functions import FUNCTIONS, _reads_items
from .limits import MAX_CHARS, MAX_ITEMS, MAX_STEPS, Budget, LimitError, budgeted
from .values import _BINARY, _COMPARISONS, _index, _negate, _sequence, _slice

__all__ = ["FastEvaluator", "compile_fast", "generate"]

#: Python's parser allows 100 levels of indentation and 20 nested loops; stay well inside.
MAX_INDENT = 60
MAX_LOOPS = 16
#: A tree larger than this many nodes keeps the closures (the generated function would be huge;
#: the largest bundled expression has under 100).
MAX_NODES = 1_000
#: The evaluation of an expression on which its fast function is generated.
WARM_CALLS = 16

_SEQUENCES = (list, tuple, str)


def _exhausted() -> None:
    """The fast path went over a bound: the closures take over and report it precisely."""
    raise LimitError("bound exceeded")


#: Everything a generated function can name besides its own locals, ``env`` and ``B``.
HELPERS: dict[str, Any] = {
    "_K": None,  # constants of this expression (set per function)
    "_N": None,  # names and field names of this expression (set per function)
    "_type": type,
    "_size": len,
    "_min": min,
    "_Node": Node,
    "_str": str,
    "_list": list,
    "_int": int,
    "_SEQ": _SEQUENCES,
    "_LT": (list, tuple),
    "_SCALAR": (str, int, float, bool, type(None)),
    "_NUM": (int, float),
    "_MAX_ITEMS": MAX_ITEMS,
    "_MAX_CHARS": MAX_CHARS,
    "_exhausted": _exhausted,
    "_add": _BINARY["+"],
    "_sub": _BINARY["-"],
    "_mul": _BINARY["*"],
    "_div": _BINARY["/"],
    "_lt": _COMPARISONS["<"],
    "_le": _COMPARISONS["<="],
    "_gt": _COMPARISONS[">"],
    "_ge": _COMPARISONS[">="],
    "_contains": _COMPARISONS["in"],
    "_not_contains": _COMPARISONS["not in"],
    "_negate": _negate,
    "_index": _index,
    "_slice": _slice,
    "_sequence": _sequence,
    "_COMPREHENSION": "a comprehension",
}
#: Attribute names the generated code reads on values (all of them engine attributes).
ATTRIBUTES = frozenset({"left", "field", "find", "source", "start", "end", "append", "built",
                        "comparing", "reading", "lower", "upper", "strip"})

_BINARY_HELPERS = {"+": "_add", "-": "_sub", "*": "_mul", "/": "_div"}
_ORDER_HELPERS = {"<": "_lt", "<=": "_le", ">": "_gt", ">=": "_ge"}
_ORDER_OPERATORS = {"<", "<=", ">", ">="}


class _TooDeep(Exception):
    """The tree does not fit Python's compiler limits: no fast path for it."""


class _Generator:
    """Turn a checked expression tree into the body of ``def _fast(env, B)``.

    Each ``g_<rule>`` method appends the statements computing one tree node and returns a Python
    expression for its value that is cheap and has no effect when evaluated again (a local, a
    constant, ``env[_N[i]]`` or a keyword), so a caller may use it more than once.
    """

    def __init__(self, literal: Callable[[Tree], tuple[bool, Any]]) -> None:
        self.literal = literal
        self.lines: list[str] = []
        self.depth = 1
        self.loops = 0
        self.temps = 0
        self.nodes = 0
        self.constants: list[Any] = []
        self.names: list[str] = []
        #: The type of each constant's text (``_K[3]`` → str): checks on it are decided here.
        self.known: dict[str, type] = {"None": type(None), "True": bool, "False": bool}
        #: Subtrees computed once before a comprehension's loop (see :meth:`hoist`), by id: the
        #: local holding the value and the local holding the steps one evaluation charged.
        self.hoisted: dict[int, tuple[str, str]] = {}

    # ---- output

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def indent(self) -> None:
        self.depth += 1
        if self.depth > MAX_INDENT:
            raise _TooDeep

    def dedent(self) -> None:
        self.depth -= 1

    def temp(self) -> str:
        self.temps += 1
        return f"_t{self.temps}"

    def constant(self, value: Any) -> str:
        self.constants.append(value)
        text = f"_K[{len(self.constants) - 1}]"
        self.known[text] = type(value)
        return text

    def name(self, text: str) -> str:
        self.names.append(text)
        return f"_N[{len(self.names) - 1}]"

    def deduct(self, amount: str, prefix: str = "") -> None:
        """``B.left -= amount``, with an amount that charges the budget itself (a cost function,
        ``B.reading``) computed first: ``B.left -= f(B)`` would read ``B.left`` before ``f``
        charges it and lose that charge."""
        if "(B" in amount or "B." in amount:
            value = self.temp()
            self.emit(f"{prefix}{value} = {amount}")
            amount = value
        self.emit(f"{prefix}B.left -= {amount}")

    def charge(self, amount: str) -> None:
        self.deduct(amount)
        self.emit("if B.left < 0: _exhausted()")

    def built(self, value: str, kind: str | None = None) -> None:
        """The closures' ``budget.built(value)``: bound checks and a charge of its length."""
        if kind == "list":
            self.emit(f"if _size({value}) > _MAX_ITEMS: _exhausted()")
            self.charge(f"_size({value})")
        else:
            self.emit(f"B.built({value})")

    # ---- dispatch

    def generate(self, tree: Tree, local: dict[str, str]) -> str:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _TooDeep
        hoisted = self.hoisted.get(id(tree))
        if hoisted is not None:  # computed before the loop: charged here as if computed again
            value, cost = hoisted
            self.emit(f"B.left -= {cost}")
            self.emit("if B.left < 0: _exhausted()")
            return value
        return getattr(self, "g_" + str(tree.data))(tree, local)

    def assign(self, value: str) -> str:
        target = self.temp()
        self.emit(f"{target} = {value}")
        return target

    # ---- literals and names

    def literal_value(self, tree: Tree) -> str:
        found, value = self.literal(tree)
        assert found
        if value is None or value is True or value is False:
            return repr(value)  # the keywords None, True, False
        return self.constant(value)

    def g_number(self, tree: Tree, local: dict[str, str]) -> str:
        return self.literal_value(tree)

    g_string = g_null = g_true = g_false = g_number

    def g_list(self, tree: Tree, local: dict[str, str]) -> str:
        found, value = self.literal(tree)
        if found:  # a fresh copy, as the closure gives
            return self.assign(f"_list({self.constant(value)})")
        items = [self.generate(child, local) for child in tree.children]
        return self.assign("[" + ", ".join(items) + "]")

    def g_tuple(self, tree: Tree, local: dict[str, str]) -> str:
        found, value = self.literal(tree)
        if found:
            return self.constant(value)
        items = [self.generate(child, local) for child in tree.children]
        return self.assign("(" + ", ".join(items) + ",)")

    def g_name(self, tree: Tree, local: dict[str, str]) -> str:
        name = str(tree.children[0])
        if name in local:
            return local[name]
        return f"env[{self.name(name)}]"

    # ---- operators

    def g_neg(self, tree: Tree, local: dict[str, str]) -> str:
        found, _ = self.literal(tree)
        if found:
            return self.literal_value(tree)
        operand = self.generate(tree.children[1], local)
        return self.assign(f"_negate({operand})")

    def g_binary(self, tree: Tree, local: dict[str, str]) -> str:
        left_tree, symbol, right_tree = tree.children
        left = self.generate(left_tree, local)
        right = self.generate(right_tree, local)
        result = self.assign(f"{_BINARY_HELPERS[str(symbol)]}({left}, {right})")
        if str(symbol) == "+":
            self.emit(f"if _type({result}) in _SEQ: B.built({result})")
        return result

    def g_compare(self, tree: Tree, local: dict[str, str]) -> str:
        left_tree, op_tree, right_tree = tree.children
        symbol = " ".join(str(t) for t in op_tree.children)
        if symbol in ("==", "!="):
            return self.equality(left_tree, right_tree, symbol == "==", local)
        left = self.generate(left_tree, local)
        found, constant = self.literal(right_tree)
        strings = found and type(constant) in (list, tuple) and constant
        if symbol in ("in", "not in") and strings and all(type(item) is str for item in constant):
            return self.in_strings(left, constant, symbol == "in")
        right = self.generate(right_tree, local)
        result = self.temp()
        if symbol in _ORDER_OPERATORS:
            if self.known.get(right) in (int, float):
                self.emit(f"if _type({left}) in _NUM: {result} = {left} {symbol} {right}")
                self.emit(f"else: {result} = {_ORDER_HELPERS[symbol]}({left}, {right})")
                return result
            self.emit(f"if _type({left}) in _NUM and _type({right}) in _NUM:")
            self.emit(f"    {result} = {left} {symbol} {right}")
            self.emit("else:")
            self.emit(f"    if _type({left}) in _SEQ and _type({right}) in _SEQ: B.comparing({left}, {right})")
            self.emit(f"    {result} = {_ORDER_HELPERS[symbol]}({left}, {right})")
            return result
        self.charge(f"1 + B.reading({right}) + B.reading({left})")
        helper = "_contains" if symbol == "in" else "_not_contains"
        self.emit(f"{result} = {helper}({left}, {right})")
        return result

    def equality(self, left_tree: Tree, right_tree: Tree, equal: bool, local: dict[str, str]) -> str:
        test = "is" if equal else "is not"
        for side, other in ((left_tree, right_tree), (right_tree, left_tree)):
            if self.literal(other) == (True, None):  # "x == null"
                return self.assign(f"{self.generate(side, local)} {test} None")
        left = self.generate(left_tree, local)
        right = self.generate(right_tree, local)
        constant = self.known.get(right) or self.known.get(left)
        if constant is None or constant in _SEQUENCES:  # else no sequence is compared: no charge
            self.emit(f"if _type({left}) is _str and _type({right}) is _str:")
            self.emit(f"    B.left -= _min(_size({left}), _size({right}))")
            self.emit(f"elif _type({left}) in _SEQ and _type({right}) in _SEQ: B.comparing({left}, {right})")
            self.emit("if B.left < 0: _exhausted()")
        return self.assign(f"({left} == {right}) is {equal}")

    def in_strings(self, left: str, strings: list | tuple, wanted: bool) -> str:
        """``x in ['a', 'b']`` for a string ``x``: a set lookup charged as the closure charges it;
        anything else as the closure does it, through the list."""
        members = self.constant(frozenset(strings))
        listed = self.constant(tuple(strings))
        fixed = 1 + len(strings) + len(strings) + 1
        result = self.temp()
        self.emit(f"if _type({left}) is _str:")
        self.emit(f"    B.left -= {fixed} + _size({left})")
        self.emit(f"    {result} = ({left} in {members}) is {wanted}")
        self.emit("else:")
        self.emit(f"    {result} = _list({listed})")
        self.deduct(f"1 + B.reading({result}) + B.reading({left})", "    ")
        helper = "_contains" if wanted else "_not_contains"
        self.emit(f"    {result} = {helper}({left}, {result})")
        self.emit("if B.left < 0: _exhausted()")
        return result

    def g_not_(self, tree: Tree, local: dict[str, str]) -> str:
        return self.assign(f"not {self.generate(tree.children[0], local)}")

    def short_circuit(self, tree: Tree, local: dict[str, str], test: str) -> str:
        result = self.assign(self.generate(tree.children[0], local))
        self.emit(f"if {test}{result}:")
        self.indent()
        self.emit(f"{result} = {self.generate(tree.children[1], local)}")
        self.dedent()
        return result

    def g_and_(self, tree: Tree, local: dict[str, str]) -> str:
        return self.short_circuit(tree, local, "")

    def g_or_(self, tree: Tree, local: dict[str, str]) -> str:
        return self.short_circuit(tree, local, "not ")

    def g_ternary(self, tree: Tree, local: dict[str, str]) -> str:
        then_tree, condition_tree, otherwise_tree = tree.children
        condition = self.generate(condition_tree, local)
        result = self.temp()
        self.emit(f"if {condition}:")
        self.indent()
        self.emit(f"{result} = {self.generate(then_tree, local)}")
        self.dedent()
        self.emit("else:")
        self.indent()
        self.emit(f"{result} = {self.generate(otherwise_tree, local)}")
        self.dedent()
        return result

    # ---- postfix

    def g_attr(self, tree: Tree, local: dict[str, str]) -> str:
        target_tree, token = tree.children
        result = self.assign(self.generate(target_tree, local))
        # A value without .field (a number, a string, a list, a leaf) raises here: the closures
        # then give the located "has no field" error.
        self.emit(f"if {result} is not None: {result} = {result}.field({self.name(str(token))})")
        return result

    def subscriptable(self, value: str) -> str:
        """``value``, or a local holding it when it is a keyword (``None[0]`` draws a
        SyntaxWarning from Python's compiler)."""
        return self.assign(value) if value in ("None", "True", "False") else value

    def g_index(self, tree: Tree, local: dict[str, str]) -> str:
        target = self.subscriptable(self.generate(tree.children[0], local))
        position = self.generate(tree.children[1], local)
        result = self.temp()
        self.emit(
            f"if _type({target}) in _LT and _type({position}) is _int"
            f" and -_size({target}) <= {position} < _size({target}):"
        )
        self.emit(f"    {result} = {target}[{position}]")
        self.emit("else:")
        self.emit(f"    {result} = _index({target}, {position})")
        return result

    def g_slice(self, tree: Tree, local: dict[str, str]) -> str:
        target_tree, start_tree, stop_tree = tree.children
        target = self.subscriptable(self.generate(target_tree, local))
        bounds = []
        plain = True
        for bound in (start_tree, stop_tree):
            if bound is None:
                bounds.append("None")
                continue
            found, value = self.literal(bound)
            plain = plain and found and type(value) is int
            bounds.append(self.generate(bound, local))
        low, high = bounds
        result = self.temp()
        if plain:  # literal int bounds: a string is sliced as Python slices it
            self.emit(f"if _type({target}) is _str: {result} = {target}[{low}:{high}]")
            self.emit(f"else: {result} = _slice({target}, {low}, {high})")
        else:
            self.emit(f"{result} = _slice({target}, {low}, {high})")
        self.emit(f"if _type({result}) in _SEQ:")
        self.emit(f"    B.left -= _size({result})")
        self.emit("    if B.left < 0: _exhausted()")
        return result

    def g_call(self, tree: Tree, local: dict[str, str]) -> str:
        token, *arg_trees = tree.children
        name = str(token)
        args = [self.generate(arg, local) for arg in arg_trees]
        function = FUNCTIONS[name]
        impl = self.constant(function.impl)  # functions are passed like constants
        cost = self.constant(function.cost)
        special = getattr(self, "call_" + name, None)
        if special is not None and len(args) == function.min_args:
            return special(impl, cost, *args)
        joined = ", ".join(args)
        if function.cost is _reads_items and len(args) == 1:  # 1 + the length of a sequence
            (value,) = args
            self.emit(f"if _type({value}) in _SEQ: B.left -= 1 + _size({value})")
            self.emit("else:")
            self.deduct(f"{cost}(B, {value})", "    ")
            self.emit("if B.left < 0: _exhausted()")
        elif function.cost is not None:
            self.charge(f"{cost}(B, {joined})")
        result = self.assign(f"{impl}({joined})")
        if function.builds:
            self.built(result)
        return result

    # Frequent functions, inline for the values they are nearly always given; any other value
    # goes through the function itself, as in the closures.

    def call_len(self, impl: str, cost: str, value: str) -> str:
        return self.assign(f"_size({value}) if _type({value}) in _SEQ else {impl}({value})")

    def call_start(self, impl: str, cost: str, value: str) -> str:
        return self.assign(f"{value}.start if _type({value}) is _Node else {impl}({value})")

    def call_text(self, impl: str, cost: str, value: str) -> str:
        result = self.temp()
        self.emit(f"if _type({value}) is _Node: {result} = {value}.source[{value}.start:{value}.end]")
        self.emit(f"else: {result} = {impl}({value})")
        self.emit(f"if _type({result}) is _str:")
        self.emit(f"    if _size({result}) > _MAX_CHARS: _exhausted()")
        self.emit(f"    B.left -= _size({result})")
        self.emit("    if B.left < 0: _exhausted()")
        self.emit(f"else: B.built({result})")
        return result

    def call_lower(self, impl: str, cost: str, value: str, method: str = "lower") -> str:
        result = self.temp()
        self.emit(f"if _type({value}) is _str:")
        self.emit(f"    B.left -= 1 + _size({value})")
        self.emit(f"    {result} = {value}.{method}()")
        self.emit(f"    if _size({result}) > _MAX_CHARS: _exhausted()")
        self.emit(f"    B.left -= _size({result})")
        self.emit("else:")
        self.deduct(f"{cost}(B, {value})", "    ")
        self.emit("    if B.left < 0: _exhausted()")
        self.emit(f"    {result} = {impl}({value})")
        self.emit(f"    B.built({result})")
        self.emit("if B.left < 0: _exhausted()")
        return result

    def call_upper(self, impl: str, cost: str, value: str) -> str:
        return self.call_lower(impl, cost, value, "upper")

    def call_strip(self, impl: str, cost: str, value: str) -> str:
        return self.call_lower(impl, cost, value, "strip")

    def call_first(self, impl: str, cost: str, value: str) -> str:
        return self.assign(
            f"({value}[0] if {value} else None) if _type({value}) in _SEQ else {impl}({value})"
        )

    def call_find(self, impl: str, cost: str, node: str, kind: str) -> str:
        result = self.temp()
        kind_check = "" if self.known.get(kind) is str else f" and _type({kind}) is _str"
        self.emit(f"if _type({node}) is _Node{kind_check} and {node}.end >= {node}.start:")
        self.emit(f"    B.left -= 1 + {node}.end - {node}.start")
        self.emit("    if B.left < 0: _exhausted()")
        self.emit(f"    {result} = {node}.find({kind})")
        self.emit("else:")
        self.deduct(f"{cost}(B, {node}, {kind})", "    ")
        self.emit("    if B.left < 0: _exhausted()")
        self.emit(f"    {result} = {impl}({node}, {kind})")
        self.built(result, "list")  # find() always gives a list
        return result

    # ---- comprehension

    def g_listcomp(self, tree: Tree, local: dict[str, str]) -> str:
        element_tree, variable, iterable_tree, *rest = tree.children
        condition_tree = rest[0] if rest else None
        items = self.assign(self.generate(iterable_tree, local))  # the outer scope only
        self.emit(f"if _type({items}) not in _SEQ: {items} = _sequence({items}, _COMPREHENSION)")
        self.emit(f"if _size({items}) > _MAX_ITEMS: _exhausted()")
        self.charge(f"_size({items})")
        for invariant in _invariants([t for t in (condition_tree, element_tree) if t is not None], str(variable)):
            self.hoist(invariant, local)
        result = self.assign("[]")
        self.temps += 1
        slot = f"_v{self.temps}"
        inner = {**local, str(variable): slot}
        self.loops += 1
        if self.loops > MAX_LOOPS:
            raise _TooDeep
        self.emit(f"for {slot} in {items}:")
        self.indent()
        if condition_tree is not None:
            condition = self.generate(condition_tree, inner)
            self.emit(f"if {condition}:")
            self.indent()
        self.emit(f"{result}.append({self.generate(element_tree, inner)})")
        if condition_tree is not None:
            self.dedent()
        self.dedent()
        self.loops -= 1
        self.built(result, "list")
        return result


    def hoist(self, tree: Tree, local: dict[str, str]) -> None:
        """Compute ``tree`` — a call in a comprehension that does not read its variable, such as
        ``lower(strip(text(self)))`` in ``[w[1] for w in words if w[0] == lower(strip(text(self)))]``
        — once before the loop instead of once per item. Same value: expressions have no
        effects. Same charges: the steps the one evaluation took are given back here and charged
        again wherever the loop would have computed it (:meth:`generate`). The value must be a
        scalar (a string, number, boolean or null), so nothing reading it is charged less for
        having read the same object before (:meth:`Budget._measure` remembers lists); any other
        value, or a failure, is :func:`_exhausted`: the closures then evaluate the expression."""
        start = self.temp()
        self.emit(f"{start} = B.left")
        value = self.assign(self.generate(tree, local))
        self.emit(f"if _type({value}) not in _SCALAR: _exhausted()")
        cost = self.temp()
        self.emit(f"{cost} = {start} - B.left")
        self.emit(f"B.left = {start}")
        self.hoisted[id(tree)] = (value, cost)


#: Functions whose value is always a scalar (a string, number, boolean or null): a call of one
#: that does not read a comprehension's variable is computed once before its loop.
HOISTED_CALLS = frozenset({"lower", "upper", "strip", "text", "kind", "start", "len", "number", "str"})


def _free_names(tree: Tree) -> frozenset[str]:
    """The names ``tree`` reads that it does not bind (a comprehension binds its variable)."""
    if tree.data == "name":
        return frozenset({str(tree.children[0])})
    if tree.data == "listcomp":
        element, variable, iterable, *rest = tree.children
        inner = _free_names(element).union(*(_free_names(t) for t in rest if isinstance(t, Tree)))
        return _free_names(iterable) | (inner - {str(variable)})
    return frozenset().union(*(_free_names(c) for c in tree.children if isinstance(c, Tree)))


def _invariants(trees: list[Tree], variable: str) -> list[Tree]:
    """The largest calls of :data:`HOISTED_CALLS` in ``trees`` that do not read ``variable``,
    outside nested comprehensions (those hoist their own), in the order they are generated."""
    found: list[Tree] = []
    stack = list(reversed(trees))
    while stack:
        tree = stack.pop()
        if tree.data == "listcomp":
            continue
        if (
            tree.data == "call"
            and str(tree.children[0]) in HOISTED_CALLS
            and variable not in _free_names(tree)
            and len(tree.children) > 1
        ):
            found.append(tree)
            continue
        stack.extend(reversed([c for c in tree.children if isinstance(c, Tree)]))
    return found


def generate(tree: Tree, literal: Callable[[Tree], tuple[bool, Any]]) -> tuple[str, tuple, tuple] | None:
    """The source of ``_fast(env, B)`` for a checked ``tree``, with its constants and names;
    ``None`` when the tree is too deep or too large for a generated function."""
    generator = _Generator(literal)
    try:
        value = generator.generate(tree, {})
    except (_TooDeep, RecursionError):
        return None
    body = "\n".join(generator.lines)
    source = f"def _fast(env, B):\n{body}\n    return {value}\n" if body else (
        f"def _fast(env, B):\n    return {value}\n"
    )
    return source, tuple(generator.constants), tuple(generator.names)


class FastEvaluator:
    """An expression's generated function, with its closures as the fallback and reference.

    The function is generated on the expression's :data:`WARM_CALLS`-th evaluation, not when the
    rule is loaded: generating and compiling costs about twice what the closures cost to build,
    which only pays where an expression runs many times (and a rule file full of huge expressions
    that never run costs no more to load than before)."""

    __slots__ = ("fast", "closures", "closure_budget", "budget", "source", "_tree", "_literal",
                 "_calls")

    def __init__(self, tree: Tree, literal: Callable[[Tree], tuple[bool, Any]],
                 closures: Callable[[Any], Any], closure_budget: Budget | None) -> None:
        #: The generated function, once built (None before, and for good when it has none).
        self.fast: Callable[[Any, Budget], Any] | None = None
        self.source = ""
        #: The closures and the budget they charge (None: they charge none of their own).
        self.closures = closures
        self.closure_budget = closure_budget
        self.budget = Budget()
        self._tree: Tree | None = tree
        self._literal = literal
        self._calls = 0

    def __call__(self, env: Any) -> Any:
        fast = self.fast
        if fast is None:
            self._calls += 1
            if self._calls != WARM_CALLS or not self.build():
                return self.reference(env)
            fast = self.fast
        # budgeted(), written out: a call more per evaluation costs gauge_reading 3-4%.
        budget = self.budget
        saved = budget.left, budget._sizes  # an evaluation of the same expression inside it
        budget.left, budget._sizes = MAX_STEPS, None
        try:
            return fast(env, budget)
        except Exception:  # noqa: BLE001 - any failure: the closures say what it is
            pass
        finally:
            budget.left, budget._sizes = saved
        return self.reference(env)

    def build(self) -> bool:
        """Generate and compile the fast function now (once); False when the tree has none."""
        if self.fast is None and self._tree is not None:
            built = compile_fast(self._tree, self._literal)
            self._tree = None  # tried once, whatever the outcome
            if built is not None:
                self.fast, self.source = built
        return self.fast is not None

    def reference(self, env: Any) -> Any:
        """The closures' value (or their located error), without the fast path."""
        if self.closure_budget is None:
            return self.closures(env)
        return budgeted(self.closures, env, self.closure_budget)

    def reference_with_steps(self, env: Any) -> tuple[Any, int]:
        """:meth:`reference` and the steps the closures charged (for the tests' parity check)."""
        budget = self.closure_budget
        if budget is None:
            return self.closures(env), 0
        saved = budget.left, budget._sizes
        budget.left, budget._sizes = MAX_STEPS, None
        try:
            value = self.closures(env)
            return value, MAX_STEPS - budget.left
        finally:
            budget.left, budget._sizes = saved


def compile_fast(tree: Tree, literal: Callable[[Tree], tuple[bool, Any]]
                 ) -> tuple[Callable[[Any, Budget], Any], str] | None:
    """The compiled fast function of ``tree`` and its source; ``None`` if it has none."""
    generated = generate(tree, literal)
    if generated is None:
        return None
    source, constants, names = generated
    namespace = dict(HELPERS, _K=constants, _N=names, __builtins__={})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning: the closures alone, never a stray line
            code = compile(source, "<keyaudit expression>", "exec", dont_inherit=True)
        exec(code, namespace)  # noqa: S102 - source made of this module's templates (docstring)
    except (SyntaxError, SyntaxWarning, RecursionError, MemoryError, ValueError):
        return None
    return namespace["_fast"], source
