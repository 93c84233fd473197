"""Verdicts that say how sure they are (issue 14): the signs, the measured floor on every labelled
set, and the bounds in `check`'s reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keyaudit.engine.load.locate import bundled_rule_names, resolve_rule_path
from keyaudit.engine.rule_language.rule import load_rule
from keyaudit.engine.rule_language.scoring import Scorer

DATA = Path(__file__).parent / "data" / "phrasings"
RULES = ("physical_stability", "gear_train", "gauge_reading", "physical_stability_l4", "gauge_reading_l4")
_SCORERS: dict[str, Scorer] = {}


def scorer(rule: str) -> Scorer:
    if rule not in _SCORERS:
        _SCORERS[rule] = Scorer(load_rule(resolve_rule_path(rule)))
    return _SCORERS[rule]


def labelled_rows() -> list[tuple[str, dict]]:
    rows = []
    for path in sorted(DATA.glob("*.jsonl")):
        rule = max((r for r in RULES if path.name.startswith(r)), key=len, default=None)
        if rule is None or rule not in bundled_rule_names():
            continue
        rows += [(rule, json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
    return rows


def test_uncertainty_finds_most_wrong_verdicts_and_flags_few() -> None:
    """Measured on every labelled set of the rules listed above (4,928 rows, with the fresh blind
    sets blind8/blind9, the L4 rules' dev and two blind sets, gauge_reading_l4_blind2 after
    tuning on it, and gauge_reading_dev after tuning on it): 21 of the 32 wrong verdicts are marked
    uncertain (66%; of the 15 that flip accept/reject, 10), 9.8% of all verdicts are. The floors
    below are those figures; a change that loses coverage or flags more fails here.
    (Before gauge_reading_dev: 4,668 rows, 25 of 37 (68%), 9.5%. The dev set's 260 rows add 43
    flagged verdicts, mostly bare values beside references; its tuning fixed five wrong verdicts of
    the older sets, four of them flagged, so the share of wrong verdicts flagged fell.)
    Coverage falls as fresh blind sets are added (3,114 rows before blind8/9: 15 of 17, 88%; with
    gauge_reading_l4_blind2 untuned, 29 of 49, 59%): the misreadings each new author finds are
    mostly ones no doubt signal covers yet."""
    rows = labelled_rows()
    total = flagged = wrong = wrong_flagged = 0
    for rule, row in rows:
        verdict = scorer(rule).score(row["key"], row["response"])
        total += 1
        flagged += bool(verdict.uncertain)
        if (verdict.accept, verdict.reason) != (row["accept"], row["reason"]):
            wrong += 1
            wrong_flagged += bool(verdict.uncertain)
    assert total >= 2_800
    assert wrong > 0 and wrong_flagged / wrong >= 0.65, (wrong_flagged, wrong)  # measured 0.656
    assert flagged / total <= 0.099, flagged / total  # measured 0.0984


@pytest.mark.parametrize(
    ("rule", "key", "answer", "why"),
    [
        # a statement the lexicon almost covers: its words are the rule's, no claim was read
        ("gear_train", "decrease; direction unchanged", "D: was 60 rpm, now 30 rpm; direction unchanged",
         "unread clause"),
        # a claim under a condition was counted
        ("gear_train", "increase; direction unchanged",
         "If A drives D directly, D turns faster; direction unchanged", "under a condition"),
        # a claim with no subject of its own, while another gear is named
        ("gear_train", "increase; direction unchanged",
         "C slows down; faster; direction unchanged", "without a subject"),
        # the rule's own [[uncertain]] clause (gauge: a bare number beside references)
        ("gauge_reading", "no; new value 65", "No; 65 (40 + 25% of 100)", "without a cue"),
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


def test_a_missing_component_found_outside_the_answer_line() -> None:
    key = "increase; direction unchanged"
    response = "D turns faster and keeps its direction.\nANSWER: D turns faster."
    verdict = scorer("gear_train").score(key, response)
    assert verdict.reason == "direction missing"
    assert any("last lines" in reason for reason in verdict.uncertain)


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
