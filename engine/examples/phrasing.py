"""How the synthetic models word their answers: free text for sentence-valued keys.

Each writer takes a ``random.Random`` and returns ``(answer_text, intended)``, where ``intended``
says whether a good rule (seed §2 for physical_stability; "speed word + direction unchanged" for
gear_train; "yes/no + the new value" for gauge_reading) should accept it. ``intended`` is never
written to the benchmark; ``generate --summary`` prints it so rule authors can compare.

Phrasings are built from interchangeable parts (COM synonyms, dashes, curly apostrophes,
≈ coordinates) so that no two models sound alike and a rule has to parse, not memorise.
"""

from __future__ import annotations

import random
import re

COM = ("COM", "CoM", "centre of mass", "center of mass", "center of gravity")
DASH = (" — ", " – ", " - ", ", ", "; ", ": ")
JOINER = ("–", "-", "/", "—")  # between the two blocks of a joint: C–B, C/B
RANGE = ("–", "-", "—", " to ")  # a run of blocks: A–D
APOS = ("'", "’")
HEDGE_STATUS = ("probably", "likely", "possibly", "I think")

_PS_KEY = re.compile(
    r"^(?P<status>stable|unstable); after removing block (?P<top>[A-E])"
    r"(?:, the cumulative center of mass at the joint between block (?P<upper>[A-E]) "
    r"and block (?P<lower>[A-E]))?"
)


def pick(rng: random.Random, weights: dict[str, float]) -> str:
    names = list(weights)
    return rng.choices(names, [weights[n] for n in names])[0]


def _prev(letter: str, by: int = 1) -> str:
    return chr(ord(letter) - by)


def parse_stability_key(key: str) -> tuple[str, str, tuple[str, str] | None]:
    """``(status, removed block, (upper, lower) or None)`` of a physical_stability L5 key."""
    m = _PS_KEY.match(key)
    if m is None:
        raise ValueError(f"not a physical_stability L5 key: {key!r}")
    pair = (m["upper"], m["lower"]) if m["upper"] else None
    return m["status"], m["top"], pair


class _Parts:
    """Random interchangeable parts for one response, drawn once so a sentence is coherent."""

    def __init__(self, rng: random.Random, removed: str) -> None:
        self.rng = rng
        self.x = removed
        self.top = _prev(removed)  # highest block left
        self.com = rng.choice(COM)
        self.d = rng.choice(DASH)
        self.j = rng.choice(JOINER)
        self.r = rng.choice(RANGE)
        self.a = rng.choice(APOS)
        self.side = rng.choice(("right", "left"))

    def coord(self) -> str:
        return f"{self.rng.choice(('≈', '~', '=', ' ≈ '))}{self.rng.randint(180, 420)}"

    def status(self, word: str) -> str:
        style = self.rng.random()
        if style < 0.45:
            return word.capitalize()
        if style < 0.9:
            return word
        if style < 0.95:
            return word.upper()
        return f"**{word.capitalize()}**"

    def group(self, upper: str) -> str:
        """The blocks from ``upper`` up to the top, lowest first (``C+D``, ``blocks C–D``)."""
        members = [chr(c) for c in range(ord(upper), ord(self.top) + 1)]
        if len(members) == 1:
            return f"block {upper}"
        form = self.rng.random()
        if form < 0.5:
            return "+".join(members)
        if form < 0.8:
            return f"blocks {members[0]}{self.r}{members[-1]}"
        return ", ".join(members[:-1]) + " and " + members[-1]


# --------------------------------------------------------------------- physical_stability


