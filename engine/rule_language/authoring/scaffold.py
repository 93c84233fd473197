"""Scaffold a new rule from a cell's answer keys, and test a rule: the authoring loop's engine.

``keyaudit new-rule DOMAIN --level L`` writes ``<domain>.toml``, ``<domain>_key.lark`` and
``<domain>_answer.lark``. They are a starting point, not a finished rule. A cell whose keys
share one template gets the slot starter of :mod:`.slot_starter` (each slot read wherever the
answer gives it). Otherwise the starter answer grammar only recognises an answer that restates a
key template (case, spacing and trailing
punctuation may vary), and the rule accepts it when its template and slots equal the key's. That
is enough to load, to pass the generated examples and to pass the keys check, so the author starts
from a green ``keyaudit test-rule`` and edits towards the phrasings models really write.

How the files are built from the induced templates (:func:`keystructure.induce_templates`):

- each template ``no; new value {NUMBER}`` becomes a grammar rule ``form_N`` of literal pieces and
  slot rules named after the slots (``number``, ``letter_1``...). The key grammar is strict;
- in the answer grammar every piece of a template is one terminal with a lookahead for the rest
  of the template, so a piece is only lexed when the whole template follows. The LALR parser
  therefore never stops half-way through a template, and any other text is filler: every answer
  parses;
- the answer grammar is on the claim layer: a restated template is a claim (kind ``restated``)
  beside the shared triggers of ``claims.lark``, so from the first ``test-rule`` a restatement
  that is denied ("not no; new value 65"), hedged ("probably ..."), corrected ("..., sorry,
  ...") or offered with another ("... or ...") is read as such;
- ``[key]`` holds the template (``kind(key)``) and each slot (numbers through ``number()``, so
  ``65`` and ``65.0`` are equal); the requirements reject a missing template, a hedged answer,
  several different restatements, and then the first component that differs.

:func:`test_rule` is ``keyaudit test-rule``: the rule's examples, its keys check on each of its
cells, the keys its grammar rejects, and a sample of stored responses per verdict and reason.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import UsageError, printable
from ...load.benchmark import Benchmark
from ...load.filekind import exists_at_all
from ..rules.rule import AnswerFormat, Rule, load_rule
from ..scoring.scorer import Scorer, normalise_characters
from . import slot_starter
from .keystructure import InducedTemplate, induce_templates
from .rulecheck import ExampleResult, KeysCheck, keys_check, run_examples

#: Most templates a scaffold spells out; keys of rarer templates are left to the author (the keys
#: check lists them as keys that match no template).
MAX_TEMPLATES = 12
#: How many accepted and rejected examples the scaffold carries.
N_EXAMPLES = 3
#: Longest domain name ``new-rule`` scaffolds: it names three files (``DOMAIN_answer.lark``), and
#: a file name has at most 255 bytes.
MAX_DOMAIN_CHARS = 100

_PLACEHOLDER = re.compile(r"\{([A-Z]+(?:_\d+)?)\}")
_SLOT_PATTERNS = {
    "LETTER": r"(?-i:[A-Z])(?![A-Za-z0-9])",
    "NUMBER": r"[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?!\d)",
}
_TRAILING = ".:;,'\"-"


@dataclass(frozen=True)
class ScaffoldFiles:
    """The three files of a scaffolded rule: where they go and what they say."""

    rule: Path
    key_grammar: Path
    answer_grammar: Path
    rule_text: str
    key_text: str
    answer_text: str
    templates: tuple[InducedTemplate, ...]

    @property
    def paths(self) -> tuple[Path, Path, Path]:
        return (self.rule, self.key_grammar, self.answer_grammar)


def split_template(template: str) -> list[tuple[str, str | None]]:
    """``[(literal, slot or None), ...]``: each literal piece and the slot that follows it."""
    parts: list[tuple[str, str | None]] = []
    cursor = 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append((template[cursor : match.start()], match.group(1)))
        cursor = match.end()
    parts.append((template[cursor:], None))
    return parts


def template_parts(item: InducedTemplate) -> list[tuple[str, str | None]]:
    """Like :func:`split_template`, but read from where the slots really are in the template's
    example key, not from the ``{...}`` marks in its text: a key that itself contains
    ``{NUMBER}`` gets no slot there."""
    parts: list[tuple[str, str | None]] = []
    cursor = 0
    for match, slot in zip(item.slot_matches(), item.slots, strict=True):
        parts.append((item.example[cursor : match.start()], slot))
        cursor = match.end()
    parts.append((item.example[cursor:], None))
    return parts


def _escaped(text: str, keep: str = "") -> str:
    """``text`` with every character that is not printable (controls, line and paragraph
    separators, DEL...) written as a Python escape, which Lark's literals and TOML read too."""
    out = []
    for char in text:
        if char.isprintable() or char in keep:
            out.append(char)
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return "".join(out)


