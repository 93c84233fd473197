"""numba kernels of the extraction-error correction (arrays in, arrays out).

Private: :mod:`.extraction_error` (the rate draws) and :mod:`.corrected` (the corrected L(hi)−L(lo)
bootstrap) validate and wrap. Each mirrors its reference operation for operation —
:func:`~.extraction_error.rate_draws_python` and
:func:`~._extraction_reference.corrected_resamples_numpy` — so they agree bit for bit: counter-based
hashes only, uint64 constants, no fastmath, sums in a fixed order.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ._bootstrap_kernel import GAMMA, LOW32, S32, _mix64, _resample_key
from ._kernel_cache import njit

S11 = np.uint64(11)
TWO53 = 1.0 / 9007199254740992.0
TAU = 2.0 * math.pi


@njit(cache=True, inline="always")
def _uniform(h):
    return (np.float64(h >> S11) + 0.5) * TWO53


@njit(cache=True, parallel=True)
def rate_draws_kernel(n, e, keys, strata, seed, resamples):
    """Rates ``[resamples, n_rules + 1, 4]`` drawn from each rate's Jeffreys posterior, as
    :func:`~.extraction_error.rate_draws_python` specifies (the last row and unmeasured strata 0)."""
    n_rules = n.shape[0]
    out = np.zeros((resamples, n_rules + 1, 4), dtype=np.float64)
    seed_key = _mix64(seed + GAMMA)
    for i in prange(n_rules * resamples):
        g = i // resamples
        r = i % resamples
        km = _mix64(keys[g] ^ seed_key)
        kr = _mix64(km + np.uint64(r + 1) * GAMMA)
        for k in range(4):
            total = n[g, k]
            bad = e[g, k]
            if total == 0:
                continue
            z0 = _mix64(kr ^ strata[k])
            x = 0.0
            y = 0.0
            for j in range(total):
                u = _uniform(_mix64(z0 + np.uint64(j + 1) * GAMMA))
                if j < bad:
                    x += -math.log(u)
                else:
                    y += -math.log(u)
            u1 = _uniform(_mix64(z0 + np.uint64(total + 1) * GAMMA))
            u2 = _uniform(_mix64(z0 + np.uint64(total + 2) * GAMMA))
            c = math.cos(TAU * u2)
            x += -math.log(u1) * (c * c)
            u3 = _uniform(_mix64(z0 + np.uint64(total + 3) * GAMMA))
            u4 = _uniform(_mix64(z0 + np.uint64(total + 4) * GAMMA))
            c = math.cos(TAU * u4)
            y += -math.log(u3) * (c * c)
            out[r, g, k] = x / (x + y)
    return out


@njit(cache=True, inline="always")
def _rogan_gladen(a, r, fa, fr):
    """Truly right units among ``a`` accepted and ``r`` rejected unlabelled verdicts when the rule
    accepts a wrong answer with probability ``fa`` and rejects a right one with ``fr``:
    ``(a − fa·(a + r)) / (1 − fa − fr)``, kept within [0, a + r] (the verdicts at their word when
    ``fa + fr >= 1``: such a rule tells nothing)."""
    u = a + r
    if u == 0:
        return 0.0
    den = 1.0 - fa - fr
    if den <= 0.0:
        return np.float64(a)
    x = (a - fa * u) / den
    if x < 0.0:
        return 0.0
    if x > u:
        return np.float64(u)
    return x


@njit(cache=True, inline="always")
def _corrected(kk, ca, cr, ua, ur, q0, q1, q2, q3):
    """Expected right units: the known ones, then the certain and the uncertain unlabelled
    verdicts each corrected with their own rates."""
    return np.float64(kk) + _rogan_gladen(ca, cr, q0, q1) + _rogan_gladen(ua, ur, q2, q3)


@njit(cache=True, inline="always")
def _adjusted(p, b):
    return p - b if b == 1.0 else (p - b) / (1.0 - b)


@njit(cache=True, parallel=True)
def corrected_resamples(
    parts, offsets, active, base_lo, base_hi, rule_lo, rule_hi, rates,
    model_keys, stratum_keys, seed, start, stop,
):
    """Replicates [start, stop) of the corrected mean paired-domain adjusted difference.

    ``parts[m, c]`` holds, for the low then the high level, ``(known right, total, certain
    accepts, certain rejects, uncertain accepts, uncertain rejects)`` (int32, units); the four
    last are unlabelled verdicts of the cell's rule, ``rule_lo[s]``/``rule_hi[s]`` its row in
    ``rates[r, rule, :]`` = (certain false-accept, certain false-reject, uncertain false-accept,
    uncertain false-reject) of global replicate ``r``. Clusters are drawn exactly as
    :func:`~._bootstrap_kernel.diff_resamples` draws them (same keys, same hashes), so the
    replicate differs from the uncorrected one only by the extraction error.
    """
    n_models = parts.shape[0]
    n_strata = offsets.shape[1] - 1
    n_r = stop - start
    out = np.empty((n_models, n_r), dtype=np.float64)
    for i in prange(n_models * n_r):
        m = i // n_r
        r = start + i % n_r
        kr = _resample_key(model_keys[m], seed, r)
        acc = 0.0
        k = 0
        for s in range(n_strata):
            if active[m, s] == 0:
                continue
            first = offsets[m, s]
            n = offsets[m, s + 1] - first
            n_u = np.uint64(n)
            z = _mix64(kr ^ stratum_keys[s])
            k_lo = t_lo = a_lo = b_lo = c_lo = d_lo = 0
            k_hi = t_hi = a_hi = b_hi = c_hi = d_hi = 0
            h = np.uint64(0)
            for j in range(n):
                if j & 1 == 0:
                    z = z + GAMMA
                    h = _mix64(z)
                    u = h >> S32
                else:
                    u = h & LOW32
                row = parts[m, first + np.int64((u * n_u) >> S32)]
                k_lo += row[0]
                t_lo += row[1]
                a_lo += row[2]
                b_lo += row[3]
                c_lo += row[4]
                d_lo += row[5]
                k_hi += row[6]
                t_hi += row[7]
                a_hi += row[8]
                b_hi += row[9]
                c_hi += row[10]
                d_hi += row[11]
            if t_lo == 0 or t_hi == 0:
                continue
            g = rule_lo[s]
            p_lo = _corrected(
                k_lo, a_lo, b_lo, c_lo, d_lo,
                rates[r, g, 0], rates[r, g, 1], rates[r, g, 2], rates[r, g, 3],
            ) / t_lo
            g = rule_hi[s]
            p_hi = _corrected(
                k_hi, a_hi, b_hi, c_hi, d_hi,
                rates[r, g, 0], rates[r, g, 1], rates[r, g, 2], rates[r, g, 3],
            ) / t_hi
            acc += _adjusted(p_hi, base_hi[s]) - _adjusted(p_lo, base_lo[s])
            k += 1
        out[m, i % n_r] = acc / k if k > 0 else np.nan
    return out


@njit(cache=True, parallel=True)
def normal_draws(keys, seed, resamples):
    """Standard normal variates ``[len(keys), resamples]``: for key ``k`` and replicate ``r``,
    Box–Muller on the uniforms of ``mix(kk + (2r + 1) G)`` and ``mix(kk + (2r + 2) G)`` with
    ``kk = mix(k ^ mix(seed + G))`` (as :func:`~.corrected.normal_draws_python` specifies)."""
    out = np.empty((keys.shape[0], resamples), dtype=np.float64)
    seed_key = _mix64(seed + GAMMA)
    for i in prange(keys.shape[0] * resamples):
        c = i // resamples
        r = i % resamples
        kk = _mix64(keys[c] ^ seed_key)
        u1 = _uniform(_mix64(kk + np.uint64(2 * r + 1) * GAMMA))
        u2 = _uniform(_mix64(kk + np.uint64(2 * r + 2) * GAMMA))
        out[c, r] = math.sqrt(-2.0 * math.log(u1)) * math.cos(TAU * u2)
    return out
