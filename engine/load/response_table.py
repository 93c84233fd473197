"""The loaded responses as columns: a few bytes per response, not a Python object each.

A full benchmark has millions of stored responses (2.48 M in ``bench/scale.py``, 25 M at ten
times the models). Kept as one :class:`~.items.Response` object each (with its slot in the
load's dictionaries) they took about 700 bytes apiece, so memory grew with responses; an audit
reads of each only its model, item, epoch, stored verdict and (in ruled cells) its text.

:class:`ResponseTable` keeps those as columns: model and item as indexes into the table's model
names and the benchmark's keys, the epoch, the stored verdict and whether keyaudit computed it,
and a reference to the text, which the load shares between equal texts (a duplicate answer is
stored once: :meth:`.budget.ResponseBudget.keep`). About 20 bytes a response plus each distinct
text once. It is still a ``Sequence[Response]``: indexing or iterating builds the
:class:`~.items.Response` objects on the fly, so code that reads a few responses (or all of
them, once) is unchanged; the audit reads the columns directly (:attr:`model`, :attr:`item`,
:attr:`epoch`, :attr:`correct`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from .items import KeyItem, Response


class ResponseTable(Sequence["Response"]):
    """Responses as columns (see the module docstring), in load order.

    ``models`` are the model names in order of first appearance and ``keys`` the benchmark's
    keys in its order; ``model[i]`` and ``item[i]`` index them. ``texts[i]`` is the response's
    text (equal texts are one object).
    """

    __slots__ = ("models", "keys", "model", "item", "epoch", "correct", "computed", "texts")

    def __init__(
        self,
        models: Sequence[str],
        keys: Sequence[KeyItem],
        model: np.ndarray,
        item: np.ndarray,
        epoch: np.ndarray,
        correct: np.ndarray,
        computed: np.ndarray,
        texts: list[str],
    ) -> None:
        self.models = tuple(models)
        self.keys = keys
        self.model = model
        self.item = item
        self.epoch = epoch
        self.correct = correct
        self.computed = computed
        self.texts = texts

    @classmethod
    def from_responses(
        cls, responses: Sequence[Response], keys: dict[str, KeyItem]
    ) -> ResponseTable:
        """The table of any sequence of responses (a table is returned as it is); ``keys`` are
        the benchmark's keys, which every response's id must be one of."""
        if isinstance(responses, ResponseTable):
            return responses
        builder = TableBuilder(keys)
        for r in responses:
            builder.add(r.model, r.id, r.epoch, r.correct, r.correct_computed, r.text)
        return builder.table()

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> Response: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Response, ...]: ...

    def __getitem__(self, index: int | slice) -> Response | tuple[Response, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("response index out of range")
        return self._response(index)

    def _response(self, i: int) -> Response:
        key = self.keys[int(self.item[i])]
        return Response(
            key.id,
            self.models[int(self.model[i])],
            key.ref,
            self.texts[i],
            bool(self.correct[i]),
            bool(self.computed[i]),
            int(self.epoch[i]),
        )

    def __iter__(self) -> Iterator[Response]:
        keys, models = self.keys, self.models
        columns = zip(
            self.item.tolist(),
            self.model.tolist(),
            self.texts,
            self.correct.tolist(),
            self.computed.tolist(),
            self.epoch.tolist(),
            strict=True,
        )
        for item, model, text, correct, computed, epoch in columns:
            key = keys[item]
            yield Response(key.id, models[model], key.ref, text, correct, computed, epoch)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by content, as a list

    def __add__(self, other: Sequence[Response]) -> tuple[Response, ...]:
        """``responses + more``: the responses as a tuple, as before they were columns."""
        return (*self, *other)

    def __radd__(self, other: Sequence[Response]) -> tuple[Response, ...]:
        return (*other, *self)

    def __repr__(self) -> str:
        return f"ResponseTable({len(self):,} responses, {len(self.models)} models)"

    def select(self, rows: np.ndarray) -> ResponseTable:
        """The table of the given rows (a boolean mask or indexes), in their order."""
        index = np.flatnonzero(rows) if rows.dtype == bool else rows
        return ResponseTable(
            self.models,
            self.keys,
            self.model[index],
            self.item[index],
            self.epoch[index],
            self.correct[index],
            self.computed[index],
            [self.texts[i] for i in index.tolist()],
        )


class TableBuilder:
    """Appends responses to growing columns; :meth:`table` freezes them (see the module)."""

    def __init__(self, keys: dict[str, KeyItem]) -> None:
        self.keys = tuple(keys.values())
        self._item_of = {item_id: n for n, item_id in enumerate(keys)}
        self._model_of: dict[str, int] = {}
        # Each integer column starts in the smallest type and widens when a value needs it (at
        # 25 M responses, one byte a column instead of four is 75 MB).
        self.model = array("b")
        self.item = array(_typecode_for(len(self.keys)))
        self.epoch = array("b")
        self.flags = bytearray()  # bit 0: correct, bit 1: computed by keyaudit
        self.texts: list[str] = []

    def model_index(self, name: str) -> int:
        at = self._model_of.get(name)
        if at is None:
            at = self._model_of[name] = len(self._model_of)
        return at

    def item_index(self, item_id: str) -> int:
        return self._item_of[item_id]

    def add(
        self, model: str, item_id: str, epoch: int, correct: bool, computed: bool, text: str
    ) -> int:
        """Append one response; returns its row."""
        return self.add_indexed(
            self.model_index(model), self._item_of[item_id], epoch, correct, computed, text
        )

    def add_indexed(
        self, model: int, item: int, epoch: int, correct: bool, computed: bool, text: str
    ) -> int:
        """:meth:`add` with the model and item already as indexes (the load's fast path)."""
        try:
            self.model.append(model)
        except OverflowError:
            self.model = _widened(self.model, model)
        self.item.append(item)
        try:
            self.epoch.append(epoch)
        except OverflowError:
            self.epoch = _widened(self.epoch, epoch)
        self.flags.append(bool(correct) | (bool(computed) << 1))
        self.texts.append(text)
        return len(self.texts) - 1

    def table(self, keep: np.ndarray | None = None) -> ResponseTable:
        """The columns as a table; ``keep`` (a boolean mask), when given, keeps only those rows."""
        # The arrays' own buffers, not copies (a copy doubled the load's peak at 25 M responses):
        # the builder is done, and an array whose buffer is shared cannot grow any more.
        flags = np.frombuffer(self.flags, dtype=np.uint8)
        columns = [
            column(self.model),
            column(self.item),
            column(self.epoch),
            (flags & 1).astype(bool),
            (flags & 2).astype(bool),
        ]
        texts = self.texts
        if keep is not None:
            columns = [c[keep] for c in columns]
            texts = [t for t, k in zip(texts, keep.tolist(), strict=True) if k]
        models = sorted(self._model_of, key=self._model_of.__getitem__)
        return ResponseTable(models, self.keys, *columns, texts)


_WIDER = {"b": "h", "h": "i", "i": "q"}
_DTYPES = {"b": np.int8, "h": np.int16, "i": np.int32, "q": np.int64}


def _typecode_for(count: int) -> str:
    """The smallest array type code that holds the indexes 0 .. count - 1."""
    return next(code for code in _WIDER if count - 1 <= np.iinfo(_DTYPES[code]).max)


def _widened(values: array, value: int) -> array:
    """``values`` with ``value`` appended, in the next wider type that holds it (an int past
    int64 stays an OverflowError)."""
    code = values.typecode
    while code in _WIDER:
        code = _WIDER[code]
        wider = array(code, values)
        try:
            wider.append(value)
        except OverflowError:
            continue
        return wider
    raise OverflowError(f"{value} does not fit in 64 bits")


def column(values: array) -> np.ndarray:
    """An integer array's numpy view, in its own type (not a copy)."""
    return np.frombuffer(values, dtype=_DTYPES[values.typecode])
