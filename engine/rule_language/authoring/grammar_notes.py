"""Grammar notes for authors: the shift/reduce conflicts Lark resolved silently, with ``file:line``.

An LALR table has one action per (state, next terminal). Where a grammar allows both shifting the
next token and reducing a rule, Lark shifts and says nothing (it logs at debug level): the
reduction is then never taken there, so part of a rule can be unreachable — a phrase that never
becomes its node — with no error and no warning. ``keyaudit test-rule`` prints these notes so an
author sees them (issue 22: "a shift/reduce resolution that hides part of a rule").

Why not at every load: the tables are built once and cached, and the notes need a fresh analysis;
an authoring command can afford one more build, a scoring run should not pay for it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from lark import Lark
from lark.exceptions import LarkError

from ...load.timelimit import TimeLimitExceeded, time_limit
from ..reading.grammar import BUILD_SECONDS, ImportRefused, _ImportLoader, read_grammar
from ..reading.parser_cache import without_collision_scan

__all__ = ["GrammarNote", "shift_reduce_notes"]

#: Most notes reported for one grammar (the rest are counted).
MAX_NOTES = 50

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


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.messages) < 4 * MAX_NOTES:
            self.messages.append(record.getMessage())


def shift_reduce_notes(path: Path, start: str = "start") -> tuple[list[GrammarNote], int]:
    """The silent shift/reduce resolutions of the grammar at ``path``, one note per rule (at most
    ``MAX_NOTES``), and how many rules had one. A grammar that does not build gives no notes (loading it
    reports that error itself)."""
    text = read_grammar(path)
    logger = logging.getLogger("lark")
    capture = _Capture()
    saved = (logger.level, logger.handlers[:], logger.propagate)
    logger.handlers[:] = [capture]  # Lark's own stderr handler would print every debug line
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        with time_limit(BUILD_SECONDS, "analysing the grammar"), without_collision_scan():
            parser = Lark(
                text, import_paths=[_ImportLoader(path.parent)], parser="lalr", lexer="contextual",
                start=start, maybe_placeholders=False, source_path=str(path),
            )
    except (LarkError, ImportRefused, TimeLimitExceeded, RecursionError, MemoryError):
        return [], 0
    finally:
        logger.setLevel(saved[0])
        logger.handlers[:] = saved[1]
        logger.propagate = saved[2]
    expansions: dict[str, list[tuple[str, ...]]] = {}
    for rule in parser.rules:
        expansions.setdefault(rule.origin.name, []).append(tuple(s.name for s in rule.expansion))
    found: dict[tuple[str, str], None] = {}
    pending: str | None = None
    for message in capture.messages:
        conflict = _CONFLICT.search(message)
        if conflict:
            pending = conflict.group(1)
            continue
        rule = _RULE.match(message)
        if pending is not None and rule and not _extends_itself(expansions, rule.group(1), message, pending):
            found.setdefault((pending, rule.group(1)), None)
        pending = None
    by_rule: dict[str, list[str]] = {}
    for terminal, rule in found:
        by_rule.setdefault(rule, []).append(terminal)
    lines = text.split("\n")
    notes = [
        GrammarNote(path, _rule_line(lines, rule), rule, tuple(sorted(set(terminals))))
        for rule, terminals in by_rule.items()
    ]
    return notes[:MAX_NOTES], len(notes)


def _extends_itself(expansions: dict[str, list[tuple[str, ...]]], origin: str, message: str, terminal: str) -> bool:
    """The benign case: the same rule has a longer alternative that goes on where the reduced one
    stops (``value: DECIMAL`` and ``value: DECIMAL UNIT``, an optional suffix): shifting only
    takes the longer reading of the same rule, nothing is hidden. The next symbol of the longer
    alternative is the terminal itself or a rule (which may start with it)."""
    reduced = tuple(message.split(":", 1)[1].rstrip(">").split()) if ":" in message else ()
    for other in expansions.get(origin, []):
        if len(other) > len(reduced) and other[: len(reduced)] == reduced:
            following = other[len(reduced)]
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
