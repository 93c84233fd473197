"""The answer lexer tries, at each position, only the terminals that can start with the word there.

Lark's contextual lexer matches one regular expression per parser state: the alternation of every
terminal the state accepts, tried in order until one matches. Phrase terminals are large (a
lexicon of a few hundred phrasings each), so at a word that starts none of them — most words of
an answer — Python's ``re`` still walks into every alternative: about 15 µs per token.

This module reads, once per terminal, which words its regex can start with
(:mod:`.first_words`), and gives each state's lexer a matcher that looks up the word at the
position and tries only the terminals admitting it, in the state's order, each with its own
compiled regex. The first one to match wins, as in the alternation, so the tokens are the same:
a terminal is skipped only where it cannot match. ``tests/test_word_dispatch.py`` holds the two
lexers to identical tokens on every bundled grammar and every labelled answer.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark
from lark.lexer import _create_unless

from .first_words import MAX_GRAMMAR_STEPS, MAX_STEPS, FirstWords, first_words

__all__ = ["install_word_dispatch", "state_matcher"]

#: The word at a position: the same ASCII run :mod:`.first_words` reads patterns by.
_WORD_RUN = re.compile(r"[A-Za-z0-9]+")
#: Distinct words (and other first characters) remembered per state before the memory starts over.
_MAX_REMEMBERED = 20_000

Candidates = tuple[tuple[str, Any], ...]  # (terminal name, compiled regex) in the state's order


class _Terminals:
    """Per grammar: each terminal's compiled regex and first-word summary, made on first use."""

    def __init__(self, lark: Lark) -> None:
        conf = lark.lexer_conf
        self.flags = conf.g_regex_flags
        self.re = conf.re_module
        self.by_name = conf.terminals_by_name
        self.compiled: dict[str, Any] = {}
        self.summaries: dict[str, FirstWords] = {}
        #: Reading steps left for this grammar; once spent, a terminal is tried everywhere.
        self.steps_left = MAX_GRAMMAR_STEPS

    def regex(self, name: str) -> Any:
        compiled = self.compiled.get(name)
        if compiled is None:
            pattern = self.by_name[name].pattern.to_regexp()
            compiled = self.compiled[name] = self.re.compile(pattern, self.flags)
        return compiled

    def summary(self, name: str) -> FirstWords:
        summary = self.summaries.get(name)
        if summary is None:
            pattern = self.by_name[name].pattern.to_regexp()
            summary = first_words(pattern, self.flags, min(MAX_STEPS, self.steps_left))
            self.steps_left -= summary.steps
            self.summaries[name] = summary
        return summary


class _StateMatcher:
    """``BasicLexer.match`` for one parser state: the terminals the word admits, in order."""

    def __init__(self, names: list[str], terminals: _Terminals) -> None:
        self.names = [str(name) for name in names]  # not Tokens: see fast_lalr._StateLexer
        self.terminals = terminals
        self.summaries = [terminals.summary(name) for name in names]
        self.by_key: dict[str, Candidates] = {}
        self.shared: dict[tuple[bool, ...], Candidates] = {}

    def candidates(self, key: str, is_word: bool) -> Candidates:
        if len(self.by_key) >= _MAX_REMEMBERED:
            self.by_key.clear()
        admits = tuple(
            summary.admits_word(key) if is_word else summary.admits_other(key)
            for summary in self.summaries
        )
        found = self.shared.get(admits)
        if found is None:  # one tuple per distinct choice of terminals, shared by its words
            found = self.shared[admits] = tuple(
                (name, self.terminals.regex(name))
                for name, admitted in zip(self.names, admits, strict=True)
                if admitted
            )
        self.by_key[key] = found
        return found

    def __call__(self, text: Any, pos: int) -> tuple[str, str] | None:
        return self.match_at(text.text, pos, text.end)

    def match_at(self, source: str, pos: int, end: int) -> tuple[str, str] | None:
        """The (text, terminal name) of the first terminal matching at ``pos``, else None."""
        run = _WORD_RUN.match(source, pos, end)
        if run is not None:
            key = run.group().lower()
            found = self.by_key.get(key)
            if found is None:
                found = self.candidates(key, True)
        else:
            key = source[pos]
            found = self.by_key.get(key)
            if found is None:
                found = self.candidates(key, False)
        for name, regex in found:
            match = regex.match(source, pos, end)
            if match is not None:
                return match.group(0), name
        return None


def install_word_dispatch(lark: Lark) -> None:
    """Give every state lexer of ``lark``'s contextual lexer a word-dispatching ``match``.

    Each state's matcher is made on its first use, from the terminals Lark's scanner for that
    state would try (with Lark's own bookkeeping: callbacks for string terminals a regex also
    matches); a parser without a contextual lexer is left as it is.
    """
    lexer = getattr(getattr(lark, "parser", None), "lexer", None)
    states = getattr(lexer, "lexers", None)
    if not isinstance(states, dict):
        return
    terminals = _Terminals(lark)
    for basic in {id(b): b for b in states.values()}.values():
        basic.match = _Unbuilt(basic, terminals)


def state_matcher(basic: Any) -> _StateMatcher:
    """The word-dispatching matcher of one state lexer (made now if it was not used yet)."""
    match = basic.match
    return match if isinstance(match, _StateMatcher) else match.build()


def _scanned_terminals(basic: Any) -> list:
    """The terminals a state's scanner tries, in order, with the lexer's callbacks set — what
    Lark's ``BasicLexer._build_scanner`` does, without compiling the alternation this module
    replaces (a second or more per grammar). With callbacks of the grammar's author, Lark's own
    build is used."""
    if basic.user_callbacks:
        return list(basic.scanner.terminals)
    scanned, basic.callback = _create_unless(
        basic.terminals, basic.g_regex_flags, basic.re, basic.use_bytes
    )
    return list(scanned)


class _Unbuilt:
    """A state lexer's ``match`` until its first use, which builds and installs the matcher."""

    def __init__(self, basic: Any, terminals: _Terminals) -> None:
        self.basic, self.terminals = basic, terminals

    def build(self) -> _StateMatcher:
        names = [t.name for t in _scanned_terminals(self.basic)]
        matcher = _StateMatcher(names, self.terminals)
        self.basic.match = matcher
        return matcher

    def __call__(self, text: Any, pos: int) -> tuple[str, str] | None:
        return self.build()(text, pos)
