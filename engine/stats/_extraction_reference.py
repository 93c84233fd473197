"""The numpy reference of the corrected bootstrap: what ``_extraction_kernel.corrected_resamples``
must equal bit for bit (``check --engine reference`` runs it).

Clusters are drawn as :func:`~._bootstrap_reference.diff_resamples_numpy` draws them; each drawn
domain's sums give the low and high level's corrected accuracy, ``(known + RG(CA, CR) + RG(UA,
UR)) / total`` with the replicate's rates of the cell's rule (RG: :func:`rogan_gladen`), in that
order; the adjusted differences are added in ascending stratum order.
"""

from __future__ import annotations

import numpy as np

from ._bootstrap_reference import _G, _LOW32, _MAX_BLOCK, MASK, _adjusted, mix64_numpy


def rogan_gladen(a: np.ndarray, r: np.ndarray, fa: np.ndarray, fr: np.ndarray) -> np.ndarray:
    """``_extraction_kernel._rogan_gladen`` on arrays, branch for branch."""
    u = a + r
    den = 1.0 - fa - fr
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (a - fa * u) / den
    x = np.where(x < 0.0, 0.0, np.where(x > u, u.astype(np.float64), x))
    x = np.where(den <= 0.0, a.astype(np.float64), x)
    return np.where(u == 0, 0.0, x)


def _corrected(sums: np.ndarray, base: int, q: np.ndarray) -> np.ndarray:
    kk, total, ca, cr, ua, ur = (sums[:, base + f] for f in range(6))
    right = (
        kk.astype(np.float64)
        + rogan_gladen(ca, cr, q[:, 0], q[:, 1])
        + rogan_gladen(ua, ur, q[:, 2], q[:, 3])
    )
    return right / total


def corrected_resamples_numpy(
    parts: np.ndarray,
    offsets: np.ndarray,
    active: np.ndarray,
    base_lo: np.ndarray,
    base_hi: np.ndarray,
    rule_lo: np.ndarray,
    rule_hi: np.ndarray,
    rates: np.ndarray,
    model_keys: np.ndarray,
    stratum_keys: np.ndarray,
    seed: int,
    start: int,
    stop: int,
) -> np.ndarray:
    """Same contract and same floats as ``_extraction_kernel.corrected_resamples``, in numpy."""
    n_models = parts.shape[0]
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
                sums = np.zeros((stop - start, 12), dtype=np.int64)
                steps = np.arange(1, (n + 1) // 2 + 1, dtype=np.uint64) * _G
                block = max(1, _MAX_BLOCK // max(n, 1))
                for b0 in range(0, stop - start, block):
                    h = mix64_numpy(z0[b0 : b0 + block, None] + steps[None, :])
                    u = np.stack([h >> np.uint64(32), h & _LOW32], axis=2).reshape(len(h), -1)[
                        :, :n
                    ]
                    idx = first + ((u * np.uint64(n)) >> np.uint64(32)).astype(np.int64)
                    sums[b0 : b0 + block] = parts[m][idx].sum(axis=1, dtype=np.int64)
                valid = (sums[:, 1] > 0) & (sums[:, 7] > 0)
                p_lo = _corrected(sums, 0, rates[start:stop, int(rule_lo[s])])
                p_hi = _corrected(sums, 6, rates[start:stop, int(rule_hi[s])])
                a_lo = _adjusted_vector(p_lo, float(base_lo[s]))
                a_hi = _adjusted_vector(p_hi, float(base_hi[s]))
                acc = np.where(valid, acc + (a_hi - a_lo), acc)
                kept += valid
            out[m] = np.where(kept > 0, acc / np.maximum(kept, 1), np.nan)
    return out


_adjusted_vector = _adjusted
