"""One error root for everything keyaudit reports to a user.

Every failure a user can cause (a malformed benchmark file, a bad rule, a wrong option) is raised
as a :class:`KeyauditError` whose message is a single line, ideally starting with
``file:line:column:`` so an editor can jump to it. The CLI prints that line and exits with code 2;
nothing else ever reaches the user as a traceback.
"""

from __future__ import annotations

from pathlib import Path


class KeyauditError(Exception):
    """Root of all user-facing errors; ``str(error)`` is the one line shown to the user."""

    exit_code = 2


class DataError(KeyauditError):
    """A benchmark file is malformed or inconsistent (bad JSON, missing field, unknown id...)."""


class RuleError(KeyauditError):
    """A rule file, one of its grammars or one of its expressions is malformed."""


class ExpressionError(RuleError):
    """A rule expression failed to parse, referred to an unknown name, or failed to evaluate."""


class OutputError(KeyauditError):
    """A file keyaudit writes (a report, a plot, a card) could not be written: no space, a size
    limit, no permission. The previous file, if any, is kept."""


class UsageError(KeyauditError):
    """The command line asked for something impossible (unknown rule name, bad option value)."""


def printable(text: str) -> str:
    """``text`` with every character a terminal would not print literally escaped (``\\n``,
    ``\\x1b``, ``\\u2028``, lone surrogates...): a file name or value with a newline or an
    escape sequence in it cannot split an error line or drive the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(char: str) -> str:
    escaped = repr(char)[1:-1]
    return escaped if escaped != char else f"\\u{ord(char):04x}"


def one_line(message: str) -> str:
    """A message on one printable line: runs of whitespace become one space, the rest escaped."""
    return printable(" ".join(message.split()))


def located(path: str | Path | None, line: int | None, column: int | None, message: str) -> str:
    """Format ``file:line:column: message``, leaving out the parts that are unknown.

    Messages are forced onto one line: the CLI contract is one line per error. The path is
    printed with its unprintable characters escaped (a newline in a file name stays ``\\n``).
    """
    parts = [printable(str(p)) for p in (path, line, column) if p is not None]
    text = one_line(message)
    return ":".join(parts) + ": " + text if parts else text
