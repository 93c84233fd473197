"""The second reading of an answer line (issue 23): each sign it gives, on a case it must mark and
on a case it must leave alone.

The verdict each case is compared with is given here, not taken from the rule, so a test checks
the sign and not whatever the rule reads today; the rule supplies only its data (components,
declared values, reasons) and its grammar's tree of the line.
"""

from __future__ import annotations

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.reading.ast import Leaf, Node
from keyaudit.engine.rule_language.rules.rule import ANSWER_UNPARSEABLE, load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer, Verdict, clean_answer
from keyaudit.engine.rule_language.scoring.second_reading import (
    Part,
    SecondReading,
    _limits,
    parts_of,
)

_SCORERS: dict[str, Scorer] = {}


def scorer(rule: str) -> Scorer:
    if rule not in _SCORERS:
        _SCORERS[rule] = Scorer(load_rule(resolve_rule_path(rule)))
    return _SCORERS[rule]


def doubts(rule: str, answer: str, accept: bool, reason: str = "", values: dict | None = None) -> list[str]:
    """The second reading's doubts on ``answer`` for the verdict (accept, reason, values)."""
    s = scorer(rule)
    text = clean_answer(answer, s.rule.answer_format)
    try:
        tree = s._parse_answer(text)
    except Exception:  # noqa: BLE001 - a line the grammar cannot read has no tree
        tree = None
    return SecondReading.of(s.rule).doubts(text, accept, reason, tree, values or {})


def has(found: list[str], words: str) -> bool:
    return any(words in d for d in found)


# ---- what it reads from the rule --------------------------------------------------------------


def test_parts_come_from_components_and_declared_values() -> None:
    parts = {p.name: p for p in SecondReading.of(scorer("gear_train").rule).parts}
    assert parts["speed"].kind == "choice"
    assert parts["speed"].values == ("increase", "decrease", "stay the same")
    assert parts["speed"].reasons["hedged"] == "hedged"  # the component's own reason name
    # a claim kind with declared values and no component is matched to the reasons by name
    source = "[rule]\nname = 'x'\n"
    (status,) = parts_of(source, {"status": ("stable", "unstable"), "joint": ()},
                         ["status missing", "wrong status", "status ambiguous", "joint missing"])
    assert status.reasons == {"missing": "status missing", "wrong": "wrong status", "conflict": "status ambiguous"}


def test_mentions_of_each_kind() -> None:
    choice = Part("o", "o", "choice", ("orientable", "non-orientable"))
    assert [v for *_, v in choice.mentions("non-orientable, not orientable")] == ["non-orientable", "orientable"]
    speed = Part("s", "s", "choice", ("increase", "decrease", "stay the same"))
    assert [v for *_, v in speed.mentions("it increases; decreased; the same")] == ["increase", "decrease", "stay the same"]
    number = Part("n", "n", "number", ())
    assert [v for *_, v in number.mentions("clears by five metres, 4.5 m")] == ["five", "4.5"]
    letter = Part("l", "l", "letter", ("A", "B", "C", "D"))
    assert [v for *_, v in letter.mentions("$C$ or d, a letter, I think")] == ["C", "D"]
    pair = Part("j", "j", "pair", ())
    assert [v for *_, v in pair.mentions("the C–B joint or D on C")] == ["C-B", "D-C"]


