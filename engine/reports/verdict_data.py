"""Every verdict of the ruled cells, as the HTML page's verdict browser reads it.

A cell of a full benchmark holds tens of thousands of scored responses (48,000 in the largest of
``bench/scale.py``'s), and the page carries them all inline, so the data is columns of small
integers, each text once:

* ``strings``: every text the browser shows (keys, answer lines, reasons, extracted values,
  reasons for doubt, explanation lines), once each, in order of first use;
* ``verdicts``: each distinct verdict once, ``[answer line, accept, reason, extracted,
  [uncertain...], explanation]`` as indexes into ``strings`` (``-1``: no answer line) and into
  ``explanations``;
* ``explanations``: how the rule reads each distinct (cell, key, answer line), the lines
  ``test-rule --explain`` prints, as indexes into ``strings``;
* per cell, its item ids and their keys, and per sample (in model, id, epoch order) its model,
  item, epoch (left out when every epoch is 1), the benchmark's strict verdict and whether a
  person's label replaced the rule's (as strings of ``0``/``1``), and its verdict.

Samples are placed by the (model, id, epoch) the audit scored, never by a name parsed back: an id
may hold ``#`` or end in ``#2``. Every text is written with :func:`~keyaudit.engine.errors.printable`
(a newline, a control character or a right-to-left mark shows as its escape, as in the terminal).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import printable
from .explain_text import Explanation
from .findings import Audit, format_value

__all__ = ["Explain", "VerdictData", "verdict_data"]

#: How the rule of a cell reads one answer line for one key: ``explain((domain, level), key,
#: answer_text)``.
Explain = Callable[[tuple[str, int], str, str], Explanation]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Strings:
    """A table of texts, each once, in order of first use."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        at = self._at.get(text)
        if at is None:
            at = self._at[text] = len(self.texts)
            self.texts.append(printable(text))
        return at


class _Table:
    """Records kept as their JSON text, each once, in order of first use."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, record: Any) -> int:
        text = _json(record)
        at = self._at.get(text)
        if at is None:
            at = self._at[text] = len(self.texts)
            self.texts.append(text)
        return at


@dataclass(frozen=True)
class VerdictData:
    """The browser's data, each part already JSON text: a whole benchmark's (496,000 responses,
    41 MB) is written out piece by piece, never held as one Python object tree or string."""

    models: list[str]
    strings: list[str]
    verdicts: list[str]
    explanations: list[str]
    cells: list[str]
    n_rows: int

    def json_chunks(self, size: int = 4096) -> Iterator[str]:
        """The JSON object ``{"models", "strings", "verdicts", "explanations", "cells"}`` in
        pieces (``size`` entries of a list at most in one)."""
        yield '{"models":' + _json(self.models)
        for name, texts in (("strings", [_json(t) for t in self.strings]), ("verdicts", self.verdicts),
                            ("explanations", self.explanations), ("cells", self.cells)):
            yield f',"{name}":['
            for start in range(0, len(texts), size):
                yield ("," if start else "") + ",".join(texts[start : start + size])
            yield "]"
        yield "}"


def _values(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={format_value(v)}" for k, v in values.items())


def _bits(column: np.ndarray) -> str:
    """A boolean column as a string of ``0`` and ``1``."""
    return np.where(column, ord("1"), ord("0")).astype(np.uint8).tobytes().decode("ascii")


def _ints(column: np.ndarray) -> str:
    """An integer column as a JSON list."""
    return "[" + ",".join(map(str, column.tolist())) + "]"


def verdict_data(audit: Audit, explain: Explain) -> VerdictData:
    """The browser's data (see the module docstring); no cell without samples."""
    samples = audit.samples
    if samples is None:
        return VerdictData([], [], [], [], [], 0)
    strings, records, explanations = _Strings(), _Table(), _Table()
    keys = samples.keys
    cell_at = {(c.domain, c.level): n for n, c in enumerate(audit.cells)}
    key_cell = np.fromiter(
        (cell_at.get((k.ref.domain, k.ref.level), -1) for k in keys), dtype=np.int64, count=len(keys)
    )
    item = samples.item.astype(np.int64)
    cell_of = key_cell[item]
    model_rank = np.argsort(np.argsort(np.array(samples.models, dtype=object), kind="stable"))
    # A verdict's record is found by its content (the data does not depend on which verdicts
    # the scoring shared as one object); ``seen`` only spares building it again.
    seen: dict[tuple[int, str], int] = {}
    explanation_at: dict[tuple[tuple[str, int], str, str], int] = {}

    def explained(cell: tuple[str, int], key: str, answer: str | None) -> int:
        if answer is None:
            return -1
        at = explanation_at.get((cell, key, answer))
        if at is None:
            lines = explain(cell, key, answer).lines()
            at = explanation_at[(cell, key, answer)] = explanations([strings(line) for line in lines])
        return at

    def verdict_code(verdict: Any, cell: tuple[str, int], key: str) -> int:
        at = seen.get((id(verdict), key))
        if at is None:
            answer = verdict.answer_text
            at = seen[(id(verdict), key)] = records(
                [
                    -1 if answer is None else strings(answer),
                    1 if verdict.accept else 0,
                    strings(verdict.reason or ""),
                    strings(_values(verdict.values)),
                    [strings(u) for u in verdict.uncertain],
                    explained(cell, key, answer),
                ]
            )
        return at

    cells = []
    n_rows = 0
    verdicts: Sequence[Any] = samples.verdicts
    for n, cell in enumerate(audit.cells):
        place = (cell.domain, cell.level)
        rows = np.flatnonzero(cell_of == n)
        items = np.unique(item[rows])
        items = items[np.argsort(np.array([keys[k].id for k in items.tolist()], dtype=object), kind="stable")]
        local = np.empty(len(keys), dtype=np.int64)
        local[items] = np.arange(len(items))
        order = np.lexsort((samples.epoch[rows], local[item[rows]], model_rank[samples.model[rows]]))
        rows = rows[order]
        epochs = samples.epoch[rows].astype(np.int64)
        codes = np.fromiter(
            (verdict_code(verdicts[r], place, keys[k].answer) for r, k in zip(rows.tolist(), item[rows].tolist(), strict=True)),
            dtype=np.int64, count=len(rows),
        )
        labelled = samples.labelled[rows]
        fields = {
            "name": _json(f"{printable(cell.domain)} L{cell.level}"),
            "rule": _json(printable(cell.rule)),
            "ids": _json([printable(keys[k].id) for k in items.tolist()]),
            "keys": _ints(np.array([strings(keys[k].answer) for k in items.tolist()], dtype=np.int64)),
            "model": _ints(samples.model[rows].astype(np.int64)),
            "item": _ints(local[item[rows]]),
            "epoch": "[]" if not len(epochs) or bool((epochs == 1).all()) else _ints(epochs),
            "strict": _json(_bits(samples.strict[rows])),
            "labelled": _json(_bits(labelled) if labelled.any() else ""),
            "verdict": _ints(codes),
        }
        cells.append("{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}")
        n_rows += len(rows)
    return VerdictData(
        [printable(m) for m in samples.models], strings.texts, records.texts, explanations.texts, cells, n_rows
    )
