"""The ``new-rule`` starter for a cell whose keys share one template: read the slot, not the key.

Where every key of a cell is one sentence with one varying part (``bulb {LETTER} goes out``),
the words around the slot say nothing an answer must repeat: models write ``Bulb C goes out.``,
``C goes out``, ``C``, ``The bulb that goes out is C.``. The restating starter
(:mod:`.scaffold`) needs the whole template and read 0 of 600 stored answers of such a cell.
This starter builds the rule on the claim layer from the key's words instead:

* each slot is a claim kind of its own, named as the key grammar names the slot (``letter``,
  ``number``); a letter slot's values are the letters the keys use (a choice: ``A``, ``B``,
  ``C``, ``D``), read as a capital standing alone wherever the answer line offers it; a number
  slot's values are numbers, compared as numbers;
* the template's fixed words, and everything else, are filler: they need not be repeated;
* negation, hedges, corrections, alternatives and the question's options echoed come from the
  shared claim layer (``not A but C``, ``probably C``, ``A or C``, ``A/B/C/D: C``);
* one component per slot (``letter``, ``number``) compares the value with the key's.

It applies when the cell has exactly one template whose slots are of different kinds (one
letter, one number at most) and whose fixed words hold no letter or number the slot could take
(so a key read as its own answer says only its slot's value); otherwise the restating starter is
written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from .keystructure import InducedTemplate

#: Slot kinds this starter reads, and how it reads them in an answer line.
_CAPITAL_ALONE = r"(?![A-Za-z0-9'’])"
#: Words that may follow a letter that opens a sentence ("A will go out"): it is no article.
_VERBS = ("is", "was", "will", "would", "does", "did", "should", "must", "can", "could", "may",
          "might", "goes", "go", "stays", "remains", "turns", "gets", "and", "or", "only", "alone")
_NUMBER = r"[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?![\d.,]\d)"


def slot_kind(slot: str) -> str:
    return slot.split("_")[0]


def fits(templates: Sequence[InducedTemplate]) -> bool:
    """Whether this starter applies (see the module docstring)."""
    if len(templates) != 1:
        return False
    (item,) = templates
    kinds = [slot_kind(s) for s in item.slots]
    if not kinds or len(set(kinds)) != len(kinds) or not set(kinds) <= {"LETTER", "NUMBER"}:
        return False
    fixed = re.sub(r"\{[A-Z]+(?:_\d+)?\}", " ", item.template)
    capitals = set(re.findall(r"(?<![A-Za-z0-9])[A-Z](?![A-Za-z0-9])", fixed))
    letter = next((s for s in item.slots if slot_kind(s) == "LETTER"), None)
    if letter is not None and capitals & set(_letters(item, letter)):
        return False
    return not ("NUMBER" in kinds and re.search(r"\d", fixed))


def _letters(item: InducedTemplate, slot: str) -> list[str]:
    return sorted(v for v in item.slot_values.get(slot, {}) if re.fullmatch(r"[A-Z]", v))


def _word_after(item: InducedTemplate, slot: str) -> str | None:
    """The first word of the template after ``slot`` (``goes`` in ``bulb {LETTER} goes out``)."""
    after = item.template.split("{" + slot + "}", 1)[1]
    found = re.match(r"\s+([A-Za-z]+)", after)
    return found.group(1).lower() if found else None


def _letter_regex(item: InducedTemplate, slot: str) -> str:
    letters = _letters(item, slot)
    pattern = f"(?-i:[{''.join(letters)}]){_CAPITAL_ALONE}"
    if "A" in letters:
        # not the article opening a sentence: "A bulb goes out" names no bulb; "A goes out",
        # "A will go out" and "Bulb A ..." do
        verbs = sorted({*_VERBS, *filter(None, [_word_after(item, slot)])})
        opening = r"(?:(?<![\s\S]A)|(?<=[.!?:;] A))"
        pattern += f"(?!(?<=A){opening}\\s+(?!(?:{'|'.join(map(re.escape, verbs))})\\b)[a-z])"
    return pattern


def answer_grammar_text(domain: str, level: int, templates: Sequence[InducedTemplate]) -> str:
    (item,) = templates
    slots = [s.lower() for s in item.slots]
    lines = [
        f"// The ANSWER line of a {domain} L{level} response: a STARTER grammar scaffolded by",
        "// `keyaudit new-rule`. Every key of the cell has one template,",
        f"//   {json.dumps(item.template)}",
        "// so the words around its slot never change and an answer need not repeat them: the",
        "// starter reads each slot's value wherever the answer line offers it, on the claim layer",
        "// (README, \"The claim layer\"): the shared triggers of claims.lark deny, hedge, correct",
        "// or offer alternatives to it; every other token is filler, so any text parses.",
        "// Add the constructions models really write (see the bundled *_answer.lark grammars).",
        "",
        "start: _item*",
        "_item: " + " | ".join(slots) + " | NEG | HEDGE | CORRECTION | ALT | BOUNDARY | _filler",
        "_filler: WORD | NUMBER | OTHER | SEP",
    ]
    terminals = []
    for slot in item.slots:
        name = f"S_{slot}"
        lines.append(f"{slot.lower()}: {name}")
        if slot_kind(slot) == "LETTER":
            letters = ", ".join(_letters(item, slot))
            terminals.append(f"// {slot}: a capital letter the keys use ({letters}) standing alone")
            terminals.append(f"{name}.11: /{_letter_regex(item, slot).replace('/', chr(92) + '/')}/")
        else:
            terminals.append(f"// {slot}: a number")
            terminals.append(f"{name}.11: /{_NUMBER}/")
    lines += ["", *terminals, ""]
    lines += [
        "%import .common (NUMBER, WORD, OTHER, SEP, WS)",
        "%import .claims (NEG, HEDGE, CORRECTION, ALT, BOUNDARY)",
        "%ignore WS",
    ]
    return "\n".join(lines) + "\n"


def rule_text(
    domain: str,
    level: int,
    templates: Sequence[InducedTemplate],
    question: str = "",
    examples: str = "",
    trim: str | None = None,
) -> str:
    """The starter rule file: one claim kind and one component per slot."""
    (item,) = templates
    kinds = []
    key_lines = []
    attributes = []
    components = []
    for slot in item.slots:
        name = slot.lower()
        if slot_kind(slot) == "LETTER":
            kinds.append(f"{name} = {json.dumps(_letters(item, slot))}")
            key_lines.append(f'{name} = "key.{name}"')
            attributes += ["[[attribute]]", f'node = "{name}"', 'name = "value"', 'expr = "strip(text(self))"', ""]
            components += ["[[component]]", f'name = "{name}"', 'kind = "letter"', ""]
        else:
            kinds.append(f"{name} = []")
            key_lines.append(f'{name} = "number(key.{name})"')
            attributes += ["[[attribute]]", f'node = "{name}"', 'name = "value"', 'expr = "text(self)"', ""]
            components += ["[[component]]", f'name = "{name}"', 'kind = "number"', ""]
    slots = ", ".join("{" + s + "}" for s in item.slots)
    out = [
        f"# Scoring rule for {domain} L{level}: scaffolded by `keyaudit new-rule`; edit it.",
        "# Workflow: keyaudit test-rule THIS_FILE  (examples, keys check, sample of verdicts).",
        "",
        "[rule]",
        f"name = {json.dumps(domain)}",
        'description = """',
        f"STARTER rule for {domain} L{level}, whose keys all read {json.dumps(item.template)}:",
        f"accepts an answer whose {slots} equals the key's, wherever the answer line gives it",
        "(the template's other words need not be repeated); rejects a missing, hedged, conflicting",
        "or different value. Replace with what the question asks and the key represents.",
        '"""',
        f"question = {json.dumps(question)}",
        f"cells = [{{ domain = {json.dumps(domain)}, level = {level} }}]",
        f'key_grammar = "{domain}_key.lark"',
        f'answer_grammar = "{domain}_answer.lark"',
        "",
        "[answer]",
        'label = "ANSWER:"',
        'which = "last"',
        *([f"trim = {json.dumps(trim)}"] if trim is not None else []),
        "",
        "# What the key says: its slot values. Two keys differ when one of these does.",
        "[key]",
        *key_lines,
        "",
        "# ---- what the answer claims: read by the claim layer (README, \"The claim layer\") ----",
        "# Each slot is a claim kind; negation, hedges, corrections and alternatives come from",
        "# the layer.",
        "[claims]",
        "kinds = { " + ", ".join(kinds) + " }",
        "",
        *attributes,
        "# ---- what the answer must contain: one component per slot (README, \"Answer components\")",
        *components,
    ]
    text = "\n".join(out).rstrip("\n") + "\n"
    return text + ("\n" + examples if examples else "")
