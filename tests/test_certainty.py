"""Verdicts that say how sure they are (issue 14): the signs, the measured floor on every labelled
set, and the bounds in `check`'s reports."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from keyaudit.engine.load.locate import bundled_rule_names, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

DATA = Path(__file__).parent / "data" / "phrasings"
_SCORERS: dict[str, Scorer] = {}


def scorer(rule: str) -> Scorer:
    if rule not in _SCORERS:
        _SCORERS[rule] = Scorer(load_rule(resolve_rule_path(rule)))
    return _SCORERS[rule]


def rule_of(path: Path) -> str | None:
    """The bundled rule a labelled set belongs to (the longest rule name its file starts with)."""
    names = [r for r in bundled_rule_names() if path.name.startswith(f"{r}_") or path.name == f"{r}.jsonl"]
    return max(names, key=len, default=None)


def labelled_rows() -> list[tuple[str, dict]]:
    rows = []
    for path in sorted(DATA.glob("*.jsonl")):
        rule = rule_of(path)
        if rule is None or path.stem.endswith(("_r4a", "_r4b", "_r5a", "_r5b", "_r6a", "_r6b", "_r7a", "_r7b")):
            continue  # the fresh sets: tests/test_fresh_sets.py and tests/test_decision_certainty.py
        rows += [(rule, json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
    return rows


@dataclass
class Figures:
    """Certainty on a group of labelled rows: verdicts, marked ones, wrong ones (accept differs
    from the label; or, for ``_vr``, accept or reason differs) and the wrong ones marked."""

    rows: int = 0
    marked: int = 0
    wrong: int = 0
    wrong_marked: int = 0
    wrong_vr: int = 0
    wrong_vr_marked: int = 0


@functools.cache
def measured() -> dict[str, Figures]:
    """Figures per group: "holdout" (the blind12 rows kept apart from tuning), "sealed" (blind13,
    sealed until the signs were done) and "rest" (every other labelled row: the older sets and
    blind12's tune rows)."""
    groups = {"holdout": Figures(), "sealed": Figures(), "rest": Figures()}
    for rule, row in labelled_rows():
        verdict = scorer(rule).score(row["key"], row["response"])
        if str(row.get("id", "")).startswith("b13-"):
            group = "sealed"  # blind13: written after the signs, scored once, never tuned on
        else:
            group = "holdout" if row.get("split") == "holdout" else "rest"
        f = groups[group]
        f.rows += 1
        f.marked += bool(verdict.uncertain)
        if verdict.accept != row["accept"]:
            f.wrong += 1
            f.wrong_marked += bool(verdict.uncertain)
        if (verdict.accept, verdict.reason) != (row["accept"], row["reason"]):
            f.wrong_vr += 1
            f.wrong_vr_marked += bool(verdict.uncertain)
    return groups


def test_uncertainty_finds_most_wrong_verdicts_and_flags_few() -> None:
    """Measured on every labelled set of every bundled rule except blind12's holdout rows (9,585
    rows): 36 of the 39 verdicts whose accept differs from the label are marked uncertain (92%),
    and 51 of the 62 whose accept or reason differs (82%), while 6.5% of all verdicts are marked.
    Before issue 23's second reading (:mod:`keyaudit.engine.rule_language.scoring.second_reading`) and
    the pruning of low-yield signs: 20 of 39 (51%) and 30 of 62, with 11.0% marked. The floors
    below are the new figures, less a little for the rules others tune; a change that loses
    coverage or marks more fails here. (Most of these rows were tuned on: their remaining
    misreadings are the hard ones. The honest figure is the holdout test below.)"""
    f = measured()["rest"]
    assert f.rows >= 9_000
    # measured 0.923; 32 of 37 (0.865) once the `pair` kind read "unstable at C/B" as a joint: the
    # new unmarked miss is ps-288, a label disputed (tests/test_rule_physical_stability.py, DISPUTED)
    # that a sign for it would mark 80 right verdicts to catch; 30 of 35 (0.857) once a short
    # question labelled its answer and keyboard typos were read (b12-gear_train-007 and -105, one
    # of them a marked miss, read right); 27 of 33 (0.818) once numbers in words before a unit were
    # read (pm2-077, pm2-108, both marked, read right; gr11-152 read wrong, unmarked: the same
    # answer in digits always was)
    assert f.wrong > 0 and f.wrong_marked / f.wrong >= 0.81, (f.wrong_marked, f.wrong)
    # issue 39 pruned the signs that marked right verdicts only (measured on these rows and the
    # fresh r4 sets' tune rows): 0.729 of accept-or-reason misses marked (was 0.823), 4.9% marked
    # measured 0.729; 0.704 (38 of 54) after this round's fixes, which read right marked misses
    assert f.wrong_vr_marked / f.wrong_vr >= 0.70, (f.wrong_vr_marked, f.wrong_vr)
    assert f.marked / f.rows <= 0.052, f.marked / f.rows  # measured 0.049 (was 0.0650)


def test_uncertainty_on_rows_kept_apart_from_tuning() -> None:
    """blind12's holdout rows (714, kept apart: no sign was tuned on them; their misses were listed
    once, before issue 23's work began):
    11 of the 12 verdicts whose accept differs from the label are marked (92%; 16 of 20 whose
    accept or reason differs), with 8.7% of all verdicts marked. Before issue 23: 6 of 12 (50%),
    14.0% marked. Issue 23's target on blind sets: at least 80% of wrong verdicts marked with at
    most 10% of all verdicts marked."""
    f = measured()["holdout"]
    assert f.rows >= 700
    assert f.wrong > 0 and f.wrong_marked / f.wrong >= 0.8, (f.wrong_marked, f.wrong)  # measured 0.917
    assert f.marked / f.rows <= 0.075, f.marked / f.rows  # measured 0.071 since issue 39 (was 0.0868)


def test_uncertainty_on_the_sealed_set() -> None:
    """blind13 (1,152 rows, written after the answer components and sealed until issue 23's signs
    were finished, scored once): 6 of the 10 verdicts whose accept differs from the label are
    marked (60%), with 7.4% of all verdicts marked — under issue 23's 80% target on coverage, within
    its 10% on the marked share. Floors at the measured figures: a change that loses coverage or
    marks more fails here."""
    f = measured()["sealed"]
    assert f.rows >= 1_100
    # issue 39's pruning cost two of these (6 → 4 of 10) and took the marked share from 7.4% to
    # 5.1%: the signs it dropped marked right verdicts only on every set that may be looked at
    # round 6's reading changes read four of the ten right (JSON-object answers, a counterfactual),
    # two of them marked ones: 2 of the 6 left are marked
    assert f.wrong_marked >= 2 and f.wrong <= 6, (f.wrong_marked, f.wrong)
    assert f.marked / f.rows <= 0.055, f.marked / f.rows  # measured 0.051


@pytest.mark.parametrize(
    ("rule", "key", "answer", "why"),
    [
        # a statement the lexicon almost covers: its words are the rule's, no claim was read
        ("gear_train", "decrease; direction unchanged", "D: was 60 rpm, now 30 rpm; direction unchanged",
         "unread clause"),
        # a claim with no subject of its own, while another gear is named (on a rejection)
        ("gear_train", "decrease; direction unchanged",
         "D's direction stays the same; B and C slow down", "without a subject"),
        # physical_stability: an unstable answer offering alternatives
        ("physical_stability",
         "unstable; after removing block D, the cumulative center of mass at the joint between "
         "block C and block B lies outside its supporting base",
         "unstable; fails at the C-B or B-A joint", "alternatives"),
    ],
)
def test_signs_of_a_misreading(rule: str, key: str, answer: str, why: str) -> None:
    verdict = scorer(rule).score(key, f"Reasoning first.\nANSWER: {answer}")
    assert any(why in reason for reason in verdict.uncertain), verdict.uncertain


def test_the_conclusion_is_no_longer_read_but_a_value_left_unread_is() -> None:
    """A rejection for a missing component once read the response's conclusion as an answer; it
    marked 1.3% of verdicts (rightly missing) for misreadings the unread-value sign finds on the
    answer line itself."""
    key = "increase; direction unchanged"
    response = "D turns faster and keeps its direction.\nANSWER: D turns faster."
    verdict = scorer("gear_train").score(key, response)
    assert verdict.reason == "direction missing"
    assert not any("last lines" in reason for reason in verdict.uncertain)
    key = "D; projected endpoint is closest to D (409.0 map units away; bearing difference 3.0 degrees)"
    verdict = scorer("compass_bearing").score(key, "So D.\nANSWER: the endpoint is closest to d")
    if verdict.reason == "letter missing":  # the rule may come to read a lower-case letter
        assert any("'d' is on the line, unread" in reason for reason in verdict.uncertain), verdict.uncertain


@pytest.mark.parametrize(
    ("rule", "key", "answer", "marked"),
    [
        # an acceptance with a leftover clause that offers another value or a condition
        ("gear_train", "stay the same; direction unchanged",
         "Same speed; direction the same if C is an idler, opposite if C is compound.", True),
        # an acceptance with leftover commentary: no longer a sign (it marked 2% of verdicts)
        ("gear_train", "decrease; direction unchanged",
         "Decrease; direction unchanged (the idler just passes motion along).", False),
    ],
)
def test_leftover_clauses_on_an_acceptance(rule: str, key: str, answer: str, marked: bool) -> None:
    verdict = scorer(rule).score(key, f"ANSWER: {answer}")
    if not verdict.accept:
        pytest.skip("the rule no longer accepts this answer")
    assert any(r.startswith("unread clause") for r in verdict.uncertain) == marked, verdict.uncertain


@pytest.mark.parametrize(
    ("rule", "key", "answer"),
    [
        ("gear_train", "increase; direction unchanged", "Increase; direction unchanged"),
        ("gauge_reading", "no; new value 65", "No; new value 65"),
        ("physical_stability",
         "unstable; after removing block D, the cumulative center of mass at the joint between "
         "block C and block B lies outside its supporting base",
         "Unstable - C's centre of mass lies beyond B."),
    ],
)
def test_plain_answers_are_certain(rule: str, key: str, answer: str) -> None:
    verdict = scorer(rule).score(key, f"ANSWER: {answer}")
    assert verdict.accept and verdict.uncertain == ()


def test_signs_never_change_a_verdict() -> None:
    plain = Scorer(load_rule(resolve_rule_path("gear_train")))
    for rule, row in labelled_rows():
        if rule != "gear_train":
            continue
        verdict = plain.score(row["key"], row["response"])
        bare = plain.score_answer_text(row["key"], verdict.answer_text or "") if verdict.answer_text else verdict
        assert (verdict.accept, verdict.reason) == (bare.accept, bare.reason)


def test_check_reports_bounds(run_cli, tmp_path: Path) -> None:
    target = tmp_path / "audit.json"
    result = run_cli("check", "physical_stability", "--resamples", "200", "--json", str(target))
    assert result.code == 0, result.err
    data = json.loads(target.read_text())
    assert data["n_uncertain"] == sum(m["n_uncertain"] for m in data["models"]) > 0
    for m in data["models"]:
        low, high = m["structured_bounds"]
        assert low <= m["structured"] <= high
        assert len(m["uncertain"]) == m["n_uncertain"]
        assert all(entry["why"] for entry in m["uncertain"])
    for a in data["aggregates"]:
        b = a["bounds"]
        if b is None:
            continue
        for name in ("raw_after", "adjusted_after", "overall_after", "diff_after"):
            assert b[name][0] <= a[name if name != "diff_after" else "raw_after"] or name == "diff_after"
            assert b[name][0] <= b[name][1]
        assert b["diff_after"][0] <= a["diff_after"]["estimate"] <= b["diff_after"][1]
        assert b["raw_after"][0] <= a["raw_after"] <= b["raw_after"][1]
        assert a["verdict_could_change"] == any(v != a["diff_after"]["verdict"] for v in b["verdicts"])
    assert "uncertain" in result.out and "could change" in result.out
    # every model with an uncertain verdict gets bounds, accepted uncertain verdicts included
    uncertain_models = {m["model"] for m in data["models"] if m["n_uncertain"]}
    bounded = {a["model"] for a in data["aggregates"] if a["bounds"] is not None}
    assert uncertain_models == bounded
    counts = {a["model"]: a["bounds"]["n_uncertain"] for a in data["aggregates"] if a["bounds"]}
    for model in uncertain_models:
        assert counts[model] == sum(m["n_uncertain"] for m in data["models"] if m["model"] == model)


def test_an_accepted_uncertain_verdict_gives_bounds() -> None:
    """A model whose only uncertain verdict was accepted can still move down: it gets bounds."""
    from keyaudit.engine.audit import _aggregates
    from keyaudit.engine.reports.findings import Settings
    from keyaudit.engine.stats.aggregate import Outcome

    after = [
        Outcome("m", "d", f"i{n}", level, n < 2) for n in range(4) for level in (4, 5)
    ]
    low = list(after)
    # image i0 at L5 was accepted, but the verdict is uncertain: all wrong would reject it
    index = next(k for k, o in enumerate(after) if o.level == 5 and o.correct)
    low[index] = Outcome("m", "d", after[index].image, 5, False)
    baselines = {("d", 4): 0.0, ("d", 5): 0.0}
    (aggregate,) = _aggregates(
        (after, after, low, list(after)), baselines, baselines, Settings(resamples=50), None
    )
    assert aggregate.bounds is not None and aggregate.bounds.n_uncertain == 1
    assert aggregate.bounds.raw[0] < aggregate.raw_after == aggregate.bounds.raw[1]
