"""Gaps a mutation-testing pass found in the claim layer (issue 28), tested on the layer itself.

The answers here are item sequences built by hand, so each test states exactly which claims,
subjects, nouns and triggers the layer reads, independently of any grammar:

* ``"speed=increase"``: a claim of kind ``speed`` with that value (``a|b``: a list of values;
  ``"speed=stay the same!"``: a *bare* predicate, one that may speak of a kind named just before);
* ``"@C"``: a subject mention of entity C; ``"#speed"``: a noun naming the kind speed;
* ``"NEG:not"``, ``"HEDGE:probably"``, ``"ALT:or"``, ``"CORRECTION:wait"``, ``"B:;"`` (a boundary):
  the shared trigger terminals;
* anything else: a plain word.

The rule's target is entity D.
"""

from __future__ import annotations

import pytest

from keyaudit.engine.rule_language.reading.ast import Leaf, Node
from keyaudit.engine.rule_language.reading.claims import (
    Claim,
    ClaimSet,
    ClaimSpec,
    KindResult,
    read_claims,
)

SPEED = ("increase", "decrease", "stay the same")
SPEC = ClaimSpec(
    kinds={"speed": SPEED, "direction": ("unchanged", "reversed"), "letter": ()},
    subject="entity",
    nouns={"speed_noun": "speed", "direction_noun": "direction"},
    steady={"speed": "stay the same", "direction": "unchanged"},
)
TRIGGERS = {"NEG", "HEDGE", "ALT", "CORRECTION", "B"}
#: The same triggers as grammar rule nodes (``"b:;"``, ``"neg:nor"``): a grammar may wrap a
#: trigger token in a rule of the trigger's name.
NODE_TRIGGERS = {"b": "boundary", "neg": "neg", "hedge": "hedge", "alt": "alt"}


def answer(*tokens: str) -> Node:
    """The answer node of ``tokens`` (see the module docstring)."""
    parts: list[tuple[str, str, object, object]] = []  # (node kind, text, value, bare)
    for token in tokens:
        head, sep, rest = token.partition(":")
        if sep and head in TRIGGERS:
            parts.append(("BOUNDARY" if head == "B" else head, rest, None, None))
        elif sep and head in NODE_TRIGGERS:
            parts.append((NODE_TRIGGERS[head], rest, None, None))
        elif token.startswith("@"):
            parts.append(("entity", token[1:], token[1:], None))
        elif token.startswith("#"):
            parts.append((f"{token[1:]}_noun", token[1:], None, None))
        elif "=" in token:
            kind, _, value = token.partition("=")
            bare = value.endswith("!")
            value = value.rstrip("!")
            parts.append((kind, value, value.split("|") if "|" in value else value, bare))
        else:
            parts.append(("WORD", token, None, None))
    source = " ".join(text for _, text, _, _ in parts)
    items: list[Node | Leaf] = []
    at = 0
    for kind, text, value, bare in parts:
        start, end = at, at + len(text)
        at = end + 1
        if kind in ("BOUNDARY", "NEG", "HEDGE", "ALT", "CORRECTION", "WORD"):
            items.append(Leaf(kind, text, start, end))
            continue
        node = Node(kind, [Leaf("WORD", text, start, end)], source, start, end)
        if kind in NODE_TRIGGERS.values():
            node = Node(kind, [Leaf(kind.upper(), text, start, end)], source, start, end)
        elif kind == "entity":
            node._memo["name"] = value
        elif not kind.endswith("_noun"):
            node._memo["value"] = value
            node._memo["bare"] = bare
        items.append(node)
    return Node("start", items, source, 0, len(source))


def read(*tokens: str, spec: ClaimSpec = SPEC, target: object = "D") -> ClaimSet:
    return read_claims(answer(*tokens), spec, target)


def values(claims: ClaimSet) -> dict[str, list]:
    return {kind: result.values for kind, result in claims.kinds.items() if kind != "letter"}


def about(claims: ClaimSet) -> list[tuple[str, object, str | None, bool]]:
    return [(c.kind, c.value, c.subject, c.about_target) for c in claims.all_claims()]


# --- a "**C:**" heading's subject -------------------------------------------------------------


def test_a_heading_subject_holds_across_commas_and_and() -> None:
    claims = read("@C", "B::", "speed=increase", "B:,", "direction=reversed", "B:and", "speed=decrease")
    assert about(claims) == [("speed", "increase", "C", False), ("direction", "reversed", "C", False),
                             ("speed", "decrease", "C", False)]
    assert values(claims) == {"speed": [], "direction": []}


@pytest.mark.parametrize("keeping", [",", "and", "(", ")"])
def test_each_clause_end_a_heading_reaches_across(keeping: str) -> None:
    claims = read("@C", "B::", "speed=increase", f"B:{keeping}", "direction=reversed")
    assert [c.subject for c in claims.all_claims()] == ["C", "C"], keeping


