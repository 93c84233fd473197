"""Stream JSON Lines files, plain or gzip-compressed, with exact line numbers for errors.

Every benchmark file is read through here so that a malformed line always produces the same kind
of message: ``file:line[:column]: what is wrong``. Blank lines are allowed (editors leave them at
the end); anything else that is not a JSON object is an error, never skipped.

Lines are read as bytes, split on ``\\n`` only (a ``\\r\\n`` ending is fine), at most
:data:`MAX_LINE_BYTES` at a time, so memory stays bounded whatever the file holds (a gzip bomb
that inflates to one 2 GB line is refused at its first 16 MiB, naming the line). Each line is then
decoded as UTF-8 on its own, so invalid UTF-8 is reported with its line and column. JSON nested
too deeply, integers too long for Python, and lone surrogate escapes (``"\\ud800"``, valid JSON but
not Unicode text) are errors of their line too.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import DataError, located
from .filekind import file_problem

#: File name endings that are read as JSON Lines, in the order they are globbed.
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
#: Longest line read (bytes of UTF-8, after decompression). A longer line is an error.
MAX_LINE_BYTES = 16 * 1024 * 1024


def allow_long_csv_fields() -> None:
    """Let CSV fields be as long as a JSON Lines line (Python's default is 131,072 characters,
    which a long stored response exceeds); a longer field is a ``malformed CSV`` error."""
    csv.field_size_limit(MAX_LINE_BYTES)


def read_csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line, row)`` for each record of a CSV file, the header first; ``line`` is where
    the record starts (a quoted field may span lines). A UTF-8 BOM is skipped. Unreadable files,
    malformed CSV and invalid UTF-8 are :class:`DataError` naming the file and line."""
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as error:
        raise DataError(located(path, None, None, f"cannot read file: {error}")) from None
    with handle:
        allow_long_csv_fields()
        reader = csv.reader(handle)
        line = 0
        try:
            for row in reader:
                start, line = line + 1, reader.line_num
                yield start, row
        except csv.Error as error:
            raise DataError(
                located(path, reader.line_num, None, f"malformed CSV: {error}")
            ) from None
        except UnicodeDecodeError as error:
            raise DataError(
                located(path, reader.line_num + 1, None, f"not UTF-8 text: {error.reason}")
            ) from None


def jsonl_files(folder: Path) -> list[Path]:
    """The ``*.jsonl`` and ``*.jsonl.gz`` entries of ``folder`` (see :func:`data_files`)."""
    return data_files(folder, JSONL_SUFFIXES, "a JSON Lines file")


def data_files(folder: Path, suffixes: tuple[str, ...], what: str = "a file") -> list[Path]:
    """The entries of ``folder`` whose names end with ``suffixes``, sorted by name.

    Every such entry must be a readable regular file (or a link to one): a directory, FIFO,
    device, dangling link or link loop is a :class:`DataError` naming it, never skipped.
    """
    try:
        names = sorted(os.listdir(folder))
    except OSError as error:
        raise DataError(
            located(folder, None, None, f"cannot list folder: {error.strerror}")
        ) from None
    found = []
    for name in names:
        if not name.endswith(suffixes):
            continue
        path = folder / name
        problem = file_problem(path, what)
        if problem is not None:
            raise DataError(located(path, None, None, problem))
        found.append(path)
    return found


