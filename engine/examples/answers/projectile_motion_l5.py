"""projectile_motion L5: two question variants in one cell (rules/projectile_motion.toml).

Range keys ('increase', 'stay the same'): the change of the range at 45°, in the model's words.
Obstacle keys ('clears; by 8.9 m', 'hits; at 11.2 m'): clears or hits, and the asked height (the
clearance margin, or the strike height), with the wall's height, distances and times as references.
Wrong answers give the other change / outcome or a height a little off; near misses hedge, offer two
values, drop the height, or give only the passing height and the wall's (no clearance stated).
"""

from __future__ import annotations

import random

from ..phrasing import DASH, HEDGE_STATUS

CHANGE_WORDS = {
    "increase": (
        "increase",
        "Increase",
        "The range would increase",
        "It goes farther",
        "Longer range",
        "The horizontal range gets bigger",
    ),
    "decrease": ("decrease", "Decrease", "The range would decrease", "Shorter range"),
    "stay the same": (
        "stay the same",
        "Stay the same",
        "Unchanged",
        "The range would not change",
        "No change",
        "It neither increases nor decreases",
    ),
}
WHY = {
    "increase": (
        "45° maximizes sin(2θ)",
        "the current angle is farther from 45°",
        "sin 2θ rises to 1 even though the flight time is shorter",
    ),
    "decrease": ("a flatter launch wastes speed", "sin 2θ gets smaller"),
    "stay the same": ("it is already launched at 45°", "sin 2θ is the same for both angles"),
}


def _range(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    change = key if knows else rng.choice([c for c in CHANGE_WORDS if c != key])
    if knows and rng.random() < profile.p_exact_sentence:
        return key, True
    text = rng.choice(CHANGE_WORDS[change])
    if rng.random() < 0.6:
        text += f"{rng.choice(DASH)}{rng.choice(WHY[change])}"
    ok = knows
    style = rng.random()
    if style < profile.p_hedge:
        text, ok = f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
    elif style < profile.p_hedge + 0.04:
        other = rng.choice([c for c in ("increase", "decrease", "stay the same") if c != change])
        text, ok = f"{change} or {other}", False
    elif style < profile.p_hedge + 0.04 + profile.p_drop_clause * 0.5:
        text, ok = "The launch angle becomes 45°, with the same initial speed.", False
    return text, ok


def _off(rng: random.Random, h: float) -> float:
    step = rng.choice((0.2, 0.3, 0.5, 1.0, 2.0))
    w = round(h + rng.choice((-1, 1)) * step, 1)
    return w if w > 0 else round(h + step, 1)


def _obstacle(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    outcome = key.split(";")[0]
    h = float(key.split()[-2])
    wall = round(rng.uniform(2.0, 15.0), 1)
    dist = rng.randint(10, 60)
    if knows and rng.random() < profile.p_exact_sentence:
        return key, True
    ok = knows
    shown_outcome, shown_h = outcome, h
    if not knows:
        error = rng.choices(("outcome", "height"), (0.4, 0.6))[0]
        if error == "outcome":
            shown_outcome = "hits" if outcome == "clears" else "clears"
        else:
            shown_h = _off(rng, h)
    v = f"{shown_h:.1f}"
    approx = rng.choice(("", "", "about ", "≈ ", "~"))
    if shown_outcome == "clears":
        forms = [
            f"It clears the wall by {approx}{v} m.",
            f"Clears{rng.choice(DASH)}by {v} m",
            f"clears ({v} m)",
            f"It passes over the obstacle with {v} m to spare.",
            f"Clears: {round(wall + shown_h, 1)} − {wall} = {v} m above the top of the wall.",
            f"It makes it over the {wall} m wall, clearing it by {approx}{v} m.",
        ]
    else:
        forms = [
            f"It hits the wall at {approx}{v} m.",
            f"Hits, at a height of {v} m.",
            f"It fails to clear and strikes the wall {v} m up ({dist} m from the launch point).",
            f"hits; y = {v} m at x = {dist} m",
            f"It doesn't clear: it crashes into the {round(shown_h + wall, 1)} m wall at {v} m.",
        ]
    text = rng.choice(forms)
    style = rng.random()
    if style < profile.p_hedge:
        text, ok = f"{rng.choice(HEDGE_STATUS).capitalize()} {text[0].lower()}{text[1:]}", False
    elif style < profile.p_hedge + profile.p_drop_clause:
        text, ok = (
            rng.choice(
                (
                    f"It {shown_outcome} the wall.",
                    f"It clears, passing at {round(wall + shown_h, 1)} m over a {wall} m wall."
                    if shown_outcome == "clears"
                    else f"It hits the {round(shown_h + wall, 1)} m wall.",
                )
            ),
            False,
        )
    elif style < profile.p_hedge + profile.p_drop_clause + 0.03:
        second = f"{_off(rng, shown_h):.1f}"
        word = "clears by" if shown_outcome == "clears" else "hits at"
        text, ok = f"It {word} {v} or {second} m.", False
    return text, ok


def answer(rng: random.Random, key: str, knows: bool, profile) -> tuple[str, bool]:
    if ";" in key:
        return _obstacle(rng, key, knows, profile)
    return _range(rng, key, knows, profile)
