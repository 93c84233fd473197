"""A lean driver for Lark's LALR tables: lexing and parsing in one loop, for answers that parse.

Lark's parser is general: a lexer thread yielding ``Token`` objects (with line and column
counting), a parser state fed one token at a time, error objects ready for interactive recovery.
An answer line is short and most parse without error, so that machinery is most of the parse's
cost. This driver runs the same tables, the same state lexers (:mod:`.word_dispatch`) and the same
tree callbacks, building leaves directly; the moment anything would need Lark's error handling
(no terminal matches, a token the state does not expect) it gives up with :class:`Unparsed` and the
caller parses the text with Lark, recovery included. So a tree from here is the tree Lark would
build, which ``tests/test_word_dispatch.py`` checks on every bundled grammar and labelled answer.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from lark import Lark, Token
from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders, ExpandSingleChild
from lark.parsers.lalr_analysis import Shift

from .ast import Leaf
from .word_dispatch import state_matcher

__all__ = ["FastParser", "Unparsed", "fast_parser"]


class Unparsed(Exception):
    """The text needs Lark's own parse (an error to report or recover from)."""


class _StateLexer:
    """What the driver needs of one parser state's lexer."""

    __slots__ = ("match_at", "ignore", "callback")

    def __init__(self, basic: Any) -> None:
        self.match_at = state_matcher(basic).match_at
        # Plain strings: a parser Lark has just built (not loaded from the cache) names its
        # terminals with Tokens, whose ``__eq__`` is Python code that every lookup of a name
        # would run (and every ``kind ==`` of the tree's readers, had its leaves such kinds).
        self.ignore = frozenset(str(kind) for kind in basic.ignore_types)
        self.callback = {str(kind): callback for kind, callback in basic.callback.items()}


#: How one grammar rule's match becomes a tree value: (builder, name, children to keep, expand a
#: single child, whether the builder takes the children alone). ``children to keep`` is Lark's
#: child filter: (index, splice its children) pairs, or None for every child as it is.
Plan = tuple[Any, str, tuple[tuple[int, bool], ...] | None, bool, bool]


def reduction_plan(callback: Any) -> Plan | None:
    """What Lark's tree-building ``callback`` for one rule does, as data, where it is made of the
    pieces an LALR parser without placeholders uses (a child filter, single-child expansion, the
    tree class called with the rule's name); None for any other shape (the callback is then
    called as it is). Read off the callback itself, so the plan does what Lark would do."""
    to_include = None
    if type(callback) is ChildFilterLALR_NoPlaceholders:
        to_include = tuple((int(i), bool(expand)) for i, expand in callback.to_include)
        callback = callback.node_builder
    expand1 = type(callback) is ExpandSingleChild
    if expand1:
        callback = callback.node_builder
    if type(callback) is not partial or callback.keywords or len(callback.args) != 1:
        return None
    tree_class, name = callback.func, callback.args[0]
    # A tree class that says what its call does (grammar._NodeFactory) is bypassed: an inlined
    # rule's children are wrapped directly, any other rule's node built directly.
    prefix = getattr(tree_class, "splice_prefix", None)
    if isinstance(prefix, str) and prefix and str(name).startswith(prefix):
        return tree_class.spliced, name, to_include, expand1, True
    if prefix is not None:
        return tree_class.build_node, name, to_include, expand1, False
    return tree_class, name, to_include, expand1, False


