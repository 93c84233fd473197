"""Per-cell quantities: raw accuracy, the constant-answer baseline, the adjusted score, verdicts.

A *cell* is one (domain, level) of the benchmark. Everything here is a pure function of counts
and is shared by :mod:`keyaudit.engine.stats.aggregate` (point estimates),
:mod:`keyaudit.engine.stats.bootstrap` (intervals) and :mod:`keyaudit.engine.stats.analytic_se`, so the three
can never disagree about what "adjusted" means. The numba kernel re-implements
:func:`adjusted_score` expression for expression (it cannot call Python), and the tests pin the two
together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..errors import DataError
from ..load.strict import normalise_strict

#: Verdicts on a difference from its confidence interval (see :func:`verdict`).
SURVIVES = "survives"
REVERSES = "reverses"
INDISTINGUISHABLE = "indistinguishable from zero"


def raw_accuracy(correct: int, n: int) -> float:
    """``correct / n``: the fraction of a cell's evaluated items scored correct.

    A cell with no evaluated item has no accuracy; asking for one is a data error rather than 0.
    """
    if n <= 0:
        raise DataError(f"cannot take the accuracy of a cell with {n} evaluated items")
    if not 0 <= correct <= n:
        raise DataError(f"a cell cannot have {correct} correct out of {n} evaluated items")
    return correct / n


def strict_baseline(keys: Sequence[str]) -> float:
    """Accuracy of the best constant answer under strict scoring, on the evaluated items.

    ``keys`` are the answer keys of the evaluated items of one cell. Keys are compared after
    :func:`keyaudit.engine.load.strict.normalise_strict` (case-fold, collapse whitespace), exactly as the
    strict scorer compares an answer with its key, so the strongest constant answer is the most
    frequent normalised key and the baseline is its share of the items. Sentence-valued keys with
    many distinct strings therefore get a low baseline (the seed's physical_stability L5 cell:
    8/50 = 16%), even when a structured rule would only need the leading status (26/50 = 52%).
    """
    if not keys:
        raise DataError("cannot compute a constant-answer baseline for a cell with no keys")
    counts = Counter(normalise_strict(key) for key in keys)
    return max(counts.values()) / len(keys)


def check_baseline(baseline: float, where: str = "") -> float:
    """Return ``baseline`` as a float after checking it lies in [0, 1]."""
    value = float(baseline)
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        suffix = f" for {where}" if where else ""
        raise DataError(f"baseline{suffix} must lie in [0, 1], got {baseline!r}")
    return value


def adjusted_score(raw: float, baseline: float) -> float:
    """Chance-adjusted score ``(raw - baseline) / (1 - baseline)``.

    0 means "no better than always giving the most frequent key", 1 means perfect, negative means
    worse than the constant answer. When ``baseline == 1`` every evaluated item has the same key, so
    there is no room above chance and the ratio is 0/0; we then define the score as
    ``raw - baseline`` instead: 0 for a perfect model and negative (down to -1) otherwise, which
    keeps the sign meaningful and the value bounded. The kernel and the reference use this same
    expression, branch for branch.
    """
    if baseline == 1.0:
        return raw - baseline
    return (raw - baseline) / (1.0 - baseline)


def verdict(ci_low: float, ci_high: float) -> str:
    """ "survives" if the whole interval is above 0, "reverses" if below, else indistinguishable.

    An interval touching 0 (``ci_low == 0`` or ``ci_high == 0``) does not exclude zero, so it is
    "indistinguishable from zero"; so is a NaN interval (no resample produced a statistic).
    """
    if ci_low > 0.0:
        return SURVIVES
    if ci_high < 0.0:
        return REVERSES
    return INDISTINGUISHABLE