@pytest.mark.parametrize("ending", [";", ".", "!", "|", "—", "but", "-"])
def test_other_clause_ends_end_the_heading(ending: str) -> None:
    claims = read("@C", "B::", "speed=increase", f"B:{ending}", "direction=reversed")
    assert [c.subject for c in claims.all_claims()] == ["C", None], ending
    assert values(claims)["direction"] == ["reversed"]


def test_a_heading_holds_at_most_two_other_words() -> None:
    two = read("the", "gear", "@C", "B::", "speed=increase", "B:,", "direction=reversed")
    assert [c.subject for c in two.all_claims()] == ["C", "C"]
    three = read("the", "big", "gear", "@C", "B::", "speed=increase", "B:,", "direction=reversed")
    assert [c.subject for c in three.all_claims()] == [None, None]


def test_a_clause_with_a_claim_is_no_heading() -> None:
    claims = read("@C", "speed=increase", "B::", "direction=reversed", "B:,", "speed=decrease")
    assert [c.subject for c in claims.all_claims()] == ["C", None, None]
    assert values(claims) == {"speed": ["decrease"], "direction": ["reversed"]}


def test_a_heading_about_the_target_is_counted() -> None:
    claims = read("@D", "B::", "speed=increase", "B:,", "direction=reversed")
    assert values(claims) == {"speed": ["increase"], "direction": ["reversed"]}
    assert [c.about_target for c in claims.all_claims()] == [True, True]


def test_a_subject_before_a_parenthesis_without_claims_holds_after_it() -> None:
    claims = read("@C", "B:(", "the", "driver", "B:)", "speed=increase")
    assert about(claims) == [("speed", "increase", "C", False)]
    with_claim = read("@C", "B:(", "speed=decrease", "B:)", "speed=increase")
    assert [c.subject for c in with_claim.all_claims()] == [None, None]


# --- nouns sharing one predicate ----------------------------------------------------------------


@pytest.mark.parametrize("joiner", ["ALT:or", "ALT:/", "B:and", "B:,"])
def test_nouns_joined_before_a_shared_bare_predicate(joiner: str) -> None:
    """"speed or direction unchanged": one predicate for both kinds, said of each."""
    claims = read("#speed", joiner, "#direction", "direction=unchanged!")
    assert values(claims) == {"speed": ["stay the same"], "direction": ["unchanged"]}, joiner
    assert [n.kind for n in claims.nouns] == ["speed_noun", "direction_noun"]


def test_nouns_are_used_once() -> None:
    """A claim takes the nouns waiting for it, and they are then gone: the next claim in the
    sentence takes none."""
    claims = read("#speed", "B:and", "#direction", "direction=unchanged!", "B:,", "speed=decrease")
    assert [n.kind for n in claims.nouns] == ["speed_noun", "direction_noun"]
    assert values(claims) == {"speed": ["stay the same", "decrease"], "direction": ["unchanged"]}


def test_neither_noun_nor_noun_changes() -> None:
    claims = read("NEG:neither", "#speed", "NEG:nor", "#direction", "speed=increase|decrease!")
    assert values(claims) == {"speed": ["stay the same"], "direction": ["unchanged"]}
    assert claims.kinds["direction"].denied == ["reversed"]


@pytest.mark.parametrize("apart", ["B:—", "B::", "B:(", "B:-"])
def test_nouns_not_joined_do_not_share(apart: str) -> None:
    claims = read("#speed", apart, "#direction", "direction=unchanged!")
    assert values(claims) == {"speed": [], "direction": ["unchanged"]}, apart


@pytest.mark.parametrize("ending", [";", ".", "but", "because"])
def test_a_clause_end_outside_the_topic_clears_the_nouns(ending: str) -> None:
    claims = read("#speed", "ALT:or", "#direction", f"B:{ending}", "direction=unchanged!")
    assert values(claims) == {"speed": [], "direction": ["unchanged"]}, ending


@pytest.mark.parametrize("keeping", [",", ":", "—", "–", "-", "--", "(", ")", "[", "]", "and",
                                     "and then", "as", "if", "otherwise", "unless"])
def test_a_noun_waits_for_its_predicate_across_topic_keeping_ends(keeping: str) -> None:
    """"Direction: unchanged": a bare predicate is said of the kind the noun named."""
    claims = read("#direction", f"B:{keeping}", "speed=stay the same!")
    assert values(claims) == {"speed": [], "direction": ["unchanged"]}, keeping


@pytest.mark.parametrize("ending", [";", ".", "!", "|", "but", "because"])
def test_other_ends_close_the_topic(ending: str) -> None:
    claims = read("#direction", f"B:{ending}", "speed=stay the same!")
    assert values(claims) == {"speed": ["stay the same"], "direction": []}, ending


def test_a_short_question_of_no_claim_labels_the_answer_after_it() -> None:
    """"Direction? Unchanged.": the question names the kind its bare answer is about."""
    claims = read("#direction", "B:?", "speed=stay the same!")
    assert values(claims) == {"speed": [], "direction": ["unchanged"]}