# ---- alternatives -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "answer", "values"),
    [
        ("gear_train", "It either increases or decreases; direction unchanged.", {"speed": "increase"}),
        ("gauge_reading", "Yes, 105 or 110%.", {"verdict": "yes", "value": 105.0}),
        ("gauge_reading", "Yes, somewhere between 105 and 110 %", {"verdict": "yes", "value": 105.0}),
        ("projectile_motion", "Clears with 10.8–11.3 m to spare", {"height": 10.8}),
        ("projectile_motion", "Hits the wall at 6.8 m by one estimate, 6.1 m by another", {"height": 6.1}),
        ("compass_bearing", "D using the scale bar, or A using pixel coordinates.", {"letter": "D"}),
    ],
)
def test_alternatives_mark_a_single_value(rule: str, answer: str, values: dict) -> None:
    assert has(doubts(rule, answer, True, "", values), "alternatives"), answer


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        ("gear_train", "Neither increase nor decrease: it stays the same; direction unchanged."),
        ("compass_bearing", "D, not B or C."),
        ("fbd", "270° or, equivalently, −90°"),
        ("gauge_reading", "No. 15 + 12.5 = 27.5 °C, well inside the 0–50 range."),
        ("gauge_reading", "yes, 120-100=20"),
        ("gear_train", "Decrease. Increase would need a smaller A."),  # two sentences
    ],
)
def test_alternatives_leave_denials_references_and_arithmetic(rule: str, answer: str) -> None:
    assert not has(doubts(rule, answer, True), "alternatives"), answer


def test_alternatives_are_not_looked_for_in_a_conflict() -> None:
    assert not has(doubts("gear_train", "increase or decrease", False, "speed conflict"), "alternatives")


# ---- hedges -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        ("compass_bearing", "My best guess is B."),
        ("physical_stability", "Stable, if I read the dimensions right."),
        ("physical_stability", "Unstable, not 100% sure, at the joint between D and C."),
        ("compass_bearing", "Presumably C, given the ~81° bearing difference."),
    ],
)
def test_an_uncounted_hedge_marks_an_acceptance(rule: str, answer: str) -> None:
    assert has(doubts(rule, answer, True), "hedge"), answer


@pytest.mark.parametrize(
    ("rule", "answer", "accept", "reason"),
    [
        ("optical_illusion", "Yes — in the illusion A appears longer; in reality B is longer.", True, ""),
        ("compass_bearing", "I'm sure it is B.", True, ""),
        ("compass_bearing", "Probably B.", False, "letter hedged"),  # the rule counted it
    ],
)
def test_hedge_words_that_are_content_or_counted(rule: str, answer: str, accept: bool, reason: str) -> None:
    assert not has(doubts(rule, answer, accept, reason), "hedge"), answer


# ---- question echo ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "answer", "reason"),
    [
        ("gauge_reading_l4", "Danger zone reached? No.", "status hedged"),
        ("gear_train", "Decrease. Direction? Unchanged.", "speed conflict"),
        ("compass_bearing", "Of A, B, C or E, which is closest? C.", "letter missing"),
        ("physical_stability_l4", "Will it tip? Yes — B slides off A.", "status hedged"),
    ],
)
def test_a_restated_question_marks_the_rejection_it_may_cause(rule: str, answer: str, reason: str) -> None:
    assert has(doubts(rule, answer, False, reason), "restates a question"), answer


@pytest.mark.parametrize(
    ("rule", "answer", "reason"),
    [
        ("gear_train", "Same speed? Direction unchanged.", "hedged"),  # a value asked: a hedge
        ("gear_train", "Speed stays the same (?) — direction unchanged.", "hedged"),
        ("physical_stability", "Unstable? B seems to overhang A.", "status hedged"),
    ],
)
def test_a_questioned_value_is_no_echo(rule: str, answer: str, reason: str) -> None:
    assert not has(doubts(rule, answer, False, reason), "restates a question"), answer


def test_an_echo_never_marks_an_acceptance() -> None:
    assert not has(doubts("gauge_reading_l4", "Danger zone reached? No.", True), "restates a question")


# ---- unread values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "answer", "reason"),
    [
        # (issue 33 reads "closest to d" and "$C$" now: these two are still left unread)
        ("compass_bearing", "Landmark “B” (about 77 units from the endpoint, bearing off by ~10°)", "letter missing"),
        ("compass_bearing", "The closest landmark to the endpoint is the A, distance is about 340 units", "letter missing"),
        ("projectile_motion", "It clears it by five.", "height missing"),  # no unit: left unread
    ],
)
def test_a_value_left_unread_marks_a_missing_component(rule: str, answer: str, reason: str) -> None:
    assert has(doubts(rule, answer, False, reason), "unread"), answer


