"""Certainty from the reading's own decisions (issue 39, item 1): each decision mark names the
decision a verdict rests on, and a plain line is not marked; the measured figures on issue 33's
fresh sets are pinned with floors."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

DATA = Path(__file__).parent / "data" / "phrasings"


@functools.cache
def scorer(rule: str) -> Scorer:
    return Scorer(load_rule(resolve_rule_path(rule)))


def marks(rule: str, key: str, answer: str) -> tuple[bool, str, tuple[str, ...]]:
    verdict = scorer(rule).score(key, f"ANSWER: {answer}")
    return verdict.accept, verdict.reason, verdict.uncertain


GEAR = "decrease; direction unchanged"
STABLE = "stable"
TIPS = "tips between block C and block B"


@pytest.mark.parametrize(
    ("rule", "key", "answer", "reason", "mark"),
    [
        # a word read through one edit, where the line read without it gets the other verdict
        ("gear_train", GEAR, "D's speed decreses, direction unchanged", "", "read 'decreses' as 'decreases'"),
        # a conflict read where nothing on the line offers a second value: a label read as one
        ("physical_stability_l4", STABLE, "- Status: stable - Failing joint: none", "status conflict",
         "the status conflict was read, but nothing on the line offers a second value"),
        # a component missing while a word one letter off one of its values stands on the line
        ("fbd", "yes", "yse, it slids down", "slip missing",
         "the slip was read as missing, but 'yse' is one letter off 'yes'"),
        # an acceptance whose value was read from inside a hyphenated word
        ("physical_stability_l4", STABLE, "stable-ish; D is right at the edge of C", "",
         "the value 'stable' was read inside 'stable-ish'"),
    ],
)
def test_a_verdict_resting_on_a_weak_decision_is_marked(rule: str, key: str, answer: str, reason: str | None, mark: str) -> None:
    accepted, got, uncertain = marks(rule, key, answer)
    if reason is not None:
        assert got == reason
    assert any(mark in u for u in uncertain), uncertain


@pytest.mark.parametrize(
    ("rule", "key", "answer"),
    [
        ("gear_train", GEAR, "D's speed decreases, direction unchanged"),
        ("physical_stability_l4", STABLE, "Status: stable"),
        ("fbd", "yes", "yes, it slides down"),
        ("physical_stability_l4", TIPS, "it tips between block C and block B"),
        # two values offered with "or": the conflict has its cue
        ("physical_stability_l4", STABLE, "stable or it tips"),
        # a typo that decides nothing ("dnager" or not, the answer is yes by 0.5)
        ("gauge_reading_l4", "yes; exceeds threshold by 0.5", "yes its in the dnager zone by 0.5"),
    ],
)
def test_plain_lines_are_not_marked(rule: str, key: str, answer: str) -> None:
    assert not [u for u in marks(rule, key, answer)[2] if "offers a second value" in u
                or "one letter off" in u or "read inside" in u], marks(rule, key, answer)


def test_a_rule_asking_for_exact_words_gets_no_near_word_mark() -> None:
    """physical_stability's status is exactly stable or unstable: 'stabel' is rightly missing."""
    key = ("unstable; after removing block D, the cumulative center of mass at the joint between "
           "block C and block B lies outside its supporting base")
    accepted, reason, uncertain = marks("physical_stability", key, "stabel")
    assert (accepted, reason) == (False, "status missing")
    assert not any("one letter off" in u for u in uncertain)


def test_the_decision_marks_never_change_a_verdict() -> None:
    s = Scorer(load_rule(resolve_rule_path("physical_stability_l4")))
    for answer in ("- Status: stable - Failing joint: none", "stable-ish", "yse"):
        with_marks = s.score(STABLE, f"ANSWER: {answer}")
        without = s.score(STABLE, f"ANSWER: {answer}", certainty=False)
        assert (with_marks.accept, with_marks.reason) == (without.accept, without.reason)


@functools.cache
def fresh_figures(round_: str) -> dict[str, tuple[int, int, int, int]]:
    """(rows, marked, wrong, wrong marked) per split of one round of fresh sets."""
    out: dict[str, list[int]] = {"tune": [0, 0, 0, 0], "holdout": [0, 0, 0, 0]}
    for path in sorted(DATA.glob(f"*_{round_}a.jsonl")) + sorted(DATA.glob(f"*_{round_}b.jsonl")):
        s = scorer(path.name.removesuffix(".jsonl").rsplit("_", 1)[0])
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            verdict = s.score(row["key"], row["response"])
            f = out[row["split"]]
            wrong = verdict.accept != row["accept"]
            f[0] += 1
            f[1] += bool(verdict.uncertain)
            f[2] += wrong
            f[3] += wrong and bool(verdict.uncertain)
    return {k: tuple(v) for k, v in out.items()}  # type: ignore[misc]


