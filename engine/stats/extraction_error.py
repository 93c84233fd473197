"""The rule's own error on a benchmark's responses, measured from adjudications, and its draws.

A person labels a random sample of the rule's *certain* verdicts (``keyaudit review --sample``)
and, usually, its *uncertain* ones. A uniform sample of verdicts is a uniform sample of responses,
so it measures the rule's **misreading rates** conditional on the truth:

* the *false-accept rate*: of the truly wrong answers, the share the rule accepts;
* the *false-reject rate*: of the truly right answers, the share the rule rejects;

each for the certain verdicts (from the random sample) and the uncertain ones (from their labels).
These rates are properties of the rule's reading, assumed the same for every model and cell of
the rule; the share of a rule's *accepts* that are wrong is not (it grows as a model's accuracy
falls), which is why the correction (:mod:`.corrected`) is the Rogan–Gladen one and not a weight
per kind of verdict. A rate with no labelled answer of its kind is *unmeasured*: taken as 0 and
said so.

For intervals that carry this error, each bootstrap replicate draws every rate from its Jeffreys
posterior, Beta(e + ½, n − e + ½) for e misread of n labelled — a parametric bootstrap of the
adjudicated sample. Unlike resampling the sample's rows, it does not collapse to a zero-width rate
when the sample found no misreading (0 in 50 is not a rate of 0). The Beta variate is built from
half-integer Gamma variates, each a sum of ``-log(u)`` over counter-based uniforms plus one
squared Box–Muller normal over two, so a draw is a fixed number of hashes: replicate ``r``'s
rates depend only on (seed, rule name, r, rate), never on threads, chunks, models or the order of
anything. :func:`rate_draws` runs the numba kernel; :func:`rate_draws_python` is the plain-Python
reference the tests hold it equal to, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import _bootstrap_reference as reference
from .bootstrap import name_key
from .wilson import wilson_interval

#: The four rates of a rule, in array order.
RATES = (
    "certain false accept",
    "certain false reject",
    "uncertain false accept",
    "uncertain false reject",
)
#: The four kinds of a rule's unlabelled verdicts, in array order.
VERDICTS = ("certain accept", "certain reject", "uncertain accept", "uncertain reject")
#: Hash keys of the rates (fixed constants).
STRATUM_KEYS = tuple(name_key(f"extraction error rate {s}") for s in RATES)
_TWO53 = 1.0 / 9007199254740992.0  # 2**-53
_TAU = 2.0 * math.pi


@dataclass(frozen=True)
class RuleErrorSample:
    """One rule's adjudicated sample: per rate (:data:`RATES`) how many labelled answers of its
    kind there are (truly wrong for a false-accept rate, truly right for a false-reject rate) and
    how many of them the rule misread; and how many of its verdicts stay unlabelled, per kind
    (:data:`VERDICTS`)."""

    rule: str
    labelled: tuple[int, int, int, int]
    errors: tuple[int, int, int, int]
    unlabelled: tuple[int, int, int, int]

    def rate(self, k: int) -> float:
        """The rate e/n (0 when unmeasured: see :meth:`measured`)."""
        return self.errors[k] / self.labelled[k] if self.labelled[k] else 0.0

    def measured(self, k: int) -> bool:
        return self.labelled[k] > 0

    def interval(self, k: int, confidence: float) -> tuple[float, float]:
        """Wilson interval of the rate ((nan, nan) when unmeasured)."""
        return wilson_interval(self.errors[k], self.labelled[k], confidence)

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """Rates that apply to unlabelled verdicts but have no labelled answer of their kind."""
        certain = self.unlabelled[0] + self.unlabelled[1]
        uncertain = self.unlabelled[2] + self.unlabelled[3]
        return tuple(
            RATES[k]
            for k in range(4)
            if (certain if k < 2 else uncertain) and not self.labelled[k]
        )


def point_rates(samples: Sequence[RuleErrorSample]) -> np.ndarray:
    """The rates e/n, float64 ``[n_rules + 1, 4]``; the last row (no rule) is 0."""
    out = np.zeros((len(samples) + 1, 4), dtype=np.float64)
    for g, sample in enumerate(samples):
        for k in range(4):
            out[g, k] = sample.rate(k)
    return out


def _arrays(samples: Sequence[RuleErrorSample]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = np.array([s.labelled for s in samples], dtype=np.int64).reshape(len(samples), 4)
    e = np.array([s.errors for s in samples], dtype=np.int64).reshape(len(samples), 4)
    keys = np.array([rule_key(s.rule) for s in samples], dtype=np.uint64)
    return n, e, keys


def rule_key(rule: str) -> int:
    """The hash key of a rule's error draws (distinct from any model's key of the same name)."""
    return name_key(f"extraction error of rule {rule}")


def rate_draws(
    samples: Sequence[RuleErrorSample], resamples: int, seed: int, engine: str = "numba"
) -> np.ndarray:
    """Every replicate's rates, float64 ``[resamples, n_rules + 1, 4]`` (the last row, no rule,
    is 0; an unmeasured rate is 0). ``engine`` ``"numba"`` or ``"python"`` (the reference)."""
    n, e, keys = _arrays(samples)
    seed_u = int(seed) & reference.MASK
    if engine == "numba":
        from ._extraction_kernel import rate_draws_kernel

        strata = np.array(STRATUM_KEYS, dtype=np.uint64)
        return rate_draws_kernel(n, e, keys, strata, np.uint64(seed_u), resamples)
    return rate_draws_python(n, e, keys, seed_u, resamples)


def _uniform(h: int) -> float:
    return ((h >> 11) + 0.5) * _TWO53


def rate_draws_python(
    n: np.ndarray, e: np.ndarray, keys: np.ndarray, seed: int, resamples: int
) -> np.ndarray:
    """The specification of the draws, as a plain loop (see the module docstring):

    ``km = mix(rule_key ^ mix(seed + G))``, ``kr = mix(km + (r + 1) G)``, ``z0 = mix(kr ^
    stratum_key)``; uniform ``j`` is ``((mix(z0 + (j + 1) G) >> 11) + ½) / 2**53``. Uniforms
    0..e−1 make X's Gamma(e) part and e..n−1 Y's Gamma(n − e) part (sums of ``-log u``, in
    order); uniforms n, n+1 add X's Gamma(½) part ``-log(u_n) cos²(2π u_{n+1})`` and n+2, n+3
    Y's. The rate is X / (X + Y).
    """
    mix = reference.mix64_python
    mask, gamma = reference.MASK, reference.GAMMA
    n_rules = n.shape[0]
    out = np.zeros((resamples, n_rules + 1, 4), dtype=np.float64)
    seed_key = mix((seed + gamma) & mask)
    for g in range(n_rules):
        km = mix(int(keys[g]) ^ seed_key)
        for r in range(resamples):
            kr = mix((km + (r + 1) * gamma) & mask)
            for k in range(4):
                total, bad = int(n[g, k]), int(e[g, k])
                if total == 0:
                    continue
                z0 = mix(kr ^ STRATUM_KEYS[k])
                x = 0.0
                y = 0.0
                for j in range(total):
                    u = _uniform(mix((z0 + (j + 1) * gamma) & mask))
                    if j < bad:
                        x += -math.log(u)
                    else:
                        y += -math.log(u)
                u1 = _uniform(mix((z0 + (total + 1) * gamma) & mask))
                u2 = _uniform(mix((z0 + (total + 2) * gamma) & mask))
                c = math.cos(_TAU * u2)
                x += -math.log(u1) * (c * c)
                u3 = _uniform(mix((z0 + (total + 3) * gamma) & mask))
                u4 = _uniform(mix((z0 + (total + 4) * gamma) & mask))
                c = math.cos(_TAU * u4)
                y += -math.log(u3) * (c * c)
                out[r, g, k] = x / (x + y)
    return out