def _stable_body(p: _Parts, style: str) -> str:
    r, a, com, x, top = p.rng, p.a, p.com, p.x, p.top
    if top == "A":  # B removed: a single block on the ground
        return r.choice(
            [
                f"with {x} gone only block A is left, resting flat on the ground.",
                "a single block cannot tip.",
                f"removing {x} leaves just A, whose {com} is inside its own base.",
                "(only A remains)",
            ]
        )
    pair = (top, _prev(top))
    whole = f"A{p.r}{top}"
    local = [
        f"every remaining {com} is supported.",
        f"with {x} removed, each block{a}s {com} still sits over the block beneath it.",
        f"without {x}, block {pair[0]}{a}s {com} remains above block {pair[1]}{a}s base of "
        "support.",
        f"the {com} of every upper group lies within the supporting block immediately beneath it.",
        f"nothing overhangs its support once {x} is gone.",
        f"removing {x} only lightens the stack; every cumulative {com} stays inside its "
        "supporting base.",
        f"no joint has its cumulative {com} past the supporting edge.",
        f"each partial stack{a}s {com} projects inside the block under it.",
        f"{pair[0]}{a}s {com} (x{p.coord()}) is over {pair[1]}, and everything above A balances "
        "over A.",
        f"the {com} at every interface stays within the supporting block.",
        f"each block rests with its {com} over the block below.",
        f"taking {x} off leaves every block supported by the one below it.",
    ]
    wholestack = [
        f"the combined {com} of blocks {whole} remains over the base.",
        f"the combined {com} of blocks {whole} stays over block A{a}s support base.",
        f"without {x}, the combined {com} of the remaining blocks (x{p.coord()}) falls within "
        f"A{a}s footprint.",
        f"the overall {com} acts within the base of support, so the stack does not tip.",
        f"the whole {whole} stack still has its {com} above the ground contact of A.",
        f"the remaining tower{a}s {com} lies inside A{a}s base on the ground.",
    ]
    terse = [
        "(all cumulative CoMs within supports)",
        f"({top}{a}s CoM over {pair[1]})",
        "(every CoM supported)",
        f"(stack {whole} balanced)",
    ]
    if style == "terse":
        return r.choice(terse)
    return r.choice(local if style == "local" else wholestack)


def _because(p: _Parts, word: str, body: str) -> str:
    """``Stable, because <clause>`` only when the body is a clause, else ``Stable — <body>``."""
    if body.startswith("("):
        return f"{p.status(word)} {body}"
    if body.startswith(("the ", "block ", "every ", "each ", "no ")) and p.rng.random() < 0.25:
        return f"{p.status(word)}, because {body}"
    if p.rng.random() < 0.1:
        return f"{p.status(word)}. {body[0].upper()}{body[1:]}"
    return f"{p.status(word)}{p.d}{body}"


def stable_answer(p: _Parts, style: str) -> str:
    return _because(p, "stable", _stable_body(p, style))


def _joint_phrase(p: _Parts, family: str, upper: str, lower: str) -> str:
    """The failing joint ``(upper, lower)`` in one of the accepted construction families."""
    r, a, com, x, j = p.rng, p.a, p.com, p.x, p.j
    if family == "explicit":
        return r.choice(
            [
                f"the cumulative {com} at the joint between {upper} and {lower} lies outside "
                "its supporting base.",
                f"the joint between block {upper} and block {lower} fails.",
                f"failure at the {upper}{j}{lower} interface.",
                f"tipping occurs at the {upper}{j}{lower} joint.",
                f"with {x} removed the stack topples at the joint between block {upper} and "
                f"block {lower}.",
                f"the {upper}{j}{lower} interface cannot hold: the {com} above it is past the "
                "edge.",
                f"at the {upper}{j}{lower} joint the {com} of everything above lies outside the "
                "supporting base.",
            ]
        )
    if family == "relational":
        return r.choice(
            [
                f"with {x} removed, block {upper}{a}s {com} (x{p.coord()}) lies beyond the "
                f"{p.side} edge of block {lower}{a}s top surface (x{p.coord()}), so {upper} "
                "would tip off.",
                f"block {upper}{a}s {com} lies beyond supporting block {lower}.",
                f"the {com} of block {upper} lies to the {p.side} of the supporting edge of "
                f"block {lower}, causing it to tip over.",
                f"{upper} slides off {lower}.",
                f"once {x} is gone nothing counterweights {upper}, whose {com} falls outside "
                f"{lower}.",
                f"{upper}{a}s {com} is not supported by {lower}.",
                f"{upper} tips off {lower} because its {com} is outside {lower}{a}s top face.",
                f"remove {x} and block {upper} overhangs block {lower} too far: its {com} is "
                f"past {lower}{a}s edge.",
            ]
        )
    if family == "group":
        g = p.group(upper)
        return r.choice(
            [
                f"the combined {com} of {g} sits past the edge of {lower}.",
                f"the {com} of {g} overhangs {lower}.",
                f"{g} {com} not over {lower}.",
                f"the {com} of {g} (x{p.coord()}) is outside the top face of {lower}.",
            ]
        )
    # terse
    return r.choice(
        [
            f"({upper}{a}s CoM not over {lower})",
            f"({p.group(upper).removeprefix('block ')} CoM not over {lower})",
            f"({upper} slides off {lower})",
            f"(joint {upper}{j}{lower}: CoM outside support)",
        ]
    )


