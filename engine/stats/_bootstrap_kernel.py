"""The numba kernel of the domain-stratified image-cluster bootstrap (arrays in, arrays out).

Private: :func:`keyaudit.engine.stats.bootstrap.bootstrap_difference` validates, precomputes the arrays
(:class:`keyaudit.engine.stats.aggregate.ClusterCounts`) and wraps. The procedure and its random
generator are specified in :mod:`keyaudit.engine.stats._bootstrap_reference`, which this module mirrors
operation for operation so the two agree bit for bit:

* every draw's random index comes from a counter-based hash of (seed, model key, resample,
  stratum key, draw // 2) — one 64-bit hash serves two draws, its high then its low half — no generator state is shared, so any thread count, chunking or model order
  gives the same numbers;
* all arithmetic on hashes is uint64 (every constant is an ``np.uint64``: numba silently turns
  uint64 mixed with int64 into float64), counts are summed in int64 (exact), and the per-domain
  float terms are added in ascending stratum order;
* no fastmath, no ``np.random``.

Two kernels share that procedure and differ only in how a cluster's counts are stored:
:func:`diff_resamples_packed` (the fast one) packs ``(correct_lo, total_lo, correct_hi, total_hi)``
into one uint64 as four 16-bit fields, so a draw is one load and one add; the caller must check
that no field can exceed 65,535 in any stratum's sum (``n_clusters x largest field``).
:func:`diff_resamples` reads four int32 columns and has no such limit.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._bootstrap_reference import GAMMA as _GAMMA_INT
from ._bootstrap_reference import MIX1 as _MIX1_INT
from ._bootstrap_reference import MIX2 as _MIX2_INT
from ._kernel_cache import njit

GAMMA = np.uint64(_GAMMA_INT)
MIX1 = np.uint64(_MIX1_INT)
MIX2 = np.uint64(_MIX2_INT)
S27 = np.uint64(27)
S30 = np.uint64(30)
S31 = np.uint64(31)
S32 = np.uint64(32)
LOW32 = np.uint64(0xFFFFFFFF)
S16 = np.uint64(16)
S48 = np.uint64(48)
M16 = np.uint64(0xFFFF)


@njit(cache=True, inline="always")
def _mix64(z):
    """splitmix64's finaliser (Stafford variant 13): a bijective avalanche on uint64."""
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return z ^ (z >> S31)


@njit(cache=True, inline="always")
def _resample_key(model_key, seed, r):
    """Key of resample ``r`` (global index) of one model: ``mix(mix(model_key ^ mix(seed + G)) + (r + 1) G)``."""
    km = _mix64(model_key ^ _mix64(seed + GAMMA))
    return _mix64(km + np.uint64(r + 1) * GAMMA)


@njit(cache=True, inline="always")
def _domain_diff(c_lo, t_lo, c_hi, t_hi, b_lo, b_hi):
    """Adjusted hi − lo of one resampled domain, as :func:`keyaudit.engine.stats.metrics.adjusted_score`."""
    p_lo = c_lo / t_lo
    p_hi = c_hi / t_hi
    a_lo = p_lo - b_lo if b_lo == 1.0 else (p_lo - b_lo) / (1.0 - b_lo)
    a_hi = p_hi - b_hi if b_hi == 1.0 else (p_hi - b_hi) / (1.0 - b_hi)
    return a_hi - a_lo


@njit(cache=True, inline="always")
def _packed_domain(tot, b_lo, b_hi):
    """(adjusted hi − lo, True) of one domain from its packed resampled sums (16-bit fields:
    correct lo, total lo, correct hi, total hi), or (0.0, False) when a side drew no item."""
    t_lo = np.int64((tot >> S16) & M16)
    t_hi = np.int64(tot >> S48)
    if t_lo == 0 or t_hi == 0:
        return 0.0, False
    c_lo = np.int64(tot & M16)
    c_hi = np.int64((tot >> S32) & M16)
    return _domain_diff(c_lo, t_lo, c_hi, t_hi, b_lo, b_hi), True


