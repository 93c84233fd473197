"""The physical_stability rule on hundreds of labelled phrasings, its examples, and its keys.

The phrasings in ``tests/data/phrasings/`` were written and labelled independently of the grammar
(see that folder's README); each row checks verdict, reason and the extracted status and joint.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.authoring.rulecheck import keys_check, run_examples
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

DATA = Path(__file__).parent / "data" / "phrasings"
S = "stable; after removing block E, every cumulative center of mass remains within its supporting base"
U = "unstable; after removing block E, the cumulative center of mass at the joint between block D and block C lies outside its supporting base"


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    return Scorer(load_rule(resolve_rule_path("physical_stability")))


def _rows(name: str) -> list[dict]:
    path = DATA / name
    if not path.exists():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


PHRASINGS = _rows("physical_stability.jsonl")


def test_corpus_is_large_and_balanced() -> None:
    reasons = {row["reason"] for row in PHRASINGS}
    assert len(PHRASINGS) >= 400
    assert {
        "",
        "wrong status",
        "joint missing",
        "joint wrong",
        "joint reversed",
        "joints conflict",
        "ground only",
        "status missing",
        "status hedged",
        "status ambiguous",
        "answer missing",
    } <= reasons


#: Labels written before issue 33 that its semantics read otherwise: named, not flipped (strict
#: xfail, so a change back is noticed).
DISPUTED = {
    "ps-288": "LABEL DISPUTED (issue 33, item 4): 'unstable at C/B' was labelled joint missing (no "
    "joint word); 'C/B' given as the place it fails is one of the seed's constructions now (the "
    "`pair` kind's AT_PAIR), so it names (C, B): read as accept",
}


@pytest.mark.parametrize(
    "row",
    [pytest.param(r, marks=pytest.mark.xfail(reason=DISPUTED[r["id"]], strict=True)) if r["id"] in DISPUTED
     else r for r in PHRASINGS],
    ids=[row["id"] for row in PHRASINGS],
)
def test_phrasing(scorer: Scorer, row: dict) -> None:
    verdict = scorer.score(row["key"], row["response"])
    assert (verdict.accept, verdict.reason) == (row["accept"], row["reason"]), row.get("note", "")
    if row["reason"] != "answer missing":
        assert verdict.values["status"] == row["status"]
    if row["status"] == "unstable" and row["reason"] not in ("status missing",):
        assert verdict.values["joint"] == row["joint"]


HOLDOUT = (
    _rows("physical_stability_holdout.jsonl")
    + _rows("physical_stability_holdout2.jsonl")
    + _rows("physical_stability_holdout3.jsonl")
    + _rows("physical_stability_holdout4.jsonl")
)


def test_holdout_agreement_at_least_97_percent(scorer: Scorer) -> None:
    """The issue's bar on phrasings the grammar's authors never saw (row-level checks in
    tests/test_holdout_phrasings.py)."""
    assert len(HOLDOUT) >= 890
    agree = sum(
        (v.accept, v.reason) == (row["accept"], row["reason"])
        for row in HOLDOUT
        for v in [scorer.score(row["key"], row["response"])]
    )
    assert agree / len(HOLDOUT) >= 0.97


def test_rule_examples_all_pass(scorer: Scorer) -> None:
    results = run_examples(scorer)
    assert len(results) >= 30
    failed = [(r.example.note, r.mismatches) for r in results if not r.passed]
    assert failed == []


def test_rule_carries_the_seed_examples(scorer: Scorer) -> None:
    notes = [e.note for e in scorer.rule.examples]
    assert sum(n.startswith("seed §2 stored response") for n in notes) == 20
    assert (
        sum(n.startswith("seed §2 accept") or n.startswith("seed §2 reject") for n in notes) >= 10
    )


def test_keys_check_on_the_full_corpus(scorer: Scorer) -> None:
    benchmark = load_benchmark(example_benchmark_dir(), with_responses=False)
    keys = [k.answer for k in benchmark.keys_in_cell("physical_stability", 5)]
    result = keys_check(scorer, keys)
    assert result.n_keys == 3000 and result.distinct == 9
    assert result.unparsed == {} and result.failures == []
    assert result.pairs_checked > 0


def test_keys_check_catches_a_too_loose_rule(tmp_path: Path) -> None:
    text = resolve_rule_path("physical_stability").read_text(encoding="utf-8")
    loose = text.replace('check = "joint == target.joint"', 'check = "true"')
    loose = loose.replace('check = "joint != (target.joint[1], target.joint[0])"', 'check = "true"')
    loose = loose[: loose.index("[[example]]")]
    path = tmp_path / "loose.toml"
    path.write_text(
        loose.replace('key_grammar = "', 'key_grammar = "').replace(
            "physical_stability_key.lark", "physical_stability_key.lark"
        ),
        encoding="utf-8",
    )
    scorer = Scorer(load_rule(path))
    keys = [
        S,
        U,
        U.replace("block D and block C", "block C and block B").replace("block E,", "block D,"),
    ]
    result = keys_check(scorer, keys)
    assert any("is accepted" in f.problem for f in result.failures)


def test_unparsed_key_is_reported_not_guessed(scorer: Scorer) -> None:
    result = keys_check(scorer, [S, "unstable; the stack falls"])
    assert list(result.unparsed) == ["unstable; the stack falls"]
    assert "column" in result.unparsed["unstable; the stack falls"]
    verdict = scorer.score("unstable; the stack falls", "ANSWER: unstable")
    assert (verdict.accept, verdict.reason) == (False, "key matches no template")


@pytest.mark.parametrize(
    ("key", "answer", "accept", "reason", "joint"),
    [
        (U, "Unstable: the D/C interface gives way", True, "", ["D", "C"]),
        (U, "UNSTABLE. D’s centre of gravity is past C’s right-hand edge.", True, "", ["D", "C"]),
        (
            U,
            "unstable — the centre of mass of the top block D overhangs block C",
            True,
            "",
            ["D", "C"],
        ),
        (U, "Unstable; D slides off C.", True, "", ["D", "C"]),
        (U, "unstable: C can no longer support D", True, "", ["D", "C"]),
        (U, "Unstable: the stack above C has its COM beyond C's edge", True, "", ["D", "C"]),
        (U, "Unstable, because the C–D joint fails", False, "joint reversed", ["C", "D"]),
        (U, "Unstable, because B's COM is outside A", False, "joint wrong", ["B", "A"]),
        (
            U,
            "Unstable: D's COM is beyond C and C's COM is beyond B",
            False,
            "joints conflict",
            None,
        ),
        (U, "Unstable: the overall centre of mass is off the table", False, "ground only", None),
        (U, "Unstable because the blocks are misaligned", False, "joint missing", None),
        (U, "Unstable: D sits on C, but its COM is off C.", True, "", ["D", "C"]),
        (U, "Unstable: D rests on C; its centre of mass is beyond C's edge", True, "", ["D", "C"]),
        (U, "Unstable: the tower is tall and its COM is off the table", False, "ground only", None),
        (U, "Unstable: its COM is beyond C", False, "ground only", None),
        (U, "Unstable: D's COM stays over C", False, "joint missing", None),
        (S, "Stable: D's COM stays over C.", True, "", None),
        (S, "Stable?", False, "status hedged", None),
        (S, "Likely stable", False, "status hedged", None),
        (S, "stable/unstable", False, "status ambiguous", None),
        (S, "The stack is stable", False, "status missing", None),
        (S, "Unstable: D's COM is beyond C", False, "wrong status", ["D", "C"]),
    ],
)
def test_handwritten(
    scorer: Scorer, key: str, answer: str, accept: bool, reason: str, joint: list | None
) -> None:
    verdict = scorer.score(key, "Reasoning first.\nANSWER: " + answer)
    assert (verdict.accept, verdict.reason, verdict.values["joint"]) == (accept, reason, joint)


def test_no_answer_line(scorer: Scorer) -> None:
    verdict = scorer.score(S, "I think it is stable.")
    assert (verdict.accept, verdict.reason, verdict.values) == (
        False,
        "answer missing",
        {"status": None, "joint": None},
    )


_ALPHABET = st.sampled_from(
    list("ABCDEFGH abcxyz-–—/+&,.;:()'’*_?≈0123456789\n\t{}[]")
    + [
        "stable",
        "unstable",
        "COM",
        "centre of mass of",
        "joint",
        "joints:",
        "between",
        "and",
        "and the",
        "block",
        "not",
        "over",
        "beyond",
        "off",
        "the stack above",
        "probably",
        "or",
        "cannot support",
        "removing",
        "whose",
        "c.m.",
        "contact",
        "COM(",
        "the whole",
        "stack",
        "nor is",
        "C-B",
        "B/A",
        " through ",
        "-on-",
        "COM of",
        "seam",
        "interface",
        "with",
    ]
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ALPHABET, max_size=60).map("".join), st.booleans())
def test_any_text_gets_a_verdict(text: str, stable_key: bool) -> None:
    scorer = _SCORER()
    verdict = scorer.score(S if stable_key else U, "ANSWER: " + text)
    assert isinstance(verdict.accept, bool)
    assert verdict.reason in scorer.rule.reasons or verdict.reason == ""
    assert verdict.reason not in ("answer unparseable", "rule error"), verdict.detail


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_unicode_gets_a_verdict(text: str) -> None:
    verdict = _SCORER().score(U, "ANSWER: " + text)
    assert isinstance(verdict.accept, bool) and verdict.reason != "rule error"


def test_long_pathological_answers_stay_bounded() -> None:
    scorer = _SCORER()
    # Answers are cut to MAX_ANSWER_CHARS and recovery is bounded; these must simply finish.
    for text in [
        "B and " * 2000,
        "(" * 5000,
        "D's COM " * 1500,
        "unstable " + "C-B joint " * 800,
        "x" * 100_000,
    ]:
        verdict = scorer.score(U, "ANSWER: " + text)
        assert isinstance(verdict.accept, bool) and verdict.reason != "rule error"


_CACHE: list[Scorer] = []


def _SCORER() -> Scorer:
    if not _CACHE:
        _CACHE.append(Scorer(load_rule(resolve_rule_path("physical_stability"))))
    return _CACHE[0]


def test_keys_check_samples_evenly_when_a_cell_has_too_many_pairs(
    scorer: Scorer, monkeypatch
) -> None:
    import keyaudit.engine.rule_language.authoring.rulecheck as rulecheck

    benchmark = load_benchmark(example_benchmark_dir(), with_responses=False)
    keys = [k.answer for k in benchmark.keys_in_cell("physical_stability", 5)]
    full = keys_check(scorer, keys)
    monkeypatch.setattr(rulecheck, "MAX_PAIRS", 27)  # 9 distinct keys: 3 others each
    sampled = keys_check(scorer, keys)
    assert full.exhaustive and not sampled.exhaustive
    assert 0 < sampled.pairs_checked <= 27 < full.pairs_checked
    assert sampled.passed
    assert rulecheck._others(list("abcdefghi"), 8, 3) == ["a", "c", "f"]


def test_every_bundled_rule_reads_its_answers_through_the_claim_layer() -> None:
    from keyaudit.engine.load.locate import bundled_rule_names

    assert [n for n in bundled_rule_names() if load_rule(resolve_rule_path(n)).claims is None] == []


@pytest.mark.parametrize(
    ("answer", "values", "hedged", "reason"),
    [
        ("Unstable — D's COM lies beyond C.", ["unstable"], False, ""),
        ("probably unstable: D's COM lies beyond C", ["unstable"], True, "status hedged"),
        ("unstable (I think): D's COM lies beyond C", ["unstable"], True, "status hedged"),
        ("unstable? D's COM lies beyond C", ["unstable"], True, "status hedged"),
        ("unstable or stable; D's COM lies beyond C", ["unstable", "stable"], False, "status ambiguous"),
        ("unstable / not; D's COM lies beyond C", ["unstable", "stable"], False, "status ambiguous"),
        # the seed's rule: only the first word is the status; a later "stable" is explanation
        ("Unstable — D's COM lies beyond C, while B stays stable, I think", ["unstable"], False, ""),
    ],
)
def test_the_status_is_the_claim_layers_reading_of_the_opening(
    scorer: Scorer, answer: str, values: list[str], hedged: bool, reason: str
) -> None:
    """The claim layer, not the rule, decides that the opening's status is hedged or offered with an
    alternative; a hedge or status word after the opening is explanation (seed §2, step 3)."""
    verdict, claims = scorer.explain(U, answer)
    status = claims.kinds["status"]
    assert sorted(status.values) == sorted(values) and status.hedged is hedged
    assert verdict.reason == reason
