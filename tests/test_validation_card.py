"""Validation cards (issue 23, item 2): each rule's blind-set agreement before tuning, its version
(a hash of its files), ``test-rule --cases FILE --card`` and what ``check`` says of a card."""

from __future__ import annotations

import importlib.util
import json
import re
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
    CardEntry,
    CardStatus,
    card_path,
    card_status,
    read_card,
    read_card_file,
    record_measurement,
)
from keyaudit.engine.stats.wilson import wilson_interval

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PHRASINGS = ROOT / "tests" / "data" / "phrasings"
_SPEC = importlib.util.spec_from_file_location("record_cards", ROOT / "bench" / "record_cards.py")
record_cards = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("record_cards", record_cards)  # its dataclasses look their module up
_SPEC.loader.exec_module(record_cards)
DECLARE = ("--written-by", "independent", "--before-tuning")
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
        ("kind", "kinds/pair.lark"),
    ]
    before = rule_version(rule)
    # the same files elsewhere: the same version (no machine path in it)
    assert before == rule_version(load_rule(resolve_rule_path("physical_stability_l4")))
    common = rule_copy.parent / "common.lark"
    common.write_text(common.read_text() + "\n// a comment changes the file\n")
    assert rule_version(load_rule(rule_copy)) != before
    assert before.startswith("sha256:") and len(before) == len("sha256:") + 16


def _declared() -> dict[str, list]:
    return record_cards.declared_sets(PHRASINGS, bundled_rules_dir())


def test_every_bundled_card_records_each_declared_set_with_its_declarations() -> None:
    """Issue 39: each bundled card is recorded by bench/record_cards.py from the sets of
    tests/data/phrasings, with who wrote each and whether the rule was tuned on it as
    provenance.toml declares; one entry per set, or per split where tuning is by split."""
    folder = bundled_rules_dir() / "cards"
    names = sorted(p.name.removesuffix(".card.toml") for p in folder.glob("*.card.toml"))
    assert names == bundled_rule_names()
    declared = _declared()
    for name in names:
        rule = load_rule(resolve_rule_path(name))
        rule_name, entries, form = read_card_file(card_path(rule.path))
        assert rule_name == name and form == 2
        expected = {}
        for path, declaration in declared[name]:
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            if isinstance(declaration.tuning, str):
                expected[(path.name, "all")] = (declaration.written_by, declaration.tuning, len(rows))
            else:
                for split, tuning in declaration.tuning.items():
                    n = sum(r.get("split") == split for r in rows)
                    expected[(path.name, split)] = (declaration.written_by, tuning, n)
        assert {e.key: (e.written_by, e.tuning, e.cases) for e in entries} == expected, name
        # measured, all on one version of the rule's files (recorded together), never history
        assert {e.source for e in entries} == {"measured"}
        assert len({e.version for e in entries}) == 1 and entries[0].version.startswith("sha256:")
        # a card is data: its file is plain TOML, its rates repeat the counts
        data = tomllib.loads(card_path(rule.path).read_text(encoding="utf-8"))
        for row in data["set"]:
            low, high = wilson_interval(row["agree"], row["cases"])
            assert row["agreement"] == round(row["agree"] / row["cases"], 4)
            assert (row["ci_low"], row["ci_high"]) == (round(low, 4), round(high, 4))
        # every bundled rule has independent sets: its headline is the lowest of them
        status = card_status(rule)
        assert status.headline is not None
        assert status.headline == min(status.independent, key=lambda e: e.agreement)