class FastParser:
    """Parses a text with ``lark``'s LALR tables, or raises :class:`Unparsed`."""

    def __init__(self, lexers: dict[Any, Any], parser: Any, start: str) -> None:
        table = parser.parse_table
        self.start_state = table.start_states[start]
        self.end_state = table.end_states[start]
        self.callbacks = parser.callbacks
        #: Each rule's reduction as data (Lark's callback where it has another shape), with the
        #: length of its expansion and the rule's name: the loop below then calls the tree class
        #: directly, without Lark's two or three wrappers per reduction (most reductions of a
        #: free-text answer are a word joining the list of words before it).
        reductions = {
            rule: (len(rule.expansion), str(rule.origin.name), reduction_plan(callback), callback)
            for rule, callback in parser.callbacks.items()
        }
        #: Each state's actions keyed by plain strings, a shift as (True, next state) and a
        #: reduction as (False, its entry above): Lark's tables key some actions by ``Token``
        #: (whose ``__eq__`` is Python code run on every lookup) and identify a reduction by its
        #: ``Rule`` (whose ``__hash__`` is too); read once here, the loop does neither.
        self.tables: dict[Any, dict[str, tuple[bool, Any]]] = {
            state: {
                str(symbol): (True, argument) if operation is Shift else (False, reductions[argument])
                for symbol, (operation, argument) in actions.items()
            }
            for state, actions in table.states.items()
        }
        self.basic_lexers = lexers
        self.lexers: dict[Any, _StateLexer] = {}

    def lexer(self, state: Any) -> _StateLexer:
        found = self.lexers.get(state)
        if found is None:
            found = self.lexers[state] = _StateLexer(self.basic_lexers[state])
        return found

    def parse(self, text: str) -> Any:
        tables, lexers, end_state = self.tables, self.lexers, self.end_state
        state = self.start_state
        table = tables[state]
        state_stack = [state]
        value_stack: list[Any] = []
        pos, end = 0, len(text)
        while True:
            if pos < end:
                lexer = lexers.get(state) or self.lexer(state)
                found = lexer.match_at(text, pos, end)
                if found is None:
                    raise Unparsed
                value, kind = found
                after = pos + len(value)
                if kind in lexer.ignore:
                    pos = after
                    continue
                if kind in lexer.callback:  # a string terminal the regex also matched
                    kind = str(lexer.callback[kind](Token(kind, value, pos, 1, 1)).type)
                item: Any = Leaf(kind, value, pos, after)
                pos = after
                is_end = False
            else:
                kind, item, is_end = "$END", None, True
            while True:
                action = table.get(kind)
                if action is None:
                    raise Unparsed
                shift, argument = action
                if shift:
                    if is_end:
                        raise Unparsed
                    state = argument
                    table = tables[state]
                    state_stack.append(state)
                    value_stack.append(item)
                    break
                size, origin, plan, callback = argument
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                if plan is None:
                    node = callback(children)
                else:
                    build, name, to_include, expand1, alone = plan
                    if to_include is not None:
                        children = _filtered(children, to_include)
                    if expand1 and len(children) == 1:
                        node = children[0]
                    else:
                        node = build(children) if alone else build(name, children)
                state = tables[state_stack[-1]][origin][1]
                table = tables[state]
                state_stack.append(state)
                value_stack.append(node)
                if is_end and state == end_state:
                    return node


def _filtered(children: list, to_include: tuple[tuple[int, bool], ...]) -> list:
    """Lark's ``ChildFilterLALR_NoPlaceholders``: the kept children, an inlined rule's spliced in
    (its list taken over when it comes first, as Lark does for left recursion)."""
    filtered: list = []
    for index, to_expand in to_include:
        if to_expand:
            if filtered:
                filtered += children[index].children
            else:
                filtered = children[index].children
        else:
            filtered.append(children[index])
    return filtered


def fast_parser(lark: Lark) -> FastParser | None:
    """The driver for ``lark``, or None where its shape is not the one this driver reproduces
    (not LALR with a contextual lexer and one start rule, or with callbacks on terminals)."""
    frontend = getattr(lark, "parser", None)
    lexers = getattr(getattr(frontend, "lexer", None), "lexers", None)
    parser = getattr(getattr(frontend, "parser", None), "parser", None)
    starts = getattr(lark.options, "start", None)
    if not isinstance(lexers, dict) or parser is None or not starts or len(starts) != 1:
        return None
    if lark.lexer_conf.postlex is not None or lark.lexer_conf.callbacks:
        return None
    if any(isinstance(name, str) for name in parser.callbacks):
        return None
    return FastParser(lexers, parser, starts[0])
