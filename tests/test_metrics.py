from __future__ import annotations

import math

import pytest

from keyaudit.engine.errors import DataError, KeyauditError
from keyaudit.engine.stats.metrics import (
    INDISTINGUISHABLE,
    REVERSES,
    SURVIVES,
    adjusted_score,
    check_baseline,
    raw_accuracy,
    strict_baseline,
    verdict,
)


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["stable"], 1.0),
        (["stable", "unstable"], 0.5),
        (["Stable", "  stable ", "STABLE", "unstable"], 0.75),  # case and whitespace folded
        (["a b", "a  b", "a\tb", "ab"], 0.75),
        (["x", "y", "z", "x", "y", "x"], 0.5),
        (["stable.", "stable"], 0.5),  # punctuation is not forgiven, as in strict scoring
    ],
)
def test_strict_baseline(keys, expected):
    assert strict_baseline(keys) == expected


def test_strict_baseline_empty_raises_one_line():
    with pytest.raises(DataError) as info:
        strict_baseline([])
    assert isinstance(info.value, KeyauditError) and "\n" not in str(info.value)


@pytest.mark.parametrize(("correct", "n", "expected"), [(0, 1, 0.0), (1, 1, 1.0), (3, 4, 0.75)])
def test_raw_accuracy(correct, n, expected):
    assert raw_accuracy(correct, n) == expected


@pytest.mark.parametrize(("correct", "n"), [(0, 0), (2, 1), (-1, 3)])
def test_raw_accuracy_rejects_impossible_counts(correct, n):
    with pytest.raises(DataError):
        raw_accuracy(correct, n)


@pytest.mark.parametrize(
    ("raw", "baseline", "expected"),
    [
        (0.5, 0.5, 0.0),  # at chance
        (1.0, 0.52, 1.0),  # perfect
        (0.0, 0.16, -0.16 / 0.84),  # the seed's strict physical_stability L5 cell
        (0.75, 0.0, 0.75),  # no baseline: adjusted == raw
        (0.26, 0.52, (0.26 - 0.52) / 0.48),
        (1.0, 1.0, 0.0),  # baseline 1: raw - baseline, 0 for a perfect model...
        (0.25, 1.0, -0.75),  # ...negative otherwise
    ],
)
def test_adjusted_score(raw, baseline, expected):
    assert adjusted_score(raw, baseline) == pytest.approx(expected)


@pytest.mark.parametrize("bad", [-0.01, 1.5, math.nan])
def test_check_baseline_rejects_out_of_range(bad):
    with pytest.raises(DataError, match="baseline for x L5"):
        check_baseline(bad, "x L5")


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.01, 0.2, SURVIVES),
        (-0.2, -0.01, REVERSES),
        (-0.1, 0.1, INDISTINGUISHABLE),
        (0.0, 0.1, INDISTINGUISHABLE),  # touching zero does not exclude it
        (-0.1, 0.0, INDISTINGUISHABLE),
        (math.nan, math.nan, INDISTINGUISHABLE),
    ],
)
def test_verdict(low, high, expected):
    assert verdict(low, high) == expected
