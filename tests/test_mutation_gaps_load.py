"""Gaps a mutation-testing pass found in the loaders (issue 28): the answer line's number when the
first line is chosen, custom labels, and the strict scorer's normalisation."""

from __future__ import annotations

import dataclasses

import pytest

from keyaudit.engine.load.answer_line import AnswerLine, find_answer_line, label_pattern
from keyaudit.engine.load.strict import normalise_strict, strict_correct

RESPONSE = "thinking\nANSWER: a\nmore thinking\n**Answer:** b  \nthe end"


def test_line_number_of_the_first_and_the_last_answer_line() -> None:
    assert find_answer_line(RESPONSE, which="first") == AnswerLine("a", 2)
    assert find_answer_line(RESPONSE, which="last") == AnswerLine("b", 4)
    assert find_answer_line(RESPONSE) == AnswerLine("b", 4)  # "last" is the default
    assert find_answer_line("ANSWER: only", which="first") == AnswerLine("only", 1)


def test_an_answer_on_the_first_line_is_found_from_the_end() -> None:
    assert find_answer_line("ANSWER: top\nno label here\nnor here") == AnswerLine("top", 1)
    assert find_answer_line("x\nANSWER: bottom") == AnswerLine("bottom", 2)


def test_no_answer_line_either_way() -> None:
    for which in ("first", "last"):
        assert find_answer_line("no label\nat all", which=which) is None
        assert find_answer_line("", which=which) is None


@pytest.mark.parametrize(
    ("label", "response", "expected"),
    [
        ("Final answer:", "x\nFinal answer: 42\n", AnswerLine("42", 2)),
        ("Final answer", "**Final Answer**: 42", AnswerLine("42", 1)),
        ("INDEX:", "reasoning\nINDEX: 7", AnswerLine("7", 2)),  # a label ending in X
        ("BOX:", "> box: 3", AnswerLine("3", 1)),
    ],
)
def test_a_custom_label(label: str, response: str, expected: AnswerLine) -> None:
    assert find_answer_line(response, label) == expected
    assert find_answer_line(response) is None  # not an "ANSWER:" line
    assert label_pattern(label).match(response.splitlines()[expected.line_number - 1])


def test_decorations_around_the_label_are_dropped() -> None:
    assert find_answer_line("  ## > - *ANSWER*: x").text == "x"
    assert find_answer_line("`ANSWER:` y").text == "y"
    assert find_answer_line("ANSWER is: z") is None


def test_an_answer_line_is_a_frozen_hashable_value() -> None:
    line = AnswerLine("a", 1)
    assert hash(line) == hash(AnswerLine("a", 1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        line.text = "b"  # type: ignore[misc]


def test_strict_scorer_with_a_custom_label() -> None:
    response = "Reasoning...\nFinal: Stable\nANSWER: unstable"
    assert strict_correct(response, "stable", label="Final:") is True
    assert strict_correct(response, "stable") is False
    assert strict_correct(response, "unstable") is True
    assert strict_correct("no label", "stable", label="Final:") is False


def test_strict_normalisation() -> None:
    assert normalise_strict("  No;\t new   VALUE 65 \n") == "no; new value 65"
    assert normalise_strict("Straße") == "strasse"  # casefold, not lower
    assert normalise_strict("") == ""
