"""Reductions a grammar hides: the shift/reduce conflicts Lark resolves silently, read while the
LALR tables are built.

An LALR table has one action per (state, next terminal). Where a grammar allows both shifting the
next token and reducing a rule, Lark shifts and says nothing (it logs at debug level): the
reduction is then never taken there, so part of a rule can be unreachable — a phrase that never
becomes its node — with no error and no warning (issue 22: "a shift/reduce resolution that hides
part of a rule"). The analysis is only possible while Lark builds the tables, so the parser cache
runs every build inside :class:`ConflictLog` and stores what it found beside the tables; a rule
load then reports them at no cost (see :mod:`..rules.rule`, ``[rule] reviewed_conflicts``).

Not every conflict hides something: ``value: DECIMAL`` beside ``value: DECIMAL UNIT`` (an optional
suffix) conflicts before ``UNIT``, and ``role: OLD (WORD | EXIT)*`` before ``WORD`` (a repetition
that can go on); shifting only takes the longer reading of the same rule. Those are left out
(:func:`hidden_reductions`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["MAX_NOTES", "ConflictLog", "GrammarNote", "hidden_reductions", "notes_for"]

#: Most hidden reductions kept for one grammar (the rest are counted, never listed).
MAX_NOTES = 50
#: Most distinct (terminal, reduction) conflicts kept while one grammar builds: the same pair
#: recurs in many LALR states, so the log is read as it comes and only distinct pairs are kept.
_MAX_CONFLICTS = 100_000

_CONFLICT = re.compile(r"Shift/Reduce conflict for terminal (\S+): \(resolving as shift\)")
_RULE = re.compile(r"^\s*\*\s*<(\S+?)\s*:")


@dataclass(frozen=True)
class GrammarNote:
    """Silent resolutions of one rule: where it is defined, and the terminals before which an
    alternative of it is never reduced (Lark shifts them into something else)."""

    path: Path
    line: int | None
    rule: str
    terminals: tuple[str, ...]

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return (
            f"{where}: shift/reduce conflict in rule {self.rule}: before "
            f"{', '.join(self.terminals)} Lark shifts, so that reduction of {self.rule} never happens there"
        )


class ConflictLog(logging.Handler):
    """Lark's debug messages while a parser builds (a context manager). Lark's logger is
    restored on exit, whatever its level and handlers were: its own stderr handler would
    otherwise print every debug line of the analysis."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        #: Distinct (terminal, reduction as Lark prints it), in the order first met.
        self.conflicts: dict[tuple[str, str], None] = {}
        self._pending: str | None = None
        self._saved: tuple[int, list[logging.Handler], bool] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        conflict = _CONFLICT.search(message)
        if conflict:
            self._pending = conflict.group(1)
            return
        if self._pending is not None and len(self.conflicts) < _MAX_CONFLICTS:
            self.conflicts.setdefault((self._pending, message), None)
        self._pending = None

    def __enter__(self) -> ConflictLog:
        logger = logging.getLogger("lark")
        self._saved = (logger.level, logger.handlers[:], logger.propagate)
        logger.handlers[:] = [self]
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        logger = logging.getLogger("lark")
        assert self._saved is not None
        logger.setLevel(self._saved[0])
        logger.handlers[:] = self._saved[1]
        logger.propagate = self._saved[2]


def hidden_reductions(
    conflicts: Iterable[tuple[str, str]], rules: Iterable[Any]
) -> list[tuple[str, tuple[str, ...]]]:
    """(rule, terminals) for each rule of the grammar with a reduction Lark's shift hides, sorted
    by rule name (Lark meets its states in an order that varies between processes); ``conflicts``
    are a :class:`ConflictLog`'s, ``rules`` the built parser's ``rules`` (for the optional-suffix
    test). At most :data:`MAX_NOTES` rules."""
    expansions: dict[str, list[tuple[str, ...]]] = {}
    for rule in rules:
        expansions.setdefault(rule.origin.name, []).append(tuple(s.name for s in rule.expansion))
    by_rule: dict[str, set[str]] = {}
    for terminal, message in conflicts:
        rule = _RULE.match(message)
        if rule and not _extends_itself(expansions, rule.group(1), message, terminal):
            by_rule.setdefault(rule.group(1), set()).add(terminal)
    return [(name, tuple(sorted(by_rule[name]))) for name in sorted(by_rule)][:MAX_NOTES]


def notes_for(path: Path, text: str, hidden: Iterable[tuple[str, Sequence[str]]]) -> tuple[GrammarNote, ...]:
    """The hidden reductions of the grammar at ``path`` (its ``text``) as notes with the line
    where each rule is defined."""
    lines = text.split("\n")
    return tuple(GrammarNote(path, _rule_line(lines, rule), rule, tuple(terminals)) for rule, terminals in hidden)


def _extends_itself(expansions: dict[str, list[tuple[str, ...]]], origin: str, message: str, terminal: str) -> bool:
    """The benign case: the same rule has a longer alternative that goes on where the reduced one
    stops (``value: DECIMAL`` and ``value: DECIMAL UNIT``, an optional suffix): shifting only
    takes the longer reading of the same rule, nothing is hidden. The next symbol of the longer
    alternative is the terminal itself or a rule (which may start with it)."""
    reduced = tuple(message.split(":", 1)[1].rstrip(">").split()) if ":" in message else ()
    if reduced and _repeats_with(expansions, reduced[-1], terminal):
        return True
    for other in expansions.get(origin, []):
        if len(other) > len(reduced) and other[: len(reduced)] == reduced:
            following = other[len(reduced)]
            if following == terminal or not following.isupper():
                return True
    return False


def _repeats_with(expansions: dict[str, list[tuple[str, ...]]], last: str, terminal: str) -> bool:
    """The other benign case: the reduced alternative ends in a repetition (``OLD (WORD | EXIT)*``,
    which Lark writes as a generated rule ``__role_star_1``) that can take one more item starting
    with ``terminal``: shifting makes the repetition longer (greedy), nothing is hidden."""
    if not (last.startswith("__") and ("_star_" in last or "_plus_" in last)):
        return False
    for expansion in expansions.get(last, []):
        if len(expansion) >= 2 and expansion[0] == last:
            following = expansion[1]
            if following == terminal or not following.isupper():
                return True
    return False


def _rule_line(lines: list[str], rule: str) -> int | None:
    """1-based line where ``rule`` is defined (``rule:``, ``?rule:``, ``!rule:``), else None (an
    imported or generated rule)."""
    head = re.compile(rf"^\s*[?!]?{re.escape(rule)}(\.\d+)?\s*:")
    for number, line in enumerate(lines, start=1):
        if head.match(line):
            return number
    return None