def test_provenance_declares_the_sets_the_brief_names() -> None:
    """The fresh r4 sets are independent, before tuning on their holdout rows only; the rules'
    own development sets are the rule author's."""
    declared = {p.name: d for sets in _declared().values() for p, d in sets}
    r4 = [n for n in declared if re.search(r"_r4[ab]\.jsonl$", n)]
    assert len(r4) == 12
    for n in r4:
        assert declared[n].written_by == "independent"
        assert declared[n].tuning == {"tune": "after", "holdout": "before"}
    r5 = [n for n in declared if re.search(r"_r5[ab]\.jsonl$", n)]
    assert len(r5) == 22 and all(declared[n].written_by == "independent" for n in r5)
    r6 = [n for n in declared if re.search(r"_r6[ab]\.jsonl$", n)]
    assert len(r6) == 22 and all(declared[n].written_by == "independent" for n in r6)
    assert all(declared[n].tuning == {"tune": "after", "holdout": "before"} for n in r6)
    assert declared["fbd_dev.jsonl"].written_by == "rule-author"
    assert declared["physical_stability.jsonl"].written_by == "rule-author"
    assert declared["gear_train_dev.jsonl"].written_by == "independent"  # issue 10's dev sets
    assert declared["fbd_blind13.jsonl"].tuning == "before"


def test_test_rule_card_writes_and_updates_one_entry_per_set(run_cli, rule_copy: Path) -> None:
    result = run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--card", *DECLARE)
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
    assert run_cli("test-rule", str(rule_copy), "--cases", str(other), "--card", *DECLARE).code == 0
    again = run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--card", *DECLARE)
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
    assert run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--card", *DECLARE).code == 0
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
    card = json.loads(out.read_text())["rules"][0]["card"]
    assert card["path"] == "rules/cards/physical_stability.card.toml" and card["format"] == 2
    # the headline is the lowest independent set's figure, named; no pooled figure is written
    independent = [s for s in card["sets"] if s["written_by"] == "independent"]
    lowest = min(independent, key=lambda s: s["agreement"])
    assert card["independent"] is True and card["headline"]["agreement"] == lowest["agreement"]
    assert "cases" not in card and "agreement" not in card
    assert card["headline"]["set"] in card["statement"]
    assert card["statement"] in " ".join(md.read_text().split())
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


# ---- issue 39: who wrote each set, whether it was tuned on, and the lowest independent figure


def _entry(name: str, agree: int, cases: int, written_by: str, tuning: str = "before",
           rows: str = "all", version: str = "sha256:0000000000000000") -> CardEntry:
    return CardEntry(name, cases, agree, "2026-12-02", version, "measured",
                     written_by=written_by, tuning=tuning, rows=rows)


def test_card_needs_who_wrote_the_set_and_whether_it_was_tuned_on(run_cli, rule_copy: Path) -> None:
    cases = ("test-rule", str(rule_copy), "--cases", str(SET), "--card")
    missing = run_cli(*cases)
    assert missing.code == 2 and "--card needs --written-by independent|rule-author|unknown" in missing.err
    assert missing.err.count("\n") == 1
    wrong = run_cli(*cases, "--written-by", "someone")
    assert wrong.code == 2 and "--written-by must be one of" in wrong.err
    untuned = run_cli(*cases, "--written-by", "rule-author")
    assert untuned.code == 2 and "--before-tuning or --after-tuning" in untuned.err
    alone = run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--written-by", "independent")
    assert alone.code == 2 and "go with --card" in alone.err
    assert not card_path(rule_copy).exists()  # refused before anything is written
    assert run_cli(*cases, "--written-by", "rule-author", "--after-tuning").code == 0
    (entry,) = read_card(card_path(rule_copy))[1]
    assert (entry.written_by, entry.tuning, entry.rows) == ("rule-author", "after", "all")


def test_the_headline_is_the_lowest_independent_set_never_a_pooled_figure() -> None:
    from keyaudit.engine.reports.card_text import card_lines, card_quote, figure_text

    entries = (
        _entry("big.jsonl", 990, 1000, "independent"),
        _entry("small.jsonl", 45, 50, "independent", tuning="after"),
        _entry("own.jsonl", 10, 100, "rule-author"),  # lower, but the rule author's: not the headline
    )
    status = CardStatus("r", "cards/r.card.toml", True, "sha256:0000000000000000", entries)
    assert status.headline.set == "small.jsonl"
    lines = " ".join(card_lines(status))
    quote = card_quote(status)
    for text in (lines, quote, figure_text(status)):
        assert "90.00% accept agreement on small.jsonl (45/50, Wilson 95% 78.64%–95.65%)" in text
        assert "the lowest of its 2 figures on sets written independently of the rule" in text
        assert "measured after tuning on it, so optimistic" in text
        assert "90.91%" not in text and "1,045" not in text  # the pooled independent figure
    assert "an error of 10.00% (4.35%–21.36%) on that set's wording" in quote
    # a tie on the figure goes to the smaller set (its interval reaches lower), in any order
    tie = (_entry("a.jsonl", 9, 10, "independent"), _entry("b.jsonl", 90, 100, "independent"))
    for order in (tie, tie[::-1]):
        assert CardStatus("r", "p", True, "v", order).headline.set == "a.jsonl"


