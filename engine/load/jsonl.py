"""Stream JSON Lines files, plain or gzip-compressed, with exact line numbers for errors.

Every benchmark file is read through here so that a malformed line always produces the same kind
of message: ``file:line: what is wrong``. Blank lines are allowed (editors leave them at the end);
anything else that is not a JSON object is an error, never skipped.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from ..errors import DataError, located

#: File name endings that are read as JSON Lines, in the order they are globbed.
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")


def _open_text(path: Path) -> TextIO:
    if path.name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


def jsonl_files(folder: Path) -> list[Path]:
    """The ``*.jsonl`` and ``*.jsonl.gz`` files of ``folder``, sorted by name for determinism."""
    found = {p for suffix in JSONL_SUFFIXES for p in folder.glob("*" + suffix) if p.is_file()}
    return sorted(found, key=lambda p: p.name)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of ``path``.

    Raises :class:`DataError` naming the file and line for invalid UTF-8, invalid JSON, or a
    value that is not a JSON object.
    """
    try:
        with _open_text(path) as handle:
            yield from parse_lines(handle, path)
    except UnicodeDecodeError as error:
        raise DataError(located(path, None, None, f"not UTF-8 text: {error.reason}")) from None
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise DataError(located(path, None, None, f"cannot read file: {error}")) from None


def parse_lines(lines: Iterable[str], name: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of ``lines`` (a file or a stream such as stdin) with their line numbers."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(
                located(name, number, error.colno, f"malformed JSON: {error.msg}")
            ) from None
        if not isinstance(value, dict):
            raise DataError(located(name, number, None, "expected a JSON object on each line"))
        yield number, value


def require_field(
    record: dict[str, Any], field: str, path: Path, line: int, kind: type | tuple[type, ...]
) -> Any:
    """Return ``record[field]`` checked against ``kind``; a clear one-line error otherwise."""
    if field not in record:
        raise DataError(located(path, line, None, f"missing field {field!r}"))
    value = record[field]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DataError(
            located(path, line, None, f"field {field!r} must be a {names}, got {value!r:.60}")
        )
    return value
