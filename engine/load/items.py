"""The benchmark's record types: an item's place, its answer key, one stored response.

Their own module, below both the loader (``benchmark``, which builds them) and the response
table (``response_table``, which builds :class:`Response` on the fly from its columns), so that
neither of those two needs the other's module to name them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class ItemRef(NamedTuple):
    """Where an item sits: its cell (domain, level) and its image cluster.

    ``cluster`` is ``"<domain>_<image>"``: all questions about one image share it, which is what
    the bootstrap resamples. (Named tuples, not dataclasses: a corpus has ~10^5 of them and
    tuples are several times cheaper to create.)
    """

    domain: str
    cluster: str
    level: int


class KeyItem(NamedTuple):
    """One answer key: an item id, where it sits, the key string exactly as stored, and the
    question it answers when the key files carry it (the published CSV's ``prompt``)."""

    id: str
    ref: ItemRef
    answer: str
    question: str | None = None


@dataclass(frozen=True, slots=True)
class Response:
    """One stored model response and the benchmark's current strict verdict on it.

    ``correct_computed`` is true when the file had no ``correct`` field and keyaudit computed the
    verdict itself with the strict scorer (reports say so). ``epoch`` numbers the samples of one
    id for one model (inspect epochs, lm-eval repeats; 1 for keyaudit's own files). ``text`` is
    the whole response, or, when the benchmark was loaded for given answer formats, its excerpt
    (:mod:`.excerpt`): the same answer lines and conclusion, without the reasoning; and ``""``
    when it was loaded for given cells (``text_cells``) and the response lies in none of them.
    """

    id: str
    model: str
    ref: ItemRef
    text: str
    correct: bool
    correct_computed: bool = False
    epoch: int = 1
