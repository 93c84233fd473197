"""Tolerant words (issue 33, item 3): a long value word misspelt by one swap, one letter extra or
missing inside it, or one letter for its keyboard neighbour, is read as that word and marked
uncertain; a rule may ask for exact words."""

from __future__ import annotations

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.reading.tolerant import TolerantWords, one_edit
from keyaudit.engine.rule_language.rules.rule import RuleError, load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer


@pytest.mark.parametrize(
    ("typed", "known", "expected"),
    [
        ("stabel", "stable", True),  # swap at the end
        ("posiiton", "position", True),
        ("incraese", "increase", True),
        ("decrase", "decrease", True),  # a letter missing inside
        ("increasse", "increase", True),  # a letter extra inside
        ("tsable", "stable", False),  # the first letter is never the typo
        ("slowed", "slower", False),  # inflections differ in the last two letters
        ("increases", "increase", False),
        ("chances", "changes", False),  # one letter for another: another word
        ("charge", "change", False),  # ... unless it is the key next to it
        ("botton", "bottom", True),  # m and n are neighbours; "bottom" does not inflect there
        ("colunn", "column", True),
        ("colum", "column", True),  # the last letters of a word that does not inflect there
        ("bottm", "bottom", True),
        ("biggr", "bigger", False),  # "-er" inflects: a letter missing there is another word
        ("large", "larger", False),
        ("loser", "lower", False),  # a neighbouring key, but a word shorter than six letters
        ("stpble", "stable", False),  # p and a are no neighbours
        ("stable", "stable", False),
    ],
)
def test_one_edit(typed: str, known: str, expected: bool) -> None:
    assert one_edit(typed, known) is expected


def test_only_an_unknown_word_one_edit_from_exactly_one_known_word_is_read() -> None:
    words = TolerantWords(frozenset({"stable", "unstable", "position", "fail", "station", "statoin"}))
    assert words.correct("Stabel at posiiton 3") == "Stable at position 3"
    assert words.typos("Stabel at posiiton 3") == [("Stabel", "Stable"), ("posiiton", "position")]
    assert words.correct("fial") == "fial"  # shorter than five letters: read as written
    assert words.correct("statoin") == "statoin"  # a known word is never changed


def _every_target(words: TolerantWords, word: str) -> str | None:
    """The reading by comparing ``word`` with every target (what the index must equal)."""
    lower = word.lower()
    if len(lower) < 5 or lower in words.known:
        return None
    found = [t for t in words.targets if one_edit(lower, t)]
    if len(found) != 1:
        return None
    return found[0].capitalize() if word[0].isupper() else found[0]


def test_the_index_by_first_letter_and_length_reads_what_every_target_would() -> None:
    """Each bundled rule's words: every target with each typo the module reads (and some it
    does not), read through the index and memo as by comparing with every target."""
    for name in ("gauge_reading", "laser_mirror", "gear_train"):
        words = load_rule(resolve_rule_path(name)).answer_format.tolerant
        assert words is not None
        probes = []
        for target in sorted(words.targets):
            probes += [target[:-2] + target[-1] + target[-2], target[:2] + target[3:], target[:2] + "x" + target[2:]]
            probes += [target.capitalize(), target[:1] + target[2:], "q" + target[1:]]
        assert sum(_every_target(words, p) is not None for p in probes) > 100  # the probes read typos
        for probe in probes + probes:  # twice: the second answers from the memo
            assert words._reading(probe) == _every_target(words, probe), (name, probe)


def test_the_memo_of_readings_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("keyaudit.engine.rule_language.reading.tolerant.MEMO_WORDS", 3)
    words = TolerantWords(frozenset({"stable", "position"}))
    for word in ("stabel", "posiiton", "other", "fourth", "fifth"):
        words.correct(word)
    assert len(words._memo) <= 3
    assert words.correct("Stabel") == "Stable"


RULES: dict[str, Scorer] = {}


def score(rule: str, key: str, answer: str):
    scorer = RULES.setdefault(rule, Scorer(load_rule(resolve_rule_path(rule))))
    return scorer.score(key, f"ANSWER: {answer}")


def test_a_typo_is_read_and_named_among_the_uncertain_reasons() -> None:
    verdict = score("laser_mirror", "yes; exits at bottom, position 1", "yes; exits at bottom, posiiton 1")
    assert verdict.accept
    assert "read 'posiiton' as 'position' (one letter off)" in verdict.uncertain
    assert score("gear_train", "decrease; direction unchanged", "decrase; diretcion unchanged").accept


def test_a_rule_that_asks_for_exact_words_reads_none() -> None:
    key = "stable; after removing block C, every cumulative center of mass remains within its supporting base"
    assert not score("physical_stability", key, "stabel").accept  # the seed: exactly stable


def test_exact_words_must_be_true_or_false(tmp_path) -> None:
    source = resolve_rule_path("gear_train").read_text(encoding="utf-8")
    bad = tmp_path / "gear_train.toml"
    bad.write_text(source.replace('delete = "*_`"', 'delete = "*_`"\nexact_words = "yes"', 1), encoding="utf-8")
    for grammar in resolve_rule_path("gear_train").parent.parent.joinpath("grammars").glob("gear_train_*.lark"):
        (tmp_path / grammar.name).write_text(grammar.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(RuleError, match="exact_words"):
        load_rule(bad)


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("closest to b (about 60 units)", "closest to B (about 60 units)"),
        ("b slides off a.", "B slides off A."),
        ("joint between c and b", "joint between C and B"),
        ("unstable at b/a", "unstable at B/A"),
        ("block a", "block A"),
        ("a block slides", "a block slides"),  # the article
        ("i think d", "i think D"),  # the pronoun stays
        ("2 x faster", "2 x faster"),  # a times sign stays
        ("after 30 s, 12 m up", "after 30 s, 12 m up"),  # a unit after a number stays
        ("D's speed", "D's speed"),
    ],
)
def test_lower_case_labels_are_read_as_capitals(text: str, read: str) -> None:
    from keyaudit.engine.rule_language.reading.tolerant import capital_labels

    assert capital_labels(text) == read


def test_rules_with_labels_read_lower_case_letters() -> None:
    key = "B; projected endpoint is closest to B (60.0 map units away; bearing difference 30.0 degrees)"
    assert score("compass_bearing", key, "closest to b (about 60 units, 30 degree difference)").accept
    ps = ("unstable; after removing block D, the cumulative center of mass at the joint between "
          "block C and block B lies outside its supporting base")
    assert score("physical_stability", ps, "unstable; c slides off b").accept
