"""physical_stability L4: "Is this entire stack stable, or will it tip over? If it tips, state the
lowest joint at which it first becomes unstable."

Keys: ``stable`` or ``tips between block U and block L`` (U rests on L). ``intended`` follows
rules/physical_stability_l4.toml's spec: the status (stable / tips) must match; a tips key also
needs exactly one failing joint equal to (U, L), named with a joint word or a support relation.
"""

from __future__ import annotations

import random
import re

from ..phrasing import APOS, COM, DASH, HEDGE_STATUS, JOINER

_TIPS = re.compile(r"^tips between block ([A-E]) and block ([A-E])$")
LETTERS = "ABCDE"


def _below(letter: str) -> str:
    return chr(ord(letter) - 1)


def _stable(rng: random.Random) -> str:
    d = rng.choice(DASH)
    com = rng.choice(COM)
    return rng.choice(
        (
            "Stable",
            "stable",
            "It is stable.",
            "The stack is stable and will not tip over.",
            f"Stable{d}every block's {com} lies over the block beneath it.",
            f"It won't tip{d}the combined {com} of B–E stays within A's footprint.",
            "The stack stays up.",
            "It remains standing; no joint fails.",
            f"Stable{d}it does not topple.",
            "Balanced, so it does not tip.",
        )
    )


def _joint(rng: random.Random, upper: str, lower: str) -> str:
    """A failing joint (upper on lower), in one of the forms the spec reads."""
    j = rng.choice(JOINER)
    a = rng.choice(APOS)
    com = rng.choice(COM)
    return rng.choice(
        (
            f"at the {upper}{j}{lower} joint",
            f"between {upper} and {lower}",
            f"between block {upper} and block {lower}",
            f"at the {upper}{j}{lower} interface",
            f"at {upper}/{lower}",
            f"at the joint where {upper} rests on {lower}",
            f"{upper} slides off {lower}",
            f"block {upper}{a}s {com} is past the edge of {lower}",
            f"the stack above {lower} tips off {lower}",
            f"{lower} can no longer support {upper}",
        )
    )


def _tips(rng: random.Random, upper: str, lower: str) -> str:
    d = rng.choice(DASH)
    where = _joint(rng, upper, lower)
    if where.startswith(("at ", "between ")):
        return rng.choice(
            (
                f"It tips {where}.",
                f"Tips {where}",
                f"Unstable{d}it first fails {where}.",
                f"It will tip over {where}.",
                f"The stack topples {where}.",
            )
        )
    return rng.choice((f"Unstable{d}{where}.", f"It tips: {where}.", f"Tips{d}{where}"))


def answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    m = _TIPS.match(key)
    pair = (m.group(1), m.group(2)) if m else None
    if knows and rng.random() < profile.p_exact_sentence:
        text, ok = key, True
    elif knows:
        if pair is None:
            text, ok = _stable(rng), True
        elif rng.random() < profile.p_drop_clause:
            # the joint left out, or only a bare pair
            text = rng.choice(("It tips.", "Unstable.", f"Tips ({pair[0]}-{pair[1]})"))
            ok = False
        else:
            text, ok = _tips(rng, *pair), True
    else:
        text, ok = _wrong(rng, pair), False
    if rng.random() < profile.p_hedge:
        text, ok = f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
    return text, ok


def _wrong(rng: random.Random, pair: tuple[str, str] | None) -> str:
    """A wrong answer: the other status, a reversed or wrong joint, two joints, or both statuses."""
    if pair is None:
        upper = rng.choice(LETTERS[1:])
        if rng.random() < 0.8:
            return _tips(rng, upper, _below(upper))
        return rng.choice(("Stable or it tips.", "stable/unstable"))
    upper, lower = pair
    error = rng.choices(("status", "reversed", "wrong", "two"), (0.45, 0.15, 0.3, 0.1))[0]
    if error == "status":
        return _stable(rng)
    if error == "reversed":
        j = rng.choice(JOINER)
        return rng.choice((f"It tips between {lower} and {upper}.", f"Tips at the {lower}{j}{upper} joint"))
    others = [u for u in LETTERS[1:] if u != upper]
    other = rng.choice(others)
    if error == "wrong":
        return _tips(rng, other, _below(other))
    j = rng.choice(JOINER)
    return f"It tips at the {upper}{j}{lower} and {other}{j}{_below(other)} joints."
