"""Reference implementations of the bootstrap: the specification the numba kernel must match.

The procedure, for one model and one resample ``r`` (0-based, global: chunking does not matter):

1. ``km = mix(model_key ^ mix(seed + GAMMA))`` and ``kr = mix(km + (r + 1) * GAMMA)``, where
   ``mix`` is splitmix64's finaliser and all arithmetic is modulo 2**64;
2. for each stratum (domain) ``s`` that is paired for the model, in ascending order, with ``n``
   clusters starting at row ``first``: ``z0 = mix(kr ^ stratum_key[s])``, and draw ``j`` (0-based)
   takes ``h = mix(z0 + (j // 2 + 1) * GAMMA)`` and its high 32 bits ``u = h >> 32`` if ``j`` is
   even, its low 32 bits ``u = h & (2**32 - 1)`` if odd (one hash serves two draws: the hash is
   most of a draw's cost), and picks cluster ``first + (u * n >> 32)`` — the multiply-high map of
   a 32-bit uniform onto ``[0, n)``, whose bias (< n / 2**32) is far below anything a percentile
   can see;
3. the drawn clusters' counts are summed (exact integers), the domain's adjusted difference
   ``adj(C_hi / T_hi, b_hi) - adj(C_lo / T_lo, b_lo)`` is computed with the fixed full-sample
   baselines, and skipped if ``T_lo == 0`` or ``T_hi == 0``;
4. the replicate is the running sum of the kept differences (ascending stratum order, starting
   from 0.0) divided by their number, NaN if none was kept.

:func:`diff_resamples_numpy` vectorises the hash over draws and resamples but keeps step 4's
summation order, so its floats equal the kernel's bit for bit. :func:`diff_resamples_python` is a
plain loop over Python ints, used by the speed bench and, on tiny inputs, by the tests.
"""

from __future__ import annotations

import numpy as np

GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
MASK = (1 << 64) - 1

_G = np.uint64(GAMMA)
_M1 = np.uint64(MIX1)
_M2 = np.uint64(MIX2)
_LOW32 = np.uint64(0xFFFFFFFF)

#: Upper bound on ``resamples x clusters`` gathered at once by the numpy reference.
_MAX_BLOCK = 1 << 21


def mix64_numpy(z: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (wraps modulo 2**64)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def mix64_python(z: int) -> int:
    """splitmix64 finaliser on a Python int in [0, 2**64)."""
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def _adjusted(p: np.ndarray, b: float) -> np.ndarray:
    if b == 1.0:
        return p - b
    return (p - b) / (1.0 - b)


def diff_resamples_numpy(
    counts: np.ndarray,
    offsets: np.ndarray,
    active: np.ndarray,
    base_lo: np.ndarray,
    base_hi: np.ndarray,
    model_keys: np.ndarray,
    stratum_keys: np.ndarray,
    seed: int,
    start: int,
    stop: int,
) -> np.ndarray:
    """Same contract and same floats as ``_bootstrap_kernel.diff_resamples``, in numpy."""
    n_models = counts.shape[0]
    n_strata = offsets.shape[1] - 1
    out = np.empty((n_models, stop - start), dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        seed_key = mix64_numpy(np.array([seed & MASK], dtype=np.uint64) + _G)[0]
        rs = np.arange(start + 1, stop + 1, dtype=np.uint64)
        for m in range(n_models):
            km = mix64_numpy(np.array([model_keys[m] ^ seed_key], dtype=np.uint64))[0]
            kr = mix64_numpy(km + rs * _G)
            acc = np.zeros(stop - start, dtype=np.float64)
            kept = np.zeros(stop - start, dtype=np.int64)
            for s in range(n_strata):
                if not active[m, s]:
                    continue
                first = int(offsets[m, s])
                n = int(offsets[m, s + 1]) - first
                z0 = mix64_numpy(kr ^ stratum_keys[s])
                sums = np.zeros((stop - start, 4), dtype=np.int64)
                steps = np.arange(1, (n + 1) // 2 + 1, dtype=np.uint64) * _G
                block = max(1, _MAX_BLOCK // max(n, 1))
                for b0 in range(0, stop - start, block):
                    h = mix64_numpy(z0[b0 : b0 + block, None] + steps[None, :])
                    u = np.stack([h >> np.uint64(32), h & _LOW32], axis=2).reshape(len(h), -1)[
                        :, :n
                    ]
                    idx = first + ((u * np.uint64(n)) >> np.uint64(32)).astype(np.int64)
                    sums[b0 : b0 + block] = counts[m][idx].sum(axis=1, dtype=np.int64)
                valid = (sums[:, 1] > 0) & (sums[:, 3] > 0)
                a_lo = _adjusted(sums[:, 0] / sums[:, 1], float(base_lo[s]))
                a_hi = _adjusted(sums[:, 2] / sums[:, 3], float(base_hi[s]))
                acc = np.where(valid, acc + (a_hi - a_lo), acc)
                kept += valid
            out[m] = np.where(kept > 0, acc / np.maximum(kept, 1), np.nan)
    return out


def diff_resamples_python(
    counts: np.ndarray,
    offsets: np.ndarray,
    active: np.ndarray,
    base_lo: np.ndarray,
    base_hi: np.ndarray,
    model_keys: np.ndarray,
    stratum_keys: np.ndarray,
    seed: int,
    start: int,
    stop: int,
) -> np.ndarray:
    """Same contract and same floats again, as a plain Python loop (slow: for comparison only)."""
    rows = counts.tolist()
    offs = offsets.tolist()
    n_models = counts.shape[0]
    n_strata = offsets.shape[1] - 1
    out = np.empty((n_models, stop - start), dtype=np.float64)
    seed_key = mix64_python(((seed & MASK) + GAMMA) & MASK)
    for m in range(n_models):
        km = mix64_python(int(model_keys[m]) ^ seed_key)
        for r in range(start, stop):
            kr = mix64_python((km + (r + 1) * GAMMA) & MASK)
            acc = 0.0
            kept = 0
            for s in range(n_strata):
                if not active[m, s]:
                    continue
                first = offs[m][s]
                n = offs[m][s + 1] - first
                z = mix64_python(kr ^ int(stratum_keys[s]))
                c_lo = t_lo = c_hi = t_hi = 0
                for j in range(n):
                    if j % 2 == 0:
                        z = (z + GAMMA) & MASK
                        h = mix64_python(z)
                        u = h >> 32
                    else:
                        u = h & 0xFFFFFFFF
                    row = rows[m][first + ((u * n) >> 32)]
                    c_lo += row[0]
                    t_lo += row[1]
                    c_hi += row[2]
                    t_hi += row[3]
                if t_lo == 0 or t_hi == 0:
                    continue
                b_lo = float(base_lo[s])
                b_hi = float(base_hi[s])
                p_lo = c_lo / t_lo
                p_hi = c_hi / t_hi
                a_lo = p_lo - b_lo if b_lo == 1.0 else (p_lo - b_lo) / (1.0 - b_lo)
                a_hi = p_hi - b_hi if b_hi == 1.0 else (p_hi - b_hi) / (1.0 - b_hi)
                acc += a_hi - a_lo
                kept += 1
            out[m, r - start] = acc / kept if kept else np.nan
    return out
