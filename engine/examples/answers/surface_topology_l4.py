"""surface_topology L4: the surface's Euler characteristic and whether it is orientable.

``intended`` follows the rule's spec (rules/surface_topology_l4.toml): one integer equal to the key's
(a formula's result counts, its operands and the genus do not) and the key's orientability, both
stated and unhedged.
"""

from __future__ import annotations

import random

from ..phrasing import HEDGE_STATUS

EULERS = (2, 0, -2, -4, 1, -1)
ORIENTABLE = ("orientable", "orientable", "two-sided", "orientable surface")
NON_ORIENTABLE = ("non-orientable", "non-orientable", "nonorientable", "not orientable", "one-sided")
SURFACE = {2: "sphere", 0: "torus", -2: "double torus", -4: "triple torus"}


def parse(key: str) -> tuple[int, str]:
    chi, _, orient = key.partition("; ")
    if orient not in ("orientable", "non-orientable"):
        raise ValueError(f"not a surface_topology L4 key: {key!r}")
    return int(chi), orient


def euler_phrase(rng: random.Random, chi: int, orient: str) -> str:
    """The Euler characteristic as models write it: bare, after a cue, or as a formula's result."""
    sign = "−" if rng.random() < 0.3 else "-"
    shown = f"{sign}{-chi}" if chi < 0 else str(chi)
    form = rng.randrange(6)
    if form == 0:
        return shown
    if form == 1:
        return f"χ = {shown}"
    if form == 2:
        return f"Euler characteristic {shown}"
    if form == 3 and orient == "orientable" and chi % 2 == 0 and chi <= 2:
        g = (2 - chi) // 2
        return f"χ = 2 - 2g = 2 - {2 * g} = {shown} (genus {g})"
    if form == 4 and chi in SURFACE and orient == "orientable":
        return f"{shown} ({SURFACE[chi]})"
    return f"the Euler characteristic is {shown}"


def orient_phrase(rng: random.Random, orient: str) -> str:
    return rng.choice(ORIENTABLE if orient == "orientable" else NON_ORIENTABLE)


def _sentence(rng: random.Random, chi: int | None, orient: str | None, true_orient: str) -> str:
    parts = []
    if chi is not None:
        parts.append(euler_phrase(rng, chi, orient or true_orient))
    if orient is not None:
        parts.append(orient_phrase(rng, orient))
    if len(parts) == 2 and rng.random() < 0.15:
        parts.reverse()
    return rng.choice(("; ", ", ", "; ")).join(parts) + rng.choice(("", "", "."))


def answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    chi, orient = parse(key)
    if knows and rng.random() < profile.p_exact_sentence:
        return key, True
    other = "non-orientable" if orient == "orientable" else "orientable"
    if knows:
        if rng.random() < profile.p_drop_clause:
            return _sentence(rng, chi, None, orient), False
        text = _sentence(rng, chi, orient, orient)
        if rng.random() < profile.p_hedge:
            return f"{rng.choice(HEDGE_STATUS)} {text[0].lower()}{text[1:]}", False
        return text, True
    error = rng.choices(("euler", "sign", "orient", "conflict", "missing"), (0.45, 0.15, 0.2, 0.1, 0.1))[0]
    if error == "euler":
        return _sentence(rng, rng.choice([e for e in EULERS if e != chi]), orient, orient), False
    if error == "sign" and chi != 0:
        return _sentence(rng, -chi, orient, orient), False
    if error == "orient":
        return _sentence(rng, chi, other, orient), False
    if error == "conflict":
        wrong = rng.choice([e for e in EULERS if e != chi])
        return f"{chi} or {wrong}; {orient_phrase(rng, orient)}", False
    return _sentence(rng, None, orient, orient), False
