"""keyaudit's own response files, ``responses/*.jsonl[.gz]`` or ``*.csv``: one model or several.

Each line (row) is one evaluated item: ``id``, ``model``, ``response`` (the full text with its
ANSWER line) and optionally ``correct`` (the benchmark's strict verdict; when absent keyaudit
computes it). Field names follow ``[fields]`` of ``benchmark.toml``. The ``model`` field says
whose answer each line is, so a file may hold one model or many, in any order (one file per model
and one file for all models are both common layouts): the file is read as one run per model, in
the order each model first appears. A model and id twice in one file is an error naming both
lines. In a CSV, ``correct`` is ``true``/``false`` (or ``1``/``0``); an empty cell means absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import DataError, located
from ..budget import ResponseBudget
from ..jsonl import read_csv_rows, read_jsonl, require_field
from .records import FieldNames, LoggedRun, LoggedSample, ResponseSource

_CSV_TRUE = {"true", "1", "yes"}
_CSV_FALSE = {"false", "0", "no"}


def read_jsonl_responses(
    path: Path, source: ResponseSource, names: FieldNames, budget: ResponseBudget | None = None
) -> list[LoggedRun]:
    return _runs(path, "jsonl", source, names, read_jsonl(path), budget)


def read_csv_responses(
    path: Path, source: ResponseSource, names: FieldNames, budget: ResponseBudget | None = None
) -> list[LoggedRun]:
    return _runs(path, "csv", source, names, _csv_rows(path, names), budget)


def _runs(
    path: Path,
    fmt: str,
    source: ResponseSource,
    names: FieldNames,
    rows: Iterator[tuple[int, dict[str, Any]]],
    budget: ResponseBudget | None,
) -> LoggedRun:
    """The file's samples, one run per model in order of first appearance; each kept sample is
    charged to ``budget`` (default: a fresh run's).

    A source's display name (``model`` of ``[[responses]]``, ``--model-name``) renames the one
    model of a file; a file holding several models cannot take it (they would merge into one)."""
    keep = (budget if budget is not None else ResponseBudget()).keep
    samples_of: dict[str, list[LoggedSample]] = {}
    lines_of: dict[str, dict[str, int]] = {}  # each model's ids: the line that holds it
    prefix = f"{path}:"
    id_name, model_name, text_name, correct_name = (
        names.id,
        names.model,
        names.response,
        names.correct,
    )
    for line, record in rows:
        item_id = record.get(id_name)
        name = record.get(model_name)
        text = record.get(text_name)
        if type(item_id) is not str or type(name) is not str or type(text) is not str:
            item_id = require_field(record, id_name, path, line, str)  # raises the right error
            name = require_field(record, model_name, path, line, str)
            text = require_field(record, text_name, path, line, str)
        lines = lines_of.get(name)
        if lines is None:
            if source.model and lines_of:
                first = next(iter(lines_of))
                raise DataError(
                    located(
                        path,
                        line,
                        None,
                        f"model {name!r} after {first!r}: this file holds several models, so it "
                        f"cannot be given one display name ({source.model!r}); drop the source's "
                        "model name, the file's model field names each",
                    )
                )
            lines = lines_of[name] = {}
            samples_of[name] = []
        earlier = lines.setdefault(item_id, line)
        if earlier != line:
            raise DataError(
                located(
                    path,
                    line,
                    None,
                    f"duplicate id {item_id!r} for model {name!r} (also at line {earlier})",
                )
            )
        correct = record.get(correct_name)
        if (correct is not None or correct_name in record) and type(correct) is not bool:
            correct = require_field(record, correct_name, path, line, bool)
        where = prefix + str(line)
        samples_of[name].append(
            LoggedSample(item_id, keep(text, where, item_id), correct, 1, None, where)
        )
    if not samples_of:
        return [LoggedRun(path, fmt, source.model or "", [])]
    return [
        LoggedRun(path, fmt, source.model or name, samples) for name, samples in samples_of.items()
    ]


def _csv_rows(path: Path, names: FieldNames) -> Iterator[tuple[int, dict[str, Any]]]:
    rows = read_csv_rows(path)
    first = next(rows, None)
    if first is None:
        return
    header = first[1]
    for name in (names.id, names.model, names.response, names.correct):
        if header.count(name) > 1:  # a dict of the row would silently keep the last
            raise DataError(
                located(
                    path,
                    first[0],
                    None,
                    f"column {name!r} appears {header.count(name)} times in the header: which "
                    "one holds the data is unknowable",
                )
            )
    for start, row in rows:
        if not row:
            continue  # a blank line, as csv.DictReader skips it
        if len(row) != len(header):
            raise DataError(located(path, start, None, "wrong number of columns"))
        record: dict[str, Any] = dict(zip(header, row, strict=True))
        value = record.get(names.correct)
        if value is not None:
            flag = value.strip().lower()
            if flag == "":
                del record[names.correct]
            elif flag in _CSV_TRUE | _CSV_FALSE:
                record[names.correct] = flag in _CSV_TRUE
            else:
                raise DataError(
                    located(path, start, None, f"column {names.correct!r} must be true or false")
                )
        yield start, record