def test_a_question_of_more_words_or_with_a_claim_closes_the_topic() -> None:
    """Five words ("So what about its direction?") are more than a label; a claim before the "?"
    ("Direction unchanged?") makes it a question of that claim, not a label."""
    long = read("so", "what", "about", "its", "#direction", "B:?", "speed=stay the same!")
    assert values(long) == {"speed": ["stay the same"], "direction": []}
    claimed = read("direction=unchanged", "B:?", "speed=stay the same!")
    assert values(claimed)["speed"] == ["stay the same"]


def test_a_bare_predicate_after_a_claim_speaks_of_the_last_topic() -> None:
    claims = read("direction=reversed", "B:,", "speed=stay the same!")
    assert values(claims) == {"speed": [], "direction": ["reversed", "unchanged"]}


@pytest.mark.parametrize(
    "determiner",
    ["the", "its", "their", "both", "either", "neither", "a", "an", "his", "her", "s"],
)
def test_determiners_may_come_before_a_heading_noun(determiner: str) -> None:
    claims = read(determiner, "#speed", "B:and", "#direction", "direction=unchanged!")
    assert values(claims) == {"speed": ["stay the same"], "direction": ["unchanged"]}, determiner


def test_after_another_word_a_noun_is_an_object() -> None:
    claims = read("at", "#speed", "B:and", "#direction", "direction=unchanged!")
    assert values(claims) == {"speed": [], "direction": ["unchanged"]}


def test_a_noun_with_a_word_before_its_coordinator_shares_nothing() -> None:
    """"the speed ratio and direction unchanged": "speed" is no bare noun."""
    claims = read("#speed", "ratio", "B:and", "#direction", "direction=unchanged!")
    assert values(claims) == {"speed": [], "direction": ["unchanged"]}


@pytest.mark.parametrize(("gap", "shared"), [(0, True), (3, True), (4, False)])
def test_the_distance_limit_for_sharing_a_claim(gap: int, shared: bool) -> None:
    """A joined noun shares a (non-bare) claim with at most three words between ("nor its
    direction changes")."""
    words = ["w"] * gap
    claims = read("#direction", "ALT:or", *words, "speed=stay the same")
    assert values(claims)["direction"] == (["unchanged"] if shared else []), gap
    assert values(claims)["speed"] == ["stay the same"]


@pytest.mark.parametrize(("gap", "shared"), [(1, True), (3, True), (4, False)])
def test_the_distance_limit_for_a_noun_after_the_claim(gap: int, shared: bool) -> None:
    """"no change in speed or direction": nouns after a claim share it while at most three words
    lie between."""
    words = ["w"] * gap
    claims = read("speed=stay the same", *words, "#speed", "ALT:or", "#direction", "B:.")
    assert values(claims)["direction"] == (["unchanged"] if shared else []), gap


def test_a_noun_followed_by_words_shares_no_claim_before_it() -> None:
    claims = read("speed=stay the same", "in", "#direction", "ratio", "terms", "B:.")
    assert values(claims)["direction"] == []
    one = read("speed=stay the same", "in", "#direction", "B:.")
    assert values(one)["direction"] == ["unchanged"]


def test_a_shared_claim_keeps_its_source_clause_polarity_and_retraction() -> None:
    """The noun's claim is the source claim's: the same clause (so the same hedge), negation,
    retraction and node."""
    claims = read("HEDGE:probably", "speed=stay the same", "in", "#speed", "B:,", "#direction", "B:;",
                  "speed=increase")
    direction = claims.kinds["direction"]
    assert direction.values == ["unchanged"] and direction.hedged
    [shared] = direction.claims
    assert [n.kind for n in claims.nouns] == ["direction_noun"]
    [source] = [c for c in claims.kinds["speed"].claims if c.value == "stay the same"]
    assert shared.clause == source.clause == 0 and shared.node is source.node
    assert not claims.kinds["speed"].claims[-1].hedged
    denied = read("NEG:no", "speed=stay the same", "in", "#speed", "ALT:or", "#direction")
    assert denied.kinds["direction"].denied == ["unchanged"]
    assert denied.kinds["direction"].values == ["reversed"]  # the one value left
    retracted = read("speed=stay the same", "in", "#speed", "ALT:or", "#direction", "B:;",
                     "CORRECTION:wait", "speed=increase")
    assert values(retracted) == {"speed": ["increase"], "direction": ["unchanged"]}
    late = read("speed=stay the same", "in", "#speed", "ALT:or", "#direction", "B:;",
                "CORRECTION:wait", "direction=reversed")
    assert values(late)["direction"] == ["reversed"]


def test_a_shared_claim_is_about_the_nouns_subject() -> None:
    claims = read("speed=stay the same", "in", "@C", "#direction", "B:.")
    assert about(claims) == [("speed", "stay the same", None, True),
                             ("direction", "unchanged", "C", False)]


def test_a_claim_after_nouns_is_about_their_subject() -> None:
    claims = read("@C", "#speed", "B:and", "#direction", "B:,", "direction=unchanged!")
    assert [(c.kind, c.subject) for c in claims.all_claims()] == [("speed", "C"), ("direction", "C")]


