"""Read ad hoc scoring cases (``keyaudit score --cases``): JSONL of {key, response, id?}."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..errors import DataError, located
from .jsonl import parse_lines, read_jsonl, require_field


@dataclass(frozen=True)
class Case:
    id: Any
    key: str
    response: str


def read_cases(source: Path | TextIO) -> Iterator[Case]:
    """Yield cases from a file path or an open text stream (stdin), validating each line."""
    if isinstance(source, Path):
        if not source.is_file():
            raise DataError(located(source, None, None, "cases file not found"))
        rows = read_jsonl(source)
        name: Path | str = source
    else:
        rows = parse_lines(source, "<stdin>")
        name = "<stdin>"
    for line, record in rows:
        path = Path(str(name))
        key = require_field(record, "key", path, line, str)
        response = require_field(record, "response", path, line, str)
        yield Case(record.get("id"), key, response)
