"""Normalised text before every grammar (issue 33, item 1): a corpus of the wrappers models put
around answers, each with the plain text every rule's grammar then reads, and the origin map that
lets a reader show the model's own words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.reading.normalise import normalise
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

CORPUS = [
    # math delimiters
    ("$D$", "D"),
    ("$$D$$", "D"),
    (r"\(D\)", "D"),
    (r"\[ \chi = -2 \]", " χ = -2 "),
    ("costs $5 only", "costs $5 only"),  # one dollar is not math
    (r"back\slash 5", r"back\slash 5"),  # outside math an unknown command is the model's text
    (r"$\foo x$", "foo x"),  # inside math it is a word
    # text and box commands keep their argument
    (r"\boxed{C}", "C"),
    (r"$\boxed{\text{stable}}$", "stable"),
    (r"$\text{yes}$; new exit $= \text{top edge, position } 6$.", "yes; new exit = top edge, position  6."),
    (r"\textbf{unstable} at \mathrm{B}/\mathrm{A}", "unstable at B/A"),
    (r"$\operatorname{slip}$", "slip"),
    # symbols
    (r"$\approx 173$ units", "≈ 173 units"),
    (r"$29^\circ$", "29°"),
    (r"$29^{\circ}$", "29°"),
    (r"$3 \times 2$", "3 × 2"),
    (r"$a \cdot b$", "a · b"),
    (r"$50\%$", "50%"),
    (r"$x \le 3$", "x ≤ 3"),
    (r"$T_A \to 2T_A$", "T_A → 2T_A"),
    (r"$\omega_D \downarrow$", "ω_D ↓"),
    # fractions and roots
    (r"$\frac{1}{2}$", "1/2"),
    (r"$\tfrac{T_A}{T_D}$", "T_A/T_D"),
    (r"$\sqrt{2}$", "sqrt(2)"),
    # spacing and sizing
    (r"$1.2\,\text{m}$", "1.2 m"),
    (r"$\left( 3 \right)$", "( 3 )"),
    (r"a\quad b", "a b"),
    # Greek letters as the letters grammars read; TeX drops the space after a control word
    (r"$\chi = 0$", "χ = 0"),
    (r"$\Delta y = 1.2$", "Δy = 1.2"),
    (r"$\Delta\omega_D = 0$", "Δω_D = 0"),
    (r"$\sin 30$", "sin 30"),
    # a word's subscript is a word apart
    (r"$\text{direction}_D$ unchanged", "direction _D unchanged"),
    # compatibility forms
    ("ＡＮＳＷＥＲ Ｄ", "ANSWER D"),
    ("𝐃", "D"),
    ("𝜒 = 2", "χ = 2"),
    ("A\u00a0B\u2009C", "A B C"),
    ("B\u200b\u200d", "B"),
    ("m/s²", "m/s²"),  # superscripts stay
    # arrows as answer markers
    ("→ D (≈105 units away)", "D (≈105 units away)"),
    ("=> yes", "yes"),
    ("-> stable", "stable"),
    ("from 60 → 120 rpm", "from 60 → 120 rpm"),  # an arrow inside the line stays
    # plain text is untouched
    ("Unstable — block B's COM lies beyond A's edge.", "Unstable — block B's COM lies beyond A's edge."),
]


@pytest.mark.parametrize(("source", "plain"), CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus(source: str, plain: str) -> None:
    assert normalise(source).text == plain


def test_every_character_knows_where_it_came_from() -> None:
    source = r"Exit: $\text{top edge}$, $\approx 6$"
    result = normalise(source)
    assert len(result.origin) == len(result.text) + 1
    start = result.text.index("top edge")
    a, b = result.source_span(start, start + len("top edge"))
    assert source[a:b] == "top edge"
    at = result.text.index("≈")
    a, b = result.source_span(at, at + 1)
    assert source[a:b] == "\\"  # the command it came from starts there
    assert source[a:].startswith(r"\approx")


PIECES = [*"ab $\\{}_^~→ Ｄ𝐃", "\\text{", "\\frac", "$$", "\\(", "\\)", "\\chi", "\\quad"]


@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_any_text_normalises_with_a_monotone_origin(text: str) -> None:
    result = normalise(text)
    assert len(result.origin) == len(result.text) + 1
    assert list(result.origin) == sorted(result.origin)
    assert all(0 <= i <= len(text) for i in result.origin)
    assert len(result.text) <= 8 * len(text) + 8


def test_deep_and_unclosed_latex_is_bounded() -> None:
    deep = "$" + r"\frac{" * 3000 + "1" + "}" * 3000 + "$"
    assert normalise(deep).text  # no recursion error, no hang
    assert normalise(r"\text{" * 5000).text is not None


@pytest.mark.parametrize(
    ("rule", "key", "answer"),
    [
        # each read as 'letter missing', 'location missing' or 'letter hedged' before issue 33
        ("compass_bearing", "D; projected endpoint is closest to D (173.1 map units away; bearing difference 28.9 degrees)",
         r"ANSWER: $D$ (closest, $\approx 173$ units; bearing difference $\approx 29^\circ$)"),
        ("compass_bearing", "D; projected endpoint is closest to D (105.5 map units away; bearing difference 29.7 degrees)",
         "ANSWER: → D (≈105 units away; ≈30° bearing difference)"),
        ("laser_mirror", "yes; exits at top, position 6",
         r"ANSWER: Exit changes: $\text{yes}$; new exit $= \text{top edge, position } 6$."),
        ("physical_stability", "stable; after removing block C, every cumulative center of mass remains within its supporting base",
         r"ANSWER: $\boxed{\text{Stable}}$"),
    ],
)
def test_wrapped_answers_are_read_by_every_rule(rule: str, key: str, answer: str) -> None:
    verdict = Scorer(load_rule(resolve_rule_path(rule))).score(key, answer)
    assert verdict.accept, verdict.reason
