"""Held-out phrasings, written and labelled by authors who never saw the grammars or rules.

Each file in ``tests/data/phrasings/*_holdout*.jsonl`` holds full responses with the label a
careful auditor gives under the rule stated in the seed audit / the issue; every row must get
that verdict and reason. (A few rows carry a ``note`` where a label was revised after review.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keyaudit.engine.load.locate import bundled_rule_names, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

DATA = Path(__file__).parent / "data" / "phrasings"
FILES = {
    "physical_stability_holdout.jsonl": "physical_stability",
    "physical_stability_holdout2.jsonl": "physical_stability",
    "physical_stability_holdout3.jsonl": "physical_stability",
    "physical_stability_holdout4.jsonl": "physical_stability",
    "gear_train_holdout.jsonl": "gear_train",
    "gear_train_holdout2.jsonl": "gear_train",
    "gauge_reading_holdout.jsonl": "gauge_reading",
    "gauge_reading_holdout2.jsonl": "gauge_reading",
    # Blind sets of issue 10 (written without seeing grammars or tests; first figures in README).
    "physical_stability_blind5.jsonl": "physical_stability",
    "physical_stability_blind6.jsonl": "physical_stability",
    "gear_train_blind3.jsonl": "gear_train",
    "gauge_reading_blind3.jsonl": "gauge_reading",
    "gauge_reading_blind4.jsonl": "gauge_reading",
    "physical_stability_blind7.jsonl": "physical_stability",
    "gear_train_blind8.jsonl": "gear_train",
    "gauge_reading_blind8.jsonl": "gauge_reading",
    "physical_stability_blind8.jsonl": "physical_stability",
    "gear_train_blind9.jsonl": "gear_train",
    "gauge_reading_blind9.jsonl": "gauge_reading",
    "gauge_reading_devB.jsonl": "gauge_reading",
    # Blind sets of issue 13's rules (first figures in docs/rules/<rule>.md).
    "gauge_reading_l4_blind.jsonl": "gauge_reading_l4",
    "physical_stability_l4_blind.jsonl": "physical_stability_l4",
    "compass_bearing_blind.jsonl": "compass_bearing",
    "laser_mirror_blind.jsonl": "laser_mirror",
    "projectile_motion_blind.jsonl": "projectile_motion",
    "fbd_blind.jsonl": "fbd",
    "surface_topology_l4_blind.jsonl": "surface_topology_l4",
    # Second blind sets, written after tuning on the first ones and scored before any tuning on
    # them (figures in tests/data/phrasings/README.md); their misses are open known limits below.
    "compass_bearing_blind2.jsonl": "compass_bearing",
    "projectile_motion_blind2.jsonl": "projectile_motion",
    "gauge_reading_l4_blind2.jsonl": "gauge_reading_l4",
    "surface_topology_l4_blind2.jsonl": "surface_topology_l4",
    "optical_illusion_blind.jsonl": "optical_illusion",
    # A second development set of gear_train, written blind "in the wild" (tuned on: 88.2% → 100%).
    "gear_train_devB.jsonl": "gear_train",
    # Blind sets of this round: sealed until both rules were tuned on devA and devB, then scored
    # (first figures in tests/data/phrasings/README.md); gauge_reading was tuned on its set after.
    "gear_train_blind10.jsonl": "gear_train",
    "gauge_reading_blind10.jsonl": "gauge_reading",
    # Written last, after every fix of this round; scored before any tuning on them.
    "gear_train_blind11.jsonl": "gear_train",
    "gauge_reading_blind11.jsonl": "gauge_reading",
}
#: Development cases of the rules of issue 13, written by each rule's author from its spec:
#: ``<rule>_dev.jsonl`` (at least 60 rows, every reason of the rule), found by name.
DEV_FILES = {path.name: path.name.removesuffix("_dev.jsonl") for path in sorted(DATA.glob("*_dev.jsonl"))}
#: Rows the rules are known to get wrong, with why; strict xfail, so a fix is noticed.
KNOWN_LIMITS = {
    "psd-155": "LABEL DISPUTED (issue 33): 'After removing the top block, is the stack stable? "
    "unstable, B slides off A' was labelled status missing by the seed's first-token rule; the "
    "question restated is context now (reading/restated.py), so the answer starts at 'unstable'",
    "psd-165": "LABEL DISPUTED (issue 33): 'unstable; the C–B joint — no wait — the B–A joint' was "
    "labelled joints conflict (both joints counted); a correction's last claim stands now, so the "
    "answer names B–A, the key's joint: read as accept",
    "psc-029": "REASON DISPUTED (issue 33): 'the C–B joint fails — no wait, the D–C joint' was "
    "labelled joints conflict; a correction's last claim stands now, so the answer names D–C: "
    "rejected as joint wrong",
    "ho-246": "a second lower block joined by 'and also beyond A' after a relation's lower block "
    "is not read as a second failing pair",
    "h3-035": "'the C and B together have the center of mass which is not over the A': the relative "
    "clause ('which') ends the relation before 'not over the A'",
    "h3-152": "space-separated letters 'the B C D center of mass' are not read as one group",
    "h3-181": "'the resultant of the gravitational loads of blocks A and B' is not read as a centre "
    "of mass",
    "r2-043": "'(the increase is 25% of the range, i.e. 4 bar)': 4 is the increment, read as a value",
    "psb-061": "two pairs joined by 'or' in one joint phrase are read as one: labelled joints conflict, read as accept",
    "psd-013": "'D\u2013C joint: holds' \u2014 a joint said to hold after a colon is read as failing: labelled accept, read as joints conflict",
    "psd-180": "'not the C-B joint, which holds, but the B-A joint' \u2014 'which holds' is not attached to its joint: labelled accept, read as joints conflict",
    "psd-235": "'the C-on-B joint and the B|A joint hold' \u2014 a plural 'hold' is not attached to both joints: labelled accept, read as joints conflict",
    "gt8-051": "'direction the same if C is an idler, opposite if C is compound': a bare 'opposite' "
    "under a second condition is not read as a second direction claim: labelled direction "
    "conflict, read as accept",
    "gt8-024": "'the gear that drives D speeds up': a subject inside a restrictive relative clause "
    "('that drives D') becomes the subject of the main verb: labelled wrong direction, read as "
    "speed conflict",
    "gt8-163": "'clockwise or counter-clockwise' with no verb is not read as a direction claim: "
    "labelled direction conflict, read as direction missing",
    "gr8-058": "'it would read 250, maybe 260': ', maybe N' offers a second value (values "
    "conflict); the author read 'maybe' as a hedge first: labelled hedged",
    "ps8-048": "an ownerless centre of mass 'beyond the table edge' is not read as a ground "
    "statement: labelled ground only, read as joint missing",
    "gt9-122": "'A doesn't change speed, and neither does D': the elided claim about D is not "
    "read: labelled wrong speed, read as speed missing",
    "gr9-116": "'the increase is 50': an increment named after its number's noun is read as the "
    "value: labelled value missing, read as wrong value",
    "gt10-041": "'B and C both spin faster, and so does D': the elided claim about D is not read "
    "(the class of gt9-122): labelled accept, read as speed missing",
    "gr10-013": "'new value 25 psi — wait, 25% of the full 40 psi range is 10, so 30 psi': a "
    "correction followed by a calculation keeps both values: labelled accept, read as values conflict",
    "gr10-048": "'somewhere between 105 and 110 %': the unit after the second number makes it a "
    "percentage, and the plain 105 is preferred: labelled values conflict, read as accept",
    "gt11-101": "'counterclockwise instead of clockwise now': two absolute directions joined by "
    "'instead of' are not read as a reversal: labelled wrong direction, read as direction missing",
    "gr11-017": "'Yes, it stays within the 100 psi range at 55 psi': 'within the … range' is read as "
    "the scale's range, not as a verdict: labelled verdict conflict, read as wrong verdict",
    "gr11-142": "'Yes — actually no, 115 psi': the correction 'actually no' swallows the 'no', so the "
    "next claim is the value and 'Yes' stands: labelled wrong verdict, read as accept",
    "gr11-152": "'under the 40 psi maximum at twenty psi': once 'twenty psi' is written in digits (a "
    "number in words before a unit), 'maximum at 20' is read as the scale's top at 20, as the same "
    "answer written in digits always was: labelled accept, read as wrong value",
    # Misses of the second blind sets (see FILES): found, not yet fixed.
    "cb2-152": "'B is nearer than C, and C is nearer than D, so B': a chain of comparatives reads "
    "as two offered letters; reading it needs transitive comparison, not a phrase",
    "cb2-156": "'Is landmark C the most close one': inverted word order with 'most close'; a cue for "
    "it would also read questions as answers",
    "pm2-017": "second blind set, not yet tuned on: labelled accept, read as answer unparseable",
    "pm2-103": "second blind set, not yet tuned on: labelled accept, read as outcome missing",
    "g42-004": "'the question of exceeding a threshold does not apply': a mention of exceeding under 'does not apply' reads as a yes claim",
    "g42-114": "hedge 'doesn't appear to be a danger zone' on a no-zone phrasing the lexicon does not read; the bare 'so no' counts unhedged",
    "g42-119": "'Not in the danger zone / in the danger zone by 1': the slash carries the negation to the second claim (wrong status, not status conflict)",
    "g42-182": "'Is the needle in the danger zone? Yes.': the label form 'in the danger zone? Yes' swallows the restated question's '?' and the claim reads hedged",
    "s42-035": "second blind set, not yet tuned on: labelled accept, read as orientability conflict",
    "s42-064": "second blind set, not yet tuned on: labelled accept, read as euler conflict",
    "s42-067": "second blind set, not yet tuned on: labelled accept, read as euler missing",
    "s42-112": "second blind set, not yet tuned on: labelled wrong euler, read as euler missing",
    "s42-114": "second blind set, not yet tuned on: labelled wrong euler, read as euler missing",
}
ROWS = [
    (rule, json.loads(line))
    for name, rule in {**FILES, **DEV_FILES}.items()
    if (DATA / name).exists() and rule in bundled_rule_names()
    for line in (DATA / name).read_text(encoding="utf-8").splitlines()
    if line.strip()
]
_SCORERS: dict[str, Scorer] = {}


def scorer(rule: str) -> Scorer:
    if rule not in _SCORERS:
        _SCORERS[rule] = Scorer(load_rule(resolve_rule_path(rule)))
    return _SCORERS[rule]


def test_dev_sets_are_large_enough_and_cover_every_reason() -> None:
    for name, rule in DEV_FILES.items():
        assert rule in bundled_rule_names(), name
        rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        assert len(rows) >= 60, name
        assert set(scorer(rule).rule.reasons) - {"key matches no template", "rule error", "answer unparseable"} <= {
            row["reason"] for row in rows
        }, name


def test_holdout_sets_are_present_and_cover_every_reason() -> None:
    for rule in set(FILES.values()) & set(bundled_rule_names()):
        rows = [row for r, row in ROWS if r == rule]
        assert len(rows) >= 150, rule
        reasons = {row["reason"] for row in rows}
        assert (
            set(scorer(rule).rule.reasons)
            - {"answer unparseable", "key matches no template", "rule error"}
            <= reasons
        )


def test_dev_sets_are_present_and_cover_every_reason() -> None:
    for name, rule in DEV_FILES.items():
        rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]
        assert len(rows) >= 60, name
        reasons = {row["reason"] for row in rows}
        assert set(scorer(rule).rule.reasons) - {
            "answer unparseable", "key matches no template", "rule error"
        } <= reasons, name


@pytest.mark.parametrize(
    ("rule", "row"),
    [
        pytest.param(
            rule, row, marks=pytest.mark.xfail(reason=KNOWN_LIMITS[row["id"]], strict=True)
        )
        if row["id"] in KNOWN_LIMITS
        else (rule, row)
        for rule, row in ROWS
    ],
    ids=[row["id"] for _, row in ROWS],
)
def test_holdout_row(rule: str, row: dict) -> None:
    verdict = scorer(rule).score(row["key"], row["response"])
    assert (verdict.accept, verdict.reason) == (row["accept"], row["reason"]), row.get("note", "")