def test_a_lone_bare_change_about_no_noun_says_nothing() -> None:
    spec = SPEC
    item = answer("speed=increase|decrease")
    item.children[0]._memo["bare"] = "noun"
    claims = read_claims(item, spec, "D")
    assert claims.all_claims() == []


def test_a_bare_change_said_of_another_kind() -> None:
    """"speed and direction both change": a bare change of speed is a change of direction."""
    claims = read("#speed", "B:and", "#direction", "speed=increase|decrease!")
    assert values(claims) == {"speed": ["increase", "decrease"], "direction": ["reversed"]}


# --- restated questions -------------------------------------------------------------------------


def test_alternatives_offered_before_a_question_mark_are_the_question() -> None:
    claims = read("speed=increase", "ALT:or", "speed=decrease", "B:?", "speed=decrease")
    assert values(claims)["speed"] == ["decrease"]
    assert [c.asked for c in claims.all_claims()] == [True, True, False]
    assert not claims.kinds["speed"].hedged


def test_one_claim_of_two_values_offered_is_the_question() -> None:
    claims = read("speed=increase|decrease", "ALT:or", "direction=reversed", "B:?", "speed=decrease")
    assert values(claims) == {"speed": ["decrease"], "direction": []}


def test_without_alt_or_with_one_value_a_question_mark_hedges_the_claim() -> None:
    # (a word after the "?": a line that ends with "?" asks its whole last sentence, below)
    no_alt = read("speed=increase", "B:,", "speed=decrease", "B:?", "w")
    assert values(no_alt)["speed"] == ["increase", "decrease"] and no_alt.kinds["speed"].hedged
    assert [c.questioned for c in no_alt.all_claims()] == [False, True]
    one_value = read("speed=increase", "ALT:or", "direction=reversed", "B:?", "w")
    assert values(one_value) == {"speed": ["increase"], "direction": ["reversed"]}
    assert one_value.kinds["direction"].hedged and not one_value.kinds["speed"].hedged


def test_alternatives_in_an_earlier_sentence_do_not_make_a_question() -> None:
    claims = read("speed=increase", "ALT:or", "speed=decrease", "B:.", "speed=decrease", "B:?")
    assert values(claims)["speed"] == ["increase", "decrease"]
    assert [c.asked for c in claims.all_claims()] == [False, False, False]
    # ... nor does a sentence end: the next sentence's values are alternatives only if joined
    plain = read("speed=increase", "B:.", "speed=increase", "B:,", "speed=decrease", "B:?", "w")
    assert values(plain)["speed"] == ["increase", "decrease"]
    assert [c.questioned for c in plain.all_claims()] == [False, False, True]


@pytest.mark.parametrize(
    "opener",
    ["is", "are", "was", "were", "does", "do", "did", "would", "will", "can", "could", "should",
     "has", "have", "what", "which", "how", "where", "whether"],
)
def test_a_question_word_opening_the_clause_restates_the_question(opener: str) -> None:
    claims = read(opener, "it", "speed=increase", "B:?", "speed=decrease")
    assert values(claims)["speed"] == ["decrease"], opener
    assert not claims.kinds["speed"].hedged


@pytest.mark.parametrize("opener", ["Is", "WHAT"])
def test_question_words_are_read_in_any_case(opener: str) -> None:
    assert values(read(opener, "speed=increase", "B:?"))["speed"] == []


def test_a_question_word_opening_the_sentence_restates_it_all() -> None:
    claims = read("will", "speed=increase", "B:,", "speed=decrease", "B:?", "speed=decrease")
    assert [c.asked for c in claims.all_claims()] == [True, True, False]
    longer = read("will", "it", "speed=increase", "B:,", "speed=decrease", "B:?")
    assert [c.asked for c in longer.all_claims()] == [True, True]
    later = read("so", "will", "speed=increase", "B:,", "speed=decrease", "B:?")
    assert [c.asked for c in later.all_claims()] == [False, False]
    plain = read("so", "speed=increase", "B:,", "speed=decrease", "B:?", "w")
    assert [c.asked for c in plain.all_claims()] == [False, False]
    assert [c.questioned for c in plain.all_claims()] == [False, True]


def test_a_question_word_later_in_the_sentence_asks_only_its_clause() -> None:
    claims = read("speed=increase", "B:,", "is", "direction=reversed", "B:?")
    assert values(claims) == {"speed": ["increase"], "direction": []}
    # only the clause's first word counts: "is" then "it" still opens a question
    longer = read("speed=increase", "B:,", "is", "it", "direction=reversed", "B:?")
    assert values(longer) == {"speed": ["increase"], "direction": []}
    later = read("speed=increase", "B:,", "so", "is", "direction=reversed", "B:?")
    assert values(later) == {"speed": ["increase"], "direction": ["reversed"]}


def test_a_question_word_as_a_claim_node_opens_nothing() -> None:
    claims = read("speed=increase", "B:?")
    assert claims.kinds["speed"].hedged and values(claims)["speed"] == ["increase"]


