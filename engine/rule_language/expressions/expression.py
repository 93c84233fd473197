"""Rule expressions: compile a clause once, evaluate it against many answers.

>>> from keyaudit.engine.rule_language.expressions.expression import SimpleNode, compile_expression
>>> rule = compile_expression('answer.word in ["stable", "steady"]', names={"answer"})
>>> rule.evaluate({"answer": SimpleNode("status", fields={"word": "stable"})})
True

The language is Python-like and closed: literals (``null true false``, numbers, quoted strings,
tuples, lists), bound names, ``x.field``, ``x[i]``, ``x[i:j]``, ``+ - * /``, comparisons,
``in``/``not in``, ``and or not``, ``a if c else b``, ``[e for x in xs if c]`` and calls to the
functions of :data:`FUNCTIONS` (reference: :func:`function_reference`). Parsing is
:mod:`.parse` (Lark, LALR); meaning, functions and the closure compiler are
:mod:`.evaluate`, whose docstring states the null semantics rule authors rely on; the generated
fast path that runs the same expression, with the closures as its fallback, is :mod:`.codegen`.

Rule files are data: nothing in an expression can import, call Python, or reach an attribute of a
Python object. Names starting with ``_`` (``x.__class__``) are rejected when the rule is compiled,
and ``x.name`` only ever calls ``x.field("name")`` on a node.

Compile-time errors (syntax, unknown name or function, wrong number of arguments, chained
comparison) and evaluation errors are :class:`~keyaudit.engine.errors.ExpressionError` with a
one-line message ``path:line:column: what``; positions follow :meth:`Origin.locate`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

from ...errors import ExpressionError, located
from .codegen import FastEvaluator
from .evaluate import (
    FUNCTIONS,
    MAX_CHARS,
    MAX_ITEMS,
    MAX_ITERATIONS,
    Function,
    compile_tree,
    function_reference,
    type_name,
)
from .parse import DEFAULT_ORIGIN, Origin, parse

__all__ = [
    "FUNCTIONS",
    "MAX_CHARS",
    "MAX_ITEMS",
    "MAX_ITERATIONS",
    "Expression",
    "Function",
    "NodeLike",
    "Origin",
    "SimpleNode",
    "compile_expression",
    "function_reference",
    "type_name",
]


@runtime_checkable
class NodeLike(Protocol):
    """What the interpreter needs from an AST node bound to a name.

    Any value that is not null, a bool, a number, a string, a list or a tuple is treated as a node.
    """

    kind: str
    """The grammar rule the node was built from (what ``kind(x)`` returns)."""

    def field(self, name: str) -> Any:
        """The value of ``x.name``: a node, a plain value, or None when the node has no such field."""

    def find(self, kind: str) -> list:
        """Every descendant node of ``kind``, in document order (what ``find(x, kind)`` returns)."""

    def text(self) -> str:
        """The source text the node was parsed from (what ``text(x)`` returns)."""


@dataclass(frozen=True)
class SimpleNode:
    """A minimal :class:`NodeLike` for tests and examples: fields in a dict, children in a tuple.

    ``find`` walks ``children`` and the node values in ``fields`` (depth-first, document order),
    not counting the node itself.
    """

    kind: str
    source: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    children: tuple[Any, ...] = ()

    def field(self, name: str) -> Any:
        return self.fields.get(name)

    def find(self, kind: str) -> list:
        return list(self._by_kind.get(kind, ()))

    @cached_property
    def _by_kind(self) -> dict[str, tuple[SimpleNode, ...]]:
        """Descendants grouped by kind, computed once (the node is immutable)."""
        groups: dict[str, list[SimpleNode]] = {}
        for node in self._descendants():
            groups.setdefault(node.kind, []).append(node)
        return {kind: tuple(nodes) for kind, nodes in groups.items()}

    def _descendants(self) -> list[SimpleNode]:
        out: list[SimpleNode] = []
        for value in [*self.fields.values(), *self.children]:
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, SimpleNode):
                    out.append(item)
                    out.extend(item._descendants())
        return out

    def text(self) -> str:
        return self.source


class Expression:
    """A checked, compiled expression: parse once, :meth:`evaluate` many times."""

    __slots__ = ("source", "names", "origin", "_evaluate")

    def __init__(
        self, source: str, names: frozenset[str], origin: Origin, evaluate: FastEvaluator
    ) -> None:
        self.source = source
        #: The free names the expression reads (a subset of the names it was compiled with).
        self.names = names
        self.origin = origin
        self._evaluate = evaluate

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """The value of the expression with ``env`` binding its names.

        Raises ExpressionError (located at the failing operation) on a type error, a missing
        binding or an exceeded limit; never any other exception for values of the documented
        types. ``env`` is not modified.
        """
        try:
            return self._evaluate(env)
        except RecursionError:
            raise ExpressionError(
                located(
                    self.origin.path,
                    self.origin.line,
                    None,
                    "expression, or the parse tree it reads, nests too deeply",
                )
            ) from None

    def evaluate_by_closures(self, env: Mapping[str, Any]) -> Any:
        """:meth:`evaluate` without the generated fast path (:mod:`.codegen`): the
        reference the tests hold the fast path to."""
        return self._evaluate.reference(env)

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"


def compile_expression(
    source: str, *, names: Collection[str], origin: Origin | None = None
) -> Expression:
    """Parse and check ``source`` once, with ``names`` the names the caller will bind.

    ``origin`` is where the expression's opening quote sits in the rule file; errors are
    reported as ``path:line:column: ...`` relative to it (see :meth:`Origin.locate`), or as
    ``<expression>:1:column:`` (1-based in ``source``) without it.
    """
    where = origin if origin is not None else DEFAULT_ORIGIN
    tree = parse(source, where)
    compiled = compile_tree(tree, names, where)
    return Expression(source, compiled.names, where, compiled.evaluate)