def _open_binary(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    return path.open("rb")


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of ``path``.

    Raises :class:`DataError` naming the file and line for an over-long line, invalid UTF-8,
    invalid JSON, or a value that is not a JSON object; and naming the file when it cannot be
    read or is not valid gzip.
    """
    problem = file_problem(path, "a JSON Lines file")
    if problem is not None:
        raise DataError(located(path, None, None, problem))
    try:
        with _open_binary(path) as handle:
            yield from parse_lines(handle, path)
    except (OSError, EOFError, zlib.error) as error:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        raise DataError(located(path, None, None, f"cannot read file: {reason}")) from None


try:  # an optional faster reader of JSON lines (see parse_lines)
    import msgspec as _msgspec

    _FAST_DECODE = _msgspec.json.Decoder().decode
except ImportError:  # pragma: no cover - exercised without msgspec installed
    _FAST_DECODE = None

#: What a blank line may hold besides its newline: JSON's whitespace.
_BLANK = b" \t\r\n"
_BLANK_TEXT = " \t\r\n"
_BLANK_FIRST = frozenset(_BLANK)


def _raw_lines(
    stream: IO[Any], name: str | Path, decode: bool = True
) -> Iterator[tuple[int, str | bytes]]:
    """``(number, text)`` of each non-blank line of a binary or text stream, each at most the
    limit. A blank line (JSON whitespace only) is skipped, and the blank lines after it in bulk,
    a buffer at a time (counted, not read one by one: 256 MiB of newlines is a few seconds).
    Without ``decode`` a binary stream's lines are given as bytes (:func:`_decoded` decodes)."""
    number = 0
    skip_run = getattr(stream, "peek", None) is not None
    while True:
        number += 1
        try:
            raw = stream.readline(MAX_LINE_BYTES + 1)
        except UnicodeDecodeError as error:  # a text stream (stdin) that is not UTF-8
            raise DataError(
                located(name, number, None, f"not UTF-8 text: {error.reason}")
            ) from None
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES and raw[-1:] not in (b"\n", "\n"):
            raise DataError(
                located(
                    name,
                    number,
                    None,
                    f"line longer than {MAX_LINE_BYTES:,} bytes ({MAX_LINE_BYTES // 2**20} MiB),"
                    " the most keyaudit reads as one line",
                )
            )
        if isinstance(raw, bytes):
            if raw[0] in _BLANK_FIRST and not raw.strip(_BLANK):
                if skip_run and raw[-1:] == b"\n":
                    number += _skip_blank_lines(stream)
                continue
            if not decode:
                yield number, raw
                continue
            text = _decoded(raw, name, number)
        else:
            if not raw.strip(_BLANK_TEXT):
                continue
            text = raw
        yield number, text


def _decoded(raw: bytes, name: str | Path, number: int) -> str:
    """A line's bytes as text; invalid UTF-8 is an error naming the line and column."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        column = len(raw[: error.start].decode("utf-8", "replace")) + 1
        byte = raw[error.start : error.start + 1].hex()
        raise DataError(located(name, number, column, f"not UTF-8 text (byte 0x{byte})")) from None


def _skip_blank_lines(stream: IO[bytes]) -> int:
    """Consume the complete blank lines at the stream's position, a buffer at a time; returns
    how many there were."""
    skipped = 0
    while True:
        buffered = stream.peek(1)  # type: ignore[attr-defined]
        if not buffered or buffered[0] not in _BLANK_FIRST:
            return skipped
        blank = len(buffered) - len(buffered.lstrip())  # ASCII whitespace: fast
        end = buffered.rfind(b"\n", 0, blank) + 1  # past the last whole blank line
        if end and (buffered.find(b"\x0b", 0, end) >= 0 or buffered.find(b"\x0c", 0, end) >= 0):
            blank = len(buffered) - len(buffered.lstrip(_BLANK))  # not JSON whitespace
            end = buffered.rfind(b"\n", 0, blank) + 1
        if end == 0:
            return skipped
        skipped += buffered.count(b"\n", 0, end)
        stream.read(end)
        if end < len(buffered):
            return skipped


def parse_lines(stream: IO[Any], name: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a stream (a file, or stdin) with their line numbers.

    ``stream`` may be binary (preferred: UTF-8 is checked per line) or text.

    A binary line is first given to msgspec's decoder (when installed: about 3.5 µs a line less
    than ``json.loads`` on short lines); it accepts a subset of what ``json`` accepts and builds
    the same values (integers of any length included), so a line it takes is taken as ``json``
    would take it. Anything it refuses, and any line with a ``\\ud``/``\\uD`` escape, goes the
    ``json`` way below, which gives every message (or accepts ``NaN``, ``1e400``...) as before.
    """
    fast = _FAST_DECODE  # text lines (stdin) always go the json way
    for number, line in _raw_lines(stream, name, decode=fast is None):
        if type(line) is bytes:
            if b"\\u" not in line or (b"\\ud" not in line and b"\\uD" not in line):
                try:
                    value = fast(line)  # type: ignore[misc]
                except Exception:  # noqa: BLE001 - refused: the json path says why, or takes it
                    value = None
                if type(value) is dict:
                    yield number, value
                    continue
            line = _decoded(line, name, number)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(
                located(name, number, error.colno, f"malformed JSON: {error.msg}")
            ) from None
        except RecursionError:
            raise DataError(located(name, number, None, "JSON nested too deeply")) from None
        except ValueError as error:  # e.g. an integer of more than 4,300 digits
            reason = str(error).split(";")[0]
            raise DataError(located(name, number, None, f"malformed JSON: {reason}")) from None
        if not isinstance(value, dict):
            raise DataError(located(name, number, None, "expected a JSON object on each line"))
        if "\\ud" in line or "\\uD" in line:
            check_unicode(value, name, number)
        yield number, value


def check_unicode(value: Any, name: str | Path, number: int | None) -> None:
    """Refuse lone surrogates (``"\\ud800"``): valid JSON, but not text anything can print."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                bad = f"\\u{ord(item[error.start]):04x}"
                raise DataError(
                    located(
                        name,
                        number,
                        None,
                        f"a string holds a lone surrogate escape ({bad}): not valid Unicode text",
                    )
                ) from None


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
            located(path, line, None, f"field {field!r} must be a {names}, got {_short(value)}")
        )
    return value


def _short(value: Any) -> str:
    """``repr`` of a value, cut to 60 characters without building a huge text first."""
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return "a very long integer"
    return f"{value!r:.60}"
