"""Rule proofs are cached (issue 24, item 4): keyed by the rule's files, its cells' keys and the
engine; a changed rule file or key is proved again; a damaged entry is a miss."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from keyaudit.engine import audit, proof_cache
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule


@pytest.fixture
def cache(private_cache: Path) -> Path:
    return private_cache


def _rule_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "rules"
    shutil.copytree(resolve_rule_path("gear_train").parent, folder)
    for grammar in (resolve_rule_path("gear_train").parent.parent / "grammars").glob("*.lark"):
        shutil.copy(grammar, folder / grammar.name)
    return folder / "gear_train.toml"


def test_a_second_proof_comes_from_the_cache_and_is_the_same(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    benchmark = load_benchmark(example_benchmark_dir())
    path = _rule_copy(tmp_path)
    first = audit.prove_rules(benchmark, [load_rule(path)])
    calls = []
    monkeypatch.setattr(audit, "run_examples", lambda scorer: calls.append(1) or [])
    second = audit.prove_rules(benchmark, [load_rule(path)])
    assert calls == [] and second == first  # nothing re-run, the same proof
    # a change to the rule file is a new proof
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    monkeypatch.undo()
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", str(cache))
    counted = []
    original = audit.run_examples
    monkeypatch.setattr(audit, "run_examples", lambda scorer: counted.append(1) or original(scorer))
    third = audit.prove_rules(benchmark, [load_rule(path)])
    assert counted == [1] and third[0].examples == first[0].examples


def test_a_damaged_entry_is_a_miss(cache: Path, tmp_path: Path) -> None:
    benchmark = load_benchmark(example_benchmark_dir())
    path = _rule_copy(tmp_path)
    first = audit.prove_rules(benchmark, [load_rule(path)])
    for entry in (cache / proof_cache.FOLDER).iterdir():
        data = entry.read_bytes()
        entry.write_bytes(data[:-10] + b"0123456789")  # payload no longer matches its checksum
    assert audit.prove_rules(benchmark, [load_rule(path)]) == first


def test_the_key_depends_on_keys_and_rule(tmp_path: Path) -> None:
    rule = load_rule(_rule_copy(tmp_path))
    one = proof_key(rule, [("gear_train", 5, ["a", "b"])])
    assert one == proof_key(rule, [("gear_train", 5, ["a", "b"])])
    assert one != proof_key(rule, [("gear_train", 5, ["a", "c"])])
    assert one != proof_key(rule, [("gear_train", 5, ["ab"])])  # keys are separated
    assert one != proof_key(load_rule(resolve_rule_path("fbd")), [("gear_train", 5, ["a", "b"])])


proof_key = proof_cache.proof_key
