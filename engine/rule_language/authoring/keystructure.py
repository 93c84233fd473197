"""The structure of a cell's answer keys: distinct strings, templates, slot values, misfits.

Two ways to find templates:

- **ruled** cells (a rule covers the cell): the rule's key grammar parses each key; its template
  and slots come from :meth:`CompiledGrammar.template`, and keys the grammar rejects are listed as
  *unparsed* with the parse error — the grammar is checked against the whole corpus, not a sample.
- other cells: templates are **induced** by shape. Single capital letters (``\\b[A-Z]\\b``, block
  and element names) become ``{LETTER}`` and numbers become ``{NUMBER}``; when a shape has several
  slots of one kind they are numbered in order of position (``{LETTER_1}``, ``{LETTER_2}``).
  Induction is a heuristic for reading a corpus, not a grammar: it never rejects a key.

A number is only a slot when it stands alone: digits glued to a letter (``T1``, ``q5``) are part
of a name, and the minus of ``3-5`` is a dash, not a sign (``{NUMBER_1}-{NUMBER_2}``).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...errors import UsageError
from ...load.benchmark import Benchmark
from ...load.items import KeyItem
from ..rules.rule import Rule
from ..scoring.scorer import Scorer, jsonable

#: How many verbatim example keys a cell structure carries (seed §1 shows ten).
N_EXAMPLES = 10

_SLOT = re.compile(
    r"(?P<LETTER>\b[A-Z]\b)|(?P<NUMBER>(?<![A-Za-z0-9.])(?:-(?=\d))?\d+(?:\.\d+)?(?![A-Za-z0-9]))"
)


@dataclass(frozen=True)
class InducedTemplate:
    """One induced shape: how many strings have it, its slot names, one example, slot values.

    ``slot_values`` maps each slot name to ``{value: count}`` over the strings of this template.
    """

    template: str
    count: int
    slots: tuple[str, ...]
    example: str
    slot_values: dict[str, dict[str, int]]
    #: (kind, value) pairs that are text in this cell, not slots (see constant_slot_values).
    constant: frozenset[tuple[str, str]] = frozenset()

    def slot_matches(self) -> list[re.Match[str]]:
        """Where the slots are in the example key (constant letters and numbers skipped)."""
        return [m for m in _SLOT.finditer(self.example) if (m.lastgroup, m.group()) not in self.constant]


@lru_cache(maxsize=65536)
def key_shape(
    text: str, constant: frozenset[tuple[str, str]] = frozenset()
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """``(template, slot names, slot values)`` of one string under letter/number induction.

    ``constant``: (kind, value) pairs that are text, not slots (a letter or number that never
    varies in the cell, such as the "K" of "shifts right; K unchanged")."""
    matches = [m for m in _SLOT.finditer(text) if (m.lastgroup, m.group()) not in constant]
    kinds = Counter(m.lastgroup for m in matches)
    seen: Counter[str] = Counter()
    pieces: list[str] = []
    names: list[str] = []
    cursor = 0
    for match in matches:
        kind = match.lastgroup or ""
        seen[kind] += 1
        name = f"{kind}_{seen[kind]}" if kinds[kind] > 1 else kind
        pieces.append(text[cursor : match.start()])
        pieces.append("{" + name + "}")
        names.append(name)
        cursor = match.end()
    pieces.append(text[cursor:])
    return "".join(pieces), tuple(names), tuple(m.group() for m in matches)


def constant_slot_values(strings: Sequence[str]) -> frozenset[tuple[str, str]]:
    """The (kind, value) of each slot kind that has one value in every string of the cell:
    it varies nowhere, so it is part of the text ("K" in "shifts left; K decreases"), not a slot.
    Only where the cell has two or more distinct strings (one string has nothing varying)."""
    if len(set(strings)) < 2:
        return frozenset()
    seen: dict[str, set[str]] = {}
    for text in set(strings):
        for match in _SLOT.finditer(text):
            seen.setdefault(match.lastgroup or "", set()).add(match.group())
    return frozenset((kind, next(iter(v))) for kind, v in seen.items() if len(v) == 1)


def _sorted_counts(counter: Counter[str]) -> dict[str, int]:
    """Counts as a dict, most frequent first, ties by value (deterministic output)."""
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def induce_templates(strings: Iterable[str]) -> list[InducedTemplate]:
    """Group strings by induced shape; most frequent template first, ties by template text."""
    counts: Counter[str] = Counter()
    slots: dict[str, tuple[str, ...]] = {}
    examples: dict[str, str] = {}
    values: dict[str, dict[str, Counter[str]]] = {}
    strings = list(strings)
    constant = constant_slot_values(strings)
    for text in strings:
        template, names, found = key_shape(text, constant)
        if template not in counts:
            slots[template] = names
            examples[template] = text
            values[template] = {name: Counter() for name in names}
        counts[template] += 1
        for name, value in zip(names, found, strict=True):
            values[template][name][value] += 1
    return [
        InducedTemplate(
            template=template,
            count=count,
            slots=slots[template],
            example=examples[template],
            slot_values={name: _sorted_counts(c) for name, c in values[template].items()},
            constant=constant,
        )
        for template, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


@dataclass(frozen=True)
class TemplateStat:
    """One template of a cell, ruled or induced, with the first key that instantiates it.

    ``target_counts`` (ruled cells only) counts the rule's ``[key]`` values per name over the
    keys of this template, e.g. ``{"status": {"stable": 1500}}``; values that are not strings are
    written as JSON (``["B", "A"]``, ``null``).
    """

    template: str
    count: int
    slots: tuple[str, ...]
    example_id: str
    example: str
    slot_values: dict[str, dict[str, int]]
    target_counts: dict[str, dict[str, int]]

    @property
    def status_field(self) -> str | None:
        """The ``[key]`` value the keys are grouped by: ``status`` where the rule defines it,
        else its first (as the audit groups them: :attr:`.rules.rule.Rule.status_field`)."""
        if "status" in self.target_counts:
            return "status"
        return next(iter(self.target_counts), None)

    @property
    def status_counts(self) -> dict[str, int]:
        """The counts of the rule's status value (:attr:`status_field`)."""
        field = self.status_field
        return self.target_counts.get(field, {}) if field is not None else {}