def test_a_split_of_a_set_is_its_own_entry(run_cli, rule_copy: Path) -> None:
    fresh = PHRASINGS / "physical_stability_l4_r4b.jsonl"
    holdout = sum(json.loads(line)["split"] == "holdout" for line in fresh.read_text().splitlines())
    base = ("test-rule", str(rule_copy), "--cases", str(fresh), "--card", "--written-by", "independent")
    assert run_cli(*base, "--before-tuning", "--split", "holdout").code == 0
    assert run_cli(*base, "--after-tuning", "--split", "tune").code == 0
    entries = {e.rows: e for e in read_card(card_path(rule_copy))[1]}
    assert set(entries) == {"holdout", "tune"} and entries["holdout"].cases == holdout == 32
    assert (entries["holdout"].tuning, entries["tune"].tuning) == ("before", "after")
    none = run_cli(*base, "--before-tuning", "--split", "nosuch")
    assert none.code == 2 and "no case of" in none.err
    unmarked = run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--split", "holdout")
    assert unmarked.code == 2 and "marks no case with a 'split'" in unmarked.err


def test_a_card_of_rule_author_sets_only_says_so_in_every_report(run_cli, tmp_path: Path) -> None:
    from test_hardening_rules import benchmark, rule

    path = rule(tmp_path / "rule", "said == target.status")
    cases = tmp_path / "own.jsonl"
    cases.write_text(
        "".join(
            json.dumps({"id": n, "key": key, "response": f"ANSWER: {said}", "accept": ok}) + "\n"
            for n, (key, said, ok) in enumerate(
                [("stable", "stable", True), ("unstable; upper", "stable", False)] * 3
            )
        ),
        encoding="utf-8",
    )
    recorded = run_cli("test-rule", str(path), "--cases", str(cases), "--card",
                       "--written-by", "rule-author", "--after-tuning")
    assert recorded.code == 0, recorded.err
    out = {kind: tmp_path / f"a.{kind}" for kind in ("md", "json", "html")}
    result = run_cli(
        "check", str(path), "--bench", str(benchmark(tmp_path / "b")), "--resamples", "20",
        "--markdown", str(out["md"]), "--json", str(out["json"]), "--html", str(out["html"]),
    )
    assert result.code == 0, result.err
    said = "no set on it is declared written independently of the rule"
    quoted = "its validation card holds no set declared written independently of the rule"
    markdown = " ".join(out["md"].read_text(encoding="utf-8").split())
    page = " ".join(out["html"].read_text(encoding="utf-8").split())
    for text in (result.flat, markdown, page):
        assert said in text and quoted in text
        assert "1 on a set written by the rule's author" in text
    data = json.loads(out["json"].read_text(encoding="utf-8"))
    card = data["rules"][0]["card"]
    assert card["independent"] is False and card["headline"] is None
    assert said in card["statement"] and card["sets"][0]["written_by"] == "rule-author"
    assert quoted in data["extraction_error"]["cards"][0]["quote"]