def test_a_parenthesised_question_mark_hedges() -> None:
    claims = read("speed=increase", "B:(", "B:?", "B:)")
    assert claims.kinds["speed"].hedged
    assert claims.field("hedged") is True
    later = read("speed=increase", "w", "B:?", "w")
    assert not later.kinds["speed"].hedged


def test_a_line_ending_with_a_question_mark_asks_its_last_sentence() -> None:
    # "clears; by 2.6 m?": the whole last sentence is asked, not only the claim before the "?"
    line = read("speed=increase", "B:.", "speed=decrease", "B:;", "direction=reversed", "w", "B:?")
    assert [c.questioned for c in line.all_claims()] == [False, True, True]
    # closing brackets after the "?" still end the line with it; a ";" inside brackets is no
    # sentence end, a "." outside them is
    bracket = read("speed=increase", "B:(", "w", "B:;", "direction=reversed", "B:)", "B:?")
    assert [c.questioned for c in bracket.all_claims()] == [True, True]
    # "(?)" hedges the one claim before it, where it stands
    aside = read("speed=increase", "B:,", "direction=reversed", "B:(", "B:?", "B:)")
    assert [c.questioned for c in aside.all_claims()] == [False, True]


# --- options echoed -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tokens",
    [
        ("B:(", "speed=increase", "ALT:/", "speed=decrease", "ALT:/", "speed=stay the same", "B:)"),
        ("B:[", "speed=increase", "ALT:or", "speed=decrease", "B:,", "speed=stay the same", "B:]"),
        ("speed=increase", "or", "speed=decrease", "/", "speed=stay the same", "B::"),
        ("speed=increase", "B:,", "speed=decrease", "B:,", "ALT:or", "speed=stay the same", "B::"),
        ("direction=unchanged", "direction=reversed", "B::"),  # "Yes/No:" with nothing between
    ],
)
def test_every_option_listed_is_the_question_echoed(tokens) -> None:
    claims = read(*tokens, "speed=decrease")
    assert values(claims) == {"speed": ["decrease"], "direction": []}, tokens
    assert all(c.asked for c in claims.all_claims()[:-1])


@pytest.mark.parametrize(
    "tokens",
    [
        ("speed=increase", "ALT:or", "speed=decrease", "B::"),  # not every option
        ("speed=increase", "B:,", "speed=decrease", "B:,", "speed=stay the same", "over", "B::"),
        ("NEG:not", "speed=increase", "ALT:or", "speed=decrease", "ALT:or", "speed=stay the same",
         "B::"),
        ("speed=increase", "B:;", "speed=decrease", "ALT:or", "speed=stay the same", "B::"),
        ("speed=increase|decrease|stay the same", "B::"),  # one claim is no list
    ],
)
def test_a_partial_or_interrupted_list_is_an_answer(tokens) -> None:
    claims = read(*tokens)
    assert not any(c.asked for c in claims.all_claims()), tokens


def test_a_plain_word_or_offers_alternatives_among_other_words() -> None:
    """A grammar that reads "or" as a plain word: it still joins the options, even with other
    words among them ("(increase or decrease or perhaps the same)")."""
    claims = read("B:(", "speed=increase", "or", "speed=decrease", "or", "perhaps",
                  "speed=stay the same", "B:)", "speed=decrease")
    assert values(claims)["speed"] == ["decrease"]
    without = read("B:(", "speed=increase", "and", "speed=decrease", "and", "perhaps",
                   "speed=stay the same", "B:)")
    assert not any(c.asked for c in without.all_claims())


def test_two_claims_with_words_between_are_no_list() -> None:
    """"No, over the max:": two claims with a word between and no "or" are an answer."""
    claims = read("direction=unchanged", "B:,", "over", "direction=reversed", "B::")
    assert not any(c.asked for c in claims.all_claims())
    group = read("B:(", "direction=unchanged", "w", "direction=reversed", "B:)")
    assert not any(c.asked for c in group.all_claims())
    joined = read("B:(", "direction=unchanged", "w", "ALT:or", "direction=reversed", "B:)")
    assert all(c.asked for c in joined.all_claims())


def test_a_kind_without_declared_values_never_lists_every_option() -> None:
    claims = read("letter=A", "ALT:or", "letter=B", "B::")
    assert claims.kinds["letter"].values == ["A", "B"]


@pytest.mark.parametrize(("opening", "closing"), [("(", ")"), ("[", "]")])
def test_a_group_counts_only_the_claims_inside_it(opening: str, closing: str) -> None:
    claims = read("speed=increase", f"B:{opening}", "speed=decrease", "ALT:/", "speed=stay the same",
                  f"B:{closing}")
    assert values(claims)["speed"] == ["increase", "decrease", "stay the same"]
    assert [c.asked for c in claims.all_claims()] == [False, False, False]


def test_a_group_closed_without_opening_starts_at_the_answer() -> None:
    """"Yes/No) no": a ")" with no "(" closes a group begun at the start of the answer."""
    claims = read("direction=unchanged", "direction=reversed", "B:)", "direction=reversed")
    assert [c.asked for c in claims.all_claims()] == [True, True, False]


