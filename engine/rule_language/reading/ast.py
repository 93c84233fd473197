"""Generic AST nodes built from Lark parse trees, readable by rule expressions.

Why generic: a new domain must need only a ``.lark`` and a ``.toml`` file, never Python, so the
tree a grammar produces cannot be mapped to hand-written classes. Instead every rule of the grammar
becomes a :class:`Node` of that ``kind`` and every terminal a :class:`Leaf`; rule expressions read
them by name (``key.status``, ``r.lower``) with the conventions below.

Attribute access ``node.name`` (what :meth:`Node.field` returns):
- a derived attribute declared in the rule file (``[[attribute]]``) for this node kind, if any;
- else the direct children whose kind is ``name`` (a rule name, or a terminal name such as
  ``LETTER``, case-insensitively for terminals): none → ``null``; one → its *value*; several →
  a tuple of values.
The *value* of a leaf is its text; the value of a node with exactly one child that is a leaf is
that leaf's text (so ``key.status`` is ``"stable"``, not a node); any other node is itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: Computes a derived attribute: (attribute name, node) -> value. Supplied by the rule engine.
AttributeHook = Callable[[str, "Node"], tuple[bool, Any]]


@dataclass(eq=True, unsafe_hash=True, slots=True)
class Leaf:
    """One terminal of the parse: its terminal name (``kind``) and matched text.

    Equal and hashed by its fields, like a frozen dataclass, and never changed after the parse;
    not declared frozen because a frozen dataclass sets each field through
    ``object.__setattr__``, which made building a leaf five times slower (a parse builds one per
    token: about a tenth of the whole scoring path)."""

    kind: str
    value: str
    start: int
    end: int

    def text(self) -> str:
        return self.value


@dataclass(eq=False, slots=True)
class Node:
    """One grammar rule match: ``kind`` is the rule name; children in document order.

    ``source`` is the whole parsed string and ``start``/``end`` the span of this node in it, so
    :meth:`text` returns exactly what was written (needed for templates and reports).
    """

    kind: str
    children: list[Node | Leaf]
    source: str
    start: int
    end: int
    hook: AttributeHook | None = None
    _memo: dict[str, Any] = field(default_factory=dict)
    #: On a parse's root: the terminal names of the tokens error recovery read as plain words.
    recovered: tuple[str, ...] = ()

    def text(self) -> str:
        """The exact substring of the parsed text this node spans."""
        return self.source[self.start : self.end]

    def field(self, name: str) -> Any:
        """Value of ``self.name`` following the module's conventions; ``None`` if absent."""
        if name in self._memo:
            return self._memo[name]
        if self.hook is not None:
            found, value = self.hook(name, self)
            if found:
                self._memo[name] = value
                return value
        matches = [
            c
            for c in self.children
            if c.kind == name or (isinstance(c, Leaf) and c.kind.lower() == name)
        ]
        if not matches:
            value = None
        elif len(matches) == 1:
            value = node_value(matches[0])
        else:
            value = tuple(node_value(m) for m in matches)
        self._memo[name] = value
        return value

    def find(self, kind: str) -> list[Node | Leaf]:
        """Every descendant (not self) of ``kind`` in document order, matches not descended into.

        A parsed tree never changes, and a rule asks the same node for the same kind from several
        ``[[let]]``s, attributes and certainty clauses: the walk is done once per (node, kind).
        """
        key = "\0find:" + kind  # cannot collide with a field name
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = tuple(_find(self, kind))
        return list(found)

    def __repr__(self) -> str:
        return f"Node({self.kind!r}, {self.text()!r})"


def _find(node: Node, kind: str) -> Iterator[Node | Leaf]:
    for child in node.children:
        if child.kind == kind:
            yield child
        elif isinstance(child, Node):
            yield from _find(child, kind)


def node_value(item: Node | Leaf) -> Any:
    """A leaf's text; a node's only leaf's text; otherwise the node itself."""
    if isinstance(item, Leaf):
        return item.value
    if len(item.children) == 1 and isinstance(item.children[0], Leaf):
        return item.children[0].value
    return item


#: Most lines ``format_tree`` prints (a long answer's tree is cut, and says so).
MAX_TREE_LINES = 400


def format_tree(root: Node, max_lines: int = MAX_TREE_LINES) -> list[str]:
    """The parse tree as indented lines: a rule as ``kind``, a terminal as ``KIND 'text'``.

    For authors (``test-rule --explain TEXT --tree``): which rule and which terminal each word
    became is what decides whether a phrasing is read, and the tree is the shortest way to see
    it. Iterative, so a deep tree cannot exhaust the stack."""
    lines: list[str] = []
    stack: list[tuple[Node | Leaf, int]] = [(root, 0)]
    while stack and len(lines) < max_lines:
        item, depth = stack.pop()
        pad = "  " * depth
        if isinstance(item, Leaf):
            lines.append(f"{pad}{item.kind} {item.value!r}")
        else:
            lines.append(f"{pad}{item.kind}")
            stack.extend((child, depth + 1) for child in reversed(item.children))
    if stack:
        lines.append(f"… (cut at {max_lines} lines)")
    return lines
