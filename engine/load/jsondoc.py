"""Read one whole JSON document (a log file, a ZIP member, a results file) within bounds.

Evaluation logs are single JSON documents, not lines, so the line cap of :mod:`.jsonl` does not
apply; instead a document is at most :data:`MAX_DOCUMENT_BYTES` (a file's size checked before it is
read; a ZIP member's size as it inflates, see :mod:`.responses.zipmember`), the memory its parse
can take must fit in the run's memory budget (:mod:`.budget`, checked before it is parsed), and
every way ``json`` can fail is an error of its place: malformed JSON and invalid UTF-8 with line
and column, nesting too deep, integers too long for Python, lone surrogate escapes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import DataError, located
from .budget import ResponseBudget
from .filekind import file_problem
from .jsonl import _FAST_DECODE, check_unicode

#: Largest JSON document read in one piece (bytes, after decompression).
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024


def too_large(where: str | Path, size: int) -> DataError:
    return DataError(
        located(
            where,
            None,
            None,
            f"JSON document of {size:,} bytes; keyaudit reads documents of at most "
            f"{MAX_DOCUMENT_BYTES:,} bytes ({MAX_DOCUMENT_BYTES // 2**20} MiB)",
        )
    )


def read_document_bytes(path: Path, budget: ResponseBudget | None = None) -> bytes:
    """The bytes of the file at ``path``: a regular file of at most the limit (and of at most
    half the room ``budget`` has left: its bytes and its text are both held), else an error."""
    problem = file_problem(path, "a JSON file")
    if problem is not None:
        raise DataError(located(path, None, None, problem))
    try:
        with path.open("rb") as stream:
            if budget is not None:
                size = os.fstat(stream.fileno()).st_size
                if size <= MAX_DOCUMENT_BYTES and size > budget.document_room():
                    raise budget.document_over(path, 2 * size)
            data = stream.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as error:
        raise DataError(
            located(path, None, None, f"cannot read file: {error.strerror or error}")
        ) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise too_large(path, len(data))
    return data


def parse_document(
    data: bytes | bytearray | str, where: str | Path, budget: ResponseBudget | None = None
) -> Any:
    """The JSON value of ``data``; any failure is a one-line :class:`DataError` at ``where``.

    A document whose parse could take more memory than ``budget`` (default: a fresh run's) has
    left is refused before it is parsed."""
    if not isinstance(data, str):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            start = data.rfind(b"\n", 0, error.start) + 1
            column = len(data[start : error.start].decode("utf-8", "replace")) + 1
            raise DataError(
                located(where, line, column, f"not UTF-8 text (byte 0x{data[error.start]:02x})")
            ) from None
    else:
        text = data
    held = 0 if isinstance(data, str) else len(data)
    (budget if budget is not None else ResponseBudget()).check_document(text, where, held)
    fast = _FAST_DECODE is not None and not isinstance(data, str)
    if fast and b"\\ud" not in data and b"\\uD" not in data:
        try:  # msgspec builds what json would from what it accepts (see .jsonl.parse_lines)
            return _FAST_DECODE(data)  # type: ignore[misc]
        except Exception:  # noqa: BLE001 - refused: the json way below says why, or takes it
            pass
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise DataError(
            located(where, error.lineno, error.colno, f"malformed JSON: {error.msg}")
        ) from None
    except RecursionError:
        raise DataError(located(where, None, None, "JSON nested too deeply")) from None
    except ValueError as error:  # an integer of more than 4,300 digits
        reason = str(error).split(";")[0]
        raise DataError(located(where, None, None, f"malformed JSON: {reason}")) from None
    if "\\ud" in text or "\\uD" in text:
        check_unicode(value, where, None)
    return value