@njit(cache=True, parallel=True)
def diff_resamples_packed(
    packed, offsets, active, base_lo, base_hi, model_keys, stratum_keys, seed, start, stop
):
    """Replicates [start, stop) from 16-bit-packed counts ``packed[m, c]`` (uint64).

    Same contract and same floats as :func:`diff_resamples`; see the module docstring for the
    packing and its limit.
    """
    n_models = packed.shape[0]
    n_strata = offsets.shape[1] - 1
    n_r = stop - start
    out = np.empty((n_models, n_r), dtype=np.float64)
    for i in prange(n_models * n_r):
        m = i // n_r
        kr = _resample_key(model_keys[m], seed, start + i % n_r)
        row = packed[m]
        acc = 0.0
        k = 0
        for s in range(n_strata):
            if active[m, s] == 0:
                continue
            first = offsets[m, s]
            n = offsets[m, s + 1] - first
            n_u = np.uint64(n)
            z = _mix64(kr ^ stratum_keys[s])
            tot = np.uint64(0)
            for _ in range(n >> 1):
                z = z + GAMMA
                h = _mix64(z)
                tot += row[first + np.int64(((h >> S32) * n_u) >> S32)]
                tot += row[first + np.int64(((h & LOW32) * n_u) >> S32)]
            if n & 1:
                h = _mix64(z + GAMMA)
                tot += row[first + np.int64(((h >> S32) * n_u) >> S32)]
            diff, drawn = _packed_domain(tot, base_lo[s], base_hi[s])
            if drawn:
                acc += diff
                k += 1
        out[m, i % n_r] = acc / k if k > 0 else np.nan
    return out


@njit(cache=True, parallel=True)
def diff_resamples(
    counts, offsets, active, base_lo, base_hi, model_keys, stratum_keys, seed, start, stop
):
    """Bootstrap replicates of the mean paired-domain adjusted difference, resamples [start, stop).

    ``counts[m, c] = (correct_lo, total_lo, correct_hi, total_hi)`` (int32), ``offsets[m, s]``
    (int64) the first cluster row of stratum ``s`` for model ``m``, ``active[m, s]`` (uint8) the
    paired-domain mask, ``base_lo``/``base_hi`` (float64, per stratum) the fixed baselines,
    ``model_keys``/``stratum_keys`` (uint64) stable name hashes, ``seed`` a uint64.
    Returns float64 ``[n_models, stop - start]``; NaN where no domain had items at both levels.
    """
    n_models = counts.shape[0]
    n_strata = offsets.shape[1] - 1
    n_r = stop - start
    out = np.empty((n_models, n_r), dtype=np.float64)
    for i in prange(n_models * n_r):
        m = i // n_r
        kr = _resample_key(model_keys[m], seed, start + i % n_r)
        acc = 0.0
        k = 0
        for s in range(n_strata):
            if active[m, s] == 0:
                continue
            first = offsets[m, s]
            n = offsets[m, s + 1] - first
            n_u = np.uint64(n)
            z = _mix64(kr ^ stratum_keys[s])
            c_lo = 0
            t_lo = 0
            c_hi = 0
            t_hi = 0
            h = np.uint64(0)
            for j in range(n):
                if j & 1 == 0:
                    z = z + GAMMA
                    h = _mix64(z)
                    u = h >> S32
                else:
                    u = h & LOW32
                c = first + np.int64((u * n_u) >> S32)
                c_lo += counts[m, c, 0]
                t_lo += counts[m, c, 1]
                c_hi += counts[m, c, 2]
                t_hi += counts[m, c, 3]
            if t_lo == 0 or t_hi == 0:
                continue
            acc += _domain_diff(c_lo, t_lo, c_hi, t_hi, base_lo[s], base_hi[s])
            k += 1
        out[m, i % n_r] = acc / k if k > 0 else np.nan
    return out