def lark_string(text: str) -> str:
    """``text`` as a Lark string literal that means exactly ``text``: quotes and backslashes
    escaped, anything not printable (a newline, NUL, DEL) as ``\\uXXXX``; one line, so key
    text can never end the literal or start a grammar line of its own."""
    return '"' + _escaped(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def quoted(text: str) -> str:
    """``text`` as a one-line double-quoted string that TOML and JSON read back exactly: JSON's
    escapes, and DEL, line separators and every other character that is not printable escaped
    too (TOML refuses them raw). Also how a template is shown in a grammar comment, which a
    newline in it would otherwise end."""
    return _escaped(json.dumps(text, ensure_ascii=False))


def slot_kind(slot: str) -> str:
    """``LETTER`` or ``NUMBER``: the induced kind of a slot named ``LETTER_2`` or ``NUMBER``."""
    return slot.split("_")[0]


def _lark_regex(pattern: str) -> str:
    """``pattern`` as a Lark regex literal: ``/`` escaped, and anything not printable written as
    an escape (a raw newline or NUL would end or break the grammar line)."""
    # re.escape writes the characters it escapes that are not printable (tab, newline...) as a
    # backslash and the raw character; they are whitespace, which _flexible never puts in a word.
    return "/" + _escaped(pattern.replace("/", "\\/")) + "/i"


def _clean_piece(text: str) -> str:
    """A key's literal as the answer cleaner will present it (quotes, dashes, markdown)."""
    return normalise_characters(text, AnswerFormat())


def _flexible(text: str, last: bool) -> str:
    """Regex for a literal piece: any case, any run of whitespace; optional trailing punctuation."""
    text = _clean_piece(text)
    if last:
        text = text.rstrip(_TRAILING + " ")
    words = text.split()
    if not words:  # only spacing (between two slots): the answer's %ignore WS covers it
        return ""
    body = r"\s+".join(re.escape(w) for w in words)
    lead = r"\s*" if text[:1].isspace() else ""
    tail = r"\s*" if text[-1:].isspace() and not last else ""
    if last:
        boundary = r"(?![A-Za-z0-9])" if text[-1:].isalnum() else ""
        return lead + body + boundary + r"[.:;,'\"-]*" if body else ""
    return lead + body + tail


def _pieces(item: InducedTemplate) -> list[tuple[str, str]]:
    """``[(kind, regex), ...]`` of a template: literal pieces and slots, in order, none empty."""
    parts = template_parts(item)
    out: list[tuple[str, str]] = []
    for index, (literal, slot) in enumerate(parts):
        last = index == len(parts) - 1
        regex = _flexible(literal, last)
        if regex:
            out.append(("literal", regex))
        if slot is not None:
            out.append((slot, _SLOT_PATTERNS[slot_kind(slot)]))
    return out


def key_grammar_text(domain: str, level: int, templates: Sequence[InducedTemplate]) -> str:
    lines = [
        f"// Answer keys of {domain} L{level}: {len(templates)} template(s), scaffolded by",
        "// `keyaudit new-rule`. Each form_N is one template; slots are named rules.",
    ]
    for number, item in enumerate(templates, start=1):
        lines.append(f"//   form_{number}: {quoted(item.template)}  ({item.count} keys)")
    lines += ["", "?start: " + " | ".join(f"form_{n}" for n in range(1, len(templates) + 1)), ""]
    slots: set[str] = set()
    for number, item in enumerate(templates, start=1):
        body = []
        for literal, slot in template_parts(item):
            if literal:
                body.append(lark_string(literal))
            if slot is not None:
                body.append(slot.lower())
                slots.add(slot)
        lines.append(f"form_{number}: " + " ".join(body))
    lines.append("")
    for slot in sorted(slots):
        terminal = "CAPITAL" if slot_kind(slot) == "LETTER" else "DECIMAL"
        lines.append(f"{slot.lower()}: {terminal}")
    if any(slot_kind(s) == "LETTER" for s in slots):
        lines += ["", "CAPITAL: /[A-Z]/"]
    if any(slot_kind(s) == "NUMBER" for s in slots):
        lines += ["", "%import .common.DECIMAL"]
    return "\n".join(lines) + "\n"


def answer_grammar_text(domain: str, level: int, templates: Sequence[InducedTemplate]) -> str:
    n = len(templates)
    lines = [
        f"// The ANSWER line of a {domain} L{level} response: a STARTER grammar scaffolded by",
        "// `keyaudit new-rule`. It recognises an answer that restates one of the key templates",
        "// (any case, any spacing, trailing punctuation); everything else is filler, so any",
        "// text parses. Replace the form_N rules with the constructions models really write:",
        "// see physical_stability_answer.lark, gear_train_answer.lark, gauge_reading_answer.lark.",
        "//",
        "// Each terminal F<template>_<piece> carries a lookahead for the rest of its template, so",
        "// it is only lexed when the whole template follows (LALR never stops half-way).",
        "//",
        "// It is on the claim layer (README, \"The claim layer\"): a restated template is a claim,",
        "// and the shared triggers of claims.lark deny, hedge, correct or offer alternatives to it.",
        "",
        "start: _item*",
        "_item: restated | NEG | HEDGE | CORRECTION | ALT | BOUNDARY | _filler",
        "_filler: WORD | NUMBER | OTHER | SEP",
        "restated: " + " | ".join(f"form_{i}" for i in range(1, n + 1)),
        "",
    ]
    # Longer templates first: a template that is a prefix of another must not win.
    order = sorted(range(n), key=lambda i: -len(templates[i].template))
    priority = {index: 10 + n - rank for rank, index in enumerate(order)}
    terminals: list[str] = []
    slot_rules: list[str] = []
    for index, item in enumerate(templates):
        pieces = _pieces(item)
        body = []
        for position, (kind, regex) in enumerate(pieces):
            rest = r"\s*".join(r for _, r in pieces[position + 1 :])
            pattern = regex + (f"(?=\\s*{rest})" if rest else "")
            name = f"F{index + 1}_{position}"
            terminals.append(f"{name}.{priority[index]}: {_lark_regex(pattern)}")
            if kind == "literal":
                body.append(name)
            else:
                # One slot rule per template, aliased to the slot's name: shared slot rules would
                # merge LALR lookaheads across templates and the lexer would pick another
                # template's (identical) next terminal.
                rule_name = f"f{index + 1}_{kind.lower()}"
                body.append(rule_name)
                slot_rules.append(f"{rule_name}: {name} -> {kind.lower()}")
        lines.append(f"form_{index + 1}: " + " ".join(body))
    lines.append("")
    lines += slot_rules
    lines += ["", *terminals, ""]
    lines += [
        "%import .common (NUMBER, WORD, OTHER, SEP, WS)",
        "%import .claims (NEG, HEDGE, CORRECTION, ALT, BOUNDARY)",
        "%ignore WS",
    ]
    return "\n".join(lines) + "\n"


def _slot_names(templates: Sequence[InducedTemplate]) -> list[str]:
    seen: dict[str, None] = {}
    for item in templates:
        for slot in item.slots:
            seen.setdefault(slot, None)
    return list(seen)


def _value_expr(slot: str, owner: str) -> str:
    read = f"{owner}.{slot.lower()}"
    return f"number({read})" if slot_kind(slot) == "NUMBER" else read


def _part_name(slot: str) -> str:
    return slot.lower()


def _part_kind(slot: str) -> str:
    """A compound part's kind: the template (FORM) is a choice; a slot by its induced kind."""
    return {"NUMBER": "number", "LETTER": "letter"}.get(slot_kind(slot), "choice")


def rule_text(
    domain: str,
    level: int,
    templates: Sequence[InducedTemplate],
    question: str = "",
    examples: str = "",
    trim: str | None = None,
) -> str:
    """The scaffolded rule file (``examples``: ready ``[[example]]`` blocks, appended).

    ``trim``: the ``[answer] trim`` characters when the default would cut the keys' own first or
    last character (``-2; orientable`` starts with a minus the default trims).
    """
    slots = _slot_names(templates)
    forms = " + ".join(f"find(self, 'form_{i}')" for i in range(1, len(templates) + 1))
    # What a restatement says: its template (the form_N rule) and each slot's value.
    if slots:
        said = "(kind(self.form), " + ", ".join(_value_expr(s, "self.form") for s in slots) + ")"
    else:
        said = "(kind(self.form),)"  # a one-part compound: the template alone
    out = [
        f"# Scoring rule for {domain} L{level}: scaffolded by `keyaudit new-rule`; edit it.",
        "# Workflow: keyaudit test-rule THIS_FILE  (examples, keys check, sample of verdicts).",
        "",
        "[rule]",
        f"name = {json.dumps(domain)}",
        'description = """',
        f"STARTER rule for {domain} L{level}: accepts an answer that restates one key template",
        "with the key's slot values. Replace with what the question asks and the key represents.",
        '"""',
        f"question = {quoted(question)}",
        f"cells = [{{ domain = {json.dumps(domain)}, level = {level} }}]",
        f'key_grammar = "{domain}_key.lark"',
        f'answer_grammar = "{domain}_answer.lark"',
        "",
        "[answer]",
        'label = "ANSWER:"',
        'which = "last"',
        *([f"trim = {json.dumps(trim)}"] if trim is not None else []),
        "",
        "# What the key says: its template and each slot. Two keys differ when one of these does.",
        "[key]",
        'form = "kind(key)"',
    ]
    out += [f"{s.lower()} = {json.dumps(_value_expr(s, 'key'))}" for s in slots]
    out += [
        "",
        "# ---- what the answer claims: read by the claim layer (README, \"The claim layer\") ----",
        "# A restated key template is a claim; negation, hedges, corrections and alternatives come",
        "# from the layer.",
        "[claims]",
        'kinds = { restated = [] }',
        "",
        "# The template a restatement follows (one of the form_N rules).",
        "[[attribute]]",
        'node = "restated"',
        'name = "form"',
        f'expr = "first({forms})"',
        "",
        "# What it says: (template, slot values...). The rule compares these with the key.",
        "[[attribute]]",
        'node = "restated"',
        'name = "said"',
        f'expr = "{said}"',
        "",
        "# Its value for the layer (and the explain view): the words restated.",
        "[[attribute]]",
        'node = "restated"',
        'name = "value"',
        'expr = "lower(text(self))"',
        "",
        "# ---- values extracted from the answer ------------------------------------------",
        "# The restatements the answer asserts (not denied, corrected away or asked).",
        "[[let]]",
        'name = "restated"',
        'expr = "[c.node for c in claims.restated.claims if c.about_target and not c.negated '
        'and not c.retracted and not c.asked]"',
        "",
        "# ---- what the answer must contain: one component (README, \"Answer components\") ----",
        "# Its value is the restatement (template, slot values...); its parts are compared with",
        "# the key's, each by its kind (a number as a number, a letter in any case).",
        "[[component]]",
        'name = "claim"',
        'kind = "compound"',
        'claim = "restated"',
        'plural = "said"',
        'values = "unique([r.said for r in restated])"',
        'hedge = "answer"',
        'reasons = { missing = "template missing", hedged = "hedged", conflict = "templates conflict" }',
        "parts = { " + ", ".join(
            [f'{_part_name(s)} = "{_part_kind(s)}"' for s in ["FORM", *slots]]
        ) + " }",
        'explain = { missing = "The answer restates no key template (or denies every one it restates).", '
        "hedged = \"A hedge on the restatement ('probably', 'I think', 'might').\", "
        'conflict = "Several different restatements." }',
    ]
    text = "\n".join(out) + "\n"
    return text + ("\n" + examples if examples else "")


def _toml_value(value: object) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return quoted(value if isinstance(value, str) else str(value))


def _example_block(note: str, key: str, answer: str, verdict, outputs: Sequence[str]) -> str:
    extract = ", ".join(f"{name} = {_toml_value(verdict.values.get(name))}" for name in outputs)
    return (
        "[[example]]\n"
        f"note = {quoted(note)}\n"
        f"key = {quoted(key)}\n"
        f"answer = {quoted(answer)}\n"
        f"accept = {'true' if verdict.accept else 'false'}\n"
        f"reason = {quoted(verdict.reason)}\n"
        f"extract = {{ {extract} }}\n"
    )


def _examples(rule_path: Path, keys: Sequence[str]) -> str:
    """Examples from real keys, with the verdicts the fresh rule gives (it must pass them)."""
    rule = load_rule(rule_path)
    scorer = Scorer(rule)
    outputs = list(rule.outputs)
    distinct = list(dict.fromkeys(keys))
    # A key that holds a line break cannot be restated on one answer line: no example of it.
    parsed = [
        k for k in distinct if len(k.splitlines()) == 1 and scorer.parse_key(k).node is not None
    ]
    blocks = ["# ---- examples (from real keys; add the phrasings models write) --------------"]
    blocks.append('# In `extract`, "" stands for null (TOML has no null).\n')
    chosen: list[str] = []
    seen_targets: list[dict] = []
    for key in parsed:  # keys with different [key] values first
        target = scorer.parse_key(key).target
        if target not in seen_targets:
            seen_targets.append(target)
            chosen.append(key)
        if len(chosen) == N_EXAMPLES:
            break
    for key in chosen:
        verdict = scorer.score_answer_text(key, key)
        blocks.append(
            _example_block("a key restated as its own answer", key, key, verdict, outputs)
        )
    for index, key in enumerate(chosen):
        others = [k for k in parsed if scorer.parse_key(k).target != scorer.parse_key(key).target]
        if not others:
            continue
        other = others[index % len(others)]
        verdict = scorer.score_answer_text(key, other)
        blocks.append(_example_block("another key as the answer", key, other, verdict, outputs))
    if chosen:
        answer = "I cannot tell from the image."
        verdict = scorer.score_answer_text(chosen[0], answer)
        blocks.append(_example_block("no template restated", chosen[0], answer, verdict, outputs))
    return "\n".join(blocks)


def answer_trim(keys: Sequence[str]) -> str | None:
    """Default trim characters minus those some key starts or ends with; None if none do."""
    default = AnswerFormat().trim
    ends = {c for key in keys for c in (key[:1], key[-1:]) if c}
    if not ends & set(default):
        return None
    return "".join(c for c in default if c not in ends)


def check_domain(domain: str) -> None:
    """Refuse (:class:`UsageError`) a domain ``new-rule`` cannot name files after: letters,
    digits and ``_``, a letter first, at most :data:`MAX_DOMAIN_CHARS` characters."""
    if len(domain) > MAX_DOMAIN_CHARS:
        raise UsageError(
            f"a domain name for new-rule is at most {MAX_DOMAIN_CHARS} characters (it names the "
            f"rule's files), got {len(domain):,}"
        )
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", domain):
        raise UsageError(f"{domain!r}: a domain name must be letters, digits and '_' only")


def scaffold_paths(domain: str, out: Path) -> tuple[Path, Path, Path]:
    return (out / f"{domain}.toml", out / f"{domain}_key.lark", out / f"{domain}_answer.lark")


def scaffold_rule(
    domain: str, level: int, keys: Sequence[str], out: Path, question: str = ""
) -> ScaffoldFiles:
    """Write the three files of a new rule for ``keys`` (one cell's key strings) into ``out``.

    Refuses (:class:`UsageError`) when any of the files exists or the cell has no keys. The rule
    is loaded and its keys check run before returning; a scaffold that fails it is a bug here.
    """
    check_domain(domain)
    if not keys:
        raise UsageError(f"{domain} L{level}: no keys in this cell")
    paths = scaffold_paths(domain, out)
    existing = [printable(str(p)) for p in paths if exists_at_all(p)]
    if existing:
        raise UsageError(
            f"refusing to overwrite {', '.join(existing)}; remove the files or choose --out"
        )
    templates = tuple(induce_templates(keys)[:MAX_TEMPLATES])
    # one template: read its slots wherever an answer gives them (slot_starter); else restate
    starter = slot_starter if slot_starter.fits(templates) else None
    write_rule = starter.rule_text if starter else rule_text
    key_text = key_grammar_text(domain, level, templates)
    answer_text = (starter.answer_grammar_text if starter else answer_grammar_text)(domain, level, templates)
    rule_path, key_path, answer_path = paths
    trim = answer_trim(keys)
    written: list[Path] = []
    try:
        _write(out, None, "", written)
        _write(key_path, key_path, key_text, written)
        _write(answer_path, answer_path, answer_text, written)
        draft = write_rule(domain, level, templates, question, trim=trim)
        _write(rule_path, rule_path, draft, written)
        examples = _examples(rule_path, keys)
        final = write_rule(domain, level, templates, question, examples, trim)
        _write(rule_path, rule_path, final, written)
        load_rule(rule_path)
    except BaseException:
        for path in written:  # only what this call wrote: never a file that was there before
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        raise
    return ScaffoldFiles(rule_path, key_path, answer_path, final, key_text, answer_text, templates)


def _write(target: Path, path: Path | None, text: str, written: list[Path]) -> None:
    """Write ``text`` to ``path`` (``None``: make the folder ``target``), recording what was
    written. A file is first created exclusively (never over one that appeared meanwhile), then
    rewritten; a failure (a name too long, no space, no permission) is one line naming it."""
    try:
        if path is None:
            target.mkdir(parents=True, exist_ok=True)
            return
        mode = "w" if path in written else "x"
        with path.open(mode, encoding="utf-8") as stream:
            if mode == "x":
                written.append(path)
            stream.write(text)
    except FileExistsError:
        raise UsageError(f"refusing to overwrite {printable(str(path))}") from None
    except OSError as error:
        raise UsageError(
            f"cannot write {printable(str(target))}: {error.strerror or type(error).__name__}"
        ) from None


# --------------------------------------------------------------------------- test-rule


@dataclass(frozen=True)
class UnparsedKeyReport:
    """A key of the cell that the key grammar rejects: its ids, its text and the grammar error."""

    ids: tuple[str, ...]
    text: str
    error: str


@dataclass(frozen=True)
class ResponseSample:
    """One scored stored response shown as a sample of its verdict/reason."""

    id: str
    model: str
    key: str
    answer: str | None
    values: dict
    detail: str


@dataclass(frozen=True)
class CellTest:
    """What ``test-rule`` found in one cell: the keys check, unparsed keys, response verdicts."""

    cell: str
    keys: KeysCheck
    unparsed: tuple[UnparsedKeyReport, ...]
    #: reason ("" = accepted) -> how many responses, all models together.
    reasons: dict[str, int]
    #: model -> reason -> count.
    per_model: dict[str, dict[str, int]]
    samples: dict[str, tuple[ResponseSample, ...]]


@dataclass(frozen=True)
class RuleTest:
    """The result of ``keyaudit test-rule``: examples, then each cell of the rule."""

    rule: Rule
    examples: tuple[ExampleResult, ...]
    cells: tuple[CellTest, ...]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.examples) and all(c.keys.passed for c in self.cells)


