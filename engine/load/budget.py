"""The memory budget of what a run keeps from response files, and of each document it parses.

Every per-item limit (a 16 MiB line, a 256 MiB document) can hold while their sum does not: 200
lines of 15 MiB, 20 ``.eval`` samples of 200 MiB, or one 250 MiB document of ``[{},{},...]``
(which Python turns into 6 GB of empty dicts) each ran out of memory. A run therefore has one
:class:`ResponseBudget` (default :data:`DEFAULT_MIB` MiB, ``KEYAUDIT_RESPONSE_MEMORY`` in MiB
overrides it) and charges it with:

* each response it keeps: :data:`RESPONSE_OVERHEAD` bytes for its row of the loaded
  :class:`~.response_table.ResponseTable`, and its text (or what is kept of it, :mod:`.excerpt`)
  as Python stores it (``sys.getsizeof``: 1, 2 or 4 bytes a character) the first time that text
  is kept: equal texts are kept once, as one object (a benchmark's duplicate answers, most of
  them short, are shared across models and items). A response of an item no rule of the run
  reads (``wanted``: the ids whose texts are kept) keeps no text, only its row;
* while a JSON document (an inspect ``.json`` log, an ``.eval`` member, an lm-eval results file) is
  read and parsed, an upper bound of the memory that takes: its bytes, its text, and
  :data:`BYTES_PER_SEPARATOR` bytes for each ``{``, ``[``, ``,`` and ``:`` in it (each starts at
  most one new Python object and its slot; strings are bounded by the text). A document that does
  not fit in what is left is refused before it is parsed, and an ``.eval`` member as soon as its
  inflated bytes alone do not fit.

Exceeding it is a :class:`DataError` naming the file (and member or line) where it happened. The
example benchmark keeps about 5 MiB; the 2.48 M-response scale benchmark about 350 MiB (1.2 M
distinct texts of 2.48 M).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Container

from ..errors import DataError, UsageError, located

#: Default budget, MiB.
DEFAULT_MIB = 2048
#: Environment variable overriding the budget (a whole number of MiB).
ENVIRONMENT = "KEYAUDIT_RESPONSE_MEMORY"
#: Largest budget the variable may set, MiB (1 TiB).
MAX_MIB = 1 << 20
#: Bytes charged per kept response besides its text: its row of the response table (model and
#: item indexes, epoch, flags: 17 bytes; its reference to the shared text: 8), and a share of the
#: text table's slot, rounded up.
RESPONSE_OVERHEAD = 32
#: Bytes a parsed JSON document may take per ``{``, ``[``, ``,`` or ``:`` (an empty dict and its
#: slot take 72; a float and its slot 32; a string's header and slot 57).
BYTES_PER_SEPARATOR = 80


def configured_bytes() -> int:
    """The budget in bytes: ``KEYAUDIT_RESPONSE_MEMORY`` (MiB) if set, else the default."""
    value = os.environ.get(ENVIRONMENT, "").strip()
    if not value:
        return DEFAULT_MIB << 20
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_MIB:
        raise UsageError(
            f"{ENVIRONMENT} must be a whole number of MiB from 1 to {MAX_MIB:,}, got {value[:40]!r}"
        )
    return int(value) << 20


class ResponseBudget:
    """What one run may keep from its response files; see the module docstring."""

    def __init__(
        self,
        limit: int | None = None,
        excerpt: Callable[[str], str] | None = None,
        wanted: Container[str] | None = None,
    ) -> None:
        self.limit = configured_bytes() if limit is None else limit
        self.used = 0
        #: What is kept of a response's text (:class:`.excerpt.Excerpter`; ``None``: all of it).
        self.excerpt = excerpt
        #: The item ids whose texts are kept (``None``: every item's). A response of another item
        #: keeps only its row: no rule of the run reads its text (its stored or strict verdict is
        #: all the audit uses), and at 25 M responses those texts were most of the memory.
        self.wanted = wanted
        #: Every distinct text kept so far, to share equal ones.
        self._texts: dict[str, str] = {}

    def keep(self, text: str, where: object, item_id: str | None = None) -> str:
        """What is kept of one response's text (its excerpt, or all of it), charged; a text equal
        to one kept before is returned as that one (kept once, charged once). The text of an item
        not :attr:`wanted` is charged nothing and returned as it is: the caller reads it while its
        file is read (a strict verdict to compute) and keeps none of it (:meth:`kept_text`)."""
        if not self.wants(item_id):
            self.charge_text("", where)
            return text
        if self.excerpt is not None:
            text = self.excerpt(text)
        known = len(self._texts)
        shared = self._texts.setdefault(text, text)
        self.charge_text(text if len(self._texts) > known else "", where)
        return shared

    def wants(self, item_id: str | None) -> bool:
        """Whether a response of ``item_id`` keeps its text (``None``: an item not yet known)."""
        return self.wanted is None or item_id is None or item_id in self.wanted

    def kept_text(self, text: str, item_id: str) -> str:
        """What the loaded table keeps of a response's text: the text :meth:`keep` returned, or
        ``""`` for an item not :attr:`wanted`."""
        return text if self.wants(item_id) else ""

    def charge_text(self, text: str, where: object) -> None:
        """Count one kept response and its new ``text`` (``""``: a text kept before); over the
        budget is an error at ``where``."""
        self.used += (sys.getsizeof(text) if text else 0) + RESPONSE_OVERHEAD
        if self.used > self.limit:
            raise DataError(
                located(
                    str(where),
                    None,
                    None,
                    f"the responses read so far need more than the memory budget of "
                    f"{self._mib()} ({ENVIRONMENT} in MiB raises it)",
                )
            )

    def room(self) -> int:
        return max(0, self.limit - self.used)

    def document_room(self) -> int:
        """Most inflated bytes a document may have (its bytes and its text are both held)."""
        return self.room() // 2

    def document_over(self, where: object, estimate: int, bound: str = "at least") -> DataError:
        """The error for a document that does not fit: it needs ``bound`` ``estimate`` bytes."""
        left = self.room()
        kept = f" ({left / 2**20:,.0f} MiB of it left)" if self.used else ""
        return DataError(
            located(
                str(where),
                None,
                None,
                f"reading this JSON document would take {bound} {estimate / 2**20:,.0f} MiB of "
                f"memory, more than the memory budget of {self._mib()}{kept} allows "
                f"({ENVIRONMENT} in MiB raises it)",
            )
        )

    def check_document(self, text: str, where: object, raw: int = 0) -> None:
        """Refuse a document whose parse could take more memory than is left (``raw``: the
        bytes it was decoded from, still held)."""
        estimate = document_estimate(text, raw)
        if estimate > self.room():
            raise self.document_over(where, estimate, "up to")

    def _mib(self) -> str:
        return f"{self.limit / 2**20:,.0f} MiB"


def document_estimate(text: str, raw: int = 0) -> int:
    """An upper bound of the memory parsing ``text`` takes: ``raw`` bytes it was decoded from,
    the text, and the values (see the module docstring)."""
    separators = text.count("{") + text.count("[") + text.count(",") + text.count(":")
    return raw + sys.getsizeof(text) + BYTES_PER_SEPARATOR * separators
