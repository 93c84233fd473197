"""Validation cards (issue 23, item 2): each rule's blind-set agreement before tuning, its version
(a hash of its files), ``test-rule --cases FILE --card`` and what ``check`` says of a card."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from keyaudit.engine.errors import DataError
from keyaudit.engine.load.locate import bundled_rule_names, bundled_rules_dir, resolve_rule_path
from keyaudit.engine.rule_language.reading.grammar import bundled_grammar_dir
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.stats.rule_version import imported_names, rule_files, rule_version
from keyaudit.engine.stats.validation_card import (
    UNKNOWN,
    card_path,
    card_status,
    read_card,
)
from keyaudit.engine.stats.wilson import wilson_interval

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PHRASINGS = Path(__file__).parent / "data" / "phrasings"
SET = PHRASINGS / "physical_stability_l4_blind.jsonl"


@pytest.fixture
def rule_copy(tmp_path: Path) -> Path:
    """physical_stability_l4 with its grammars and their imports copied into a folder of its own
    (the rule's folder is searched first, so the copies are the files it loads)."""
    source = resolve_rule_path("physical_stability_l4")
    shutil.copy(source, tmp_path / source.name)
    for name in ("physical_stability_l4_key.lark", "physical_stability_l4_answer.lark",
                 "claims.lark", "common.lark"):
        shutil.copy(bundled_grammar_dir() / name, tmp_path / name)
    return tmp_path / source.name


def test_imports_are_read_as_the_loader_is_asked() -> None:
    text = (
        "// %import .ignored (A)\n%import .claims (NEG, HEDGE)\n%import .common.WORD -> _WORD\n"
        "%import common.WS\n  %import .sub.deep.X\n"
    )
    assert imported_names(text) == ["claims.lark", "common.lark", "common.lark", "sub/deep.lark"]


def test_version_covers_the_rule_its_grammars_and_their_imports(rule_copy: Path) -> None:
    rule = load_rule(rule_copy)
    files = rule_files(rule)
    assert [(f.role, f.name) for f in files] == [
        ("rule", "physical_stability_l4.toml"),
        ("key grammar", "physical_stability_l4_key.lark"),
        ("answer grammar", "physical_stability_l4_answer.lark"),
        ("import", "claims.lark"),
        ("import", "common.lark"),
    ]
    before = rule_version(rule)
    # the same files elsewhere: the same version (no machine path in it)
    assert before == rule_version(load_rule(resolve_rule_path("physical_stability_l4")))
    common = rule_copy.parent / "common.lark"
    common.write_text(common.read_text() + "\n// a comment changes the file\n")
    assert rule_version(load_rule(rule_copy)) != before
    assert before.startswith("sha256:") and len(before) == len("sha256:") + 16


def test_every_bundled_rule_has_a_card_seeded_from_the_history() -> None:
    folder = bundled_rules_dir() / "cards"
    names = sorted(p.name.removesuffix(".card.toml") for p in folder.glob("*.card.toml"))
    assert names == bundled_rule_names()
    for name in names:
        rule = load_rule(resolve_rule_path(name))
        rule_name, entries = read_card(card_path(rule.path))
        assert rule_name == name and entries
        for entry in entries:
            lines = (PHRASINGS / entry.set).read_text(encoding="utf-8").splitlines()
            assert entry.cases == len(lines), entry.set
            # history entries never invent a hash
            assert entry.source == "history" and entry.version == UNKNOWN
            assert "before this card existed" in entry.note
        # a card is data: its file is plain TOML, its rates repeat the counts
        data = tomllib.loads(card_path(rule.path).read_text(encoding="utf-8"))
        for row in data["set"]:
            low, high = wilson_interval(row["agree"], row["cases"])
            assert row["agreement"] == round(row["agree"] / row["cases"], 4)
            assert (row["ci_low"], row["ci_high"]) == (round(low, 4), round(high, 4))
        assert card_status(rule).state == "history"


def test_test_rule_card_writes_and_updates_one_entry_per_set(run_cli, rule_copy: Path) -> None:
    result = run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--card")
    assert result.code == 0, result.err
    card = card_path(rule_copy)
    assert card == rule_copy.parent / "cards" / "physical_stability_l4.card.toml"
    assert "Validation card" in result.out
    name, entries = read_card(card)
    assert name == "physical_stability_l4" and len(entries) == 1
    (entry,) = entries
    assert (entry.set, entry.cases, entry.source) == (SET.name, 175, "measured")
    assert entry.version == rule_version(load_rule(rule_copy))
    # the figure recorded is the one measured by that run
    shown = [line for line in result.out.splitlines() if line.startswith("accept agreement")][0]
    assert f"{entry.agree}/175" in shown
    # a second set adds an entry; the same set again replaces its entry
    other = rule_copy.parent / "other.jsonl"
    other.write_text("".join(SET.read_text().splitlines(keepends=True)[:20]))
    assert run_cli("test-rule", str(rule_copy), "--cases", str(other), "--card").code == 0
    again = run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--card")
    assert "replaces" in again.out
    _, entries = read_card(card)
    assert sorted(e.set for e in entries) == sorted([SET.name, "other.jsonl"])
    assert card_status(load_rule(rule_copy)).state == "current"


def test_card_needs_cases(run_cli) -> None:
    result = run_cli("test-rule", "physical_stability", "--card")
    assert result.code == 2 and "--card needs --cases" in result.err


def test_check_says_when_a_rule_has_no_card_or_its_files_changed(run_cli, rule_copy: Path) -> None:
    rule = load_rule(rule_copy)
    status = card_status(rule)
    assert (status.exists, status.state) == (False, "none")
    from keyaudit.engine.reports.card_text import card_lines

    assert "none" in card_lines(status)[0] and "test-rule" in card_lines(status)[0]
    assert run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--card").code == 0
    lines = card_lines(card_status(load_rule(rule_copy)))
    assert "as they are now" in lines[1]
    answer = rule_copy.parent / "physical_stability_l4_answer.lark"
    answer.write_text(answer.read_text() + "\n// changed\n")
    status = card_status(load_rule(rule_copy))
    assert status.state == "changed"
    assert "files changed since" in " ".join(card_lines(status))


def test_check_prints_and_writes_the_card(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    md = tmp_path / "a.md"
    result = run_cli(
        "check", "physical_stability", "--resamples", "50", "--json", str(out),
        "--markdown", str(md),
    )
    assert result.code == 0, result.err
    assert "Validation card of physical_stability" in result.out
    assert "unknown version" in result.out
    card = json.loads(out.read_text())["rules"][0]["card"]
    assert card["state"] == "history" and card["path"] == "rules/cards/physical_stability.card.toml"
    assert card["cases"] == sum(s["cases"] for s in card["sets"])
    assert all(s["version"] == "unknown" and not s["changed_since"] for s in card["sets"])
    assert "Validation card of physical_stability" in md.read_text()


def test_a_broken_card_is_a_one_line_error(tmp_path: Path, rule_copy: Path) -> None:
    card = card_path(rule_copy)
    card.parent.mkdir()
    card.write_text('rule = "physical_stability_l4"\n[[set]]\nname = "x"\ncases = 3\nagree = 5\n')
    with pytest.raises(DataError, match="'agree' must lie in 0..cases"):
        card_status(load_rule(rule_copy))
    card.write_text("rule = [")
    with pytest.raises(DataError, match="card.toml"):
        card_status(load_rule(rule_copy))