@dataclass(frozen=True)
class UnparsedKey:
    """A key of a ruled cell that its rule's key grammar rejects."""

    id: str
    key: str
    error: str


@dataclass(frozen=True)
class KeyExample:
    """A verbatim key, and the question it answers when the key files carry it."""

    id: str
    key: str
    question: str | None = None


@dataclass(frozen=True)
class CellStructure:
    """What the keys of one (domain, level) cell look like.

    ``unparsed`` is ``None`` for a cell without a rule: induction has nothing to fail against.
    """

    domain: str
    level: int
    n_keys: int
    distinct_strings: dict[str, int]
    templates: tuple[TemplateStat, ...]
    examples: tuple[KeyExample, ...]
    rule: str | None
    unparsed: tuple[UnparsedKey, ...] | None

    @property
    def distinct(self) -> int:
        return len(self.distinct_strings)

    @property
    def ruled(self) -> bool:
        return self.rule is not None

    def as_json(self) -> dict[str, Any]:
        """Stable JSON form (field names are part of the CLI contract)."""
        return {
            "domain": self.domain,
            "level": self.level,
            "n_keys": self.n_keys,
            "distinct": self.distinct,
            "distinct_strings": self.distinct_strings,
            "ruled": self.ruled,
            "rule": self.rule,
            "templates": [
                {
                    "template": t.template,
                    "count": t.count,
                    "share": t.count / self.n_keys if self.n_keys else None,
                    "slots": list(t.slots),
                    "example": {"id": t.example_id, "key": t.example},
                    "slot_values": t.slot_values,
                    "target_counts": t.target_counts,
                    "status_counts": t.status_counts,
                }
                for t in self.templates
            ],
            "examples": [
                {"id": e.id, "key": e.key, "question": e.question} for e in self.examples
            ],
            "unparsed": None
            if self.unparsed is None
            else [{"id": u.id, "key": u.key, "error": u.error} for u in self.unparsed],
        }


def pick_examples(keys: Sequence[KeyItem], n: int = N_EXAMPLES) -> tuple[KeyExample, ...]:
    """Up to ``n`` verbatim keys: the first occurrence of each distinct string in id order, then
    the last keys of the cell to fill up (the selection of seed §1: all 9 strings of
    physical_stability L5 by first id, then ``..._3000_q5``)."""
    chosen: dict[str, KeyItem] = {}
    seen: set[str] = set()
    for key in keys:
        if len(chosen) == n:
            break
        if key.answer not in seen:
            seen.add(key.answer)
            chosen[key.id] = key
    for key in reversed(keys):
        if len(chosen) >= n:
            break
        chosen.setdefault(key.id, key)
    return tuple(
        KeyExample(k.id, k.answer, k.question)
        for k in sorted(chosen.values(), key=lambda k: k.id)
    )