@pytest.mark.parametrize(
    ("rule", "answer", "reason"),
    [
        ("surface_topology_l4", "χ = 2 - 2g; orientable", "euler missing"),  # inside arithmetic
        # the seed rule reads its status from the opening only: a status later is not unread
        ("physical_stability", "The stack is unstable — B's centroid lies past A's edge.", "status missing"),
        ("compass_bearing", "the endpoint is closest to d", "wrong letter"),  # not a missing verdict
    ],
)
def test_values_the_rule_may_ignore_are_not_unread(rule: str, answer: str, reason: str) -> None:
    assert not has(doubts(rule, answer, False, reason), "unread"), answer


# ---- corrections ------------------------------------------------------------------------------


def test_a_correction_that_gives_another_value() -> None:
    found = doubts("gauge_reading", "No; new value 180 — wait, no, 190 km/h", True, "",
                   {"verdict": "no", "value": 180.0})
    assert has(found, "after a correction"), found
    found = doubts("gauge_reading", "Yes — actually no, 115 psi", True, "", {"verdict": "yes", "value": 115.0})
    assert has(found, "after a correction the line gives the verdict 'no'"), found


@pytest.mark.parametrize(
    ("answer", "values"),
    [
        ("decrease — no wait, increase; same direction", {"speed": "increase", "direction": "unchanged"}),
        ("Decrease rather than increase; direction unchanged.", {"speed": "decrease", "direction": "unchanged"}),
        ("D reverses — sorry, correction: D does not reverse. Speed stays the same.",
         {"speed": "stay the same", "direction": "unchanged"}),
    ],
)
def test_a_correction_read_as_the_rule_read_it(answer: str, values: dict) -> None:
    assert not has(doubts("gear_train", answer, True, "", values), "after a correction"), answer


def test_a_conflict_in_a_line_that_corrects_itself() -> None:
    found = doubts("physical_stability_l4", "It tips — no wait, recomputing, it's stable.", False, "status conflict")
    assert has(found, "corrects itself"), found
    assert not has(doubts("physical_stability_l4", "It tips or it is stable.", False, "status conflict"),
                   "corrects itself")


# ---- a conflict whose other value is only an aside --------------------------------------------


@pytest.mark.parametrize(
    ("rule", "answer", "reason"),
    [
        ("surface_topology_l4", "$\\chi=-4$, orientable (a double torus would have $-2$)", "euler conflict"),
        ("surface_topology_l4", "0; the Klein bottle is non-orientable (the torus would be orientable)",
         "orientability conflict"),
        ("compass_bearing", "B is nearer than C, and C is nearer than D, so B.", "letters conflict"),
    ],
)
def test_a_conflict_where_the_line_gives_one_answer(rule: str, answer: str, reason: str) -> None:
    assert has(doubts(rule, answer, False, reason), "own answer"), answer


@pytest.mark.parametrize(
    ("rule", "answer", "reason"),
    [
        ("compass_bearing", "D (or B).", "letters conflict"),
        ("gauge_reading", "No; new value 65 psi (or 50 psi if the 25% is taken of the reading).", "values conflict"),
        ("gear_train", "It increases, or maybe decreases.", "speed conflict"),
    ],
)
def test_an_aside_offering_another_answer_is_a_conflict(rule: str, answer: str, reason: str) -> None:
    assert not has(doubts(rule, answer, False, reason), "own answer"), answer


# ---- the claim layer's limits -----------------------------------------------------------------


def test_an_or_with_nothing_read_after_it() -> None:
    found = doubts("projectile_motion", "It either just clears or clips the top — margin ~0.8 m", True, "",
                   {"outcome": "clears"})
    assert has(found, "nothing after it ('or clips')"), found
    for answer in ("No, B is bigger either way.", "No. A is larger than B with or without the circles."):
        assert not has(doubts("optical_illusion", answer, True), "nothing after it"), answer


