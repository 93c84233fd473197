"""Answer forms read once for every rule (issue 33, rounds 6 and 7's misses): decimals spelled in
words ("fourteen point seven metres"), an answer written as a flat JSON object, and an answer line's
layout (a padding label, a one-line table, numbered sub-answers, proper fractions)."""

from __future__ import annotations

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.reading.answer_layout import read_layout
from keyaudit.engine.rule_language.reading.json_answer import MAX_FIELDS, read_json_object
from keyaudit.engine.rule_language.reading.spelled_decimals import spell_decimals, spell_measures
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("Clears by zero point six metres", "Clears by 0.6 metres"),
        ("It clears the obstacle by fourteen point seven metres.", "It clears the obstacle by 14.7 metres."),
        ("two hundred sixty-four point one degrees", "264.1 degrees"),
        ("Fifty-seven point two five m", "57.25 m"),
        ("one hundred and twenty point oh five", "120.05"),
        ("minus two point five", "-2.5"),
        ("minus zero point five", "-0.5"),
        # no decimal point in words: left to the grammars, which tell "one" from "no one"
        ("sixty-five psi", "sixty-five psi"),
        ("the point is one", "the point is one"),
        ("at one point I thought so", "at one point I thought so"),
        ("the one pointing left", "the one pointing left"),
        ("7.5 m, not seven", "7.5 m, not seven"),
    ],
)
def test_decimals_in_words_are_written_in_digits(text: str, written: str) -> None:
    assert spell_decimals(text) == written


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ('{"landmark": "C", "distance": 255}', "landmark: C; distance: 255"),
        ('{"changes": "no", "exit": "bottom, position 7"}', "changes: no; exit: bottom, position 7"),
        ('{"lowest_failing_joint": "B-A", "stable": false}', "lowest failing joint: B-A; stable: no"),
        ('{"bigger": "A", "note": null}', "bigger: A"),
        # not a flat object: as it is
        ('{"status": {"value": "tips"}}', '{"status": {"value": "tips"}}'),
        ('{"joints": ["B-A"]}', '{"joints": ["B-A"]}'),
        ("{not json}", "{not json}"),
        ("{}", "{}"),
        ("stable {as drawn}", "stable {as drawn}"),
        ("[1, 2]", "[1, 2]"),
    ],
)
def test_a_flat_json_object_is_read_as_its_fields(text: str, read: str) -> None:
    assert read_json_object(text) == read


def test_a_long_json_object_is_data_not_an_answer() -> None:
    long = "{" + ", ".join(f'"k{i}": {i}' for i in range(MAX_FIELDS + 1)) + "}"
    assert read_json_object(long) == long


@pytest.mark.parametrize(
    ("rule", "key", "answer", "accept"),
    [
        ("projectile_motion", "clears; by 14.7 m", "It clears the obstacle by fourteen point seven metres.", True),
        ("projectile_motion", "clears; by 14.7 m", "It clears the obstacle by fourteen point two metres.", False),
        ("projectile_motion", "hits; at 9.6 m", "It hits, at nine point six metres.", True),
        ("compass_bearing",
         "C; projected endpoint is closest to C (254.9 map units away; bearing difference 7.7 degrees)",
         '{"landmark": "C", "distance": 255, "bearing_diff": 78}', True),
        ("compass_bearing",
         "C; projected endpoint is closest to C (254.9 map units away; bearing difference 7.7 degrees)",
         '{"landmark": "B", "distance": 255}', False),
        ("laser_mirror", "no; exits at bottom, position 7", '{"changes": "no", "exit": "bottom, position 7"}', True),
        ("laser_mirror", "no; exits at bottom, position 7", '{"changes": "no", "exit": "top, position 7"}', False),
        ("physical_stability_l4", "tips between block B and block A",
         '{"status": "tips", "lowest_failing_joint": "B-A"}', True),
        ("physical_stability_l4", "tips between block B and block A",
         '{"status": "stable", "lowest_failing_joint": "none"}', False),
        # the answer line's layout
        ("compass_bearing", "B; projected endpoint is closest to B (97.3 map units away; bearing difference 30.0 degrees)",
         "| Closest | Distance | | B | 97 units |", True),
        ("physical_stability", "stable; after removing block E, every cumulative center of mass remains within its supporting base",
         "Final: stable - every centre of mass is supported", True),
        ("gauge_reading_l4", "yes; exceeds threshold by 0.5", "Yes, by 1/2", True),
        ("gauge_reading_l4", "yes; exceeds threshold by 0.5", "Yes, by 3/4", False),
        ("surface_topology_l4", "0; non-orientable", "1) 0 2) non-orientable", True),
    ],
)
def test_rules_read_each_form(rule: str, key: str, answer: str, accept: bool) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, f"ANSWER: {answer}")
    assert verdict.accept is accept, verdict.reason


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Final: landmark C, about 250 units", "landmark C, about 250 units"),
        ("Result: stable (all supported)", "stable (all supported)"),
        ("Final answer - B", "B"),
        ("finally stable", "finally stable"),  # a word, not a padding label
        ("| Nearest landmark | Distance | | B | ~97 units |", "Nearest landmark: B; Distance: ~97 units"),
        ("| a | b | |---|---| | 1 | 2 |", "a: 1; b: 2"),
        ("| a | b | | 1 |", "| a | b | | 1 |"),  # rows of different lengths: no table
        ("1) χ = 0 2) non-orientable", "χ = 0; non-orientable"),
        ("1. Status: stable 2. Lowest failing joint: none", "Status: stable; Lowest failing joint: none"),
        ("2) only", "2) only"),  # a list starts at 1
        ("1) alone", "1) alone"),  # ... and has two items
        ("Yes, by 1/2", "Yes, by 0.5"),
        ("by 3/4 of a unit", "by 0.75 of a unit"),
        ("by 2/3", "by 2/3"),  # no short decimal
        ("the C/B joint", "the C/B joint"),
        ("12/5", "12/5"),
        ("on 1/2/2026", "on 1/2/2026"),
        ("5/4", "5/4"),  # not a proper fraction
    ],
)
def test_an_answer_lines_layout_is_read_as_clauses(text: str, read: str) -> None:
    assert read_layout(text) == read


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("Hits the building at twenty-seven metres", "Hits the building at 27 metres"),
        ("makes it over, by seventeen metres", "makes it over, by 17 metres"),
        ("twelve and a half minutes in", "12.5 minutes in"),
        ("about half a metre", "about 0.5 metre"),
        ("two hundred seventy degrees", "270 degrees"),
        ("about forty-five map units away", "about 45 map units away"),
        # no unit after it: left to the grammars ("one of them", "no one")
        ("one of them", "one of them"),
        ("seven", "seven"),
        ("the seventh metre", "the seventh metre"),
        # a misspelt number word before it may be part of the number: not read as its last part
        ("fourty six and a half minutes", "fourty six and a half minutes"),
    ],
)
def test_whole_numbers_in_words_before_a_unit_are_written_in_digits(text: str, written: str) -> None:
    assert spell_measures(text) == written
