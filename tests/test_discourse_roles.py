"""Discourse roles of the claim layer (issue 33, item 2), decided once for every rule: only the
model's own answer counts; a corrected claim gives way to the last one of its kind, a claim in a
contrast is about what the answer is compared with, and each claim names its role."""

from __future__ import annotations

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

SCORERS: dict[str, Scorer] = {}


def verdict(rule: str, key: str, answer: str):
    if rule not in SCORERS:
        SCORERS[rule] = Scorer(load_rule(resolve_rule_path(rule)))
    return SCORERS[rule].score(key, f"ANSWER: {answer}")


def roles(rule: str, key: str, answer: str) -> list[tuple[str, str]]:
    scorer = SCORERS.get(rule) or Scorer(load_rule(resolve_rule_path(rule)))
    _, found = scorer.explain(key, answer)
    return [(c.describe()["words"], c.describe()["role"]) for c in found.all_claims()]


# Each was read as a conflict before: the correction retracted only the kind of the claim right
# after it, so a whole answer restated after "no wait" kept the earlier one's other values.
CORRECTIONS = [
    ("gauge_reading", "no; new value 35", "no; new value 55 - no wait, no; new value 35", True),
    ("gauge_reading", "no; new value 55", "no; new value 55 - no wait, no; new value 35", False),
    ("laser_mirror", "yes; exits at bottom, position 1",
     "yes; exits at left, position 5. Actually, yes; exits at bottom, position 1", True),
    ("laser_mirror", "yes; exits at left, position 5",
     "yes; exits at left, position 5. Actually, yes; exits at bottom, position 1", False),
    ("fbd", "downward (270 degrees; 0=right, 90=up)",
     "90°, no wait — T was the upward force, so removing it gives 270°.", True),
]


@pytest.mark.parametrize(("rule", "key", "answer", "accept"), CORRECTIONS)
def test_the_last_correction_stands_for_every_kind_it_restates(rule, key, answer, accept) -> None:
    assert verdict(rule, key, answer).accept is accept


CONTRASTS = [
    ("surface_topology_l4", "0; orientable",
     "0; orientable (unlike what a quick guess suggests: -4; orientable)", True),
    ("surface_topology_l4", "-4; orientable",
     "0; orientable (unlike what a quick guess suggests: -4; orientable)", False),
    ("gauge_reading_l4", "no danger zone marked",
     "no danger zone marked (unlike the other gauge: yes; exceeds threshold by 1)", True),
    ("gear_train", "decrease; direction unchanged",
     "Unlike gear B, which speeds up, D slows down; direction unchanged", True),
    ("gear_train", "decrease; direction unchanged", "D slows down, unlike B; direction unchanged", True),
    ("projectile_motion", "increase", "increase (compared with a flatter shot: stay the same)", True),
    ("projectile_motion", "stay the same", "increase (compared with a flatter shot: stay the same)", False),
    # a relative clause after the compared thing ("unlike X, which ...") is about it too, to its end
    ("gauge_reading", "no; new value 85", "No, new value 85, unlike the pressure gauge before, which went over the top", True),
    ("gear_train", "stay the same; direction unchanged",
     "Stays the same, unlike the idler, which now turns slower; direction unchanged", True),
    ("gear_train", "stay the same; direction unchanged",
     "Unlike the idler, which stays the same, D slows down; direction unchanged", False),
]


@pytest.mark.parametrize(("rule", "key", "answer", "accept"), CONTRASTS)
def test_a_contrast_is_context_not_the_answer(rule, key, answer, accept) -> None:
    assert verdict(rule, key, answer).accept is accept


def test_a_contrast_ends_where_its_clause_ends() -> None:
    # outside a parenthesis the contrast stops at the comma: what follows is the answer again
    assert not verdict("projectile_motion", "increase", "Unlike before, it stays the same").accept
    # a contrast clause does not swallow the next sentence
    assert not verdict("gear_train", "decrease; direction unchanged",
                       "Unlike B it slows down. D speeds up; direction unchanged").accept


