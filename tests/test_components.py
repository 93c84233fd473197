"""Answer components (issue 22, item 1): ``[[component]]`` tables whose kind supplies the
bindings, the standard reasons in their order, the comparison with the key and the output."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from keyaudit.engine.errors import RuleError
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.reading.components import ComponentError, expand_components
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

GEAR_KEY = "decrease; direction unchanged"


def test_a_choice_component_gives_the_standard_reasons_in_order() -> None:
    rule = load_rule(resolve_rule_path("gear_train"))
    assert rule.reasons[rule.reasons.index("speed missing"):][:7] == (
        "speed missing", "hedged", "speed conflict", "wrong speed",
        "direction missing", "direction conflict", "wrong direction",
    )
    scorer = Scorer(rule)
    cases = {
        "direction unchanged": "speed missing",
        "probably decrease; direction unchanged": "hedged",
        "increase or decrease; direction unchanged": "speed conflict",
        "increase; direction unchanged": "wrong speed",
        "decrease": "direction missing",
        "decrease; direction unchanged or reversed": "direction conflict",
        "decrease; direction reversed": "wrong direction",
        "decrease; direction unchanged": "",
    }
    for answer, reason in cases.items():
        verdict = scorer.score(GEAR_KEY, f"ANSWER: {answer}")
        assert verdict.reason == reason, answer
    assert scorer.score(GEAR_KEY, "ANSWER: decrease; same direction").values == {
        "speed": "decrease", "direction": "unchanged",
    }


def test_a_number_component_compares_numbers() -> None:
    scorer = Scorer(load_rule(resolve_rule_path("surface_topology_l4")))
    key = "-2; orientable"
    for answer in ("-2; orientable", "χ = -2; orientable", "minus two; orientable", "−2; orientable"):
        verdict = scorer.score(key, f"ANSWER: {answer}")
        assert verdict.accept and verdict.values["euler"] == -2.0, answer
    assert scorer.score(key, "ANSWER: -4; orientable").reason == "wrong euler"
    assert scorer.score(key, "ANSWER: 0 or -2; orientable").reason == "euler conflict"
    assert scorer.score(key, "ANSWER: χ = -2 (so -2); orientable").accept  # one number said twice


def test_a_letter_component_with_a_renamed_reason() -> None:
    scorer = Scorer(load_rule(resolve_rule_path("compass_bearing")))
    key = "D; projected endpoint is closest to D (105.5 map units away; bearing difference 29.7 degrees)"
    assert scorer.score(key, "ANSWER: D").accept
    assert scorer.score(key, "ANSWER: B or D").reason == "letters conflict"
    assert scorer.score(key, "ANSWER: B").reason == "wrong letter"


def _gear_copy(tmp_path: Path, component: str) -> Path:
    """The bundled gear_train rule with its two components replaced by ``component``."""
    folder = tmp_path / "rules"
    shutil.copytree(resolve_rule_path("gear_train").parent, folder)
    for grammar in (Path(resolve_rule_path("gear_train")).parent.parent / "grammars").glob("*.lark"):
        shutil.copy(grammar, folder / grammar.name)
    path = folder / "gear_train.toml"
    text = path.read_text(encoding="utf-8")
    start = text.index("[[component]]")
    end = text.index("# Entity words are subjects")
    path.write_text(text[:start] + component + "\n" + text[end:], encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "component, fragment",
    [
        ('[[component]]\nname = "speed"\nkind = "colour"\n', "unknown component kind 'colour'"),
        ('[[component]]\nname = "speed"\nkind = "choice"\nclaim = "sped"\n', "claim kind 'sped'"),
        ('[[component]]\nname = "speed"\nkind = "choice"\nhedge = "maybe"\n', "hedge is one of"),
        ('[[component]]\nname = "speed"\nkind = "choice"\ntolerance = 0.5\n', "number and angle components only"),
        ('[[component]]\nname = "speed"\nkind = "choice"\nreasons = { lost = "x" }\n', "reasons maps"),
        ('[[component]]\nname = "speed"\nkind = "choice"\n[[component]]\nname = "direction"\n'
         'kind = "choice"\nwhen = "target.sped == 1"\n', "'sped'"),
        ('[[component]]\nname = "speed"\nkind = "choice"\n[[component]]\nname = "speed"\nkind = "choice"\n',
         "declared twice"),
        ('[[component]]\nname = "speed"\n', "missing the required field 'kind'"),
    ],
)
def test_a_bad_component_is_a_load_error_at_its_line(tmp_path: Path, component: str, fragment: str) -> None:
    path = _gear_copy(tmp_path, component)
    with pytest.raises(RuleError) as raised:
        load_rule(path)
    message = str(raised.value)
    assert fragment in message and "gear_train.toml:" in message and "\n" not in message
    line = int(message.split("gear_train.toml:", 1)[1].split(":", 1)[0])
    assert path.read_text(encoding="utf-8").splitlines()[line - 1].strip()  # points at a real line


def test_a_when_limits_a_component_to_some_keys(tmp_path: Path) -> None:
    """A component asked only of reversing keys: on other keys its absence is no rejection."""
    path = _gear_copy(
        tmp_path,
        '[[component]]\nname = "speed"\nkind = "choice"\n'
        '[[component]]\nname = "direction"\nkind = "choice"\nwhen = "target.direction == \'reversed\'"\n',
    )
    scorer = Scorer(load_rule(path))
    assert scorer.score(GEAR_KEY, "ANSWER: decrease").accept
    assert scorer.score("decrease; direction reversed", "ANSWER: decrease").reason == "direction missing"


def test_expand_components_refuses_a_rule_without_claims() -> None:
    with pytest.raises(ComponentError, match="needs a \\[claims\\] table"):
        expand_components([{"name": "x", "kind": "choice"}], None)


@pytest.mark.parametrize(
    "entry, fragment",
    [
        ({"name": "x", "kind": "compound", "claim": "speed"}, "lists its parts"),
        ({"name": "x", "kind": "choice", "claim": "speed", "parts": {"a": "number"}}, "only a compound"),
        ({"name": "x", "kind": "compound", "claim": "speed", "parts": {"a": "colour"}}, "parts maps"),
    ],
)
def test_compound_parts_are_checked(entry: dict, fragment: str) -> None:
    with pytest.raises(ComponentError, match=fragment):
        expand_components([entry], {"speed": ("a", "b")})


def test_a_compound_compares_each_part_by_its_kind() -> None:
    expanded = expand_components(
        [{"name": "said", "kind": "compound", "claim": "speed", "parts": {"form": "choice", "n": "number", "l": "letter"}}],
        {"speed": ()},
    )
    reasons = [r[1] for r in expanded.requires]
    assert reasons == ["said missing", "said hedged", "said conflict", "wrong form", "wrong n", "wrong l"]
    checks = {r[1]: r[2] for r in expanded.requires}
    assert checks["wrong form"] == "said[0] == target.form"
    assert "close(number(said[1]), number(target.n)" in checks["wrong n"]
    assert checks["wrong l"] == "upper(said[2]) == upper(target.l)"
    assert [o[1] for o in expanded.outputs] == ["form", "n", "l"]


def test_new_rule_scaffolds_a_compound_component(tmp_path: Path, run_cli) -> None:
    result = run_cli("new-rule", "gauge_reading", "--level", "5", "--out", str(tmp_path))
    assert result.code == 0, result.err
    text = (tmp_path / "gauge_reading.toml").read_text(encoding="utf-8")
    assert 'kind = "compound"' in text and 'parts = { form = "choice", number = "number" }' in text
    assert "[[require]]" not in text  # the component gives every requirement
    rule = load_rule(tmp_path / "gauge_reading.toml")
    verdict = Scorer(rule).score("no; new value 75", "ANSWER: no; new value 75.0")
    assert verdict.accept and verdict.values["number"] == 75.0


def test_a_letter_that_never_varies_is_text_not_a_slot() -> None:
    """A fresh author's finding: the constant 'K' of 'shifts right; K unchanged' was induced as a
    {LETTER} slot. A letter or number with one value in the whole cell is text."""
    from keyaudit.engine.rule_language.authoring.keystructure import induce_templates

    keys = ["shifts right; K unchanged", "shifts left; K decreases", "no shift; K unchanged"]
    templates = induce_templates(keys)
    assert {t.template for t in templates} == set(keys) and all(not t.slots for t in templates)
    varying = induce_templates(["D; closest to D", "B; closest to B"])
    assert [t.template for t in varying] == ["{LETTER_1}; closest to {LETTER_2}"]
    assert induce_templates(["K"])[0].slots == ("LETTER",)  # one string: nothing to compare


# ---- the number kind's reading by cues (issue 22, item 3) ----------------------------------------


def _rule_copy(tmp_path: Path, rule: str, old: str, new: str) -> Path:
    """The bundled ``rule`` with the text ``old`` (which must be there) replaced by ``new``."""
    path = tmp_path / f"{rule}.toml"
    text = Path(resolve_rule_path(rule)).read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "key, answer, value, reason",
    [
        # tiers: a number after a cue or '=' wins over the numbers without one
        ("no; new value 65", "No; 40 + 25 = 65", 65.0, ""),
        ("no; new value 180", "$\\text{No}$; new value $= 180\\ \\text{km/h}$", 180.0, ""),
        ("no; new value 30", "no, 30 psi", 30.0, ""),  # the last tier: a number without a cue
        # percent = "fallback": a percentage is the value only where its tier offers nothing else
        ("yes; new value 105", "Yes, 105%", 105.0, ""),
        ("yes; new value 105", "Yes, 105 or 110%.", 105.0, ""),
        # distance: a number right before a comparison is a distance, not the value
        ("no; new value 65", "No, 65 psi, 35 psi below the max", 65.0, ""),
        ("yes; new value 105", "Yes, 105 psi, 5 psi over the max of 100", 105.0, ""),
        # asides: a number in brackets is an aside where one outside them is offered
        ("no; new value 30", "No. 20 psi + 25% of 40 psi (= 10 psi) → 30 psi.", 30.0, ""),
        ("no; new value 4", "No — 4.03 bar (needle read as 2.03 bar)", 4.03, ""),
        # fallback: with no number offered, the top the needle is said to reach
        ("no; new value 55", "Stays under the max at 55 °C.", 55.0, ""),
    ],
)
def test_the_number_reading_by_cues(key: str, answer: str, value: float, reason: str) -> None:
    verdict = Scorer(load_rule(resolve_rule_path("gauge_reading"))).score(key, f"ANSWER: {answer}")
    assert (verdict.reason, verdict.values["value"]) == (reason, value)


@pytest.mark.parametrize(
    "field_line, answer, read_without",
    [
        ('distance = "comparisons"', "No, 65 psi, 35 psi below the max", None),
        ("asides = true", "No — 4.03 bar (needle read as 2.03 bar)", None),
        ('percent = "fallback"', "Yes, 105 or 110%.", None),
        ('fallback = "top_refs"', "Stays under the max at 55 °C.", None),
    ],
)
def test_each_step_of_the_reading_decides(tmp_path: Path, field_line: str, answer: str, read_without) -> None:
    """Without the step, the same answer reads otherwise: each field does what it says."""
    key = "yes; new value 105" if "105" in answer else ("no; new value 55" if "55" in answer else "no; new value 65")
    key = "no; new value 4" if "4.03" in answer else key
    scorer = Scorer(load_rule(_rule_copy(tmp_path, "gauge_reading", "\n" + field_line + "\n", "\n")))
    assert scorer.score(key, f"ANSWER: {answer}").values["value"] == read_without


def test_latest_reads_the_numbers_after_a_correction(tmp_path: Path) -> None:
    scorer = Scorer(load_rule(resolve_rule_path("gauge_reading_l4")))
    verdict = scorer.score("yes; exceeds threshold by 30", "ANSWER: Yes, by 40 — no, by 30.")
    assert verdict.accept and verdict.values["amount"] == 30.0
    assert scorer.score("yes; exceeds threshold by 40", "ANSWER: Yes, by 40 — no wait, 30.").reason == "wrong amount"
    # percent = "drop": a percentage is never the amount
    assert scorer.score("yes; exceeds threshold by 20", "ANSWER: Yes — about 20% over.").reason == "amount missing"
    without = Scorer(load_rule(_rule_copy(tmp_path, "gauge_reading_l4", '\nlatest = "CORRECTION"\n', "\n")))
    assert without.score("yes; exceeds threshold by 30", "ANSWER: Yes, by 40 — no, by 30.").reason == "amounts conflict"


def test_the_reading_binds_its_tiers_for_uncertain_checks() -> None:
    rule = load_rule(resolve_rule_path("gauge_reading_l4"))
    names = [name for name, _ in rule.lets]
    assert {"amount_tiers", "amount_tier", "amounts", "amount"} <= set(names)
    expanded = expand_components(
        [{"name": "n", "kind": "number", "tiers": [["a", "b"], "c"], "percent": "drop", "hedge": "none"}],
        None, frozenset({"a", "b"}), frozenset({"number", "is_percent"}),
    )
    sources = {name: source for _, _, name, source in expanded.lets}
    assert sources["n__p1"] == "[v for v in find(answer, 'a') + find(answer, 'b') if v.number != null and not v.is_percent]"
    assert sources["n__p2"].startswith("[v for v in c if")  # not a node kind: a name bound before
    assert sources["n_tier"] == "1 if len(n__p1) > 0 else (2 if len(n__p2) > 0 else (0))"


@pytest.mark.parametrize(
    "old, new, fragment",
    [
        ('\npercent = "fallback"', '\npercent = "some"', "percent is one of keep, drop, fallback"),
        ('tiers = ["cued_offered", "calculated_offered", "bare_offered"]', "tiers = []", "one or more tiers"),
        ('tiers = ["cued_offered", "calculated_offered", "bare_offered"]', 'tiers = ["cued offered"]', "tiers names"),
        ('tiers = ["cued_offered", "calculated_offered", "bare_offered"]', 'tiers = ["nowhere"]', "'nowhere'"),
        ('tiers = ["cued_offered", "calculated_offered", "bare_offered"]\n', "", "it needs `tiers`"),
        ('asides = true', 'asides = true\nvalues = "[]"', "not both"),
        ('asides = true', 'asides = true\nlatest = "FIX"', "latest 'FIX' is not a rule or terminal"),
    ],
)
def test_a_bad_number_reading_is_a_load_error_at_its_line(tmp_path: Path, old: str, new: str, fragment: str) -> None:
    path = _rule_copy(tmp_path, "gauge_reading", old, new)
    with pytest.raises(RuleError) as raised:
        load_rule(path)
    message = str(raised.value)
    assert fragment in message and "gauge_reading.toml:" in message and "\n" not in message
    line = int(message.split("gauge_reading.toml:", 1)[1].split(":", 1)[0])
    assert path.read_text(encoding="utf-8").splitlines()[line - 1].split("=")[0].strip() in (
        "tiers", "percent", "values", "latest", "asides", "distance", "fallback",
    )


def test_a_reading_belongs_to_a_number_with_its_attributes() -> None:
    with pytest.raises(ComponentError, match="number component's reading"):
        expand_components([{"name": "x", "kind": "choice", "tiers": ["a"]}], {"x": ("a", "b")})
    with pytest.raises(ComponentError, match="declare an \\[\\[attribute\\]\\] 'is_percent'"):
        expand_components(
            [{"name": "x", "kind": "number", "tiers": ["a"], "percent": "drop", "hedge": "none"}],
            None, frozenset({"a"}), frozenset({"number"}),
        )


# ---- a choice's values by the children that say them (said_by) ----------------------------------


def test_said_by_gives_the_claim_nodes_their_value(tmp_path: Path) -> None:
    rule = load_rule(resolve_rule_path("gear_train"))
    assert "value" in rule.attributes["direction"]
    scorer = Scorer(rule)
    assert scorer.score(GEAR_KEY, "ANSWER: decrease; same direction").values["direction"] == "unchanged"
    assert scorer.score(GEAR_KEY, "ANSWER: decrease; direction reversed").reason == "wrong direction"
    expanded = expand_components(
        [{"name": "c", "kind": "choice", "said_by": {"yes": ["yes", "moves"], "maybe": "perhaps", "no": []}}],
        {"c": ("yes", "maybe", "no")},
    )
    assert expanded.attributes == [
        (0, "c", "value", "'yes' if self.yes != null or self.moves != null else ('maybe' if self.perhaps != null else ('no'))")
    ]


@pytest.mark.parametrize(
    "said_by, fragment",
    [
        ('{ unchanged = ["dir_same"], backwards = [] }', "'backwards' is not a value of claim kind 'direction'"),
        ('{ unchanged = ["dir_same"], reversed = ["dir_bare"] }', "ends with the one value said otherwise"),
        ('{ unchanged = [], reversed = [] }', "ends with the one value said otherwise"),
        ('{ unchanged = ["dir_sane"], reversed = [] }', "no node of the answer grammar has a child 'dir_sane'"),
        ('{ unchanged = [1], reversed = [] }', "a child name or a list of them"),
    ],
)
def test_a_bad_said_by_is_a_load_error_at_its_line(tmp_path: Path, said_by: str, fragment: str) -> None:
    old = 'said_by = { unchanged = ["dir_same", "dir_bare"], reversed = [] }'
    path = _rule_copy(tmp_path, "gear_train", old, f"said_by = {said_by}")
    with pytest.raises(RuleError) as raised:
        load_rule(path)
    message = str(raised.value)
    assert fragment in message and "\n" not in message
    line = int(message.split("gear_train.toml:", 1)[1].split(":", 1)[0])
    assert path.read_text(encoding="utf-8").splitlines()[line - 1].startswith("said_by = ")


def test_said_by_and_an_attribute_of_the_same_name_is_a_load_error(tmp_path: Path) -> None:
    path = _rule_copy(
        tmp_path, "gear_train", "[[component]]\nname = \"speed\"",
        "[[attribute]]\nnode = \"direction\"\nname = \"value\"\nexpr = \"'reversed'\"\n\n[[component]]\nname = \"speed\"",
    )
    with pytest.raises(RuleError, match="direction nodes already have an attribute 'value'"):
        load_rule(path)
    with pytest.raises(ComponentError, match="said_by belongs to a choice"):
        expand_components([{"name": "n", "kind": "number", "said_by": {"a": []}}], {"n": ()})


# ---- a hedge after the last claim (trailing, counted) -------------------------------------------

def test_a_trailing_hedge_hedges_the_component(tmp_path: Path) -> None:
    """'Tips, C over B. Probably.': the hedge is past every claim's clause, so only `trailing` (a
    hedge mark after the last counted claim, here the joint) reads it."""
    key = "tips between block C and block B"
    bundled = Scorer(load_rule(resolve_rule_path("physical_stability_l4")))
    assert bundled.score(key, "ANSWER: Tips, C over B. Probably.").reason == "status hedged"
    assert bundled.score(key, "ANSWER: Tips at C-B").accept
    old = 'trailing = ["HEDGE", "QUESTION"]\ncounted = "counted"\n'
    without = Scorer(load_rule(_rule_copy(tmp_path, "physical_stability_l4", old, "")))
    assert without.score(key, "ANSWER: Tips, C over B. Probably.").reason != "status hedged"
    assert without.score(key, "ANSWER: Probably tips, C over B.").reason == "status hedged"  # the layer's


def test_within_keeps_a_trailing_hedge_next_to_the_claim(tmp_path: Path) -> None:
    """fbd: a hedge right after the last claim hedges it; one further on, in an explanation, does not."""
    key = "downward (270 degrees; 0=right, 90=up)"
    explained = "ANSWER: 270°. The normal force is probably smaller than gravity."
    bundled = Scorer(load_rule(resolve_rule_path("fbd")))
    assert bundled.score(key, explained).accept
    assert bundled.score(key, "ANSWER: 270° (probably)").reason == "direction hedged"
    anywhere = Scorer(load_rule(_rule_copy(tmp_path, "fbd", "within = 3\n", "")))
    assert anywhere.score(key, explained).reason == "direction hedged"


def test_trailing_reads_the_claim_kind_by_default() -> None:
    expanded = expand_components(
        [{"name": "slip", "kind": "choice", "trailing": ["HEDGE", "QUESTION"], "hedge": "none"}],
        {"slip": ("yes", "no")}, frozenset({"HEDGE", "QUESTION"}),
    )
    hedged = [check for _, reason, check, _, _ in expanded.requires if reason == "slip hedged"]
    assert len(hedged) == 1
    assert "claims.slip.claims if not c.retracted" in hedged[0]
    assert "find(answer, 'HEDGE') + find(answer, 'QUESTION')" in hedged[0]
    counted = expand_components(
        [{"name": "slip", "kind": "choice", "trailing": "HEDGE", "counted": "mine"}],
        {"slip": ("yes", "no")}, frozenset({"HEDGE"}),
    )
    check = next(check for _, reason, check, _, _ in counted.requires if reason == "slip hedged")
    assert check.startswith("not (claims.slip.hedged or (") and "for c in mine]" in check


@pytest.mark.parametrize(
    "old, new, fragment, field_line",
    [
        ('trailing = "HEDGE"', 'trailing = "HEDGES"', "trailing 'HEDGES' is not a rule or terminal", "trailing = "),
        ('trailing = "HEDGE"', "trailing = []", "trailing names one or more node kinds", "trailing = "),
        ('counted = "direction_claims"', 'counted = "direction_claim"', "counted 'direction_claim' is not a name",
         "counted = "),
        ('trailing = "HEDGE"\nwithin = 3\ncounted', "counted", "counted is a setting", "counted = "),
        ("within = 3", "within = -1", "within is a number of characters", "within = "),
        ('trailing = "HEDGE"\nwithin = 3\ncounted = "direction_claims"\n', "within = 3\n", "within is a setting",
         "within = "),
    ],
)
def test_a_bad_trailing_is_a_load_error_at_its_line(
    tmp_path: Path, old: str, new: str, fragment: str, field_line: str
) -> None:
    path = _rule_copy(tmp_path, "fbd", old, new)
    with pytest.raises(RuleError) as raised:
        load_rule(path)
    message = str(raised.value)
    assert fragment in message and "\n" not in message
    line = int(message.split("fbd.toml:", 1)[1].split(":", 1)[0])
    assert path.read_text(encoding="utf-8").splitlines()[line - 1].startswith(field_line)


# ---- a denial that leaves one value asserts it (denied) -----------------------------------------


def test_a_denial_that_leaves_one_value_asserts_it(tmp_path: Path) -> None:
    bundled = Scorer(load_rule(resolve_rule_path("physical_stability_l4")))
    assert bundled.score("stable", "ANSWER: It won't tip.").accept
    assert bundled.score("stable", "ANSWER: It won't tip; it tips.").reason == "status conflict"  # stays visible
    projectile = Scorer(load_rule(resolve_rule_path("projectile_motion")))
    assert projectile.score("stay the same", "ANSWER: The range is not going to change.").accept
    assert projectile.score("stay the same", "ANSWER: It does not increase.").reason == "change missing"  # two left
    without = Scorer(load_rule(_rule_copy(tmp_path, "projectile_motion", 'denied = "claims.change.denied"\n', "")))
    assert without.score("stay the same", "ANSWER: The range is not going to change.").reason == "change missing"


def test_denied_generates_the_remaining_value() -> None:
    expanded = expand_components(
        [{"name": "s", "kind": "choice", "values": "mine", "denied": "theirs"}], {"s": ("up", "down", "same")},
    )
    lets = {name: source for _, _, name, source in expanded.lets}
    assert lets["s__asserted"] == "mine" and lets["s__denied"] == "theirs"
    assert lets["s__left"] == "[v for v in ['up', 'down', 'same'] if v not in s__denied]"
    assert lets["ss"] == "s__asserted + s__left if len(s__denied) > 0 and len(s__left) == 1 " \
        "and s__left[0] not in s__asserted else s__asserted"


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "s", "kind": "choice", "denied": "theirs"},  # no values of its own
        {"name": "s", "kind": "number", "values": "mine", "denied": "theirs"},
        {"name": "t", "kind": "choice", "values": "mine", "denied": "theirs"},  # a kind with no values
    ],
)
def test_denied_belongs_to_a_choice_with_values(entry: dict) -> None:
    with pytest.raises(ComponentError, match="denied belongs to a choice") as raised:
        expand_components([entry], {"s": ("up", "down"), "t": ()})
    assert raised.value.field == "denied"


def test_a_bad_denied_is_a_load_error_at_its_line(tmp_path: Path) -> None:
    path = _rule_copy(tmp_path, "projectile_motion", 'values = "asserted_changes"\n', "")
    with pytest.raises(RuleError) as raised:
        load_rule(path)
    message = str(raised.value)
    line = int(message.split("projectile_motion.toml:", 1)[1].split(":", 1)[0])
    assert "denied belongs to a choice" in message
    assert path.read_text(encoding="utf-8").splitlines()[line - 1].startswith("denied = ")


# ---- a number's arithmetic: results that are steps, not the value (arithmetic) ------------------

GAUGE_ARITHMETIC = (
    'arithmetic = { results = "calc_value", operands = "ref_value", operator = "OPERATOR", steps = "share_steps" }'
)


@pytest.mark.parametrize(
    "key, answer",
    [
        ("yes; new value 125", "Yes; = 95 + 30 = 125"),  # an operator follows 95
        ("yes; new value 125", "Yes; 70 + 25 = 95 psi + 30 psi = 125 psi"),
        ("yes; new value 112.5", "Yes: 25% of 90 = 22.5; 90 + 22.5 = 112.5"),  # 22.5 is an operand later
    ],
)
def test_arithmetic_drops_the_steps(tmp_path: Path, key: str, answer: str) -> None:
    bundled = Scorer(load_rule(resolve_rule_path("gauge_reading")))
    verdict = bundled.score(key, f"ANSWER: {answer}")
    assert verdict.accept and verdict.values["value"] == float(key.rsplit(" ", 1)[1])
    without = Scorer(load_rule(_rule_copy(tmp_path, "gauge_reading", GAUGE_ARITHMETIC + "\n", "")))
    assert without.score(key, f"ANSWER: {answer}").reason == "values conflict"


def test_arithmetic_adds_the_domain_steps(tmp_path: Path) -> None:
    """'25% of 90 psi = 22.5 psi → 112.5 psi': the share is a step the rule knows (`steps`)."""
    key, answer = "yes; new value 112.5", "ANSWER: Yes; 25% of 90 psi = 22.5 psi → 112.5 psi"
    assert Scorer(load_rule(resolve_rule_path("gauge_reading"))).score(key, answer).accept
    kind_only = GAUGE_ARITHMETIC.replace(', steps = "share_steps"', "")
    path = _rule_copy(tmp_path, "gauge_reading", GAUGE_ARITHMETIC, kind_only)
    assert Scorer(load_rule(path)).score(key, answer).reason == "values conflict"


def test_arithmetic_binds_its_steps() -> None:
    expanded = expand_components(
        [{"name": "v", "kind": "number", "tiers": ["calc"], "arithmetic": {
            "results": "calc", "operands": "ref", "operator": "OP", "steps": "mine"}}],
        {"v": ()}, frozenset({"calc", "ref", "OP"}), frozenset({"number"}),
    )
    lets = {name: source for _, _, name, source in expanded.lets}
    assert lets["v_steps"].endswith(" + mine") and "find(answer, 'calc')" in lets["v_steps"]
    assert "find(answer, 'ref')" in lets["v__uses"] and "find(answer, 'OP')" in lets["v__ops"]
    assert lets["v__p1"] == "[v for v in find(answer, 'calc') if v.number != null and start(v) not in v_steps]"


@pytest.mark.parametrize(
    "new, fragment",
    [
        (GAUGE_ARITHMETIC.replace("OPERATOR", "OPERATORS"), "arithmetic.operator 'OPERATORS' is not a rule"),
        (GAUGE_ARITHMETIC.replace('operator = "OPERATOR", ', ""), "arithmetic needs 'operator'"),
        (GAUGE_ARITHMETIC.replace("steps =", "extra ="), "arithmetic has results, operands, operator, steps"),
        (GAUGE_ARITHMETIC.replace('"share_steps"', '"shares steps"'), "arithmetic.steps is a name"),
        (GAUGE_ARITHMETIC.replace('"share_steps"', '"share_step"'), "'share_step'"),
    ],
)
def test_a_bad_arithmetic_is_a_load_error_at_its_line(tmp_path: Path, new: str, fragment: str) -> None:
    path = _rule_copy(tmp_path, "gauge_reading", GAUGE_ARITHMETIC, new)
    with pytest.raises(RuleError) as raised:
        load_rule(path)
    message = str(raised.value)
    assert fragment in message and "\n" not in message
    line = int(message.split("gauge_reading.toml:", 1)[1].split(":", 1)[0])
    assert path.read_text(encoding="utf-8").splitlines()[line - 1].startswith("arithmetic = ")


def test_arithmetic_belongs_to_a_number_reading() -> None:
    with pytest.raises(ComponentError, match="arithmetic belongs to a number") as raised:
        expand_components([{"name": "c", "kind": "choice", "arithmetic": {}}], {"c": ("a", "b")})
    assert raised.value.field == "arithmetic"