def _bad_unstable_phrase(p: _Parts, mode: str, pair: tuple[str, str] | None) -> str:
    """After ``unstable``: wrong/ambiguous/missing joints a seed-§2 rule must reject."""
    r, a, com, j, top = p.rng, p.a, p.com, p.j, p.top
    whole = f"A{p.r}{top}" if top > "A" else "A"
    if mode == "wholestack" or (pair is None and mode != "none"):
        members = "A and B" if top == "B" else f"blocks {whole}"
        return r.choice(
            [
                f"the combined {com} of {members} is outside A{a}s footprint on the ground.",
                f"the whole {whole} stack is outside A{a}s ground footprint.",
                f"CM of {whole} not over A{a}s base.",
                f"removing {p.x} shifts the combined {com} right of block A{a}s left edge.",
                f"the overall {com} lies to the {p.side} of the supporting base of A, i.e. "
                "outside its footprint on the ground, so the stack would tip.",
            ]
        )
    if mode == "none":
        return r.choice(
            [
                "it would tip over.",
                "the stack falls.",
                f"the blocks are misaligned once {p.x} is removed.",
                "the tower is no longer balanced.",
            ]
        )
    upper, lower = pair
    if mode == "reversed":
        return _joint_phrase(p, r.choice(("explicit", "terse")), lower, upper)
    if mode == "wrong":
        options = [(upper, _prev(lower))] if lower > "A" else []
        options += [
            (u, _prev(u)) for u in (chr(c) for c in range(ord("B"), ord(top) + 1)) if u != upper
        ]
        if not options:  # two-block stack: only B-A exists, so the "wrong" pair is reversed
            options = [(lower, upper)]
        u, lo = r.choice(options)
        return _joint_phrase(p, r.choice(("explicit", "relational", "terse")), u, lo)
    # multiple
    others = [(chr(c), chr(c - 1)) for c in range(ord("B"), ord(top) + 1) if chr(c) != upper]
    other = r.choice(others) if others else (lower, upper)
    both = [f"{upper}{j}{lower}", f"{other[0]}{j}{other[1]}"]
    r.shuffle(both)
    return f"both the {both[0]} and {both[1]} joints are past their supporting edges."


def unstable_answer(p: _Parts, body: str) -> str:
    return _because(p, "unstable", body)


def stability_answer(rng: random.Random, key: str, habits, p_hedge: float) -> tuple[str, bool]:
    """A physical_stability L5 answer for ``key`` by a model with ``habits``; see module doc."""
    status, removed, pair = parse_stability_key(key)
    p = _Parts(rng, removed)
    says_stable = rng.random() < (habits.p_stable if status == "stable" else 1 - habits.p_unstable)
    if says_stable:
        text = stable_answer(p, pick(rng, habits.stable_style))
        intended = status == "stable"
    elif status == "stable":  # false alarm on a stable key
        mode = pick(rng, habits.false_unstable)
        if mode == "pair" and p.top > "A":
            body = _joint_phrase(p, "terse", p.top, _prev(p.top))
        else:
            body = _bad_unstable_phrase(p, "wholestack", None)
        text, intended = unstable_answer(p, body), False
    else:
        mode = pick(rng, habits.joint)
        if mode == "correct":
            body = _joint_phrase(p, pick(rng, habits.families), *pair)
        else:
            body = _bad_unstable_phrase(p, mode, pair)
        text, intended = unstable_answer(p, body), mode == "correct"
    if rng.random() < p_hedge:
        text, intended = _hedge(rng, text), False
    return text, intended