# --- negation, hedges, corrections, conditions --------------------------------------------------


def test_negation_reaches_four_words_and_extends_over_alternatives() -> None:
    assert read("NEG:not", "w", "w", "w", "w", "speed=increase").kinds["speed"].denied == ["increase"]
    assert read("NEG:not", "w", "w", "w", "w", "w", "speed=increase").kinds["speed"].denied == []
    claims = read("NEG:not", "speed=increase", "ALT:or", "speed=decrease")
    assert claims.kinds["speed"].denied == ["increase", "decrease"]
    assert claims.kinds["speed"].values == ["stay the same"]
    ended = read("NEG:not", "speed=decrease", "B:,", "speed=increase")
    assert ended.kinds["speed"].denied == ["decrease"] and values(ended)["speed"] == ["increase"]


def test_a_denial_leaving_one_value_implies_it_unless_asserted() -> None:
    assert values(read("NEG:not", "direction=reversed"))["direction"] == ["unchanged"]
    both = read("NEG:not", "direction=reversed", "B:;", "direction=unchanged")
    assert values(both)["direction"] == ["unchanged"]
    assert both.kinds["direction"].denied == ["reversed"]
    conflict = read("NEG:not", "direction=reversed", "B:;", "direction=reversed")
    assert values(conflict)["direction"] == ["reversed", "unchanged"]  # the conflict stays visible
    assert values(read("NEG:not", "speed=increase"))["speed"] == []
    repeated = read("direction=reversed", "B:;", "direction=reversed")
    assert values(repeated)["direction"] == ["reversed"]


@pytest.mark.parametrize("opener", ["if", "otherwise", "unless", "when", "whenever", "provided"])
def test_conditional_clauses(opener: str) -> None:
    claims = read("speed=increase", f"B:{opener}", "direction=reversed", "B:,", "speed=decrease",
                  "B:;", "direction=unchanged")
    assert [c.conditional for c in claims.all_claims()] == [False, True, True, False], opener


@pytest.mark.parametrize("ending", [";", ".", "!", "?", "|", "·", "•"])
def test_a_sentence_end_ends_a_condition(ending: str) -> None:
    claims = read("B:if", "speed=increase", f"B:{ending}", "direction=reversed")
    assert [c.conditional for c in claims.all_claims()] == [True, False], ending


@pytest.mark.parametrize("contrast", ["but", "though", "although", "however"])
def test_a_claimless_contrast_hedge_qualifies_the_claim_before(contrast: str) -> None:
    claims = read("direction=unchanged", f"B:{contrast}", "w", "HEDGE:might", "B:;", "speed=increase")
    assert claims.kinds["direction"].hedged and not claims.kinds["speed"].hedged, contrast


def test_a_claimless_hedge_after_another_end_hedges_the_next_claim() -> None:
    claims = read("direction=unchanged", "B:,", "HEDGE:I think", "B:;", "speed=increase")
    assert not claims.kinds["direction"].hedged and claims.kinds["speed"].hedged
    end = read("direction=unchanged", "B:but", "HEDGE:might")
    assert end.kinds["direction"].hedged
    first = read("B:but", "HEDGE:might", "B:;", "speed=increase")
    assert first.kinds["speed"].hedged


def test_a_trailing_hedge_looks_back_and_a_hedge_about_another_entity_does_not() -> None:
    assert read("speed=increase", "B:,", "HEDGE:I think").kinds["speed"].hedged
    other = read("speed=increase", "B:(", "@C", "HEDGE:probably", "w", "B:)")
    assert not other.kinds["speed"].hedged
    other_later = read("speed=increase", "B:(", "@C", "HEDGE:probably", "B:)", "B:;", "direction=reversed")
    assert not other_later.kinds["direction"].hedged
    # ... and the next clause is read afresh: its own claimless hedge hedges the next claim
    fresh = read("speed=increase", "B:(", "@C", "HEDGE:probably", "B:)", "B:;", "HEDGE:I think",
                 "B:;", "direction=reversed")
    assert fresh.kinds["direction"].hedged and not fresh.kinds["speed"].hedged
    target = read("speed=increase", "B:(", "@D", "HEDGE:probably", "B:)")
    assert target.kinds["speed"].hedged
    assert not read("HEDGE:probably").kinds["speed"].hedged


def test_trigger_nodes_read_as_their_tokens() -> None:
    """A grammar rule named ``boundary`` or ``neg`` (not only the bare terminal) is a trigger: its
    words are read ("nor", ";", "?")."""
    claims = read("NEG:neither", "#speed", "neg:nor", "#direction", "speed=increase|decrease!")
    assert values(claims) == {"speed": ["stay the same"], "direction": ["unchanged"]}
    ended = read("@C", "b::", "speed=increase", "b:;", "direction=reversed")
    assert [c.subject for c in ended.all_claims()] == ["C", None]
    asked = read("will", "speed=increase", "b:?", "speed=decrease")
    assert values(asked)["speed"] == ["decrease"]
    hedged = read("speed=increase", "hedge:probably", "b:;", "direction=reversed", "alt:or",
                  "direction=unchanged")
    assert hedged.kinds["speed"].hedged and values(hedged)["direction"] == ["reversed", "unchanged"]


