"""The synthetic models of the example benchmark: names, skill profiles and answer styles.

Every name is prefixed "Synth" so nobody mistakes a row of the example for a real product. Ten
models have stored responses; six more are on the roster without any, like the audit this example
reproduces (it had 10 of 16 models' files).

A profile says two things per model: *whether it knows* the answer (an accuracy per domain and
level) and *how it says it* (labels, decoration, paraphrase habits, hedges). The sentence-valued
cells (physical_stability, gear_train and gauge_reading L5) get their own behaviour knobs, since
that is where a rule and the strict scorer disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DOMAINS = (
    "angle_estimation",
    "clock_reading",
    "compass_bearing",
    "fbd",
    "gauge_reading",
    "gear_train",
    "laser_mirror",
    "optical_illusion",
    "physical_stability",
    "projectile_motion",
    "surface_topology",
)

#: How much easier (+) or harder (-) a domain / a level is than average, added to a model's skill.
DOMAIN_OFFSET = {
    "angle_estimation": 0.05,
    "clock_reading": -0.05,
    "compass_bearing": -0.05,
    "fbd": 0.0,
    "gauge_reading": 0.05,
    "gear_train": 0.0,
    "laser_mirror": -0.1,
    "optical_illusion": 0.05,
    "physical_stability": 0.0,
    "projectile_motion": -0.05,
    "surface_topology": -0.1,
}
LEVEL_OFFSET = {1: 0.18, 2: 0.12, 3: 0.0, 4: -0.08, 5: -0.18}


@dataclass(frozen=True)
class StabilityHabits:
    """physical_stability L5: P(status right) per key status, then how the joint is named.

    ``joint`` weighs what the model writes after a right ``unstable``: ``correct`` (the keyed
    pair, explicit or relational per ``families``), ``reversed``, ``wrong`` (another pair),
    ``multiple`` (several pairs), ``wholestack`` (ground/whole-stack statement only), ``none``.
    ``families`` weighs the phrasing families of correct joints: ``explicit`` (joint between C
    and B, the C–B interface), ``relational`` (C's COM lies beyond supporting B), ``group``
    (C+D CoM not over B), ``terse`` (unstable (C's CoM not over B)). ``stable_style`` is
    ``local`` (each block over the one below) or ``wholestack`` (combined COM over the base).
    """

    p_stable: float
    p_unstable: float
    joint: dict[str, float]
    families: dict[str, float]
    stable_style: dict[str, float]
    false_unstable: dict[str, float] = field(default_factory=lambda: {"wholestack": 1.0})


@dataclass(frozen=True)
class Profile:
    name: str
    skill: float
    #: (domain, level) -> extra accuracy; how "better at L5 on some domains" is expressed.
    quirks: dict[tuple[str, int], float]
    #: answer-line labels and their weights (the strict scorer accepts all of them).
    labels: dict[str, float]
    reasoning: tuple[int, int]  # min/max reasoning lines before the answer
    p_period: float  # trailing full stop on short answers
    p_bold_value: float  # ANSWER: **3**
    p_capital: float  # ANSWER: Stable
    p_paraphrase: float  # sentence-ish keys answered in own words rather than verbatim
    p_hedge: float
    p_no_answer: float
    p_two_answers: float
    stability: StabilityHabits
    #: gear_train L5: P(verbatim key) when right (gauge_reading L5: a twentieth of it), and
    #: P(a right answer drops its second clause: no direction / no value).
    p_exact_sentence: float = 0.0
    p_drop_clause: float = 0.05

    @property
    def slug(self) -> str:
        return "-".join(self.name.lower().replace(".", "").split())


PROFILES: tuple[Profile, ...] = (
    Profile(
        name="Synth Atlas XL",
        p_exact_sentence=0.1,
        skill=0.80,
        quirks={("physical_stability", 5): 0.15, ("compass_bearing", 5): 0.1},
        labels={"ANSWER: ": 0.9, "**ANSWER:** ": 0.1},
        reasoning=(2, 4),
        p_period=0.05,
        p_bold_value=0.0,
        p_capital=0.3,
        p_paraphrase=0.9,
        p_hedge=0.0,
        p_no_answer=0.004,
        p_two_answers=0.01,
        stability=StabilityHabits(
            p_stable=1.0,
            p_unstable=1.0,
            joint={"correct": 1.0},
            families={"explicit": 0.6, "relational": 0.4},
            stable_style={"local": 0.7, "wholestack": 0.3},
        ),
    ),
    Profile(
        name="Synth Birch 7B",
        skill=0.40,
        quirks={},
        labels={"**ANSWER:** ": 0.8, "ANSWER: ": 0.2},
        reasoning=(1, 2),
        p_period=0.35,
        p_bold_value=0.05,
        p_capital=0.6,
        p_paraphrase=0.95,
        p_hedge=0.02,
        p_no_answer=0.012,
        p_two_answers=0.01,
        stability=StabilityHabits(
            p_stable=1.0,
            p_unstable=0.0,
            joint={"correct": 1.0},
            families={"relational": 1.0},
            stable_style={"local": 1.0},
        ),
        p_drop_clause=0.15,
    ),
    Profile(
        name="Synth Cedar Pro",
        skill=0.47,
        quirks={("gear_train", 5): 0.1},
        labels={"ANSWER: ": 1.0},
        reasoning=(2, 5),
        p_period=0.1,
        p_bold_value=0.0,
        p_capital=0.5,
        p_paraphrase=0.9,
        p_hedge=0.01,
        p_no_answer=0.01,
        p_two_answers=0.005,
        stability=StabilityHabits(
            p_stable=1.0,
            p_unstable=0.0,
            joint={"wholestack": 1.0},
            families={"relational": 1.0},
            stable_style={"wholestack": 1.0},
        ),
        p_drop_clause=0.4,
    ),
    Profile(
        name="Synth Dune Mini",
        p_exact_sentence=0.2,
        skill=0.76,
        quirks={("gauge_reading", 5): 0.2, ("gear_train", 5): 0.25, ("clock_reading", 5): 0.1},
        labels={"ANSWER: ": 0.7, "Answer: ": 0.3},
        reasoning=(1, 3),
        p_period=0.2,
        p_bold_value=0.0,
        p_capital=0.8,
        p_paraphrase=0.95,
        p_hedge=0.0,
        p_no_answer=0.006,
        p_two_answers=0.01,
        stability=StabilityHabits(
            p_stable=1.0,
            p_unstable=1.0,
            joint={"correct": 1.0},
            families={"relational": 0.8, "group": 0.2},
            stable_style={"local": 1.0},
        ),
    ),
    Profile(
        name="Synth Ember 30B",
        skill=0.38,
        quirks={},
        labels={"ANSWER: ": 1.0},
        reasoning=(1, 3),
        p_period=0.15,
        p_bold_value=0.1,
        p_capital=0.5,
        p_paraphrase=0.9,
        p_hedge=0.03,
        p_no_answer=0.012,
        p_two_answers=0.01,
        stability=StabilityHabits(
            p_stable=0.97,
            p_unstable=0.05,
            joint={"wholestack": 0.7, "none": 0.3},
            families={"relational": 1.0},
            stable_style={"wholestack": 0.8, "local": 0.2},
        ),
    ),
    Profile(
        name="Synth Fjord Flash",
        p_exact_sentence=0.35,
        skill=0.52,
        quirks={("physical_stability", 4): 0.1},
        labels={"ANSWER: ": 0.6, "**ANSWER:** ": 0.4},
        reasoning=(1, 3),
        p_period=0.1,
        p_bold_value=0.05,
        p_capital=0.6,
        p_paraphrase=0.9,
        p_hedge=0.02,
        p_no_answer=0.008,
        p_two_answers=0.015,
        stability=StabilityHabits(
            p_stable=1.0,
            p_unstable=0.3,
            joint={"correct": 0.8, "wrong": 0.2},
            families={"relational": 0.5, "group": 0.3, "explicit": 0.2},
            stable_style={"wholestack": 0.5, "local": 0.5},
        ),
    ),
    Profile(
        name="Synth Garnet 2",
        p_exact_sentence=0.8,
        skill=0.60,
        quirks={("clock_reading", 5): 0.2, ("laser_mirror", 5): 0.12},
        labels={"ANSWER: ": 1.0},
        reasoning=(0, 1),
        p_period=0.0,
        p_bold_value=0.0,
        p_capital=0.0,
        p_paraphrase=0.55,
        p_hedge=0.0,
        p_no_answer=0.01,
        p_two_answers=0.005,
        stability=StabilityHabits(
            p_stable=0.8,
            p_unstable=0.95,
            joint={"correct": 0.85, "wrong": 0.1, "reversed": 0.05},
            families={"terse": 0.7, "group": 0.3},
            stable_style={"terse": 1.0},
            false_unstable={"wholestack": 0.7, "pair": 0.3},
        ),
        p_drop_clause=0.1,
    ),
    Profile(
        name="Synth Harbor Lite",
        skill=0.33,
        quirks={},
        labels={"ANSWER: ": 0.8, "ANSWER:": 0.2},
        reasoning=(1, 2),
        p_period=0.25,
        p_bold_value=0.0,
        p_capital=0.4,
        p_paraphrase=0.9,
        p_hedge=0.04,
        p_no_answer=0.015,
        p_two_answers=0.02,
        stability=StabilityHabits(
            p_stable=0.9,
            p_unstable=0.35,
            joint={"wholestack": 0.8, "none": 0.2},
            families={"relational": 1.0},
            stable_style={"wholestack": 1.0},
        ),
    ),
    Profile(
        name="Synth Iris Vision",
        skill=0.42,
        quirks={("optical_illusion", 5): 0.15},
        labels={"ANSWER: ": 0.5, "### ANSWER: ": 0.2, "**ANSWER:** ": 0.3},
        reasoning=(2, 4),
        p_period=0.3,
        p_bold_value=0.15,
        p_capital=0.3,
        p_paraphrase=0.95,
        p_hedge=0.05,
        p_no_answer=0.01,
        p_two_answers=0.01,
        stability=StabilityHabits(
            p_stable=0.9,
            p_unstable=0.75,
            joint={"wholestack": 0.55, "correct": 0.3, "multiple": 0.15},
            families={"relational": 0.6, "explicit": 0.4},
            stable_style={"wholestack": 1.0},
        ),
    ),
    Profile(
        name="Synth Juniper 70B",
        p_exact_sentence=0.2,
        skill=0.56,
        quirks={("gauge_reading", 4): 0.1},
        labels={"Answer: ": 0.7, "ANSWER: ": 0.3},
        reasoning=(2, 3),
        p_period=0.3,
        p_bold_value=0.05,
        p_capital=0.7,
        p_paraphrase=0.9,
        p_hedge=0.2,
        p_no_answer=0.01,
        p_two_answers=0.03,
        stability=StabilityHabits(
            p_stable=0.9,
            p_unstable=0.6,
            joint={"correct": 0.6, "reversed": 0.15, "none": 0.25},
            families={"explicit": 0.7, "relational": 0.3},
            stable_style={"local": 0.6, "wholestack": 0.4},
        ),
    ),
)

#: On the roster (the benchmark's 16 models) but without stored responses.
ABSENT = (
    "Synth Kestrel 12B",
    "Synth Lumen 3B",
    "Synth Moss Turbo",
    "Synth Nimbus Max",
    "Synth Onyx Reasoner",
    "Synth Pine Chat",
)

ROSTER = tuple(sorted([p.name for p in PROFILES] + list(ABSENT)))


def accuracy(profile: Profile, domain: str, level: int) -> float:
    """P(the model knows the answer of one item of this cell), clipped to [0.02, 0.98]."""
    p = profile.skill + DOMAIN_OFFSET[domain] + LEVEL_OFFSET[level]
    p += profile.quirks.get((domain, level), 0.0)
    return min(0.98, max(0.02, p))
