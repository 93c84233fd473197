"""Answer grammars are total: every text parses (README, "ASTs"; issue 13's blind-set tuning).

A construction whose first terminal promises more (a cue "is" promising a value, a phrase whose
lookahead promises a letter) leaves the LALR parser stuck when the next terminal refuses: the
contextual lexer then drops the rest of the line and the answer is "answer unparseable". Random
sequences of each domain's own words, numbers and punctuation (seeded: the same inputs on every
run) find such states; every one must parse.
"""

from __future__ import annotations

import random

import pytest

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule

VOCABULARY = {
    "surface_topology_l4": "χ(S)|χ =|chi:|Euler characteristic|the Euler characteristic is|is|equals|=|≈"
    "|about|roughly|minus|negative|-2|-4|+2|2|0|2.0|3.5|two|zero|one|four|eight|two-holed|one-sided"
    "|two-sided|2-holed|2g|2(1-g)|(2)|2 - 2g|V - E + F|V =|E=|F :|g=|k =|genus|handles|2 handles|+|-|*"
    "|orientable|non-orientable|not orientable|orientable: yes|orientable?|orientable -|single-sided"
    "|has an inside and|an outside|unlike|compared to|a torus|the Klein bottle|sphere|(orientable)"
    "|(χ = 0)|, which is|seems|appears|looks like|probably|I think|not|or|or maybe|no wait"
    "|scratch that|(?)|?|(|)|;|,|.|x|of|—|=>|→",
    "optical_illusion": "A|B|a|A's|B's|the element|element|the circle|circle|line|A line|B bit|A pair"
    "|A-|B.|B,|bigger|smaller|larger|more big|bigger in size|the bigger one is|the larger one"
    "|which one is larger|which is bigger?|larger:|is|:|?|or|/|/ B|, or maybe|or maybe"
    "|or they are equal|equal|the same|the same as before|same size|neither|nor|neither one is bigger"
    "|neither A nor B is|>|<|=|looks|appears|appears to be|as it appears|at first glance"
    "|the illusion makes|illusion|makes|without the context|without the lines|my answer stays the same"
    "|same answer|different answer|answer|change?|changes|stays the same|no change|yes|no|nope|not"
    "|wait|actually|probably|I think|seems|(?)|than|2|1.5|;|,|.|-|—",
}


@pytest.mark.parametrize("rule", sorted(VOCABULARY))
def test_random_answers_of_the_domains_words_parse(rule: str) -> None:
    grammar = load_rule(resolve_rule_path(rule)).answer_grammar
    words = VOCABULARY[rule].split("|")
    rnd = random.Random(13)
    stuck = []
    for _ in range(4000):
        text = "".join(
            rnd.choice(words) + rnd.choice(["", " ", " ", " "]) for _ in range(rnd.randint(1, 8))
        ).strip()
        try:
            grammar.parse(text)
        except Exception as error:  # noqa: BLE001 - any failure to parse is the finding
            stuck.append(f"{text!r}: {error}")
    assert not stuck, stuck[:5]
