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

from typing import Any

from lark import Lark, Token
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
        self.ignore = basic.ignore_types
        self.callback = basic.callback


class FastParser:
    """Parses a text with ``lark``'s LALR tables, or raises :class:`Unparsed`."""

    def __init__(self, lexers: dict[Any, Any], parser: Any, start: str) -> None:
        table = parser.parse_table
        self.states = table.states
        self.start_state = table.start_states[start]
        self.end_state = table.end_states[start]
        self.callbacks = parser.callbacks
        self.basic_lexers = lexers
        self.lexers: dict[Any, _StateLexer] = {}

    def lexer(self, state: Any) -> _StateLexer:
        found = self.lexers.get(state)
        if found is None:
            found = self.lexers[state] = _StateLexer(self.basic_lexers[state])
        return found

    def parse(self, text: str) -> Any:
        states, callbacks, end_state = self.states, self.callbacks, self.end_state
        state_stack = [self.start_state]
        value_stack: list[Any] = []
        pos, end = 0, len(text)
        while True:
            if pos < end:
                lexer = self.lexers.get(state_stack[-1]) or self.lexer(state_stack[-1])
                found = lexer.match_at(text, pos, end)
                if found is None:
                    raise Unparsed
                value, kind = found
                after = pos + len(value)
                if kind in lexer.ignore:
                    pos = after
                    continue
                if kind in lexer.callback:  # a string terminal the regex also matched
                    kind = lexer.callback[kind](Token(kind, value, pos, 1, 1)).type
                item: Any = Leaf(kind, value, pos, after)
                pos = after
                is_end = False
            else:
                kind, item, is_end = "$END", None, True
            while True:
                action = states[state_stack[-1]].get(kind)
                if action is None:
                    raise Unparsed
                operation, argument = action
                if operation is Shift:
                    if is_end:
                        raise Unparsed
                    state_stack.append(argument)
                    value_stack.append(item)
                    break
                size = len(argument.expansion)
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                node = callbacks[argument](children)
                _shift, new_state = states[state_stack[-1]][argument.origin.name]
                state_stack.append(new_state)
                value_stack.append(node)
                if is_end and new_state == end_state:
                    return node


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