def _hedge(rng: random.Random, text: str) -> str:
    """Make the leading status ambiguous: ``probably stable ...``, ``stable or unstable ...``."""
    word, _, rest = text.partition(" ")
    bare = word.strip("*,.:;—–").lower()
    if rng.random() < 0.25 and bare in ("stable", "unstable"):
        other = "unstable" if bare == "stable" else "stable"
        return f"{bare} or {other} — hard to tell from the image."
    return f"{rng.choice(HEDGE_STATUS)} {bare}{word[len(word.rstrip('*,.:;—–')) :]} {rest}"


# --------------------------------------------------------------------------- gear_train

#: per speed: the leading word, finite verbs ("gear D slows down") and a manner ("turns slower").
SPEED_WORDS = {
    "increase": (
        "Increase",
        ("increases", "speeds up", "would increase", "spins faster"),
        ("faster", "more quickly"),
    ),
    "decrease": (
        "Decrease",
        ("decreases", "slows down", "would decrease", "spins slower"),
        ("slower", "more slowly"),
    ),
    "stay the same": (
        "Stay the same",
        ("stays the same", "keeps its speed", "is unaffected", "does not change speed"),
        ("at the same speed", "at an unchanged speed"),
    ),
}
SPEED_NOUN = {
    "increase": ("increases", "goes up", "rises"),
    "decrease": ("decreases", "goes down", "drops"),
    "stay the same": ("is unchanged", "stays the same", "does not change"),
}
DIRECTION_SAME = (
    "direction unchanged",
    "its direction of rotation is unchanged",
    "the direction does not change",
    "it keeps turning the same way",
    "same direction",
    "no reversal of direction",
    "rotation direction stays the same",
)
DIRECTION_FLIP = (
    "its direction reverses",
    "it would now turn the opposite way",
    "direction changes",
    "it spins the other way",
)


def _gear_sentence(rng: random.Random, speed: str, direction: str | None) -> str:
    lead, verbs, manners = SPEED_WORDS[speed]
    a = rng.choice(APOS)
    forms = [
        f"{lead}{rng.choice(DASH)}gear D {rng.choice(verbs)}",
        f"{lead.lower()}{rng.choice(DASH)}D {rng.choice(verbs)}",
        f"D{a}s speed {rng.choice(SPEED_NOUN[speed])}",
        f"It {rng.choice(verbs)}",
        f"Gear D turns {rng.choice(manners)}",
        f"{lead}. Speed of D {rng.choice(SPEED_NOUN[speed])}",
    ]
    if speed == "stay the same":
        forms.append("stays the same")
    text = rng.choice(forms)
    if direction is None:
        return text + rng.choice((".", "", " (the ratio to D changes)."))
    sep = rng.choice((", and ", "; ", " — ", ". Direction: ", ", with "))
    tail = direction
    if sep == ". Direction: ":
        tail = "unchanged" if direction in DIRECTION_SAME else "reversed"
    elif sep == ", with ":
        tail = "no change in direction" if direction in DIRECTION_SAME else "a reversed direction"
    return f"{text}{sep}{tail}{rng.choice(('.', '', '.'))}"