@pytest.mark.parametrize(
    ("round_", "split", "wrong_marked", "marked_share"),
    [
        # measured at issue 39: r4 tune 25 of 33 wrong marked, 9.9% marked (before: 20 of 33, 15.2%);
        # after the reading fixes of d8d7171/ea268ae (misses fixed, some of them marked): 23 of 31, 9.4%
        ("r4", "tune", 23, 0.102),
        # r4 holdout (never looked at): 12 of 24 at 12.0%; after those fixes 11 of 23 at 11.4%;
        # after physical_stability read corrections and "otherwise" (three marked misses fixed,
        # r4a-022/-025, r4b-039): 8 of 20 at 11.7%
        ("r4", "holdout", 8, 0.122),
        # r5, never looked at for the marks: tune 28 of 46 at 8.7%, holdout 8 of 19 at 8.6%; after
        # the reading fixes made from r5 tune rows: tune 24 of 40 at 8.2%, holdout 7 of 18 at 8.1%;
        # after physical_stability's corrections (r5a-040, r5b-020 fixed, one marked): 6 of 16 at 8.1%
        # (r5 tune: 23 of 39 once the `pair` kind read "joint = D on C", r5a-021, a marked miss);
        # after the stress matrix's reading fixes (issue 33, item 5) two more marked misses were
        # read right: tune 22 of 37; after round 6's reading changes (two marked misses read
        # right: r5a-024, r5a-027) 20 of 35 at 8.1%; after a question labelling its answer
        # ("Which is bigger? Neither.", r5b-026, a marked miss read right) 19 of 34 at 8.1%
        # after the one-line layouts and relative clauses in contrasts (r5b-039, marked, read right)
        # 18 of 33
        # after numbers in words before a unit (r5a-044, marked, read right) 17 of 32
        ("r5", "tune", 17, 0.09),
        ("r5", "holdout", 6, 0.09),
        # r6, never looked at for the marks (after the matrix fixes and the pair kind): tune 23 of
        # 38 wrong marked at 12.1% of verdicts marked, holdout 6 of 13 at 10.4%; after the reading
        # changes made from its tune rows (nine tune misses read right, two of them marked; one
        # new unmarked miss, r6a-001): tune 21 of 29 at 11.8%, holdout 6 of 11 at 10.4%; after the
        # labelling questions and keyboard typos (five tune misses read right, four of them marked)
        # tune 17 of 24 at 11.6%
        # ... and after the one-line layouts and relative clauses in contrasts (fbd-r6b-032,
        # surface_topology_l4-r6b-031, one of them marked, read right) 16 of 21
        ("r6", "tune", 16, 0.122),
        # r6 holdout: 5 of 10 once a supposition beside a plain value was set aside (r6a-025, a
        # marked miss, read right)
        ("r6", "holdout", 5, 0.105),
        # r7, never looked at for the marks, after the suppositions set aside (four r7 tune misses
        # read right): tune 17 of 31 wrong marked at 7.6% of verdicts marked, holdout 7 of 10 at 10.6%
        # ... and after the one-line layouts and relative clauses in contrasts (five tune misses read
        # right, three of them marked) 14 of 26 at 7.0%
        # ... and after hypotheticals of indefinite objects, "had ... been", abbreviated hedges and
        # gear_train on the change kind (six tune misses read right, one of them marked) 13 of 20
        # ... and after numbers in words before a unit (two tune misses read right, one marked) 12 of 18
        ("r7", "tune", 12, 0.08),
        ("r7", "holdout", 7, 0.11),
    ],
)
def test_certainty_on_the_fresh_sets(round_: str, split: str, wrong_marked: int, marked_share: float) -> None:
    """Floors at the figures measured when the decision marks came in: a change that marks
    fewer wrong verdicts, or more verdicts in all, fails here. Issue 39's target is 80% of wrong
    verdicts marked with at most 10% marked; these are the figures so far."""
    rows, marked, wrong, got = fresh_figures(round_)[split]
    assert got >= wrong_marked, (got, wrong)
    assert marked / rows <= marked_share, marked / rows