def test_a_negation_that_denies_nothing() -> None:
    found = doubts("optical_illusion", "My answer changes and it doesn't: B is bigger.", True, "",
                   {"change": "yes", "size": "B"})
    assert has(found, "denies nothing"), found
    # a conflict is what such an elided denial reads as already ("its direction would not")
    assert not has(doubts("gear_train", "D's speed changes, but its direction does not.", False, "speed conflict"),
                   "denies nothing")


def _leaf(kind: str, text: str, at: int) -> Leaf:
    return Leaf(kind, text, at, at + len(text))


def test_a_negation_left_as_a_plain_word() -> None:
    source = "it doesnt increase"
    claim = Node("speed", [_leaf("UP", "increase", 10)], source, 10, 18)
    items = [_leaf("WORD", "it", 0), _leaf("WORD", "doesnt", 3), claim]
    assert _limits(items, frozenset({"speed"}), True) == ["a negation was left as a plain word beside a claim ('doesnt')"]
    # the same word read as a negation, or a plain word in a clause without claims
    assert _limits([items[0], _leaf("NEG", "doesnt", 3), claim], frozenset({"speed"}), True) == []
    other = [_leaf("WORD", "endpoint", 0), _leaf("BOUNDARY", ";", 8), claim]
    assert _limits(other, frozenset({"speed"}), True) == []


def test_negations_at_the_edge_of_their_window_or_without_a_claim_are_no_sign() -> None:
    """Issue 39 dropped two signs that, on every labelled set tuned on, marked right verdicts only
    (3 and 19 of them, no wrong one): a negation 3-6 words before its claim, and, on a verdict
    that something is missing, a negation with no claim in its clause."""
    source = "D is not in my honest view going to slow down"
    claim = Node("speed", [_leaf("DOWN", "slow down", 36)], source, 36, 45)
    words = [_leaf("WORD", w, source.index(w)) for w in ("in", "my", "honest", "view", "going", "to")]
    items = [_leaf("WORD", "D", 0), _leaf("WORD", "is", 2), _leaf("NEG", "not", 5), *words, claim]
    assert _limits(items, frozenset({"speed"}), True) == []
    s = scorer("gauge_reading")
    reading = SecondReading.of(s.rule)
    text = "it would not surpass the maximum; 35 C"
    tree = s._parse_answer(clean_answer(text, s.rule.answer_format))
    assert not has(reading.doubts(text, False, "value missing", tree, {}), "found no claim")


def test_a_four_letter_value_is_read_by_its_stem() -> None:
    status = Part("status", "status", "choice", ("stable", "tips"))
    assert [v for *_, v in status.mentions("it tipped over; stable? tipping")] == ["tips", "stable", "tips"]
    same = Part("speed", "speed", "choice", ("increase", "stay the same"))
    assert same.mentions("a sample of the same") == [(16, 20, "stay the same")]


def test_an_unparseable_line_is_uncertain() -> None:
    s = Scorer(scorer("gear_train").rule)  # a scorer of its own: the verdict below is made up
    verdict = Verdict(False, ANSWER_UNPARSEABLE, {}, "increase; direction unchanged")
    assert "the answer grammar could not read the line" in s.line_doubts("increase; direction unchanged", verdict)


def test_the_second_reading_runs_on_every_verdict_and_never_changes_one() -> None:
    s = Scorer(scorer("physical_stability").rule)
    key = ("stable; after removing block E, every cumulative centre of mass stays within its "
           "supporting base")
    verdict = s.score(key, "ANSWER: Stable, if I read the dimensions right.")
    bare = s.score(key, "ANSWER: Stable, if I read the dimensions right.", certainty=False)
    assert (verdict.accept, verdict.reason, verdict.values) == (bare.accept, bare.reason, bare.values)
    # the rule's [certainty] when ("status != 'stable'") limits the material signs, not this one
    if verdict.accept:
        assert any("hedge" in d for d in verdict.uncertain), verdict.uncertain
