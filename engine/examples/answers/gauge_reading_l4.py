"""gauge_reading L4: "Is the needle currently in the danger zone, if one is marked? If so, by how
much does it exceed the threshold?"

Keys: ``no danger zone marked``, ``no`` or ``yes; exceeds threshold by N``. ``intended`` follows
rules/gauge_reading_l4.toml's spec: the status (in the zone or not; either kind of "no" for either
no key) must match; a yes key also needs exactly one exceedance amount within 0.05 of N.
Readings and thresholds are references, never the amount.
"""

from __future__ import annotations

import random

from ..phrasing import DASH, HEDGE_STATUS

#: Amounts of the keys, with a threshold and a unit that fit their scale.
_SCALE = {
    "0.5": (10.0, "bar"),
    "1": (8.0, "bar"),
    "1.5": (10.0, "bar"),
    "2": (12.0, "V"),
    "2.5": (10.0, "bar"),
    "10": (80.0, "psi"),
    "20": (60.0, "units"),
    "30": (140.0, "psi"),
    "40": (200.0, "km/h"),
    "50": (150.0, "°C"),
}


def _fmt(x: float) -> str:
    return f"{x:g}"


def _no(rng: random.Random, zone: bool) -> str:
    """A not-in-the-zone answer; ``zone``: the gauge has a danger zone (a 'no' key)."""
    d = rng.choice(DASH)
    forms = [
        "No",
        "no.",
        f"No{d}the needle is not in the danger zone.",
        f"No{d}it is below the threshold.",
        "Not in the red zone.",
        "It does not exceed the threshold.",
    ]
    if zone:
        forms += [f"No{d}the needle sits in the green, short of the red zone."]
    else:
        forms += ["No danger zone is marked.", "There is no danger zone.", "N/A - no red zone"]
    return rng.choice(forms)


def _yes(rng: random.Random, amount: str) -> str:
    threshold, unit = _SCALE.get(amount, (100.0, "units"))
    reading = _fmt(threshold + float(amount))
    t = _fmt(threshold)
    u = rng.choice(("", f" {unit}"))
    d = rng.choice(DASH)
    return rng.choice(
        (
            f"Yes, by {amount}{u}.",
            f"Yes{d}it exceeds the threshold by {amount}{u}.",
            f"Yes{d}the needle at {reading} is {amount}{u} above the {t} threshold.",
            f"Yes; {reading} - {t} = {amount}",
            f"It is in the red zone, exceeding the threshold by about {amount}{u}.",
            f"Yes, {amount}{u} past the red line.",
            f"yes, exceedance: {amount}",
        )
    )


def _near(rng: random.Random, amount: str) -> str:
    """A wrong amount near the key's (at least 0.5 away)."""
    v = float(amount)
    step = 0.5 if v < 5 else 10.0
    w = v + rng.choice((-1, 1)) * step * rng.choice((1, 2))
    return _fmt(w if w > 0 else v + step)


def answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    yes = key.startswith("yes")
    amount = key.rsplit(" ", 1)[1] if yes else None
    if knows and rng.random() < profile.p_exact_sentence:
        text, ok = key, True
    elif knows and not yes:
        # either kind of "no" is right for either no key
        text, ok = _no(rng, key == "no" or rng.random() < 0.3), True
    elif knows:
        if rng.random() < profile.p_drop_clause:
            threshold, _ = _SCALE.get(amount, (100.0, "units"))
            reading = _fmt(threshold + float(amount))
            text = rng.choice(("Yes.", f"Yes, the needle is at {reading}, in the red zone."))
            ok = False
        else:
            text, ok = _yes(rng, amount), True
    else:
        text, ok = _wrong(rng, yes, amount), False
    if rng.random() < profile.p_hedge:
        text, ok = f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
    return text, ok


def _wrong(rng: random.Random, yes: bool, amount: str | None) -> str:
    if not yes:
        if rng.random() < 0.85:
            return _yes(rng, rng.choice(list(_SCALE)))
        return "Yes or no - hard to tell."
    error = rng.choices(("status", "amount", "two"), (0.4, 0.5, 0.1))[0]
    if error == "status":
        return _no(rng, rng.random() < 0.5)
    if error == "amount":
        return _yes(rng, _near(rng, amount))
    return f"Yes, by {amount} or {_near(rng, amount)}."
