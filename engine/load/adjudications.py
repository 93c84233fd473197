"""Read a person's adjudications: the review file ``keyaudit review`` wrote, with ``accept`` filled.

The file is JSON Lines or CSV (by extension). Each row names a response (``id``, ``model``, and
``epoch`` when there were several), repeats the ``key`` and ``answer_line`` it was reviewed
against, says how it was picked (``selected``: ``uncertain`` or ``sample``) and carries the
person's label: ``accept`` true/false (also yes/no, 1/0, y/n); an empty ``accept`` is a row not yet
labelled and is skipped, as the review file invites. Anything else is an error naming the row.

A CSV review file is written spreadsheet-safe (:func:`escape_cell`: a cell that would begin with a
formula character gets a ``'`` in front) and read back through :func:`unescape_cell`, which
removes exactly that quote, so writing and reading a cell is lossless.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, located
from .jsonl import read_csv_rows, read_jsonl

_TRUE = {"true", "yes", "y", "1", "accept", "accepted"}
_FALSE = {"false", "no", "n", "0", "reject", "rejected"}
#: First characters a spreadsheet may read as the start of a formula (OWASP, "CSV injection").
FORMULA_STARTS = frozenset("=+-@\t\r")
FIELDS = ("id", "model", "epoch", "key", "answer_line", "selected", "accept", "note")


def escape_cell(text: str) -> str:
    """``text`` as a spreadsheet-safe CSV cell: one ``'`` in front when, after any leading single
    quotes, it begins with a formula character (``=``, ``+``, ``-``, ``@``, tab, carriage return).
    The quotes already there count, so :func:`unescape_cell` can tell the added one apart."""
    return "'" + text if text.lstrip("'")[:1] in FORMULA_STARTS else text


def unescape_cell(text: str) -> str:
    """The inverse of :func:`escape_cell`: one leading ``'`` removed when, after the quotes, the
    cell begins with a formula character; any other cell unchanged."""
    if text[:1] == "'" and text.lstrip("'")[:1] in FORMULA_STARTS:
        return text[1:]
    return text


@dataclass(frozen=True)
class Adjudication:
    """One labelled row: which response, what it was reviewed against, and the person's label."""

    path: Path
    line: int
    id: str
    model: str
    epoch: int
    key: str
    answer_line: str | None
    selected: str
    accept: bool
    note: str

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def _label(value: object, path: Path, line: int) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise DataError(located(path, line, None, "'accept' must be true or false (or empty: not labelled)"))


def read_adjudications(path: Path) -> list[Adjudication]:
    """Every labelled row of ``path`` (JSONL or CSV), validated; unlabelled rows are skipped."""
    if not path.is_file():
        raise DataError(located(path, None, None, "adjudications file not found"))
    rows = _csv_rows(path) if path.suffix.lower() == ".csv" else list(read_jsonl(path))
    found: list[Adjudication] = []
    seen: dict[tuple[str, str, int], int] = {}
    for line, row in rows:
        if not isinstance(row, dict):
            raise DataError(located(path, line, None, "a row must be an object"))
        label = _label(row.get("accept"), path, line)
        if label is None:
            continue
        for name in ("id", "model", "key"):
            if not isinstance(row.get(name), str) or not row.get(name):
                raise DataError(located(path, line, None, f"the row needs its {name!r} (a string)"))
        epoch_raw = row.get("epoch") or 1
        try:
            epoch = int(epoch_raw)
        except (TypeError, ValueError):
            raise DataError(located(path, line, None, "'epoch' must be a whole number")) from None
        answer = row.get("answer_line")
        answer = None if answer in (None, "") else str(answer)
        selected = str(row.get("selected") or "")
        ident = (row["model"], row["id"], epoch)
        if ident in seen:
            raise DataError(
                located(path, line, None, f"a second label for {row['model']} {row['id']} (first at line {seen[ident]})")
            )
        seen[ident] = line
        found.append(
            Adjudication(path, line, row["id"], row["model"], epoch, row["key"], answer, selected,
                         label, str(row.get("note") or ""))
        )
    return found


def _csv_rows(path: Path) -> list[tuple[int, dict]]:
    rows = read_csv_rows(path)
    first = next(rows, None)
    header = [unescape_cell(name) for name in first[1]] if first is not None else []
    if not {"id", "model", "accept"} <= set(header):
        raise DataError(
            located(path, 1, None, "a CSV header with id, model, key, answer_line, accept is needed")
        )
    found = []
    for start, row in rows:
        if not row:
            continue
        if len(row) != len(header):
            raise DataError(located(path, start, None, "wrong number of columns"))
        found.append((start, dict(zip(header, map(unescape_cell, row), strict=True))))
    return found
