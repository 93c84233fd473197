"""Answer keys in the published CSV layout: ``Dataset/<domain>_dataset_<n>/answer_key.csv``.

GRIP-Benchmark-34 publishes one ``answer_key.csv`` per domain with the columns
``question_id,task,image,prompt,groundtruth``. keyaudit reads ``question_id`` as the item id,
``groundtruth`` as the key string exactly as written, and ``prompt`` as the question the key
answers (shown by ``keys`` and the worked examples). ``id``/``answer``/``question`` are accepted as
the same three columns under keyaudit's own names; other columns are ignored.

A whole ``Dataset/`` tree is read at once: every ``*/answer_key.csv`` under it, sorted by path.
Errors name ``file:line`` (the physical line, so quoted fields with newlines count correctly).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import DataError, located
from .filekind import exists_at_all, file_problem
from .jsonl import read_csv_rows

#: (id, key, question) column names: the published ones first, then keyaudit's own.
ID_COLUMNS = ("question_id", "id")
KEY_COLUMNS = ("groundtruth", "answer")
QUESTION_COLUMNS = ("prompt", "question")
TREE_FILE = "answer_key.csv"


def csv_tree_files(folder: Path) -> list[Path]:
    """``<folder>/*/answer_key.csv`` (the published layout), sorted; empty when there is none."""
    try:
        children = sorted(child for child in folder.iterdir() if child.is_dir())
    except OSError:
        return []
    found = [child / TREE_FILE for child in children if exists_at_all(child / TREE_FILE)]
    for path in found:
        problem = file_problem(path, "a CSV file")
        if problem is not None:  # a dangling link or a folder of that name: never skipped
            raise DataError(located(path, None, None, problem))
    return found


def read_csv_keys(path: Path) -> Iterator[tuple[int, str, str, str | None]]:
    """Yield ``(line, id, key, question)`` for each row of one key CSV."""
    rows = read_csv_rows(path)
    first = next(rows, None)
    if first is None:
        raise DataError(located(path, 1, None, "empty file: expected a header row"))
    header = first[1]
    id_at, key_at, question_at = _columns(header, path)
    width = len(header)
    for start, row in rows:
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) != width:
            raise DataError(located(path, start, None, f"expected {width} columns, got {len(row)}"))
        item_id = row[id_at]
        if not item_id:
            raise DataError(located(path, start, None, f"empty {header[id_at]!r}"))
        question = row[question_at] if question_at is not None else None
        yield start, item_id, row[key_at], question or None


def _columns(header: list[str], path: Path) -> tuple[int, int, int | None]:
    names = [h.strip() for h in header]

    def find(options: tuple[str, ...]) -> int | None:
        return next((names.index(o) for o in options if o in names), None)

    for name in (*ID_COLUMNS, *KEY_COLUMNS, *QUESTION_COLUMNS):
        if names.count(name) > 1:  # the first would silently win
            raise DataError(
                located(
                    path,
                    1,
                    None,
                    f"column {name!r} appears {names.count(name)} times in the header: which "
                    "one holds the data is unknowable",
                )
            )
    id_at, key_at, question_at = find(ID_COLUMNS), find(KEY_COLUMNS), find(QUESTION_COLUMNS)
    if id_at is None or key_at is None:
        raise DataError(
            located(
                path,
                1,
                None,
                "key CSV needs the columns question_id and groundtruth (or id and answer)",
            )
        )
    return id_at, key_at, question_at