def pack_counts(counts: np.ndarray, offsets: np.ndarray) -> np.ndarray | None:
    """``counts`` packed as 16-bit fields in uint64, or None if a stratum's sum could overflow.

    A resample's sum of a field over stratum ``s`` is at most ``n_clusters x max field`` there.
    """
    for m in range(counts.shape[0]):
        for s in range(offsets.shape[1] - 1):
            rows = counts[m, offsets[m, s] : offsets[m, s + 1]]
            if len(rows) and int(rows.max()) * len(rows) > 0xFFFF:
                return None
    c = counts.astype(np.uint64)
    return c[..., 0] | (c[..., 1] << S16) | (c[..., 2] << S32) | (c[..., 3] << S48)


@njit(cache=True, parallel=True)
def diff_resamples_packed4(
    packed, offsets, active, base_lo, base_hi, model_keys, stratum_keys, seed, start, stop
):
    """:func:`diff_resamples_packed` for up to four count sets that share one cluster layout
    (the audit's before, after and the two ends of its uncertain verdicts: the same items, other
    verdicts), in one pass: each draw is hashed once and adds to all four.

    ``packed[m, c, v]`` (uint64) is variant ``v``'s packed counts (unused variants zero), and
    ``base_lo[v, s]``/``base_hi[v, s]`` its baselines. Returns float64 ``[4, n_models, stop -
    start]``; variant ``v``'s replicates are bit for bit those of :func:`diff_resamples_packed`
    on its own counts (the same draws, sums and float operations in the same order).
    """
    n_models = packed.shape[0]
    n_strata = offsets.shape[1] - 1
    n_r = stop - start
    out = np.empty((4, n_models, n_r), dtype=np.float64)
    for i in prange(n_models * n_r):
        m = i // n_r
        kr = _resample_key(model_keys[m], seed, start + i % n_r)
        row = packed[m]
        acc0 = 0.0
        acc1 = 0.0
        acc2 = 0.0
        acc3 = 0.0
        k0 = 0
        k1 = 0
        k2 = 0
        k3 = 0
        for s in range(n_strata):
            if active[m, s] == 0:
                continue
            first = offsets[m, s]
            n = offsets[m, s + 1] - first
            n_u = np.uint64(n)
            z = _mix64(kr ^ stratum_keys[s])
            tot0 = np.uint64(0)
            tot1 = np.uint64(0)
            tot2 = np.uint64(0)
            tot3 = np.uint64(0)
            for _ in range(n >> 1):
                z = z + GAMMA
                h = _mix64(z)
                c = first + np.int64(((h >> S32) * n_u) >> S32)
                tot0 += row[c, 0]
                tot1 += row[c, 1]
                tot2 += row[c, 2]
                tot3 += row[c, 3]
                c = first + np.int64(((h & LOW32) * n_u) >> S32)
                tot0 += row[c, 0]
                tot1 += row[c, 1]
                tot2 += row[c, 2]
                tot3 += row[c, 3]
            if n & 1:
                h = _mix64(z + GAMMA)
                c = first + np.int64(((h >> S32) * n_u) >> S32)
                tot0 += row[c, 0]
                tot1 += row[c, 1]
                tot2 += row[c, 2]
                tot3 += row[c, 3]
            # totals are the same for every variant (same items); each is read from its own sum
            diff, drawn = _packed_domain(tot0, base_lo[0, s], base_hi[0, s])
            if drawn:
                acc0 += diff
                k0 += 1
            diff, drawn = _packed_domain(tot1, base_lo[1, s], base_hi[1, s])
            if drawn:
                acc1 += diff
                k1 += 1
            diff, drawn = _packed_domain(tot2, base_lo[2, s], base_hi[2, s])
            if drawn:
                acc2 += diff
                k2 += 1
            diff, drawn = _packed_domain(tot3, base_lo[3, s], base_hi[3, s])
            if drawn:
                acc3 += diff
                k3 += 1
        r = i % n_r
        out[0, m, r] = acc0 / k0 if k0 > 0 else np.nan
        out[1, m, r] = acc1 / k1 if k1 > 0 else np.nan
        out[2, m, r] = acc2 / k2 if k2 > 0 else np.nan
        out[3, m, r] = acc3 / k3 if k3 > 0 else np.nan
    return out
