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


class UsageError(KeyauditError):
    """The command line asked for something impossible (unknown rule name, bad option value)."""


def located(path: str | Path | None, line: int | None, column: int | None, message: str) -> str:
    """Format ``file:line:column: message``, leaving out the parts that are unknown.

    Messages are forced onto one line: the CLI contract is one line per error.
    """
    parts = [str(p) for p in (path, line, column) if p is not None]
    one_line = " ".join(message.split())
    return ":".join(parts) + ": " + one_line if parts else one_line
