"""laser_mirror L5: would the exit point change (yes/no), and where does the laser now exit?

``intended`` follows the rule's spec (/rules/laser_mirror.toml): the change must be stated, unhedged,
single and right; for a yes key the exit location (edge and position) is required; for a no key it
is optional, but a stated one must be right.
"""

from __future__ import annotations

import random
import re

from ..phrasing import DASH, HEDGE_STATUS

_KEY = re.compile(r"^(yes|no); exits at (top|bottom|left|right), position (\d+)$")
EDGES = ("top", "bottom", "left", "right")
EDGE_WORDS = {
    "top": ("top", "top", "top", "upper", "north"),
    "bottom": ("bottom", "bottom", "bottom", "lower", "south"),
    "left": ("left", "left", "left", "west"),
    "right": ("right", "right", "right", "east"),
}
SIDE = ("", " edge", " side", " edge", " wall")
ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
NUMBER_WORD = ("one", "two", "three", "four", "five", "six", "seven", "eight")
YES_LEAD = ("Yes", "Yes", "Yes", "yes", "Yes, it changes", "Yes, the exit point changes",
            "It changes", "Yes, it would change", "The exit point changes")
NO_LEAD = ("No", "No", "No", "no", "No change", "No, it does not change",
           "The exit point stays the same", "It would not change", "No, the exit is unchanged")


def parse(key: str) -> tuple[str, str, int]:
    m = _KEY.match(key)
    if m is None:
        raise ValueError(f"not a laser_mirror L5 key: {key!r}")
    return m[1], m[2], int(m[3])


def _axis(edge: str) -> str:
    return "row" if edge in ("left", "right") else "column"


def location(rng: random.Random, edge: str, n: int) -> str:
    """The exit in one of the ways models write it: 'the right edge, row 5', 'right 5', 'R5C8'..."""
    word = rng.choice(EDGE_WORDS[edge])
    side = rng.choice(SIDE)
    axis = _axis(edge)
    form = rng.randrange(9)
    if form == 0:
        return f"{word}, position {n}"
    if form == 1:
        return f"the {word}{side}, {axis} {n}"
    if form == 2:
        return f"{word} {n}"
    if form == 3:
        return f"the {word}{side} at {rng.choice((axis, 'position'))} {n}"
    if form == 4:
        return f"the {word}{side} in the {ORDINAL[n - 1]} {axis}"
    if form == 5:
        return f"{axis} {n} of the {word}{side or ' edge'}"
    if form == 6:
        size = rng.randint(max(n, 5), 8)
        if axis == "row":
            cell = f"R{n}C{size if edge == 'right' else 1}"
        else:
            cell = f"R{size if edge == 'bottom' else 1}C{n}"
        return f"{cell} on the {word}{side or ' edge'}"
    if form == 7:
        return f"the {word}{side}, {axis} {NUMBER_WORD[n - 1]}"
    return f"the {word}{side} (position {n})"


def _other(rng: random.Random, edge: str, n: int) -> tuple[str, int]:
    """Another exit: a different edge, or the same edge at another position."""
    if rng.random() < 0.5:
        return rng.choice([e for e in EDGES if e != edge]), rng.randint(1, 7)
    m = n + rng.choice((-2, -1, 1, 2))
    return edge, m if 1 <= m <= 8 else n + (1 if n < 8 else -1)


def _sentence(rng: random.Random, change: str, loc: str | None, context: str = "") -> str:
    lead = rng.choice(YES_LEAD if change == "yes" else NO_LEAD)
    if loc is None:
        return lead + rng.choice((".", "", "."))
    sep = rng.choice(DASH)
    verb = (
        rng.choice(("it now exits at ", "it exits at ", "the laser would leave through ",
                    "the new exit is ", "it would now exit from ", ""))
        if change == "yes"
        else rng.choice(("it still exits at ", "still ", "it exits at ", "the laser leaves through ", ""))
    )
    return f"{lead}{sep}{verb}{loc}{context}{rng.choice(('.', '', ''))}"


def answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    change, edge, n = parse(key)
    if knows and rng.random() < profile.p_exact_sentence:
        return key, True
    old_edge, old_n = _other(rng, edge, n)
    context = ""
    if change == "yes" and rng.random() < 0.25:
        old = location(rng, old_edge, old_n)
        context = rng.choice((f" (previously {old})", f", instead of {old}", f" rather than {old}"))
    if knows:
        if rng.random() < profile.p_drop_clause:  # the location left out
            return _sentence(rng, change, None), change == "no"
        text = _sentence(rng, change, location(rng, edge, n), context)
        if rng.random() < profile.p_hedge:
            if rng.random() < 0.5:
                return f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
            if context:
                return f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
            return f"{text.rstrip('.')}, I think", False
        return text, True
    error = rng.choices(
        ("change", "edge", "position", "conflict", "no_change", "no_location"),
        (0.35, 0.2, 0.2, 0.08, 0.07, 0.1),
    )[0]
    flipped = "no" if change == "yes" else "yes"
    if error == "change":
        loc = location(rng, edge, n) if change == "no" else location(rng, old_edge, old_n)
        if rng.random() < profile.p_exact_sentence:
            return f"{flipped}; exits at {old_edge}, position {old_n}", False
        return _sentence(rng, flipped, loc if rng.random() < 0.8 else None), False
    if error in ("edge", "position"):
        wrong_edge = rng.choice([e for e in EDGES if e != edge]) if error == "edge" else edge
        wrong_n = n if error == "edge" else (n + 1 if n < 7 else n - 1)
        if rng.random() < profile.p_exact_sentence:
            return f"{change}; exits at {wrong_edge}, position {wrong_n}", False
        return _sentence(rng, change, location(rng, wrong_edge, wrong_n)), False
    if error == "conflict":
        a, b = location(rng, edge, n), location(rng, old_edge, old_n)
        if rng.random() < 0.5:
            a, b = b, a
        return _sentence(rng, change, f"{a} or {b}"), False
    if error == "no_change":  # a location with no yes/no
        return f"It exits at {location(rng, edge, n)}.", False
    # the location alone is missing: only a yes key needs it
    return _sentence(rng, change, None), change == "no"