def test_rule(rule: Rule, benchmark: Benchmark, per_reason: int = 3) -> RuleTest:
    """Run a rule's examples, its keys check on each of its cells, and score stored responses.

    ``per_reason`` responses are kept as samples of each verdict (the first ones in id order, so
    the output is stable). A cell with no keys in the benchmark is a usage error.
    """
    scorer = Scorer(rule)
    examples = tuple(run_examples(scorer))
    cells = []
    for cell in rule.cells:
        items = benchmark.keys_in_cell(cell.domain, cell.level)
        if not items:
            raise UsageError(f"{cell}: the benchmark at {benchmark.root} has no keys in this cell")
        check = keys_check(scorer, [k.answer for k in items], rule.answer_format.label)
        ids: dict[str, list[str]] = {}
        for item in items:
            ids.setdefault(item.answer, []).append(item.id)
        unparsed = tuple(
            UnparsedKeyReport(tuple(ids[text]), text, error)
            for text, error in sorted(check.unparsed.items())
        )
        reasons: Counter[str] = Counter()
        per_model: dict[str, Counter[str]] = {}
        samples: dict[str, list[ResponseSample]] = {}
        responses = sorted(
            (
                r
                for r in benchmark.responses
                if r.ref.domain == cell.domain and r.ref.level == cell.level
            ),
            key=lambda r: (r.id, r.model),
        )
        for response in responses:
            key = benchmark.keys[response.id].answer
            verdict = scorer.score(key, response.text)
            reasons[verdict.reason] += 1
            per_model.setdefault(response.model, Counter())[verdict.reason] += 1
            kept = samples.setdefault(verdict.reason, [])
            if len(kept) < per_reason:
                kept.append(
                    ResponseSample(
                        response.id,
                        response.model,
                        key,
                        verdict.answer_text,
                        verdict.values,
                        verdict.detail,
                    )
                )
        cells.append(
            CellTest(
                str(cell),
                check,
                unparsed,
                dict(reasons.most_common()),
                {m: dict(c.most_common()) for m, c in sorted(per_model.items())},
                {reason: tuple(kept) for reason, kept in samples.items()},
            )
        )
    return RuleTest(rule, examples, tuple(cells))