def test_each_claim_names_its_role() -> None:
    found = roles("gear_train", "decrease; direction unchanged",
                  "Unlike gear B, which speeds up, D speeds up - no wait, D slows down; direction unchanged")
    assert ("slows down", "answer") in found
    assert ("direction unchanged", "answer") in found
    assert ("speeds up", "corrected") in found
    assert ("speeds up", "contrast") in found  # B's: its aside stays inside the contrast
    compared = roles("surface_topology_l4", "0; orientable",
                     "0; orientable (unlike what a quick guess suggests: -4; orientable)")
    assert [role for words, role in compared if "-4" in words] == ["contrast"]
    assert [role for words, role in compared if words == "0"] == ["answer"]
    asked = roles("gear_train", "decrease; direction unchanged",
                  "Would D speed up, slow down or stay the same? It slows down; direction unchanged")
    assert any(role == "question restated" for _, role in asked)


COMPASS_A = "A; projected endpoint is closest to A (100.1 map units away; bearing difference 7.7 degrees)"
COUNTERFACTUALS = [
    # what would hold only in a supposed world is context; the answer is what is said of this one
    ("fbd", "yes", "Yes; it would only stay put if the friction coefficient were at least 0.84", True),
    ("surface_topology_l4", "2; orientable", "χ = 2; orientable — it would only drop to 0 if a handle were attached", True),
    ("surface_topology_l4", "0; non-orientable",
     "0; non-orientable (it would be a torus, and orientable, only if that pair were glued without the flip)", True),
    # ... and the supposition ends where the model concludes: "so" speaks of the real case again
    ("surface_topology_l4", "2; orientable", "it would only be 2 if no handle were attached, so χ = 0; orientable", False),
    # "if X were Y, Z would ..., but ...": the supposition and its consequence are set aside by the
    # turn back to the real case (round 6's counterfactuals)
    ("compass_bearing", COMPASS_A,
     "A — if the bearing were 180° instead, B would be nearest, but at the given bearing it is closest to A.", True),
    ("compass_bearing", COMPASS_A,
     "B — if the bearing were 180° instead, A would be nearest, but at the given bearing it is closest to B.", False),
    ("gear_train", "stay the same; direction unchanged",
     "If A were the driver D would slow, but A is an idler here, so D's speed stays the same and direction is unchanged", True),
    ("projectile_motion", "hits; at 9.6 m",
     "If it were launched 2 m/s faster it would clear, but as it is it hits, at 9.6 m.", True),
    # "if ... would ..." beside a plain value of the same kind, before or after it, with no turn
    # word: the supposition is set aside ("; as drawn", "; right now", "clears ...; if ...")
    ("gauge_reading", "yes; new value 125",
     "If the maximum were 150 it would not exceed; as drawn (max 100) it does — new value 125", True),
    ("gauge_reading_l4", "no", "If the needle rose another 15 it would be in the red; right now it is safe.", True),
    ("projectile_motion", "clears; by 26.2 m", "Clears by 26.2 m; if the wall were 40 m tall it would hit it", True),
    ("surface_topology_l4", "-2; orientable", "If it had one handle χ would be 0; with two handles χ = -2; orientable", True),
    ("surface_topology_l4", "0; orientable", "If it had one handle χ would be 0; with two handles χ = -2; orientable", False),
    # ... but "V1 if ..., V2 otherwise" stays two values offered, and a supposition alone (the
    # question's own premise restated) is the answer, under its condition
    ("projectile_motion", "clears; by 26.2 m", "Clears by 26.2 m if g = 9.8, otherwise it would hit", False),
    ("gear_train", "decrease; direction unchanged",
     "If A's tooth count were doubled, D would slow down; direction unchanged", True),
    # what an indefinite other object would give ("a torus would be 0") is no claim about this one
    ("surface_topology_l4", "2; orientable", "2; orientable, like a sphere; a torus would be 0", True),
    ("surface_topology_l4", "0; orientable", "2; orientable, like a sphere; a torus would be 0", False),
    ("physical_stability_l4", "tips between block B and block A", "A would hold C, but B slides off A", True),
    # "had X been Y" is a supposition as "if X were Y" is
    ("compass_bearing", COMPASS_A, "A; had the bearing been 180°, B would have been nearest", True),
    ("compass_bearing", COMPASS_A, "B; had the bearing been 180°, A would have been nearest", False),
    # no modal consequence, or no turn back: the condition's claims still count
    ("compass_bearing", COMPASS_A, "If the bearing is as given, B, but I am not sure; A.", False),
    ("gear_train", "stay the same; direction unchanged",
     "If A were the driver, D would slow down", False),
]