def test_a_card_of_format_1_loads_and_says_how_to_re_record(run_cli, rule_copy: Path) -> None:
    """Every card before issue 39 had no 'format' and declared neither author nor tuning: it
    loads, no set counts as independent, the report says how to re-record, and recording onto
    it is refused rather than mixing declared and undeclared sets."""
    from keyaudit.engine.reports.card_text import card_lines, card_quote

    card = card_path(rule_copy)
    card.parent.mkdir()
    card.write_text(
        'rule = "physical_stability_l4"\n[[set]]\nname = "old.jsonl"\ncases = 100\nagree = 99\n'
        'date = "2026-11-30"\nversion = "unknown"\nsource = "history"\n',
        encoding="utf-8",
    )
    status = card_status(load_rule(rule_copy))
    (entry,) = status.entries
    assert status.format == 1 and (entry.written_by, entry.tuning) == ("unknown", "unknown")
    assert status.headline is None
    lines = " ".join(card_lines(status))
    assert "card of format 1" in lines and "--written-by independent|rule-author|unknown" in lines
    assert "1 on a set of unknown authorship" in card_quote(status)
    with pytest.raises(DataError, match="format 1.*re-record"):
        record_measurement(load_rule(rule_copy), "x.jsonl", 10, 9, written_by="independent",
                           tuning="before")
    refused = run_cli("test-rule", str(rule_copy), "--cases", str(SET), "--card", *DECLARE)
    assert refused.code == 2 and "re-record each set" in refused.err
    assert refused.err.count("\n") == 1
    card.write_text('format = 2\nrule = "physical_stability_l4"\n[[set]]\nname = "x"\ncases = 3\n'
                    'agree = 2\ndate = "d"\nversion = "v"\nsource = "measured"\nrows = "all"\n'
                    'tuning = "before"\n', encoding="utf-8")
    with pytest.raises(DataError, match="'written_by' must be one of independent, rule-author, unknown"):
        card_status(load_rule(rule_copy))
    card.write_text('format = 3\nrule = "physical_stability_l4"\n', encoding="utf-8")
    with pytest.raises(DataError, match="'format' must be 1 or 2"):
        card_status(load_rule(rule_copy))


def test_record_cards_rewrites_a_card_from_the_declared_sets_reproducibly(
    rule_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sets = tmp_path / "sets"
    sets.mkdir()
    fresh = (PHRASINGS / "physical_stability_l4_r4b.jsonl").read_text().splitlines(keepends=True)
    (sets / "physical_stability_l4_r5.jsonl").write_text("".join(fresh[:30]))
    (sets / "physical_stability_l4_dev.jsonl").write_text(
        "".join((PHRASINGS / "physical_stability_l4_dev.jsonl").read_text().splitlines(keepends=True)[:10])
    )
    (sets / "provenance.toml").write_text(
        '[[set]]\npattern = "*_r5.jsonl"\nwritten_by = "independent"\n'
        'tuning = { tune = "after", holdout = "before" }\nnote = "fresh"\n'
        '[[set]]\npattern = "*_dev.jsonl"\nwritten_by = "rule-author"\ntuning = "after"\n'
    )
    args = ["--rules-dir", str(rule_copy.parent), "--sets-dir", str(sets), "--date", "2026-12-02"]
    assert record_cards.main(args) == 0
    card = card_path(rule_copy)
    first = card.read_bytes()
    entries = {e.key: e for e in read_card(card)[1]}
    n_holdout = sum(json.loads(line)["split"] == "holdout" for line in fresh[:30])
    assert set(entries) == {("physical_stability_l4_r5.jsonl", "holdout"),
                            ("physical_stability_l4_r5.jsonl", "tune"),
                            ("physical_stability_l4_dev.jsonl", "all")}
    assert entries[("physical_stability_l4_r5.jsonl", "holdout")].cases == n_holdout
    assert entries[("physical_stability_l4_dev.jsonl", "all")].written_by == "rule-author"
    # unchanged rules, another day: the same bytes (an unchanged figure keeps its date)
    assert record_cards.main([*args[:-1], "2027-01-01"]) == 0 and card.read_bytes() == first
    assert record_cards.main([*args, "--check"]) == 0
    # the rule's files change: --check says so and writes nothing
    answer = rule_copy.parent / "physical_stability_l4_answer.lark"
    answer.write_text(answer.read_text() + "\n// changed\n")
    assert record_cards.main([*args, "--check"]) == 1 and card.read_bytes() == first
    # a set nobody declared is refused
    (sets / "physical_stability_l4_r6.jsonl").write_text(fresh[0])
    capsys.readouterr()
    assert record_cards.main(args) == 2
    assert "physical_stability_l4_r6.jsonl: no [[set]] of provenance.toml covers it" in capsys.readouterr().err
