"""Read a TOML file into a dict, with TOML syntax errors reported as ``file:line:column``."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from ..errors import KeyauditError, located

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)|\(at end of document\)")


def load_toml(path: Path, error: type[KeyauditError] = KeyauditError) -> dict[str, Any]:
    """Parse ``path``; a syntax error becomes ``error`` with the file, line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(located(path, None, None, f"cannot read: {exc}")) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        position = _POSITION.search(message)
        reason = _POSITION.sub("", message).strip()
        if position and position.group(1) is None:
            lines = text.splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
            raise error(
                located(path, line, column, f"TOML error: {reason} (at end of file)")
            ) from None
        if position:
            line, column = int(position.group(1)), int(position.group(2))
            raise error(located(path, line, column, f"TOML error: {reason}")) from None
        raise error(located(path, None, None, f"TOML error: {reason}")) from None
