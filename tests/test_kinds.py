"""Issue 33, item 4: shared value kinds (``%use NAME``), each read against its own corpus.

Two parts: the mechanism (a kind's text is taken in after the domain's, the domain's own
definitions win, errors name the kind and the line, the kind is part of the rule's version) and
every bundled kind's corpus, lexed by the kind alone (``engine/rule_language/authoring/kind_corpus.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from keyaudit.engine.errors import RuleError
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.authoring.kind_corpus import (
    CorpusError,
    check_corpus,
    read_corpus,
)
from keyaudit.engine.rule_language.reading.grammar import compile_grammar, read_grammar
from keyaudit.engine.rule_language.reading.kinds import kind_dir, kinds_used, splice_kinds
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer
from keyaudit.engine.stats.rule_version import rule_files

KINDS = sorted(p.stem for p in kind_dir().glob("*.lark"))

_DOMAIN = """\
%use change
%part CHANGE_NOUN: brightness
%part MORE_WORDS: brighter
%part LESS_WORDS: dimmer
start: _item*
_item: change | WORD | OTHER
change: UP | DOWN | SAME | CHANGES
WORD.1: /[A-Za-z][A-Za-z0-9'-]*/
OTHER.0: /[^\\sA-Za-z0-9]/
%import .common (WS)
%ignore WS
"""


def _grammar(tmp_path: Path, text: str, name: str = "domain") -> Path:
    path = tmp_path / f"{name}_answer.lark"
    path.write_text(text, encoding="utf-8")
    return path


def _values(path: Path, text: str) -> list[str]:
    tree = compile_grammar(path).parse(text)
    return [leaf.kind for node in tree.find("change") for leaf in node.children]


@pytest.mark.parametrize("kind", KINDS)
def test_every_bundled_kind_reads_its_corpus(kind: str) -> None:
    cases, failures = check_corpus(kind)
    assert cases >= 20, f"the {kind} corpus is too small to say much"
    assert failures == []


def test_every_kind_has_a_corpus_and_a_header() -> None:
    for kind in KINDS:
        assert (kind_dir() / f"{kind}.corpus").is_file(), kind
        assert (kind_dir() / f"{kind}.lark").read_text(encoding="utf-8").startswith(f"// Value kind `{kind}`")


def test_a_domain_grammar_reads_the_kind_with_its_own_words(tmp_path: Path) -> None:
    path = _grammar(tmp_path, _DOMAIN)
    assert _values(path, "bulb X gets brighter") == ["UP"]
    assert _values(path, "it goes down") == ["DOWN"]  # the kind's general words
    assert _values(path, "neither grows nor shrinks") == ["SAME"]
    assert _values(path, "it is dimmer now") == ["DOWN"]
    # without its slots filled, the kind does not read the domain's comparatives
    bare = _grammar(tmp_path, _DOMAIN.replace("%part MORE_WORDS: brighter\n", ""), "bare")
    assert _values(bare, "bulb X gets brighter") == []


def test_the_domains_own_definition_wins_over_the_kinds(tmp_path: Path) -> None:
    text = _DOMAIN + "%phrase SAME.7: steady as a rock\n"
    path = _grammar(tmp_path, text)
    assert _values(path, "steady as a rock") == ["SAME"]
    assert _values(path, "it stays the same") == []  # the kind's SAME is replaced, not merged


def test_the_domains_line_numbers_stay_and_the_kind_is_appended() -> None:
    spliced = splice_kinds(_DOMAIN)
    own = _DOMAIN.split("\n")
    assert spliced.text.split("\n")[: len(own)][1:] == own[1:]  # only the %use line is blanked
    assert spliced.text.split("\n")[0] == ""
    first, path = spliced.segments[0]
    assert path.name == "change.lark" and first == len(own) + 1
    assert spliced.origin(first + 4) == (path, 5)
    assert spliced.origin(2) == (None, 2)


def test_an_unknown_kind_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = _grammar(tmp_path, "start: WORD\n%use chnage\nWORD: /[a-z]+/\n")
    with pytest.raises(RuleError) as error:
        read_grammar(path)
    message = str(error.value)
    assert f"{path}:2" in message and "no value kind named 'chnage'" in message and "change" in message


def test_a_kind_part_the_domain_breaks_is_an_error_naming_the_kind(tmp_path: Path) -> None:
    # the domain's CHANGE_NOUN refers to a part nobody defines: the phrase error is in the kind's text
    path = _grammar(tmp_path, _DOMAIN.replace("%part CHANGE_NOUN: brightness", "%part CHANGE_NOUN: {LIGHT}"))
    with pytest.raises(RuleError) as error:
        read_grammar(path)
    assert "LIGHT" in str(error.value)


def test_kinds_are_read_only_from_the_bundled_folder(tmp_path: Path) -> None:
    (tmp_path / "kinds").mkdir()
    (tmp_path / "kinds" / "mine.lark").write_text("%phrase UP.6: upward\n", encoding="utf-8")
    path = _grammar(tmp_path, "%use mine\nstart: WORD\nWORD: /[a-z]+/\n")
    with pytest.raises(RuleError, match="no value kind named 'mine'"):
        read_grammar(path)


def test_kinds_used_follow_kinds_through_kinds_once() -> None:
    assert [p.name for p in kinds_used(_DOMAIN)] == ["change.lark"]
    assert [p.name for p in kinds_used(_DOMAIN + "%use change\n%use polarity\n")] == ["change.lark", "polarity.lark"]
    assert kinds_used("start: WORD\n") == []


def test_a_kind_is_a_file_of_every_rule_that_uses_it() -> None:
    files = rule_files(load_rule(resolve_rule_path("projectile_motion")))
    kinds = [f for f in files if f.role == "kind"]
    assert [f.name for f in kinds] == ["kinds/change.lark"]
    assert all(len(f.sha256) == 64 for f in kinds)


def test_a_bundled_rule_reads_through_its_kind() -> None:
    projectile = Scorer(load_rule(resolve_rule_path("projectile_motion")))
    assert projectile.score("increase", "ANSWER: The range grows.").accept
    assert projectile.score("decrease", "ANSWER: The range shrinks (↓).").accept
    assert projectile.score("stay the same", "ANSWER: The range neither grows nor shrinks.").accept
    assert projectile.score("increase", "ANSWER: The flight time gets longer.").reason == "change missing"


def test_a_malformed_corpus_line_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "x.corpus"
    path.write_text("# fine\nUP it goes up\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"x\.corpus:2: expected"):
        read_corpus(path)
    path.write_text("UP\tit [goes [up]\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"x\.corpus:1: at most one"):
        read_corpus(path)


_L5_CB = (
    "unstable; after removing block D, the cumulative center of mass at the joint between block C "
    "and block B lies outside its supporting base"
)
#: The seed's explicit and relational constructions of a joint (issue 33, item 4), as the answer
#: after the status word; every one names (C, B) through the `pair` kind.
_PAIR_PHRASINGS = [
    "it fails between C and B",
    "at the C–B contact",
    "at C/B",
    "it fails at C over B",
    "it fails at C on B",
    "the joint is C over B",
    "(upper, lower) = (C, B)",
    "at the joint where C sits on B",
    "it fails where C sits on B",
    "between C and the block under it, B",
    "at $C$–$B$",  # LaTeX reaches the kind as plain text
    "joint $(C, B)$",
    "at c/b",  # lower-case labels: [answer] labels = true
    "the stack above B tips off B",
]


@pytest.mark.parametrize("words", _PAIR_PHRASINGS)
@pytest.mark.parametrize(("rule", "key", "status"), [
    ("physical_stability", _L5_CB, "unstable"),
    ("physical_stability_l4", "tips between block C and block B", "tips"),
])
def test_both_stability_rules_read_the_seeds_pair_constructions(rule, key, status, words) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, f"ANSWER: {status}; {words}")
    assert verdict.accept and verdict.values["joint"] == ["C", "B"], verdict.reason


@pytest.mark.parametrize(("words", "reason"), [
    ("C is over B", "joint missing"),  # support, not a failure
    ("C is over B but D is off C", "joint wrong"),  # D fails on C; C's support is no joint
    ("not at C/B but at D/C", "joint wrong"),  # a place denied
    ("at C/B or B/A", "joints conflict"),  # two pairs offered
    ("between B and the block under it, A", "joint wrong"),
    ("at B over C", "joint reversed"),  # the order is the place's: B rests on C
])
@pytest.mark.parametrize(("rule", "key", "status"), [
    ("physical_stability", _L5_CB, "unstable"),
    ("physical_stability_l4", "tips between block C and block B", "tips"),
])
def test_pairs_that_are_not_the_failing_joint(rule, key, status, words, reason) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, f"ANSWER: {status}; {words}")
    assert (verdict.accept, verdict.reason) == (False, reason)


def test_the_pair_kind_is_a_file_of_both_stability_rules() -> None:
    for name in ("physical_stability", "physical_stability_l4"):
        files = rule_files(load_rule(resolve_rule_path(name)))
        assert "kinds/pair.lark" in [f.name for f in files if f.role == "kind"]
