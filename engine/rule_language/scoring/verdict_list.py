"""The verdicts of many responses as codes into their distinct verdicts.

A full benchmark's ruled cells hold millions of responses (4.96 M at 25 M responses) but far
fewer distinct verdicts: equal answer lines of one key get one verdict. A list of one
:class:`~.scorer.Verdict` reference per response, with the per-response tuples that built it,
took most of the scoring stage's memory at that size. :class:`VerdictList` keeps each distinct
verdict once and a 4-byte code per response; it is still a ``Sequence[Verdict]``, and the audit
reads whole columns (:meth:`column`) with numpy.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from .scorer import Verdict

__all__ = ["VerdictList"]


class VerdictList(Sequence[Verdict]):
    """Verdicts in response order: ``distinct[codes[n]]`` is response ``n``'s."""

    __slots__ = ("distinct", "codes", "_known")

    def __init__(self) -> None:
        #: Each distinct verdict once, in order of first use.
        self.distinct: list[Verdict] = []
        #: Per response, its verdict's index in :attr:`distinct`.
        self.codes = array("i")
        self._known: dict[Hashable, int] = {}

    def code(self, ident: Hashable, make: Callable[[], Verdict]) -> int:
        """The code of the verdict known as ``ident``; ``make()`` builds it the first time."""
        at = self._known.get(ident)
        if at is None:
            at = self._known[ident] = len(self.distinct)
            self.distinct.append(make())
        return at

    def recode(self, n: int, ident: Hashable, make: Callable[[], Verdict]) -> None:
        """Give response ``n`` the verdict known as ``ident`` (``make()`` builds it once)."""
        self.codes[n] = self.code(ident, make)

    def column(self, read: Callable[[Verdict], Any], dtype: Any = bool) -> np.ndarray:
        """``read(verdict)`` of every response, as an array (read once per distinct verdict)."""
        values = np.fromiter((read(v) for v in self.distinct), dtype=dtype, count=len(self.distinct))
        return values[np.frombuffer(self.codes, dtype=np.int32)] if len(self) else values[:0]

    def done(self) -> None:
        """Forget the identities (the list is complete; :meth:`__setitem__` still works)."""
        self._known = {}

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, n: int) -> Verdict: ...

    @overload
    def __getitem__(self, n: slice) -> list[Verdict]: ...

    def __getitem__(self, n: int | slice) -> Verdict | list[Verdict]:
        if isinstance(n, slice):
            return [self.distinct[c] for c in self.codes[n]]
        return self.distinct[self.codes[n]]

    def __setitem__(self, n: int, verdict: Verdict) -> None:
        """Response ``n``'s verdict becomes ``verdict`` (an adjudicated label: a new one)."""
        self.codes[n] = len(self.distinct)
        self.distinct.append(verdict)

    def __iter__(self) -> Iterator[Verdict]:
        distinct = self.distinct
        return (distinct[c] for c in self.codes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by content, as a list

    def __repr__(self) -> str:
        return f"VerdictList({len(self):,} verdicts, {len(self.distinct):,} distinct)"
