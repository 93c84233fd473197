"""Comma-enclosed relative clauses move behind their sentence, pronoun resolved (claim layer)."""

from __future__ import annotations

import time

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.expressions.functions import _number
from keyaudit.engine.rule_language.reading.asides import move_asides
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer


@pytest.mark.parametrize(
    ("text", "moved"),
    [
        ("D, which is the output, slows down.", "D slows down; D is the output."),
        ("B, whose COM lies past A, slides off.", "B slides off; B's COM lies past A."),
        (
            "D, which x, slows; its direction, which y, stays.",
            "D slows; D x; its direction stays; direction y.",
        ),
        ("the D-C joint, which holds.", "the D-C joint, which holds."),  # already at the end
        ("new value 3.5, which is fine, here", "new value 3.5 here; 3.5 is fine"),  # "3.5" ends nothing
        ("a, b, c", "a, b, c"),
        ("X, where y, z.", "X, where y, z."),  # only which / who / whose move
    ],
)
def test_move_asides(text: str, moved: str) -> None:
    assert move_asides(text) == moved


def test_move_asides_is_linear() -> None:
    started = time.process_time()
    move_asides((", which " * 1000)[:4000])
    move_asides(("a, " * 2000)[:4000])
    assert time.process_time() - started < 1.0


@pytest.mark.parametrize(
    ("rule", "key", "answer", "accept", "reason"),
    [
        ("gear_train", "decrease; direction unchanged",
         "D, which is the output, slows down; its direction, which depends on the meshes, stays the same.",
         True, ""),
        ("gear_train", "stay the same; direction unchanged",
         "Gear B, which meshes with A, turns faster, but D keeps the same speed and direction.", True, ""),
        ("gear_train", "stay the same; direction unchanged", "Same speed? Direction unchanged.",
         False, "hedged"),
        ("gauge_reading", "no; new value 45", "No (?) ; new value 45", False, "hedged"),
        ("gauge_reading", "no; new value 16", "No, new value sixteen.", True, ""),
        ("gauge_reading", "no; new value 65", "sixty-five, and no, it doesn't go past the max", True, ""),
        ("gauge_reading", "no; new value 17", "No, new value sixteen.", False, "wrong value"),
        ("physical_stability",
         "unstable; after removing block E, the cumulative center of mass at the joint between block D "
         "and block C lies outside its supporting base",
         "Unstable; D, which was placed off-centre, tips off C.", True, ""),
    ],
)
def test_rules_read_asides_questions_and_number_words(rule, key, answer, accept, reason) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, "ANSWER: " + answer)
    assert (verdict.accept, verdict.reason) == (accept, reason)


@pytest.mark.parametrize(
    ("text", "value"),
    [("sixteen", 16), ("sixty-five", 65), ("twenty seven", 27), ("minus two", -2),
     ("one hundred and twenty", 120), ("a hundred", 100), ("hundred", None), ("65 psi", None)],
)
def test_number_reads_words(text: str, value) -> None:
    assert _number(text) == value


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Unlike the maximum height, which decreases, the range increases.",
         "Unlike the maximum height (which decreases), the range increases."),
        ("Compared with gear B, which speeds up, D slows down", "Compared with gear B (which speeds up), D slows down"),
        # no contrast before it: the aside moves as before
        ("D, which is the output, slows down.", "D slows down; D is the output."),
        # an appositive after a one-letter name moves too; after a longer subject it stays
        ("E, the top block, tips off D", "E tips off D; the top block"),
        ("Unstable, the B-A joint, fails", "Unstable, the B-A joint, fails"),
    ],
)
def test_an_aside_inside_a_contrast_stays_in_brackets(text: str, kept: str) -> None:
    assert move_asides(text) == kept


@pytest.mark.parametrize(
    ("rule", "key", "answer"),
    [
        ("projectile_motion", "increase", "Unlike the maximum height, which decreases, the range increases"),
        ("surface_topology_l4", "0; orientable", "Unlike the sphere, which has χ = 2, this torus has χ = 0; orientable."),
        ("gauge_reading_l4", "no", "No. Unlike the oil-pressure gauge beside it, which is in the red, this needle stays in the green"),
    ],
)
def test_the_contrasted_objects_aside_is_context(rule: str, key: str, answer: str) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, "ANSWER: " + answer)
    assert (verdict.accept, verdict.reason) == (True, "")
