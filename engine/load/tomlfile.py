"""Read a TOML file into a dict, with TOML syntax errors reported as ``file:line:column``."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from ..errors import KeyauditError, located
from .filekind import file_problem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

#: Largest TOML file read (a rule or benchmark.toml; bytes).
MAX_TOML_BYTES = 4 * 1024 * 1024

_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)|\(at end of document\)")


def load_toml(path: Path, error: type[KeyauditError] = KeyauditError) -> dict[str, Any]:
    """Parse ``path``; a syntax error becomes ``error`` with the file, line and column."""
    problem = file_problem(path, "a TOML file")
    if problem is not None:
        raise error(located(path, None, None, problem))
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_TOML_BYTES + 1)
    except OSError as exc:
        raise error(located(path, None, None, f"cannot read: {exc.strerror or exc}")) from None
    if len(data) > MAX_TOML_BYTES:
        raise error(located(path, None, None, f"larger than {MAX_TOML_BYTES:,} bytes"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(
            data[data.rfind(b"\n", 0, exc.start) + 1 : exc.start].decode("utf-8", "replace")
        )
        raise error(
            located(path, line, column + 1, f"not UTF-8 text (byte 0x{data[exc.start]:02x})")
        ) from None
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise error(located(path, None, None, "TOML error: nested too deeply")) from None
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
