"""The fresh independent sets of issue 33, four rounds of two authors each: round 4
(``*_r4a.jsonl``, ``*_r4b.jsonl``, 940 cases), round 5 (``*_r5a.jsonl``, ``*_r5b.jsonl``, 990 cases,
written from two varied briefs: wordings as they come out of logs, and careful reasoners who weigh
alternatives), round 6 (``*_r6a.jsonl``, ``*_r6b.jsonl``, 792 cases: the messy middle of real
logs, and frontier models that explain and verify) and round 7 (``*_r7a.jsonl``, ``*_r7b.jsonl``, 660
cases: answers from evaluation harnesses nobody cleaned up, and short confident final lines from many
model sizes), over the 11 bundled rules, written by two authors who saw only each rule's question, real keys and documented
semantics, never the grammars, rules or tests, in several model families' styles with the hard
wordings asked for. Scored before any tuning on them (first figures in
tests/data/phrasings/README.md). Each row has a ``split``: ``tune`` rows may be looked at; ``holdout``
rows (40%) are kept apart.

Accept verdicts are pinned: every row gets its label except the recorded misses, and every
recorded miss must still be one (fixing one means updating ``r<round>_known_misses.json``), so
the test fails on a regression and on a silent change alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keyaudit.engine.load.locate import bundled_rule_names, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

DATA = Path(__file__).parent / "data" / "phrasings"
ROUNDS = {"r4": 60, "r5": 45, "r6": 36, "r7": 30}  # round and the fewest rows a rule's set of it has
SETS = [p for r in ROUNDS for author in "ab" for p in sorted(DATA.glob(f"*_{r}{author}.jsonl"))]
KNOWN = {
    case: miss
    for r in ROUNDS
    for case, miss in json.loads((DATA / f"{r}_known_misses.json").read_text(encoding="utf-8")).items()
}


def rule_of(path: Path) -> str:
    return path.name.removesuffix(".jsonl").rsplit("_", 1)[0]


def round_of(path: Path) -> str:
    return path.name.removesuffix(".jsonl").rsplit("_", 1)[1][:2]


@pytest.mark.parametrize("round_", sorted(ROUNDS))
def test_every_bundled_rule_has_a_fresh_set(round_: str) -> None:
    sets = [p for p in SETS if round_of(p) == round_]
    assert {rule_of(p) for p in sets} == set(bundled_rule_names())
    for path in sets:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert len(rows) >= ROUNDS[round_], path.name
        assert {row["split"] for row in rows} == {"tune", "holdout"}, path.name


@pytest.mark.parametrize("path", SETS, ids=[p.name for p in SETS])
def test_fresh_set_verdicts(path: Path) -> None:
    scorer = Scorer(load_rule(resolve_rule_path(rule_of(path))))
    misses = {}
    ids = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ids.add(row["id"])
        verdict = scorer.score(row["key"], row["response"])
        if verdict.accept != row["accept"]:
            misses[row["id"]] = [verdict.accept, verdict.reason]
    known = {i: m["read"] for i, m in KNOWN.items() if i in ids}
    assert misses == known