def test_a_hedge_hedges_its_whole_clause() -> None:
    assert read("speed=increase", "HEDGE:probably", "B:;", "direction=reversed").kinds["speed"].hedged
    claims = read("speed=increase", "HEDGE:probably", "direction=reversed", "B:;", "speed=increase")
    assert [c.hedged for c in claims.all_claims()] == [True, True, False]
    before = read("HEDGE:probably", "speed=increase", "B:;", "direction=reversed")
    assert [c.hedged for c in before.all_claims()] == [True, False]


def test_a_hedge_after_its_clauses_claim_stays_in_its_clause() -> None:
    """"faster probably; direction unchanged": only the speed is hedged, as in "probably faster;
    direction unchanged" (gear_train --explain shows the direction hedged too)."""
    claims = read("speed=increase", "HEDGE:probably", "B:;", "direction=unchanged")
    assert [c.hedged for c in claims.all_claims()] == [True, False]


def test_a_correction_retracts_only_the_kind_it_corrects() -> None:
    claims = read("speed=decrease", "B:,", "direction=reversed", "B:—", "CORRECTION:no, wait",
                  "speed=increase", "B:;", "speed=decrease")
    assert values(claims) == {"speed": ["increase", "decrease"], "direction": ["reversed"]}
    assert [c.retracted for c in claims.all_claims()] == [True, False, False, False]


def test_claims_about_another_entity_are_context() -> None:
    claims = read("@C", "speed=decrease", "B:,", "B:but", "@D", "speed=increase", "B:;",
                  "direction=reversed")
    assert values(claims) == {"speed": ["increase"], "direction": ["reversed"]}
    assert [c.value for c in claims.kinds["speed"].field("context")] == ["decrease"]
    anyone = read("@C", "speed=decrease", target=None)
    assert values(anyone)["speed"] == ["decrease"]
    numbered = read("@7", "speed=decrease", target=7)
    assert values(numbered)["speed"] == ["decrease"]


def test_within_reads_only_the_named_nodes() -> None:
    node = answer("speed=increase", "B:;", "speed=decrease")
    region = Node("opening", [node.children[0]], node.source, 0, 8)
    root = Node("start", [region, *node.children[1:]], node.source, 0, len(node.source))
    spec = ClaimSpec(SPEC.kinds, SPEC.subject, SPEC.nouns, SPEC.steady, within="opening")
    assert values(read_claims(root, spec, "D"))["speed"] == ["increase"]
    assert values(read_claims(root, SPEC, "D"))["speed"] == ["increase", "decrease"]


def test_a_claim_leaf_takes_its_text_as_value() -> None:
    root = Node("start", [Leaf("speed", "increase", 0, 8)], "increase", 0, 8)
    assert values(read_claims(root, SPEC, "D"))["speed"] == ["increase"]
    subject = Node("start", [Leaf("entity", "C", 0, 1), Leaf("speed", "fast", 2, 6)], "C fast", 0, 6)
    assert [c.subject for c in read_claims(subject, SPEC, "D").all_claims()] == ["C"]


# --- the records the rule reads -----------------------------------------------------------------


def test_claim_fields_and_description() -> None:
    claims = read("@D", "NEG:not", "speed=increase", "HEDGE:probably")
    [claim] = claims.all_claims()
    assert isinstance(claim, Claim)
    expected = {"kind": "speed", "value": "increase", "negated": True, "hedged": True,
                "questioned": False, "asked": False, "subject": "D", "retracted": False,
                "about_target": True, "conditional": False, "contrasted": False,
                "hypothetical": False}
    for name, value in expected.items():
        assert claim.field(name) == value, name
    assert claim.field("node") is claim.node and claim.field("text") == "increase"
    assert claim.field("clause") is None and claim.field("nonsense") is None
    assert claim.text() == "increase" and claim.find("WORD")[0].text() == "increase"
    assert claim.describe() == {"kind": "speed", "words": "increase", "value": "increase",
                                "polarity": "denied", "hedged": True, "subject": "D",
                                "about_target": True, "retracted": False, "role": "answer"}
    asserted = read("speed=decrease").all_claims()[0]
    assert asserted.describe()["polarity"] == "asserted"
    leaf_claim = read_claims(Node("start", [Leaf("speed", "up", 0, 2)], "up", 0, 2), SPEC, None)
    assert leaf_claim.all_claims()[0].find("x") == []


