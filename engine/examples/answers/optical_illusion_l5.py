"""optical_illusion L5: would the answer change without the context (yes/no), and which element is
actually bigger (A, B, or equal)?

``intended`` follows the rule's spec (rules/optical_illusion.toml): both components are required,
unhedged, single and right; a size said about the illusion ("A looks bigger") is context only.
"""

from __future__ import annotations

import random
import re

from ..phrasing import DASH, HEDGE_STATUS

_KEY = re.compile(r"^(yes|no); (?:actually (equal)|element ([AB]) is actually bigger)$")
BIG = ("bigger", "larger", "longer", "bigger", "larger")
SMALL = ("smaller", "shorter")
NOUN = ("", "", "element ", "line ", "circle ")
YES_LEAD = ("Yes", "Yes", "yes", "Yes, my answer changes", "Yes, it would change",
            "Yes, the answer would be different")
NO_LEAD = ("No", "No", "no", "No, my answer stays the same", "No, it would not change",
           "No change")


def parse(key: str) -> tuple[str, str]:
    m = _KEY.match(key)
    if m is None:
        raise ValueError(f"not an optical_illusion L5 key: {key!r}")
    return m[1], m[2] or m[3]


def _other(letter: str) -> str:
    return "B" if letter == "A" else "A"


def size_phrase(rng: random.Random, size: str) -> str:
    """The actual size in one of the ways models write it."""
    if size == "equal":
        return rng.choice((
            "they are actually equal", "both are the same size", "A and B are equal in length",
            "neither is bigger", "they are identical in size", "equal", "the two are the same length",
        ))
    n = rng.choice(NOUN)
    form = rng.randrange(5)
    if form == 0:
        return f"{n}{size} is actually {rng.choice(BIG)}"
    if form == 1:
        return f"{n}{_other(size)} is {rng.choice(SMALL)} than {size}"
    if form == 2:
        return f"{size} is {rng.choice(BIG)} than {_other(size)}"
    if form == 3:
        return f"the {rng.choice(BIG)} one is {size}"
    return f"{n}{size} is still {rng.choice(BIG)}"


def _context(rng: random.Random, apparent: str) -> str:
    """What the illusion suggests, as context: never the actual size."""
    return rng.choice((
        f"{apparent} looks {rng.choice(BIG)} with the context, but ",
        f"the illusion makes {apparent} seem {rng.choice(BIG)}; without it, ",
        f"at first glance {apparent} is {rng.choice(BIG)}, but ",
    ))


def _sentence(rng: random.Random, change: str, size: str | None, context: str = "") -> str:
    lead = rng.choice(YES_LEAD if change == "yes" else NO_LEAD)
    if size is None:
        return lead + rng.choice((".", ""))
    return f"{lead}{rng.choice(DASH)}{context}{size_phrase(rng, size)}{rng.choice(('.', ''))}"


def answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    change, size = parse(key)
    if knows and rng.random() < profile.p_exact_sentence:
        return key, True
    # the illusion's suggestion: for a yes key it differs from the actual size
    apparent = rng.choice("AB") if size == "equal" else (_other(size) if change == "yes" else size)
    context = _context(rng, apparent) if rng.random() < 0.3 else ""
    if knows:
        if rng.random() < profile.p_drop_clause:
            return _sentence(rng, change, None), False
        text = _sentence(rng, change, size, context)
        if rng.random() < profile.p_hedge:
            if rng.random() < 0.5 or context:
                return f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
            return f"{text.rstrip('.')}, I think", False
        return text, True
    error = rng.choices(("change", "size", "both", "conflict", "missing"), (0.3, 0.35, 0.15, 0.1, 0.1))[0]
    flipped = "no" if change == "yes" else "yes"
    wrong_size = rng.choice([s for s in ("equal", "A", "B") if s != size])
    if error == "change":
        return _sentence(rng, flipped, size), False
    if error == "size":
        if rng.random() < profile.p_exact_sentence:
            shown = "actually equal" if wrong_size == "equal" else f"element {wrong_size} is actually bigger"
            return f"{change}; {shown}", False
        return _sentence(rng, change, wrong_size), False
    if error == "both":
        return _sentence(rng, flipped, wrong_size), False
    if error == "conflict":
        return f"{rng.choice(YES_LEAD if change == 'yes' else NO_LEAD)}; {size} or {wrong_size}".replace(
            "equal or", "equal, or maybe").replace("; equal", "; they are equal"), False
    if rng.random() < 0.5:  # the size alone, no yes/no
        return size_phrase(rng, size).capitalize() + ".", False
    return _sentence(rng, change, None), False