def _value_text(value: Any) -> str:
    value = jsonable(value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _ruled_templates(
    keys: Sequence[KeyItem], rule: Rule
) -> tuple[list[TemplateStat], list[UnparsedKey]]:
    scorer = Scorer(rule)
    counts: Counter[str] = Counter()
    first: dict[str, KeyItem] = {}
    slots: dict[str, tuple[str, ...]] = {}
    values: dict[str, defaultdict[str, Counter[str]]] = {}
    targets: dict[str, defaultdict[str, Counter[str]]] = {}
    unparsed: list[UnparsedKey] = []
    for key in keys:
        parsed = scorer.parse_key(key.answer)
        if parsed.node is None:
            unparsed.append(UnparsedKey(key.id, key.answer, parsed.error))
            continue
        template = parsed.template
        if template not in counts:
            first[template] = key
            slots[template] = tuple(name.upper() for name in parsed.slots)
            values[template] = defaultdict(Counter)
            targets[template] = defaultdict(Counter)
        counts[template] += 1
        for name, value in parsed.slots.items():
            values[template][name.upper()][value] += 1
        for name, value in parsed.target.items():
            targets[template][name][_value_text(value)] += 1
    stats = [
        TemplateStat(
            template=template,
            count=count,
            slots=slots[template],
            example_id=first[template].id,
            example=first[template].answer,
            slot_values={name: _sorted_counts(values[template][name]) for name in slots[template]},
            target_counts={name: _sorted_counts(c) for name, c in targets[template].items()},
        )
        for template, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    return stats, unparsed


def _induced_templates(keys: Sequence[KeyItem]) -> list[TemplateStat]:
    first: dict[str, KeyItem] = {}
    constant = constant_slot_values([k.answer for k in keys])
    for key in keys:
        first.setdefault(key_shape(key.answer, constant)[0], key)
    return [
        TemplateStat(
            template=t.template,
            count=t.count,
            slots=t.slots,
            example_id=first[t.template].id,
            example=t.example,
            slot_values=t.slot_values,
            target_counts={},
        )
        for t in induce_templates(k.answer for k in keys)
    ]


def cell_structure(
    benchmark: Benchmark, domain: str, level: int, rule: Rule | None = None
) -> CellStructure:
    """The key structure of one cell; with a ``rule`` covering it, templates come from its grammar.

    Raises :class:`UsageError` when the cell has no keys or the rule does not cover it.
    """
    require_cell(benchmark, domain, level)
    return _structure(domain, level, benchmark.keys_in_cell(domain, level), rule)


def _structure(domain: str, level: int, keys: list[KeyItem], rule: Rule | None) -> CellStructure:
    if rule is not None and not rule.covers(domain, level):
        covered = ", ".join(str(c) for c in rule.cells)
        raise UsageError(f"rule {rule.name!r} covers {covered}, not {domain} L{level}")
    distinct = _sorted_counts(Counter(k.answer for k in keys))
    if rule is not None:
        templates, unparsed = _ruled_templates(keys, rule)
        unparsed_keys: tuple[UnparsedKey, ...] | None = tuple(unparsed)
    else:
        templates, unparsed_keys = _induced_templates(keys), None
    return CellStructure(
        domain=domain,
        level=level,
        n_keys=len(keys),
        distinct_strings=distinct,
        templates=tuple(templates),
        examples=pick_examples(keys),
        rule=rule.name if rule is not None else None,
        unparsed=unparsed_keys,
    )


def require_cell(benchmark: Benchmark, domain: str, level: int) -> None:
    """Raise :class:`UsageError` naming what exists when (domain, level) has no keys."""
    select_cells(benchmark, domain, level)


def select_cells(
    benchmark: Benchmark, domain: str | None = None, level: int | None = None
) -> list[tuple[str, int]]:
    """The cells matching the optional domain and level filters; none matching is a usage error."""
    cells = benchmark.cells()
    chosen = [
        (d, lv)
        for d, lv in cells
        if (domain is None or d == domain) and (level is None or lv == level)
    ]
    if chosen:
        return chosen
    domains = sorted({d for d, _ in cells})
    if domain is not None and domain not in domains:
        raise UsageError(f"no keys for domain {domain!r}; domains: {', '.join(domains)}")
    levels = sorted({lv for d, lv in cells if domain is None or d == domain})
    where = f"domain {domain!r}" if domain is not None else "this benchmark"
    raise UsageError(
        f"no keys at level {level} in {where}; levels: {', '.join(f'L{lv}' for lv in levels)}"
    )


def rule_for_cell(rules: Iterable[Rule], domain: str, level: int) -> Rule | None:
    """The first rule that covers the cell, if any."""
    return next((r for r in rules if r.covers(domain, level)), None)


def benchmark_structure(
    benchmark: Benchmark,
    rules: Sequence[Rule] = (),
    domain: str | None = None,
    level: int | None = None,
) -> list[CellStructure]:
    """Structures of every selected cell, each ruled by the first of ``rules`` covering it."""
    cells = select_cells(benchmark, domain, level)
    wanted = set(cells)
    grouped: dict[tuple[str, int], list[KeyItem]] = {cell: [] for cell in cells}
    for key in benchmark.keys.values():
        cell = (key.ref.domain, key.ref.level)
        if cell in wanted:
            grouped[cell].append(key)
    return [
        _structure(d, lv, sorted(grouped[(d, lv)], key=lambda k: k.id), rule_for_cell(rules, d, lv))
        for d, lv in cells
    ]
