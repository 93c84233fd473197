"""Read a person's adjudications: the review file ``keyaudit review`` wrote, with ``accept`` filled.

The file is JSON Lines or CSV (by extension). Each row names a response (``id``, ``model``, and
``epoch`` when there were several), repeats the ``key`` and ``answer_line`` it was reviewed
against, says how it was picked (``selected``: ``uncertain`` or ``sample``; a row drawn at random
also carries its ``draw``, see :class:`Draw`) and carries the person's label.

Values are read strictly; anything else is an error naming the row (``file:line: ...``, exit 2):

- ``accept``: ``true`` or ``false`` — a JSON boolean, or the word in any letter case (a CSV cell,
  a JSON string; spreadsheets write ``TRUE``). Empty, ``null`` or absent: not labelled yet, the row
  is skipped, as the review file invites. ``yes``, ``1``, ``maybe`` and the rest are errors.
- ``epoch``: a whole number from 1 (a JSON integer, or ASCII digits in a CSV cell); empty,
  ``null`` or absent means 1. ``1.9``, ``true``, ``0`` are errors.
- ``draw`` of a ``sample`` row: the record of :class:`Draw` (a JSON object; its text in a CSV); a
  ``sample`` row without it is an error (only rows ``review`` drew count as the random sample,
  and ``check`` verifies them).

The file is read a row at a time: an unlabelled row costs nothing once read (a file of millions of
them, which ``review`` can write, ran out of memory when every row was held first). What is kept
of the labelled rows is bounded: at most :data:`MAX_LABELLED_ROWS` rows and
:data:`MAX_LABELLED_TEXT` characters of their key, answer line and note in all; past either, an
error naming the row.

A CSV review file is written spreadsheet-safe (:func:`escape_cell`: a cell that would begin with a
formula character gets a ``'`` in front) and read back through :func:`unescape_cell`, which
removes exactly that quote, so writing and reading a cell is lossless.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, located
from .jsonl import read_csv_rows, read_jsonl

#: The values of ``accept``, in any letter case (nothing else is a label).
_LABELS = {"true": True, "false": False}
#: A CSV epoch: ASCII digits only (``int()`` would also take ``"١"``, ``" 1_0 "`` or ``"+1"``).
_EPOCH_DIGITS = re.compile(r"[0-9]{1,18}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: First characters a spreadsheet may read as the start of a formula (OWASP, "CSV injection").
FORMULA_STARTS = frozenset("=+-@\t\r")
FIELDS = ("id", "model", "epoch", "key", "answer_line", "selected", "draw", "accept", "note")
#: The most labelled rows one file may hold (a person's labels: ``review --sample`` draws at most
#: 1,000,000, plus the uncertain verdicts).
MAX_LABELLED_ROWS = 2_000_000
#: The most characters of key, answer line and note the labelled rows may hold together.
MAX_LABELLED_TEXT = 256 * 1024 * 1024


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
class Draw:
    """How ``review`` drew its random sample: ``random.Random(seed)`` picked ``sample`` of the
    ``population`` certain verdicts of the ruled ``cells``, in (model, id, epoch) order, whose
    identities hash to ``sha256``. Every ``sample`` row carries it (:meth:`to_json`; in a CSV as
    that JSON's text), so ``check --adjudications`` can draw again and see which rows really
    were the random sample."""

    seed: int
    sample: int
    population: int
    cells: tuple[tuple[str, int], ...]
    sha256: str

    def to_json(self) -> dict:
        return {
            "seed": self.seed,
            "sample": self.sample,
            "population": self.population,
            "cells": [[domain, level] for domain, level in self.cells],
            "sha256": self.sha256,
        }

    def text(self) -> str:
        """The record as one line of JSON (a CSV cell)."""
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, value: object) -> Draw | None:
        """The record ``value`` holds (:meth:`to_json`, or its text), or None if it holds none."""
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                return None
        if not isinstance(value, dict) or set(value) != {"seed", "sample", "population", "cells", "sha256"}:
            return None
        numbers = [value["seed"], value["sample"], value["population"]]
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
            return None
        seed, sample, population = numbers
        cells, digest = value["cells"], value["sha256"]
        if not 0 <= sample <= population or not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            return None
        if not isinstance(cells, list) or not all(
            isinstance(c, list) and len(c) == 2 and isinstance(c[0], str)
            and isinstance(c[1], int) and not isinstance(c[1], bool)
            for c in cells
        ):
            return None
        return cls(seed, sample, population, tuple((d, lv) for d, lv in cells), digest)


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
    #: The review's draw, on a ``sample`` row (None on any other).
    draw: Draw | None = None

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def _label(value: object, path: Path, line: int) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _LABELS:
        return _LABELS[value.strip().lower()]
    raise DataError(
        located(path, line, None, "'accept' must be true or false (or empty: not labelled)")
    )


def _epoch(value: object, path: Path, line: int) -> int:
    if value is None or value == "":
        return 1
    if isinstance(value, int) and not isinstance(value, bool):
        epoch = value
    elif isinstance(value, str) and _EPOCH_DIGITS.fullmatch(value.strip()):
        epoch = int(value.strip())
    else:
        epoch = 0
    if epoch < 1:
        raise DataError(
            located(path, line, None, "'epoch' must be a whole number from 1 (or empty: 1)")
        )
    return epoch


def _text(row: dict, name: str, path: Path, line: int) -> str | None:
    """A text field: a string, or None when empty or absent; anything else is an error."""
    value = row.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise DataError(located(path, line, None, f"{name!r} must be text"))
    return value


def _draw(row: dict, selected: str, path: Path, line: int) -> Draw | None:
    if selected != "sample":
        return None
    value = row.get("draw")
    draw = Draw.from_json(value) if value not in (None, "") else None
    if draw is None:
        problem = "no" if value in (None, "") else "a malformed"
        raise DataError(
            located(
                path, line, None,
                f"'selected' is 'sample' but the row has {problem} 'draw' (the seed and "
                "population keyaudit review drew its random sample with), so it cannot be "
                "verified as the random sample; clear 'selected' to apply the label without "
                "counting it in the error rate",
            )
        )
    return draw


def read_adjudications(path: Path) -> list[Adjudication]:
    """Every labelled row of ``path`` (JSONL or CSV), validated; unlabelled rows are skipped."""
    if not path.is_file():
        raise DataError(located(path, None, None, "adjudications file not found"))
    rows = _csv_rows(path) if path.suffix.lower() == ".csv" else read_jsonl(path)
    found: list[Adjudication] = []
    kept_text = 0
    seen: dict[tuple[str, str, int], int] = {}
    first_draw: tuple[Draw, int] | None = None
    for line, row in rows:
        if not isinstance(row, dict):
            raise DataError(located(path, line, None, "a row must be an object"))
        label = _label(row.get("accept"), path, line)
        if label is None:
            continue
        for name in ("id", "model", "key"):
            if not isinstance(row.get(name), str) or not row.get(name):
                raise DataError(located(path, line, None, f"the row needs its {name!r} (a string)"))
        epoch = _epoch(row.get("epoch"), path, line)
        answer = _text(row, "answer_line", path, line)
        selected = _text(row, "selected", path, line) or ""
        note = _text(row, "note", path, line) or ""
        draw = _draw(row, selected, path, line)
        if draw is not None:
            if first_draw is None:
                first_draw = (draw, line)
            elif draw != first_draw[0]:
                raise DataError(
                    located(path, line, None, f"a different 'draw' than line {first_draw[1]}: "
                            "one review file has one random sample")
                )
        ident = (row["model"], row["id"], epoch)
        if ident in seen:
            raise DataError(
                located(path, line, None, f"a second label for {row['model']} {row['id']} (first at line {seen[ident]})")
            )
        seen[ident] = line
        kept_text += len(row["key"]) + len(answer or "") + len(note)
        if len(found) >= MAX_LABELLED_ROWS or kept_text > MAX_LABELLED_TEXT:
            raise DataError(
                located(
                    path, line, None,
                    f"more labelled rows than keyaudit keeps from one file ({MAX_LABELLED_ROWS:,}"
                    f" rows, {MAX_LABELLED_TEXT:,} characters of key, answer line and note)",
                )
            )
        found.append(
            Adjudication(path, line, row["id"], row["model"], epoch, row["key"], answer, selected,
                         label, note, draw)
        )
    return found


def _csv_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """The rows of a CSV review file as dicts by its header, one at a time."""
    rows = read_csv_rows(path)
    first = next(rows, None)
    header = [unescape_cell(name) for name in first[1]] if first is not None else []
    if not {"id", "model", "accept"} <= set(header):
        raise DataError(
            located(path, 1, None, "a CSV header with id, model, key, answer_line, accept is needed")
        )
    twice = [name for name in FIELDS if header.count(name) > 1]
    if twice:
        raise DataError(located(path, 1, None, f"column {twice[0]!r} appears twice in the header"))
    return _csv_dicts(path, header, rows)


def _csv_dicts(path: Path, header: list[str], rows) -> Iterator[tuple[int, dict]]:
    for start, row in rows:
        if not row:
            continue
        if len(row) != len(header):
            raise DataError(located(path, start, None, "wrong number of columns"))
        yield start, dict(zip(header, map(unescape_cell, row), strict=True))
