"""Two answer forms read once for every rule (issue 33, round 6's misses): decimals spelled in
words ("fourteen point seven metres") and an answer written as a flat JSON object."""

from __future__ import annotations

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.reading.json_answer import MAX_FIELDS, read_json_object
from keyaudit.engine.rule_language.reading.spelled_decimals import spell_decimals
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
    ],
)
def test_rules_read_both_forms(rule: str, key: str, answer: str, accept: bool) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, f"ANSWER: {answer}")
    assert verdict.accept is accept, verdict.reason
