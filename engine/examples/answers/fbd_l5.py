"""fbd L5: the acceleration's direction after a force is removed, or whether the block slips.

The cell has two question variants and the key says which one an item asks:

* direction keys (``downward (270 degrees; 0=right, 90=up)``, ``right (0 degrees; ...)``,
  ``direction (247 degrees; ...)``): the answer gives an angle in the question's convention
  (0 = right, 90 = up), or an axis word when the key is an axis. Wrong answers are the removed
  force's own direction (the classic slip: forgetting that removing a force leaves its opposite),
  near-miss angles and wrong axes; dropped components are diagonal words only ("down and to the
  left") or "opposite to the removed force".
* slip keys (``yes``/``no``): yes/no or a phrase ("it slides", "it stays put").

``intended`` follows the rule's spec: an angle within 0.05° of the key modulo 360 (an axis word
when no angle is given), or the right yes/no, not hedged, one value.
"""

from __future__ import annotations

import random
import re

from ..phrasing import DASH, HEDGE_STATUS

_KEY = re.compile(r"^(?P<word>downward|right|direction) \((?P<angle>-?[\d.]+) degrees; ")

AXIS_WORDS = {
    270: ("downward", "Downward", "straight down", "Straight down", "vertically downward", "down",
          "-y direction"),
    0: ("right", "to the right", "To the right", "rightward", "horizontally to the right",
        "+x direction"),
    90: ("upward", "straight up", "Up"),
    180: ("to the left", "leftward", "Left"),
}
DEG = ("°", "°", " degrees", " deg", "º")


def _fmt(angle: float) -> str:
    text = f"{angle:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _describe(angle: float) -> str:
    """Words for an angle: an axis word, or a diagonal description (not a direction alone)."""
    a = angle % 360
    for axis, words in AXIS_WORDS.items():
        if abs(a - axis) < 1e-9:
            return words[0]
    if 180 < a < 270:
        return "down and to the left"
    if 270 < a < 360:
        return "down and to the right"
    if 90 < a < 180:
        return "up and to the left"
    return "up and to the right"


def _angle_sentence(rng: random.Random, angle: float, removed: float) -> str:
    """One way of giving ``angle`` as the answer (always with the angle itself)."""
    shown = _fmt(angle)
    deg = rng.choice(DEG)
    desc = _describe(angle)
    negative = _fmt(angle - 360) if angle > 180 else None
    forms = [
        f"{shown}{deg}",
        f"{shown}{deg} ({desc})",
        f"Direction: {shown}{deg}",
        f"θ = {shown}{deg}",
        f"The acceleration points at {shown}{deg}.",
        f"about {shown}{deg}",
        f"≈ {shown}°",
        f"{desc.capitalize()}{rng.choice(DASH)}{shown}{deg}",
        f"{shown}{deg}{rng.choice(DASH)}opposite to the removed force, which pointed at {_fmt(removed)}°",
        f"{shown}° (0° = right, 90° = up)",
        f"{shown}{deg}, measured counterclockwise from +x",
        f"{_fmt(removed)} + 180 = {shown}°" if removed < 180 else f"{_fmt(removed)} - 180 = {shown}°",
    ]
    if negative is not None:
        forms.append(f"{negative}° (i.e. {shown}°)")
        forms.append(f"{negative}{deg}")
    return rng.choice(forms)


def _direction_answer(
    rng: random.Random, key: str, knows: bool, profile
) -> tuple[str, bool]:
    m = _KEY.match(key)
    if m is None:  # pragma: no cover - every fbd L5 direction key has this shape
        raise ValueError(f"not an fbd L5 direction key: {key!r}")
    angle = float(m["angle"])
    removed = (angle + 180) % 360  # the removed force pointed the other way
    axis = int(angle) if m["word"] != "direction" else None
    if knows and rng.random() < profile.p_exact_sentence / 10:
        return key, True
    if not knows:
        error = rng.choices(("removed", "near", "axis", "either"), (0.4, 0.35, 0.15, 0.1))[0]
        if error == "removed":
            if axis is not None and rng.random() < 0.5:
                return rng.choice(AXIS_WORDS[int(removed)]), False
            return _angle_sentence(rng, removed, angle), False
        if error == "near":
            wrong = angle + rng.choice((-1, 1)) * rng.choice((0.5, 1, 2, 3, 5, 10, 15))
            return _angle_sentence(rng, wrong % 360, removed), False
        if error == "axis":
            choices = [a for a in AXIS_WORDS if a != axis]
            return rng.choice(AXIS_WORDS[rng.choice(choices)]), False
        other = (angle + rng.choice((-10, 10, 90, 180))) % 360
        return f"{_fmt(angle)}° or {_fmt(other)}°", False
    if rng.random() < profile.p_drop_clause * 0.5:
        if axis is None:
            return rng.choice(
                (_describe(angle), f"{_describe(angle).capitalize()}, opposite to the removed force")
            ), False
        return "Opposite to the removed force", False
    if axis is not None and rng.random() < 0.4:
        text = rng.choice(AXIS_WORDS[axis])
    else:
        text = _angle_sentence(rng, angle, removed)
    if rng.random() < profile.p_hedge:
        return f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
    return text, True


SLIP_YES = (
    "Yes",
    "yes",
    "Yes, it would slip.",
    "Yes{d}mg sin 40° exceeds the maximum static friction.",
    "It would slide down the incline.",
    "Yes, the block slides.",
    "The block slips.",
)
SLIP_NO = (
    "No",
    "no",
    "No, it stays put.",
    "No{d}static friction still holds it in place.",
    "The block remains at rest.",
    "It would not slip.",
    "No, the block does not slide.",
)


def _slip_answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    said = key if knows else ("no" if key == "yes" else "yes")
    if not knows and rng.random() < 0.12:
        return rng.choice(("It depends on the friction coefficient.", "yes or no, depending on μ")), False
    if knows and rng.random() < profile.p_drop_clause * 0.3:
        return "It depends on the friction coefficient.", False
    text = rng.choice(SLIP_YES if said == "yes" else SLIP_NO).format(d=rng.choice(DASH))
    if rng.random() < profile.p_hedge:
        return f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
    return text, knows


def answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    """fbd L5: a direction (angle or axis word) or a yes/no slip answer, in free text."""
    if key in ("yes", "no"):
        return _slip_answer(rng, key, knows, profile)
    return _direction_answer(rng, key, knows, profile)
