"""The fresh independent sets of issue 33 (``*_r4a.jsonl``, ``*_r4b.jsonl``): 940 cases over the 11
bundled rules, written by two authors who saw only each rule's question, real keys and documented
semantics, never the grammars, rules or tests, in several model families' styles with the hard
wordings asked for. Scored before any tuning on them (first figures in
tests/data/phrasings/README.md). Each row has a ``split``: ``tune`` rows may be looked at; ``holdout``
rows (40%) are kept apart.

Accept verdicts are pinned: every row gets its label except the recorded misses, and every
recorded miss must still be one (fixing one means updating ``r4_known_misses.json``), so the test
fails on a regression and on a silent change alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keyaudit.engine.load.locate import bundled_rule_names, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

DATA = Path(__file__).parent / "data" / "phrasings"
SETS = sorted(DATA.glob("*_r4a.jsonl")) + sorted(DATA.glob("*_r4b.jsonl"))
KNOWN = json.loads((DATA / "r4_known_misses.json").read_text(encoding="utf-8"))


def rule_of(path: Path) -> str:
    return path.name.removesuffix(".jsonl").rsplit("_", 1)[0]


def test_every_bundled_rule_has_a_fresh_set() -> None:
    assert {rule_of(p) for p in SETS} == set(bundled_rule_names())
    for path in SETS:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert len(rows) >= 60, path.name
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
