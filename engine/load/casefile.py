"""Read scoring cases: JSONL of {key, response, id?} (``score --cases``), and labelled ones that
also carry ``accept`` (and optionally ``reason`` and ``split``) for ``test-rule --cases``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..errors import DataError, located
from .filekind import file_problem
from .jsonl import parse_lines, read_jsonl, require_field


@dataclass(frozen=True)
class Case:
    id: Any
    key: str
    response: str
    #: The label of a labelled case (``test-rule --cases``); None when the file has none.
    accept: bool | None = None
    reason: str | None = None
    #: The labelled case's ``split`` (``tune``, ``holdout``, …), when its file marks one.
    split: str | None = None


def read_cases(source: Path | TextIO, labelled: bool = False) -> Iterator[Case]:
    """Yield cases from a file path or an open stream (stdin), validating each line.

    ``labelled`` requires a boolean ``accept`` on every line (and a string ``reason`` if present).
    A FIFO is accepted too (``--cases <(make_cases)``): it is a stream the user named.
    """
    if isinstance(source, Path):
        problem = file_problem(source, "a JSON Lines file")
        if problem is not None and "FIFO" not in problem:
            raise DataError(located(source, None, None, f"cases file {problem}"))
        rows = read_jsonl(source) if problem is None else _read_stream(source)
        name: Path | str = source
    else:
        rows = parse_lines(getattr(source, "buffer", source), "<stdin>")
        name = "<stdin>"
    for line, record in rows:
        path = Path(str(name))
        key = require_field(record, "key", path, line, str)
        response = require_field(record, "response", path, line, str)
        if not labelled:
            yield Case(record.get("id"), key, response)
            continue
        accept = require_field(record, "accept", path, line, bool)
        reason = record.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise DataError(located(path, line, None, "'reason' must be a string"))
        split = record.get("split")
        if split is not None and not isinstance(split, str):
            raise DataError(located(path, line, None, "'split' must be a string"))
        yield Case(record.get("id", line), key, response, accept, reason, split)


def _read_stream(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with path.open("rb") as stream:
            yield from parse_lines(stream, path)
    except OSError as error:
        raise DataError(located(path, None, None, f"cannot read: {error.strerror}")) from None
