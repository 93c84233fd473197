"""The question restated anywhere on the answer line is set aside before any grammar reads it
(issue 33, item 2): the restatement's words are the question's, never the model's claims."""

from __future__ import annotations

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.reading.restated import drop_restated_question, question_words
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

COMPASS_B = "B; projected endpoint is closest to B (100.1 map units away; bearing difference 7.7 degrees)"
PS_QUESTION = "After removing the top block, is the stack stable? If not, at which joint does it fail?"
WORDS = question_words(PS_QUESTION)


def test_question_words_leave_out_placeholders_and_stop_words() -> None:
    assert question_words("If force {LABEL} were removed, would it slip?") == frozenset(
        {"force", "remov", "slip"}  # light stems: "removes" and "removing" restate "removed"
    )
    assert {"remov", "top", "block", "stack", "stable", "joint", "fail"} <= WORDS


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("After removing the top block, is the stack stable? unstable, B slides off A",
         " unstable, B slides off A"),
        ("Unstable at B/A; would the stack stay stable after removing the top block? Never.",
         "Unstable at B/A;  Never."),
        # answered by a bare yes or no: the restatement goes, the answer stays
        ("Is the stack stable after removing the top block? No: B/A fails.", " No: B/A fails."),
        # two of the question's words and nothing else (stems: "tips" restates "tip")
        ("Stable, or does it fail? Stable.", " Stable."),
        # the model's own answer asked back is no restatement, however few its words
        ("Stable joint?", "Stable joint?"),
        ("Stable, the stack is stable after removing the top block (?)",
         "Stable, the stack is stable after removing the top block (?)"),  # a hedge mark
        ("Which joint fails? B/A.", "Which joint fails? B/A."),  # a label the answer needs
        # ... but answered by a bare yes/no, a short one names the part it answers: it stays
        ("Does it tip? No.", "Does it tip? No."),
        # the model asking is not a restatement: too few of the question's words, or its own
        ("Stable?", "Stable?"),
        ("Unstable at the B/A joint?", "Unstable at the B/A joint?"),
        ("Unstable, B's centre of mass is past A's edge?", "Unstable, B's centre of mass is past A's edge?"),
        ("no question here", "no question here"),
        # both of the question's sentences restated: the second's two words ("joint", "fail") are
        # the question's, and it follows the first at once
        ("After removing the top block, is the stack stable? If not, at which joint does it fail? Stable.",
         " Stable."),
        # ... but two of the question's words asked after the model's own sentence are the model's
        ("Unstable. Which joint fails? B/A.", "Unstable. Which joint fails? B/A."),
        ("After removing the top block, is the stack stable? Unstable. Which joint fails? B/A.",
         " Unstable. Which joint fails? B/A."),
    ],
)
def test_restated_sentences_are_dropped_and_nothing_else(text: str, kept: str) -> None:
    assert drop_restated_question(text, WORDS) == kept


@pytest.mark.parametrize(
    ("rule", "key", "answer", "accept"),
    [
        ("physical_stability",
         "unstable; after removing block C, the cumulative center of mass at the joint between block B and block A lies outside its supporting base",
         "After removing the top block, is the stack stable? Unstable: B slides off A.", True),
        ("gauge_reading", "no; new value 95",
         "Would it exceed the maximum value on the scale? It does not; new value 95.", True),
        ("gauge_reading", "yes; new value 95",
         "Would it exceed the maximum value on the scale? It does not; new value 95.", False),
        ("gear_train", "increase; direction unchanged",
         "Increase. Would the direction change? No.", True),
        ("gear_train", "increase; direction unchanged",
         "D's speed would increase. Would its direction change? No.", True),
        ("gauge_reading", "no; new value 95",
         "Would it exceed the maximum value on the scale? No. New value: 95.", True),
        ("physical_stability_l4", "stable", "Stable, or will it tip? Stable.", True),
        # a letter right after a question's "?" is alone in its clause: the answer
        ("compass_bearing", COMPASS_B, "Which landmark is closest? B.", True),
        ("compass_bearing", COMPASS_B, "Which landmark is closest? C.", False),
        ("compass_bearing", COMPASS_B, "Is it C? B.", False),  # C asked, B said: doubtful
        # a question asking which value ("which", "what", "how", "where") restates, even where its
        # "?" is the grammar's own hedge after a value word; a claim asked back stays hedged
        ("optical_illusion", "yes; actually equal", "Yes. Which is actually bigger? Neither.", True),
        ("optical_illusion", "yes; actually equal", "Yes. Which is bigger? Neither, they are equal.", True),
        ("optical_illusion", "yes; element B is actually bigger", "Yes. B is bigger?", False),
        # a short question of no claim labels the answer after it
        ("gear_train", "stay the same; direction unchanged",
         "Speed of D? Stays the same. Direction? Unchanged.", True),
        ("gear_train", "stay the same; direction reversed",
         "Speed of D? Stays the same. Direction? Unchanged.", False),
    ],
)
def test_rules_read_the_answer_after_the_restated_question(rule, key, answer, accept) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, f"ANSWER: {answer}")
    assert verdict.accept is accept, verdict.reason


SURFACE = (
    "Combine the depicted surface's genus/handle structure and orientability: report its Euler "
    "characteristic, followed by whether it is orientable or non-orientable."
)


@pytest.mark.parametrize(
    "text, kept",
    [
        # the question's instruction copied, no "?": the question's text, not a claim
        ("Report its Euler characteristic, followed by whether it is orientable or non-orientable. 0; orientable",
         "0; orientable"),
        # the model's own answer in the question's words: too few of them in copied runs
        ("Its Euler characteristic is 0 and it is orientable", "Its Euler characteristic is 0 and it is orientable"),
        ("0; orientable", "0; orientable"),
        # a run shorter than RUN words is not a copy
        ("whether it is orientable: yes", "whether it is orientable: yes"),
    ],
)
def test_a_sentence_copied_from_the_question_is_dropped(text: str, kept: str) -> None:
    from keyaudit.engine.rule_language.reading.restated import question_runs

    got = drop_restated_question(text, question_words(SURFACE), question_runs(SURFACE))
    assert " ".join(got.split()).strip(" .") == kept


def test_a_copied_sentence_with_the_models_own_negation_stays() -> None:
    from keyaudit.engine.rule_language.reading.restated import question_runs

    question = ("If the needle value increased by 25% of the gauge's full range, would it exceed the "
                "maximum value on the scale? Answer yes or no, and give the new value.")
    line = ("If the needle value increased by 25% of the gauge's full range, it would not exceed the "
            "maximum value on the scale; the new value would be 47.5.")
    assert drop_restated_question(line, question_words(question), question_runs(question)) == line


def test_a_statement_asked_back_is_no_restated_question() -> None:
    # "the projected endpoint is closest to A?": the model's answer asked, not the question
    # (no question word opens it or a clause of it): it stays, for the claim layer's hedge
    words = question_words("Which landmark is the projected endpoint closest to?")
    text = "A; projected endpoint is closest to A?"
    assert drop_restated_question(text, words) == text
    assert drop_restated_question("Which landmark is the projected endpoint closest to? A", words).strip() == "A"
