"""The Wilson score interval for a proportion: an error rate from a small hand-checked sample.

Chosen over the normal ("Wald") interval because review samples are small and error rates near
zero, where Wald collapses to a zero-width interval at 0 errors; Wilson stays inside [0, 1] and
is informative at k = 0.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson_interval(errors: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson interval of ``errors / n`` at ``confidence``; (nan, nan) when ``n`` is 0."""
    if n <= 0:
        return math.nan, math.nan
    if not 0 <= errors <= n:
        raise ValueError(f"errors must lie in 0..{n}, got {errors}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = errors / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
