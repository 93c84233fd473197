"""The answer-line finder and the strict scorer (the "before" of every table)."""

from __future__ import annotations

import pytest

from keyaudit.engine.load.answer_line import find_answer_line
from keyaudit.engine.load.strict import strict_correct


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("ANSWER: stable", "stable"),
        ("reasoning\n**ANSWER:** Unstable — D", "Unstable — D"),
        ("**ANSWER**: x", "x"),
        ("### Answer: y", "y"),
        ("> answer:z", "z"),
        ("ANSWER: first\nmore\nANSWER: last", "last"),
        ("ANSWER: first\r\nANSWER: second  ", "second"),
        ("- ANSWER: bullet", "bullet"),
        ("Final answer is stable", None),
        ("ANSWERS: no", None),
        ("", None),
    ],
)
def test_find_answer_line(response: str, expected: str | None) -> None:
    line = find_answer_line(response)
    assert (line.text if line else None) == expected


def test_first_answer_line_can_be_chosen() -> None:
    assert find_answer_line("ANSWER: a\nANSWER: b", which="first").text == "a"


@pytest.mark.parametrize(
    ("response", "key", "correct"),
    [
        ("ANSWER: Stable", "stable", True),
        ("ANSWER:   no;  new value 65 ", "no; new value 65", True),
        ("ANSWER: no; new value 65.", "no; new value 65", False),
        ("ANSWER: **stable**", "stable", False),
        ("stable", "stable", False),
        ("ANSWER: unstable", "stable", False),
    ],
)
def test_strict_scorer(response: str, key: str, correct: bool) -> None:
    assert strict_correct(response, key) is correct


def test_public_api_is_importable_from_the_engine_package() -> None:
    import keyaudit.engine as engine

    assert engine.strict_correct is strict_correct
    for name in engine.__all__:
        assert getattr(engine, name) is not None
    with pytest.raises(AttributeError):
        _ = engine.no_such_name
