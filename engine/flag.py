"""Find other sentence-valued or multi-clause keys (seed §5) and their current strict accuracy.

A key is *flagged* when it is not a container (after stripping whitespace it does not start with
``{`` or ``[``: dict- and list-valued keys are structured already) and it either contains ``;``
or has at least six alphanumeric tokens (``[A-Za-z0-9]+``). Decimals count as two tokens
(``60.0`` is ``60`` and ``0``), exactly as in the seed's diagnostic.

Per cell: flagged keys in the full corpus, all keys of the cell, stored responses whose key is
flagged (all models pooled) and how many of those the benchmark's strict scorer accepted. A cell
whose evaluated flagged responses all score 0 is a *candidate* for its own rule — a signal, not a
proof that its scoring is wrong (some keys may deliberately demand every component).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from .load.benchmark import Benchmark
from .reports.findings import FlagRow

MIN_TOKENS = 6
_TOKEN = re.compile(r"[A-Za-z0-9]+")


def is_container(key: str) -> bool:
    """A dict or list value written as text (JSON or Python repr)."""
    return key.strip().startswith(("{", "["))


def is_flagged(key: str) -> bool:
    """Seed §5: not a container, and a ``;`` or at least six alphanumeric tokens."""
    if is_container(key):
        return False
    return ";" in key or len(_TOKEN.findall(key)) >= MIN_TOKENS




def flag_cells(benchmark: Benchmark) -> list[FlagRow]:
    """Every cell with at least one flagged key, sorted by domain then level."""
    total: Counter[tuple[str, int]] = Counter()
    flagged: Counter[tuple[str, int]] = Counter()
    flagged_ids: set[str] = set()
    verdicts: dict[str, bool] = {}
    for key in benchmark.keys.values():
        cell = (key.ref.domain, key.ref.level)
        total[cell] += 1
        answer = key.answer
        hit = verdicts.get(answer)
        if hit is None:
            hit = verdicts[answer] = is_flagged(answer)
        if hit:
            flagged[cell] += 1
            flagged_ids.add(key.id)
    # The responses' columns (millions of rows): counted per item, then per cell.
    table = benchmark.response_table()
    per_item = np.bincount(table.item, minlength=len(table.keys))
    right_item = np.bincount(table.item, weights=table.correct, minlength=len(table.keys))
    evaluated: Counter[tuple[str, int]] = Counter()
    correct: Counter[tuple[str, int]] = Counter()
    for k in np.flatnonzero(per_item).tolist():
        key = table.keys[k]
        if key.id in flagged_ids:
            cell = (key.ref.domain, key.ref.level)
            evaluated[cell] += int(per_item[k])
            correct[cell] += int(right_item[k])
    return [
        FlagRow(d, lv, flagged[(d, lv)], total[(d, lv)], evaluated[(d, lv)], correct[(d, lv)])
        for d, lv in sorted(flagged)
    ]
