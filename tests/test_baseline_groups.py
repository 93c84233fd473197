"""The constant-answer baseline groups keys that every answer scores alike, without changing it."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer
from keyaudit.engine.stats.baselines import _key_groups, rule_baseline


def _every_pair(scorer: Scorer, keys: list[str]) -> tuple[tuple[str, int], ...]:
    label = scorer.rule.answer_format.label
    counts = Counter(keys)
    scored = [
        (c, sum(n for k, n in counts.items() if scorer.score(k, f"{label} {c}", certainty=False).accept))
        for c in sorted(counts)
    ]
    return tuple(sorted(scored, key=lambda item: (-item[1], item[0])))


@pytest.mark.parametrize("name", bundled_rule_names())
def test_grouped_baseline_equals_every_pair(name: str) -> None:
    rule = load_rule(resolve_rule_path(name))
    cell = rule.cells[0]
    path = example_benchmark_dir() / "keys" / f"{cell.domain}.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    keys = [r["answer"] for r in rows if r["id"].endswith(f"_q{cell.level}")]
    sample = random.Random(7).sample(keys, 120)
    scorer = Scorer(rule)
    assert rule_baseline(scorer, sample).candidates == _every_pair(scorer, sample)


def test_compass_keys_collapse_to_their_letters() -> None:
    scorer = Scorer(load_rule(resolve_rule_path("compass_bearing")))
    keys = [
        f"{x}; projected endpoint is closest to {x} ({d} map units away; bearing difference 9.5 degrees)"
        for x in "ABCD"
        for d in ("12.0", "99.5", "250.1")
    ]
    assert len(_key_groups(scorer, Counter(keys))) == 4


def test_a_rule_that_reads_the_key_node_is_not_grouped(tmp_path: Path) -> None:
    text = resolve_rule_path("gear_train").read_text(encoding="utf-8")
    # the speed component compares with the key node itself instead of its [key] value
    changed = text.replace('name = "speed"\nkind = "choice"\n', 'name = "speed"\nkind = "choice"\nkey = "key.speed"\n', 1)
    assert changed != text
    for grammar in ("gear_train_key.lark", "gear_train_answer.lark", "claims.lark", "common.lark"):
        source = resolve_rule_path("gear_train").parent.parent / "grammars" / grammar
        (tmp_path / grammar).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "rule.toml").write_text(changed, encoding="utf-8")
    rule = load_rule(tmp_path / "rule.toml")
    assert rule.reads_key_node and not load_rule(resolve_rule_path("gear_train")).reads_key_node
    keys = ["increase; direction unchanged"] * 2 + ["decrease; direction unchanged"]
    assert len(_key_groups(Scorer(rule), Counter(keys))) == 2  # one per distinct key string
