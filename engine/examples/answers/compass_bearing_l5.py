"""compass_bearing L5: the landmark letter the projected endpoint is closest to, briefly justified.

The letter decides (rules/compass_bearing.toml): the justification's distance and bearing
difference are estimates from the drawing, so a right letter with other numbers is still right.
Wrong answers name another landmark; near misses hedge the letter, offer two letters, or justify
without naming one.
"""

from __future__ import annotations

import random
import re

from ..phrasing import DASH, HEDGE_STATUS

_KEY = re.compile(
    r"^(?P<letter>[A-H]); projected endpoint is closest to [A-H] \((?P<dist>[\d.]+) map units away; "
    r"bearing difference (?P<diff>[\d.]+) degrees\)$"
)
LETTERS = ("A", "B", "C", "D")


def _numbers(rng: random.Random, dist: str, diff: str) -> tuple[str, str]:
    """The model's own estimates: the key's figures, rounded or a little off."""
    d, b = float(dist), float(diff)
    style = rng.random()
    if style < 0.4:
        return dist, diff
    if style < 0.7:
        return str(round(d)), str(round(b))
    return f"{d * rng.uniform(0.8, 1.2):.0f}", f"{b + rng.uniform(-8, 8):.0f}"


def _justify(rng: random.Random, letter: str, dist: str, diff: str, other: str) -> str:
    approx = rng.choice(("", "~", "≈ ", "about ", "roughly "))
    return rng.choice(
        (
            f"the endpoint is {approx}{dist} map units from {letter}, bearing difference {approx}{diff}°",
            f"{approx}{dist} units away; bearing difference {approx}{diff} degrees",
            f"it lands {approx}{dist} units from {letter} while {other} is farther",
            f"{other} is farther, and the bearing to {letter} differs by {approx}{diff}°",
        )
    )


def _sentence(rng: random.Random, letter: str, dist: str, diff: str, other: str) -> str:
    d = rng.choice(DASH)
    why = _justify(rng, letter, dist, diff, other)
    return rng.choice(
        (
            letter,
            f"{letter}{d}{why}",
            f"**{letter}** ({why})",
            f"Landmark {letter}{d}{why}",
            f"The projected endpoint is closest to {letter}{d}{why}.",
            f"Closest to {letter} ({why})",
            f"{letter} is the closest{d}{why}",
            f"{letter} is closer than {other}{d}{why}",
            f"From A along the bearing, it ends up nearest {letter}; {why}.",
            f"Nearest landmark: {letter} ({why})",
            f"{other} is farther; {letter} is the closest.",
        )
    )


def answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    m = _KEY.match(key)
    letter, dist, diff = m["letter"], m["dist"], m["diff"]
    others = [c for c in LETTERS if c != letter]
    other = rng.choice(others)
    shown_dist, shown_diff = _numbers(rng, dist, diff)
    if knows:
        if rng.random() < profile.p_exact_sentence:
            if rng.random() < 0.5:
                return key, True
            return (
                f"{letter}; projected endpoint is closest to {letter} ({shown_dist} map units "
                f"away; bearing difference {shown_diff} degrees)",
                True,
            )
        if rng.random() < profile.p_drop_clause:  # justification without the letter
            return (
                f"The endpoint lands about {shown_dist} map units away, bearing difference "
                f"{shown_diff}°, with {other} farther.",
                False,
            )
        text = _sentence(rng, letter, shown_dist, shown_diff, other)
        if rng.random() < 0.08:
            text = f"{other} — no wait, {letter}{rng.choice(DASH)}{_justify(rng, letter, shown_dist, shown_diff, other)}"
        if rng.random() < profile.p_hedge:
            return rng.choice(
                (
                    f"{rng.choice(HEDGE_STATUS).capitalize()} {letter}, about {shown_dist} units away",
                    f"{letter}? The endpoint is roughly {shown_dist} units from it",
                )
            ), False
        return text, True
    error = rng.choices(("letter", "either", "missing"), (0.85, 0.08, 0.07))[0]
    wrong = rng.choice(others)
    if error == "either":
        pair = sorted((letter, wrong))
        return rng.choice(
            (f"{pair[0]} or {pair[1]}", f"either {pair[0]} or {pair[1]} — too close to call")
        ), False
    if error == "missing":
        return f"The endpoint is about {shown_dist} units from {wrong}, which is farther.", False
    third = rng.choice([c for c in LETTERS if c != wrong])
    if rng.random() < profile.p_exact_sentence:
        return (
            f"{wrong}; projected endpoint is closest to {wrong} ({shown_dist} map units away; "
            f"bearing difference {shown_diff} degrees)",
            False,
        )
    return _sentence(rng, wrong, shown_dist, shown_diff, third), False