@pytest.mark.parametrize(("rule", "key", "answer", "accept"), COUNTERFACTUALS)
def test_a_counterfactual_is_context(rule, key, answer, accept) -> None:
    assert verdict(rule, key, answer).accept is accept


def test_a_counterfactual_names_its_role() -> None:
    found = roles("surface_topology_l4", "2; orientable", "χ = 2; orientable — it would only drop to 0 if a handle were attached")
    assert [role for words, role in found if "0" in words and "2" not in words] == ["counterfactual"]
    turned = roles("compass_bearing", COMPASS_A, "A — if the bearing were 180° instead, B would be nearest, but it is A.")
    assert sorted(role for _, role in turned) == ["answer", "answer", "counterfactual"]


# Found by the behavioural matrix (issue 33, item 5): each wording read once, for every rule.
@pytest.mark.parametrize(
    "rule, key, answer, accept",
    [
        # a number said in a contrast is not the answer's (the claim layer's context spans)
        ("gauge_reading_l4", "yes; exceeds threshold by 1",
         "yes; exceeds threshold by 1 (unlike what a quick guess suggests: yes; exceeds threshold by 0.5)", True),
        ("gauge_reading_l4", "yes; exceeds threshold by 1", "yes; exceeds threshold by 0.5, not by 1", False),
        ("projectile_motion", "clears; by 2.6 m",
         "clears; by 2.6 m (unlike what a quick guess suggests: clears; by 1.0 m)", True),
        # ... and where the contrast holds the only number, it is still no answer of the model's
        ("projectile_motion", "clears; by 2.6 m", "clears (unlike the first throw, which cleared by 2.6 m)", False),
        # a correction inside a contrast corrects the contrast, not the answer
        ("optical_illusion", "yes; actually equal",
         "yes; actually equal (unlike what a quick guess suggests: no; element B is actually bigger)", True),
        ("optical_illusion", "no; element A is actually bigger",
         "no; element A is actually bigger (unlike what a quick guess suggests: yes; actually equal)", True),
        # a second answer after a correction, ", or" or "otherwise" reads a kind's own value word
        # as that kind's, not as the topic of the claim before it
        ("gear_train", "increase; direction unchanged",
         "increase; direction unchanged - no wait, stay the same; direction unchanged", False),
        ("gear_train", "stay the same; direction unchanged",
         "decrease; direction unchanged - no wait, stay the same; direction unchanged", True),
        ("gear_train", "increase; direction unchanged",
         "increase; direction unchanged, or stay the same; direction unchanged", False),
        ("gear_train", "increase; direction unchanged",
         "increase; direction unchanged if the figure is to scale, otherwise stay the same; direction unchanged", False),
        ("gear_train", "increase; direction unchanged", "faster; direction reversed - sorry, unchanged", True),
        # a line that ends with "?" asks its last sentence
        ("projectile_motion", "clears; by 2.6 m", "clears; by 2.6 m?", False),
        ("fbd", "right (0 degrees; 0=right, 90=up)", "right (0 degrees; 0=right, 90=up)?", False),
        ("compass_bearing", "B; projected endpoint is closest to B (60.0 map units away; bearing difference 30.0 degrees)",
         "B; projected endpoint is closest to B (60.0 map units away; bearing difference 30.0 degrees)?", False),
        # an angle in words, with its unit
        ("fbd", "direction (247 degrees; 0=right, 90=up)", "direction (two hundred forty-seven degrees; 0=right, 90=up)", True),
        ("fbd", "direction (247 degrees; 0=right, 90=up)", "direction (two hundred forty-five degrees)", False),
    ],
)
def test_matrix_wordings_are_read_for_every_rule(rule: str, key: str, answer: str, accept: bool) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, f"ANSWER: {answer}")
    assert verdict.accept is accept, verdict.reason


@pytest.mark.parametrize(
    ("rule", "key", "answer", "accept"),
    [
        ("fbd", "direction (344.1 degrees; 0=right, 90=up)", "344.1 deg prob.", False),
        ("fbd", "direction (344.1 degrees; 0=right, 90=up)", "344.1 deg, prolly", False),
        ("fbd", "direction (344.1 degrees; 0=right, 90=up)", "344.1 deg (problem solved)", True),
    ],
)
def test_abbreviated_hedges_hedge(rule, key, answer, accept) -> None:
    assert verdict(rule, key, answer).accept is accept