def test_kind_result_and_claim_set_fields() -> None:
    claims = read("@C", "speed=decrease", "B:;", "NEG:not", "direction=reversed", "B:;",
                  "speed=increase", "HEDGE:probably")
    speed = claims.field("speed")
    assert isinstance(speed, KindResult) and speed.kind == "speed"
    assert speed.field("values") == ["increase"] and speed.field("hedged") is True
    assert [c.value for c in speed.field("claims")] == ["decrease", "increase"]
    assert speed.field("denied") == [] and claims.field("direction").field("denied") == ["reversed"]
    assert [c.value for c in speed.field("context")] == ["decrease"]
    assert speed.field("kind") is None and speed.find("x") == []
    assert speed.text() == "increase"
    assert claims.field("hedged") is True and claims.field("nonsense") is None
    assert claims.find("speed") == []
    assert claims.text() == "speed: increase; direction: unchanged; letter: "
    assert [c.value for c in claims.all_claims()] == ["decrease", "reversed", "increase"]
    calm = read("speed=increase", "B:,", "direction=reversed")
    assert calm.field("hedged") is False
    two = read("speed=increase", "ALT:/", "speed=decrease")
    assert two.kinds["speed"].text() == "increase, decrease"


def test_all_claims_are_in_document_order() -> None:
    claims = read("direction=reversed", "B:,", "speed=increase", "B:,", "direction=unchanged")
    assert [c.value for c in claims.all_claims()] == ["reversed", "increase", "unchanged"]


def test_atoms_and_convert() -> None:
    assert SPEC.atoms == frozenset({"speed", "direction", "letter", "neg", "hedge", "correction",
                                    "alt", "boundary", "speed_noun", "direction_noun", "entity"})
    assert ClaimSpec({"x": ()}).atoms == frozenset({"x", "neg", "hedge", "correction", "alt",
                                                    "boundary"})
    assert SPEC.convert("increase", "speed", "speed") == "increase"
    assert SPEC.convert("stay the same", "speed", "direction") == "unchanged"
    assert SPEC.convert(["increase", "decrease"], "speed", "direction") == "reversed"
    assert SPEC.convert(["reversed"], "direction", "speed") == ["increase", "decrease"]
    assert SPEC.convert("increase", "speed", "direction") is None
    assert SPEC.convert("A", "letter", "speed") is None
    assert SPEC.convert("increase", "speed", "letter") is None
    assert SPEC.convert(None, "speed", "direction") is None


def test_the_names_a_rule_may_read() -> None:
    """The rule checker accepts these field names after ``claims.`` (rule.py): pinned, so a name
    dropped or misspelled here is a test failure, not a rule that no longer loads."""
    from keyaudit.engine.rule_language.reading.claims import (
        CLAIM_FIELDS,
        KIND_FIELDS,
        TRIGGER_TERMINALS,
    )

    assert sorted(CLAIM_FIELDS) == sorted(
        ["kind", "value", "negated", "hedged", "questioned", "asked", "subject", "retracted",
         "about_target", "conditional", "contrasted", "hypothetical", "node", "text"]
    )
    assert sorted(KIND_FIELDS) == ["claims", "context", "denied", "hedged", "values"]
    assert dict(TRIGGER_TERMINALS) == {"NEG": "neg", "HEDGE": "hedge", "CORRECTION": "correction",
                                       "ALT": "alt", "BOUNDARY": "boundary"}


def test_a_claim_spec_is_frozen() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        SPEC.subject = "other"  # type: ignore[misc]


# --- the same through a real grammar (gear_train: target D) -------------------------------------


@pytest.fixture(scope="module")
def gear():
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.rule_language.rules.rule import load_rule
    from keyaudit.engine.rule_language.scoring.scorer import Scorer

    return Scorer(load_rule(resolve_rule_path("gear_train")))


@pytest.mark.parametrize(
    ("answer", "speed", "direction", "reason"),
    [
        # a heading's subject lasts to the sentence's end, or to a clause end other than ","
        ("**C:** slower, reversed", None, None, "speed missing"),
        ("**C:** slower, reversed; D: faster, same direction", "increase", "unchanged", ""),
        ("**C:** slower, reversed — faster, same direction", "increase", "unchanged", ""),
        ("**C:** slower; faster, same direction", "increase", "unchanged", ""),
        # nouns joined by "or" share the predicate after them, or the claim before them
        ("speed or direction unchanged", "stay the same", "unchanged", "wrong speed"),
        ("The speed or the direction: unchanged", "stay the same", "unchanged", "wrong speed"),
        ("no change in speed or direction", "stay the same", "unchanged", "wrong speed"),
        # a shared claim is in its source's clause: a hedge there hedges it
        ("no change in speed, I think, or direction", "stay the same", "unchanged", "hedged"),
        # a restated question is no answer; the same alternatives without "?" are a conflict
        ("Will D speed up or slow down? It speeds up; direction unchanged", "increase", "unchanged", ""),
        ("faster or slower? faster; same direction", "increase", "unchanged", ""),
        ("faster or slower; same direction", None, "unchanged", "speed conflict"),
    ],
)
def test_gear_train_reads_the_same(gear, answer: str, speed, direction, reason: str) -> None:
    verdict = gear.score("increase; direction unchanged", f"ANSWER: {answer}")
    assert (verdict.values["speed"], verdict.values["direction"], verdict.reason) == (
        speed, direction, reason), answer