def gear_answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    """gear_train L5: speed word + 'direction unchanged', in free text."""
    speed = key.split(";")[0].strip()
    if knows:
        if rng.random() < profile.p_exact_sentence:
            text = key
        elif rng.random() < profile.p_drop_clause:
            return _gear_sentence(rng, speed, None), False
        else:
            text = _gear_sentence(rng, speed, rng.choice(DIRECTION_SAME))
        if rng.random() < profile.p_hedge:
            return f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
        return text, True
    error = rng.choices(("speed", "direction", "missing", "either"), (0.65, 0.15, 0.12, 0.08))[0]
    wrong_speed = rng.choice([s for s in SPEED_WORDS if s != speed])
    if error == "speed":
        if rng.random() < profile.p_exact_sentence:
            return f"{wrong_speed}; direction unchanged", False
        return _gear_sentence(rng, wrong_speed, rng.choice(DIRECTION_SAME)), False
    if error == "direction":
        return _gear_sentence(
            rng, rng.choice((speed, wrong_speed)), rng.choice(DIRECTION_FLIP)
        ), False
    if error == "missing":
        return _gear_sentence(rng, rng.choice((speed, wrong_speed)), None), False
    return f"either {speed} or {wrong_speed}; direction unchanged", False


# ------------------------------------------------------------------------ gauge_reading


def _number_variants(value: str) -> tuple[str, ...]:
    v = float(value)
    out = {value, f"{v:.1f}"}
    if v == int(v):
        out.add(str(int(v)))
    return tuple(sorted(out))


def _near_miss(rng: random.Random, value: str) -> str:
    v = float(value)
    step = rng.choice((0.5, 1, 2, 5, 10)) if v >= 10 else rng.choice((0.5, 1, 2))
    w = v + rng.choice((-1, 1)) * step * rng.randint(1, 3)
    if w == v:
        w += step
    return f"{w:g}"


def gauge_answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    """gauge_reading L5: 'yes'/'no' (exceeds the max?) + the new value, in free text."""
    yn, _, rest = key.partition(";")
    value = rest.replace("new value", "").strip()
    if knows and rng.random() < profile.p_exact_sentence / 20:
        return key, True
    ok = knows
    shown_yn, shown_v = yn, rng.choice(_number_variants(value))
    drop = None
    if not knows:
        error = rng.choices(("yn", "value", "drop_value", "drop_yn"), (0.35, 0.4, 0.15, 0.1))[0]
        if error == "yn":
            shown_yn = "yes" if yn == "no" else "no"
        elif error == "value":
            shown_v = _near_miss(rng, value)
        else:
            drop = error
    elif rng.random() < profile.p_drop_clause * 0.5:
        drop, ok = rng.choice(("drop_value", "drop_yn")), False
    approx = rng.choice(("", "", "≈ ", "about "))
    unit = rng.choice(("", "", "", " units", " psi", " bar"))
    yes = shown_yn == "yes"
    beyond = (
        rng.choice(("exceeds the max", "past the top of the scale", "over the maximum"))
        if yes
        else rng.choice(("still below the maximum", "within the scale", "under the max"))
    )
    if drop == "drop_value":
        text = rng.choice(
            (
                f"{shown_yn.capitalize()}{rng.choice(DASH)}it {'goes' if yes else 'stays'} "
                f"{'off' if yes else 'on'} the scale.",
                f"{shown_yn}, {beyond}",
            )
        )
    elif drop == "drop_yn":
        text = rng.choice(
            (
                f"The new value would be {shown_v}{unit}.",
                f"new value {approx}{shown_v}",
            )
        )
    else:
        text = rng.choice(
            (
                f"{shown_yn.capitalize()}{rng.choice(DASH)}the new reading would be {shown_v}"
                f"{unit}, {beyond}.",
                f"{shown_yn}, new value {approx}{shown_v} ({beyond})",
                f"{shown_yn.capitalize()}; {shown_v}",
                f"{shown_yn}, it would read {approx}{shown_v}{unit}",
                f"{shown_yn.capitalize()}. New value: {shown_v}, {beyond}.",
                f"{shown_yn.capitalize()}{rng.choice(DASH)}{approx}{shown_v}{unit} is {beyond}.",
                f"{shown_yn}; new value {shown_v}{unit}",
            )
        )
    if rng.random() < profile.p_hedge:
        text, ok = f"{rng.choice(HEDGE_STATUS)} {text[0].lower()}{text[1:]}", False
    return text, ok
