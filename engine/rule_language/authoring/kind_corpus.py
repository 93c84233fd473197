"""A value kind's corpus: the phrasings the kind must read, checked against the kind alone.

Duckling's model (``../shared/STYLE.md``): each value kind carries its own corpus, and a change to
the kind is judged by it before any rule sees the change. A corpus file
``grammars/kinds/NAME.corpus`` is plain text, one case a line::

    # a comment
    %part CHANGE_NOUN: speed          the slots the kind asks a domain to fill, for these cases
    UP	it [speeds up]                 a tab after the terminal; [ ] marks the span it must read
    SAME	neither grows nor shrinks      no brackets: the whole text is one token of it
    !UP	the speed [went up or down]    "!": nothing in the span is read as that terminal

The text is lexed by a small grammar made of the kind (``%use NAME``), the corpus's slot parts and
plain word / number / punctuation filler, with the same phrase compiler and Lark lexer the rules
use. A case passes when a token of the terminal covers exactly the marked span (or, for ``!``,
when no token of it overlaps the span).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import lark

from ..reading.grammar import _ImportLoader
from ..reading.kinds import kind_dir, splice_kinds
from ..reading.phrases import expand_phrases

__all__ = ["CorpusCase", "CorpusError", "check_corpus", "read_corpus"]

_FILLER = """
WORD.1: /[A-Za-z][A-Za-z0-9'’-]*/
NUMBER.2: /[-+]?\\d+(?:[.,]\\d+)*/
OTHER.0: /[^\\sA-Za-z0-9]/
%import common (WS)
%ignore WS
"""


class CorpusError(Exception):
    """A malformed corpus line; the message names ``file:line``."""


@dataclass(frozen=True)
class CorpusCase:
    """One corpus line: ``terminal`` must (or, ``negated``, must not) read ``text[start:end]``."""

    line: int
    terminal: str
    text: str
    start: int
    end: int
    negated: bool

    def shown(self) -> str:
        mark = "!" if self.negated else ""
        return f"{mark}{self.terminal}\t{self.text[:self.start]}[{self.text[self.start:self.end]}]{self.text[self.end:]}"


def read_corpus(path: Path) -> tuple[list[str], list[CorpusCase]]:
    """The slot parts and the cases of a corpus file."""
    parts: list[str] = []
    cases: list[CorpusCase] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("%part"):
            parts.append(line)
            continue
        name, tab, text = line.partition("\t")
        negated = name.startswith("!")
        name = name.lstrip("!")
        if not tab or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name) or not text.strip():
            raise CorpusError(f"{path}:{number}: expected 'TERMINAL<tab>text' (or '!TERMINAL<tab>text')")
        if text.count("[") > 1 or text.count("[") != text.count("]"):
            raise CorpusError(f"{path}:{number}: at most one [span], with its closing ]")
        if "[" in text:
            start = text.index("[")
            end = text.index("]") - 1
            text = text.replace("[", "", 1).replace("]", "", 1)
        else:
            start, end = 0, len(text)
        cases.append(CorpusCase(number, name, text, start, end, negated))
    return parts, cases


def _lexer(kind: str, parts: list[str], terminals: set[str]) -> lark.Lark:
    items = " | ".join(sorted(terminals) + ["WORD", "NUMBER", "OTHER"])
    text = f"%use {kind}\n" + "\n".join(parts) + f"\nstart: _item*\n_item: {items}\n" + _FILLER
    grammar = expand_phrases(splice_kinds(text).text)  # as read_grammar does, with no file
    return lark.Lark(grammar, parser="lalr", lexer="contextual", import_paths=[_ImportLoader(kind_dir().parent)])


def check_corpus(kind: str) -> tuple[int, list[str]]:
    """Run the kind's corpus: ``(cases, failures)``, each failure the case as written and what was
    read instead."""
    path = kind_dir() / f"{kind}.corpus"
    parts, cases = read_corpus(path)
    parser = _lexer(kind, parts, {c.terminal for c in cases})
    failures = []
    for case in cases:
        tokens = [(t.type, t.start_pos, t.end_pos) for t in parser.lex(case.text)]
        if case.negated:
            bad = [t for t in tokens if t[0] == case.terminal and t[1] < case.end and t[2] > case.start]
            ok = not bad
        else:
            ok = (case.terminal, case.start, case.end) in tokens
        if not ok:
            read = " ".join(f"{n}[{case.text[s:e]}]" for n, s, e in tokens if n not in ("WORD", "NUMBER", "OTHER"))
            failures.append(f"{path.name}:{case.line}: {case.shown()}  -- read: {read or 'only filler'}")
    return len(cases), failures
