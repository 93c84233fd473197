"""Load a rule file (TOML) into a checked, compiled :class:`Rule`.

A rule file is data: a few tables of strings, each expression compiled by :mod:`..expressions.expression` (no eval,
no imports). Everything is checked when the file is loaded, so a malformed rule fails once, up
front, with ``file:line:column: what`` — unknown tables or fields (with a suggestion), missing
fields, wrong types, bad expressions, grammar errors and grammar paths outside the allowed folders.

The schema is documented in README ("Rule DSL reference"); :data:`SCHEMA` is its source of truth.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import RuleError, located
from ...load.tomlfile import load_toml
from ..expressions.expression import Expression, Origin, compile_expression
from ..reading.certainty import CertaintySpec, grammar_vocabulary
from ..reading.claims import CLAIM_FIELDS, KIND_FIELDS, ClaimSpec
from ..reading.components import COMPONENT_FIELDS, ComponentError, expand_components
from ..reading.grammar import CompiledGrammar, bundled_grammar_dir, compile_grammar, resolve_grammar
from ..reading.kinds import kinds_used
from ..reading.restated import question_runs, question_words
from ..reading.tolerant import TolerantWords
from .conflict_review import TABLE as REVIEWED_CONFLICTS
from .conflict_review import check_reviewed_conflicts

#: ``[output]`` names the ``score`` command prints itself (its verdict fields).
RESERVED_OUTPUTS = ("id", "accept", "reason", "detail")

#: Reasons the engine itself gives, before any rule clause runs.
ANSWER_MISSING = "answer missing"
ANSWER_UNPARSEABLE = "answer unparseable"
KEY_UNPARSED = "key matches no template"
RULE_ERROR = "rule error"
BUILTIN_REASONS = (ANSWER_MISSING, ANSWER_UNPARSEABLE, KEY_UNPARSED, RULE_ERROR)

#: Allowed tables and fields. ``None`` marks a table whose fields are free names (expressions).
SCHEMA: dict[str, dict[str, type | tuple[type, ...]] | None] = {
    "rule": {
        "name": str,
        "description": str,
        "question": str,
        "cells": list,
        "key_grammar": str,
        "answer_grammar": str,
    },
    "answer": {
        "label": str,
        "which": str,
        "delete": str,
        "replace": list,
        "trim": str,
        "lowercase": bool,
        "exact_words": bool,
        "labels": bool,
    },
    "key": None,
    "output": None,
    "keys_check": {"accepts": str},
    REVIEWED_CONFLICTS: None,  # grammar rule name -> why; checked by .conflict_review
    "claims": {
        "subject": str, "target": str, "kinds": dict, "nouns": dict, "steady": dict, "within": str,
        "value_from_subject": list,
    },
    "certainty": {
        "letters": bool, "numbers": bool, "words": list, "ignore": list, "benign": list, "when": str,
    },
    "uncertain": {"reason": str, "check": str},
    "attribute": {"node": (str, list), "name": str, "expr": str},
    "component": COMPONENT_FIELDS,
    "let": {"name": str, "expr": str},
    "require": {"reason": str, "check": str, "when": str, "explain": str},
    "example": {
        "key": str,
        "answer": str,
        "response": str,
        "accept": bool,
        "reason": str,
        "extract": dict,
        "note": str,
    },
}
_ARRAY_TABLES = {"attribute", "component", "let", "require", "example", "uncertain"}
_REQUIRED = {
    "rule": ("name", "cells", "key_grammar", "answer_grammar"),
    "attribute": ("node", "name", "expr"),
    "component": ("name", "kind"),
    "let": ("name", "expr"),
    "require": ("reason", "check"),
    "uncertain": ("reason", "check"),
    "example": ("key",),
}
_TOML_TYPE_NAMES = {str: "string", list: "array", dict: "table", bool: "boolean", int: "integer"}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Cell:
    """A (domain, level) cell a rule applies to."""

    domain: str
    level: int

    def __str__(self) -> str:
        return f"{self.domain} L{self.level}"


@dataclass(frozen=True)
class AnswerFormat:
    """How the answer line is found and cleaned before the answer grammar sees it."""

    label: str = "ANSWER:"
    which: str = "last"
    delete: str = "*_`"
    replace: tuple[tuple[str, str], ...] = (
        ("\u2019", "'"),
        ("\u2018", "'"),
        ("\u201c", '"'),
        ("\u201d", '"'),
        ("\u2013", "-"),
        ("\u2014", " - "),
        ("\u2212", "-"),
        ("\u2010", "-"),
        ("\u2011", "-"),
    )
    trim: str = " \t\"'.:;,-"
    lowercase: bool = False
    #: The content words of the rule's question: a sentence of them ending in "?" is the
    #: question restated, set aside before the grammar reads the line (:mod:`..reading.restated`).
    question_words: frozenset[str] = frozenset()
    #: Runs of words of the rule's question: a sentence mostly made of them is the question's
    #: text copied, "?" or not (:mod:`..reading.restated`).
    question_runs: frozenset[tuple[str, ...]] = frozenset()
    #: ``exact_words = true``: no word is read through a typo (the seed's "exactly stable").
    exact_words: bool = False
    #: The words a typo is read as (:mod:`..reading.tolerant`); None with ``exact_words``.
    tolerant: TolerantWords | None = None
    #: ``labels = true``: the answers name things by one-letter labels, and one written in lower
    #: case is read as its capital ("closest to b"; :func:`..reading.tolerant.capital_labels`).
    labels: bool = False


@dataclass(frozen=True)
class Requirement:
    """One acceptance clause: when ``when`` holds (or always), ``check`` must hold, else ``reason``."""

    reason: str
    check: Expression
    when: Expression | None = None
    explain: str = ""


@dataclass(frozen=True)
class Example:
    """A worked example the rule carries and must pass (run like a doctest)."""

    key: str
    response: str
    accept: bool
    reason: str
    extract: dict[str, Any]
    note: str
    line: int | None


@dataclass
class Rule:
    """A loaded, compiled rule: everything needed to score answers of its cells."""

    path: Path
    name: str
    description: str
    question: str
    cells: tuple[Cell, ...]
    key_grammar: CompiledGrammar
    answer_grammar: CompiledGrammar
    answer_format: AnswerFormat
    key_values: dict[str, Expression]
    attributes: dict[str, dict[str, Expression]]
    lets: tuple[tuple[str, Expression], ...]
    requirements: tuple[Requirement, ...]
    outputs: dict[str, Expression]
    examples: tuple[Example, ...] = ()
    #: The ``[claims]`` table: claim kinds read by the claim layer, and the target expression.
    claims: ClaimSpec | None = None
    claims_target: Expression | None = None
    #: ``[certainty]``: leftover material that makes a verdict uncertain; ``[[uncertain]]``.
    certainty: CertaintySpec = field(default_factory=CertaintySpec)
    uncertain: tuple[tuple[str, Expression], ...] = ()
    #: ``[certainty] when``: the generic signs apply only where this holds (all answers if None).
    certainty_when: Expression | None = None
    #: ``[keys_check] accepts``: over ``target`` (the key's values) and ``other`` (another key's),
    #: true when the other key is a right answer to this one; the keys check tests exactly that.
    keys_accept: Expression | None = None
    #: ``[reviewed_conflicts]``: grammar rule -> why Lark's shift is intended there (the load
    #: refused every other hidden reduction; see :mod:`.conflict_review`).
    reviewed_conflicts: dict[str, str] = field(default_factory=dict)
    source_text: str = field(default="", repr=False)

    @property
    def reads_key_node(self) -> bool:
        """Whether any expression scored per answer reads ``key`` itself rather than ``target``.

        If none does, a verdict depends on a key only through its ``[key]`` values and the
        ``[claims]`` target, so keys that share them score every answer alike (the constant-answer
        baseline groups them)."""
        scored = [e for _, e in self.lets] + [e for _, e in self.uncertain]
        scored += list(self.outputs.values())
        for requirement in self.requirements:
            scored += [requirement.check] + ([requirement.when] if requirement.when else [])
        if self.certainty_when is not None:
            scored.append(self.certainty_when)
        return any("key" in expression.names for expression in scored)

    @property
    def status_field(self) -> str:
        """The ``[key]`` value a cell's keys are grouped by in the reports (counts per status,
        a worked example per status): ``status`` where the rule defines it, else its first
        ``[key]`` value; the reports name it when it is not ``status``."""
        return "status" if "status" in self.key_values else next(iter(self.key_values))

    @property
    def attributes_read_target(self) -> bool:
        """Whether some ``[[attribute]]`` reads ``target``: its nodes' attributes then depend on
        the key, so a parsed answer is not shared between keys (see the scorer)."""
        return any("target" in e.names for table in self.attributes.values() for e in table.values())

    @property
    def reasons(self) -> tuple[str, ...]:
        """Every rejection reason this rule can give, built-in ones first."""
        seen = dict.fromkeys(BUILTIN_REASONS)
        seen.update(dict.fromkeys(r.reason for r in self.requirements))
        return tuple(seen)

    def covers(self, domain: str, level: int) -> bool:
        return any(c.domain == domain and c.level == level for c in self.cells)


class _Locator:
    """Find where a value sits in the TOML text, for ``file:line:column`` messages.

    tomllib returns values without positions, so the raw text is searched: for the n-th
    ``[[table]]`` (or ``[table]``) block, the line ``field = ...`` inside it.
    """

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()
        #: table -> the line numbers of its headers, found once (a rule with thousands of
        #: [[let]]s used to rescan the file for each one: quadratic).
        self._headers: dict[str, list[int]] = {}

    def _block_start(self, table: str, index: int | None) -> int:
        starts = self._headers.get(table)
        if starts is None:
            header = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?\s*(#.*)?$")
            starts = [n for n, line in enumerate(self.lines) if header.match(line)]
            self._headers[table] = starts
        if not starts:
            return 0
        if index is None:
            return starts[0]
        return starts[index] if index < len(starts) else 0

    def header_line(self, table: str, index: int) -> int:
        """0-based line of the ``index``-th ``[[table]]`` header (0 when not found)."""
        return self._block_start(table, index)

    def find(self, table: str, index: int | None, name: str) -> tuple[int | None, int | None]:
        """1-based (line, column of the value's first character) of ``name = ...``."""
        start = self._block_start(table, index)
        pattern = re.compile(rf"^\s*(?:{re.escape(name)}|\"{re.escape(name)}\")\s*=\s*")
        for number in range(start, len(self.lines)):
            line = self.lines[number]
            if number > start and re.match(r"^\s*\[", line):
                break
            match = pattern.match(line)
            if match:
                return number + 1, match.end() + 1
        return (start + 1 if self.lines else None), None

    def origin(self, table: str, index: int | None, name: str, value: str) -> Origin:
        line, column = self.find(table, index, name)
        if line is None or column is None:
            return Origin(str(self.path), line or 1, 0)
        raw = self.lines[line - 1]
        quote = raw[column - 1 : column + 2]
        multiline = quote in ('"""', "'''")
        if multiline:
            # Value starts on the next line when the opening quotes end the line.
            rest = raw[column + 2 :]
            if not rest.strip():
                return Origin(str(self.path), line + 1, 0)
            return Origin(str(self.path), line, column + 2)
        return Origin(str(self.path), line, column)

    def error(self, table: str, index: int | None, name: str | None, message: str) -> RuleError:
        if name is None:
            line = self._block_start(table, index) + 1 if self.lines else None
            return RuleError(located(self.path, line, None, message))
        line, column = self.find(table, index, name)
        return RuleError(located(self.path, line, column, message))


class _BoundNames(AbstractSet[str]):
    """The names bound so far while [[let]]s load, shared by every let's expression.

    Each let may use the names bound before it. A snapshot is a view of the first ``n`` names,
    so compiling each of n lets costs O(1) in names, not a copy of all the names before it.
    """

    def __init__(self, initial: set[str]) -> None:
        self._order: dict[str, int] = {name: 0 for name in initial}

    def add(self, name: str) -> None:
        self._order[name] = len(self._order)

    def snapshot(self) -> AbstractSet[str]:
        return _NamesBefore(self._order, len(self._order))

    def __contains__(self, name: object) -> bool:
        return name in self._order

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


class _NamesBefore(AbstractSet[str]):
    """The names of a :class:`_BoundNames` bound before position ``limit``."""

    def __init__(self, order: dict[str, int], limit: int) -> None:
        self._order, self._limit = order, limit

    def __contains__(self, name: object) -> bool:
        position = self._order.get(name)  # type: ignore[arg-type]
        return position is not None and position < self._limit

    def __iter__(self) -> Iterator[str]:
        return (n for n, i in self._order.items() if i < self._limit)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _type_names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_TOML_TYPE_NAMES.get(k, k.__name__) for k in kinds)


def _suggest(name: str, options: list[str]) -> str:
    close = difflib.get_close_matches(name, options, n=1)
    return (
        f" (did you mean {close[0]!r}?)"
        if close
        else f" (expected one of: {', '.join(sorted(options))})"
    )


def _check_schema(data: dict[str, Any], loc: _Locator) -> None:
    for table, value in data.items():
        if table not in SCHEMA:
            raise loc.error(
                table, None, None, f"unknown table [{table}]{_suggest(table, list(SCHEMA))}"
            )
        entries = value if table in _ARRAY_TABLES else [value]
        if table in _ARRAY_TABLES and not isinstance(value, list):
            raise loc.error(
                table, None, None, f"[{table}] must be an array of tables: write [[{table}]]"
            )
        if table not in _ARRAY_TABLES and not isinstance(value, dict):
            raise loc.error(table, None, None, f"[{table}] must be a table")
        fields = SCHEMA[table]
        for index, entry in enumerate(entries):
            at = index if table in _ARRAY_TABLES else None
            if table == REVIEWED_CONFLICTS:
                continue  # its names are grammar rules ("_item"), its values prose
            if fields is None:
                for name, expr in entry.items():
                    if not _NAME.match(name):
                        raise loc.error(
                            table, at, name, f"[{table}] name {name!r} is not a valid name"
                        )
                    if not isinstance(expr, str):
                        raise loc.error(
                            table, at, name, f"[{table}] {name} must be an expression string"
                        )
                continue
            for name, item in entry.items():
                if name not in fields:
                    raise loc.error(
                        table,
                        at,
                        name,
                        f"unknown field {name!r} in [{table}]{_suggest(name, list(fields))}",
                    )
                kind = fields[name]
                if not isinstance(item, kind) or (isinstance(item, bool) and kind is not bool):
                    raise loc.error(
                        table,
                        at,
                        name,
                        f"[{table}] {name} must be a {_type_names(kind)}",
                    )
            for name in _REQUIRED.get(table, ()):
                if name not in entry:
                    raise loc.error(
                        table, at, None, f"[{table}] is missing the required field {name!r}"
                    )
    for table in ("rule",):
        if table not in data:
            raise loc.error(table, None, None, f"missing table [{table}]")


def _cells(raw: list[Any], loc: _Locator) -> tuple[Cell, ...]:
    cells = []
    for item in raw:
        if (
            not isinstance(item, dict)
            or set(item) != {"domain", "level"}
            or not isinstance(item["domain"], str)
            or not isinstance(item["level"], int)
            or isinstance(item["level"], bool)
        ):
            raise loc.error(
                "rule",
                None,
                "cells",
                'cells must be a list like [{domain = "physical_stability", level = 5}]',
            )
        cells.append(Cell(item["domain"], item["level"]))
    if not cells:
        raise loc.error("rule", None, "cells", "cells must name at least one cell")
    return tuple(cells)


def _answer_format(raw: dict[str, Any], loc: _Locator) -> AnswerFormat:
    defaults = AnswerFormat()
    replace = defaults.replace
    if "replace" in raw:
        pairs = raw["replace"]
        if not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in pairs
        ):
            raise loc.error(
                "answer", None, "replace", 'replace must be a list of ["from", "to"] pairs'
            )
        replace = tuple((a, b) for a, b in pairs)
        if any(not a for a, _ in replace):
            raise loc.error(
                "answer", None, "replace", "replace pairs need a non-empty text to replace"
            )
    which = raw.get("which", defaults.which)
    if which not in ("last", "first"):
        raise loc.error("answer", None, "which", 'which must be "last" or "first"')
    return AnswerFormat(
        label=raw.get("label", defaults.label),
        which=which,
        delete=raw.get("delete", defaults.delete),
        replace=replace,
        trim=raw.get("trim", defaults.trim),
        lowercase=raw.get("lowercase", defaults.lowercase),
        exact_words=raw.get("exact_words", defaults.exact_words),
        labels=raw.get("labels", defaults.labels),
    )


def _tolerant_words(grammar: CompiledGrammar, certainty: CertaintySpec) -> TolerantWords:
    """The words a typo may be read as: those of the answer grammar and of the shared trigger
    and value grammars every answer grammar builds on (:mod:`..reading.tolerant`)."""
    shared = [bundled_grammar_dir() / name for name in ("claims.lark", "common.lark")]
    if grammar.path is not None and grammar.path.is_file():
        shared += kinds_used(grammar.path.read_text(encoding="utf-8", errors="replace"))
    words: set[str] = set()
    for path in (grammar.path, *shared):
        if path is not None and path.is_file():
            words |= grammar_vocabulary(path, certainty)
    return TolerantWords(frozenset(words))


def load_rule(path: str | Path) -> Rule:
    """Load, check and compile the rule file at ``path`` (any error: :class:`RuleError`)."""
    path = Path(path)
    data = load_toml(path, RuleError)
    text = path.read_text(encoding="utf-8")  # known good: load_toml read and decoded it
    loc = _Locator(path, text)
    _check_schema(data, loc)
    head = data["rule"]
    rule_dir = path.resolve().parent
    key_grammar = compile_grammar(resolve_grammar(head["key_grammar"], rule_dir, path))
    answer_grammar = compile_grammar(resolve_grammar(head["answer_grammar"], rule_dir, path))
    check_reviewed_conflicts(
        data.get(REVIEWED_CONFLICTS),
        key_grammar.hidden_reductions + answer_grammar.hidden_reductions,
        path.name,
        lambda name, message: loc.error(REVIEWED_CONFLICTS, None, name, message),
    )

    def compile_at(
        table: str, index: int | None, name: str, source: str, names: AbstractSet[str]
    ) -> Expression:
        return compile_expression(
            source, names=names, origin=loc.origin(table, index, name, source)
        )

    key_values = {
        name: compile_at("key", None, name, src, {"key"})
        for name, src in data.get("key", {}).items()
    }
    if not key_values:
        raise loc.error(
            "key",
            None,
            None,
            '[key] must define at least one value of the key (e.g. status = "key.status")',
        )
    attributes: dict[str, dict[str, Expression]] = {}
    for index, entry in enumerate(data.get("attribute", [])):
        if not _NAME.match(entry["name"]):
            raise loc.error(
                "attribute", index, "name", f"attribute name {entry['name']!r} is not a valid name"
            )
        kinds = [entry["node"]] if isinstance(entry["node"], str) else entry["node"]
        if not kinds or not all(isinstance(k, str) and _NAME.match(k) for k in kinds):
            raise loc.error(
                "attribute", index, "node", "node must be a grammar rule name or a list of them"
            )
        # `target` (the key's [key] values) too: an attribute may compare a node with the key
        expr = compile_at("attribute", index, "expr", entry["expr"], {"self", "target"})
        if re.search(rf"\bself\s*\.\s*{re.escape(entry['name'])}\b", entry["expr"]):
            raise loc.error(
                "attribute",
                index,
                "expr",
                f"attribute {entry['name']!r} reads itself (self.{entry['name']}): it would never finish",
            )
        for kind in kinds:
            attributes.setdefault(kind, {})[entry["name"]] = expr
    claims, claims_target = _claims(data.get("claims"), loc, answer_grammar, compile_at)
    names = _BoundNames({"key", "answer", "target"} | ({"claims"} if claims else set()))
    try:
        components = expand_components(
            data.get("component", []),
            claims.kinds if claims else None,
            answer_grammar.field_names,
            answer_grammar.field_names | {entry["name"] for entry in data.get("attribute", [])},
            frozenset(key_values),
        )
    except ComponentError as error:
        raise loc.error("component", error.index, error.field, error.message) from None
    for index, kind, name, source in components.attributes:
        if name in attributes.get(kind, {}):
            raise loc.error("component", index, "said_by", f"{kind} nodes already have an attribute {name!r}")
        attributes.setdefault(kind, {})[name] = compile_at("component", index, "said_by", source, {"self"})
    # [[component]], [[let]] and [[require]] tables count in the order the file writes them: a
    # component may read the lets before it (its `values`), later lets read its bindings, and
    # its requirements sit among the rule's own where it is declared.
    component_lets: dict[int, list[tuple[str, str, str]]] = {}
    for index, at, name, source in components.lets:
        component_lets.setdefault(index, []).append((at, name, source))
    lets = []
    for table, index in _in_file_order(loc, data, ("component", "let")):
        if table == "component":
            for at, name, source in component_lets.get(index, []):
                if name in names:
                    raise loc.error("component", index, at, f"component binding {name!r} is already bound")
                lets.append((name, compile_at("component", index, at, source, names.snapshot())))
                names.add(name)
            continue
        entry = data["let"][index]
        name = entry["name"]
        if not _NAME.match(name) or name in names:
            raise loc.error("let", index, "name", f"let name {name!r} is invalid or already bound")
        lets.append((name, compile_at("let", index, "expr", entry["expr"], names.snapshot())))
        names.add(name)
    for index, entry in enumerate(data.get("component", [])):
        # the claims a trailing hedge follows may be bound anywhere in the file (a check sees them all)
        if "counted" in entry and entry["counted"] not in names:
            raise loc.error("component", index, "counted", f"counted {entry['counted']!r} is not a name the rule binds")
    component_requires: dict[int, list[Requirement]] = {}
    for index, reason, check, when, explain in components.requires:
        component_requires.setdefault(index, []).append(
            Requirement(
                reason=reason,
                check=compile_at("component", index, "name", check, names),
                when=compile_at("component", index, "when", when, names) if when is not None else None,
                explain=explain,
            )
        )
    requirements = []
    for table, index in _in_file_order(loc, data, ("component", "require")):
        if table == "component":
            requirements.extend(component_requires.get(index, []))
            continue
        entry = data["require"][index]
        requirements.append(
            Requirement(
                reason=entry["reason"],
                check=compile_at("require", index, "check", entry["check"], names),
                when=compile_at("require", index, "when", entry["when"], names)
                if "when" in entry
                else None,
                explain=entry.get("explain", ""),
            )
        )
    if not requirements:
        raise loc.error("require", None, None, "a rule needs at least one [[require]] clause")
    for name in data.get("output", {}):
        if name in RESERVED_OUTPUTS:
            raise loc.error(
                "output",
                None,
                name,
                f"[output] name {name!r} is reserved: `score` prints "
                f"{', '.join(RESERVED_OUTPUTS)} itself; choose another name",
            )
    outputs = {
        name: compile_at("component", index, "name", src, names)
        for index, name, src in components.outputs
    } | {
        name: compile_at("output", None, name, src, names)
        for name, src in data.get("output", {}).items()
    }
    uncertain = tuple(
        (entry["reason"], compile_at("uncertain", index, "check", entry["check"], names))
        for index, entry in enumerate(data.get("uncertain", []))
    )
    raw_certainty = data.get("certainty", {})
    for name in ("words", "ignore", "benign"):
        if not all(isinstance(w, str) for w in raw_certainty.get(name, [])):
            raise loc.error("certainty", None, name, f"[certainty] {name} must list words as strings")
    certainty = CertaintySpec(
        letters=raw_certainty.get("letters", False),
        numbers=raw_certainty.get("numbers", False),
        extra_words=frozenset(w.lower() for w in raw_certainty.get("words", [])),
        ignore_words=frozenset(w.lower() for w in raw_certainty.get("ignore", [])),
        benign=frozenset(raw_certainty.get("benign", [])),
    )
    examples = tuple(_examples(data.get("example", []), loc, set(outputs)))
    _check_field_names(data, loc, answer_grammar, key_grammar, claims)
    answer_format = _answer_format(data.get("answer", {}), loc)
    return Rule(
        path=path,
        name=head["name"],
        description=head.get("description", "").strip(),
        question=head.get("question", "").strip(),
        cells=_cells(head["cells"], loc),
        key_grammar=key_grammar,
        answer_grammar=answer_grammar,
        answer_format=replace(
            answer_format,
            question_words=question_words(head.get("question", "")),
            question_runs=question_runs(head.get("question", "")),
            tolerant=None if answer_format.exact_words else _tolerant_words(answer_grammar, certainty),
        ),
        key_values=key_values,
        attributes=attributes,
        lets=tuple(lets),
        requirements=tuple(requirements),
        outputs=outputs,
        examples=examples,
        source_text=text,
        claims=claims,
        claims_target=claims_target,
        certainty=certainty,
        uncertain=uncertain,
        certainty_when=compile_at("certainty", None, "when", raw_certainty["when"], names)
        if "when" in raw_certainty
        else None,
        keys_accept=compile_at(
            "keys_check", None, "accepts", data["keys_check"]["accepts"], {"target", "other"}
        )
        if "accepts" in data.get("keys_check", {})
        else None,
        reviewed_conflicts=dict(data.get(REVIEWED_CONFLICTS, {})),
    )


def _in_file_order(loc: _Locator, data: dict[str, Any], tables: tuple[str, ...]) -> list[tuple[str, int]]:
    """(table, index) of every entry of the array ``tables``, in the order of their headers in
    the file (tomllib keeps each table's entries in order, but not the order between tables)."""
    entries = [
        (loc.header_line(table, index), order, table, index)
        for order, table in enumerate(tables)
        for index in range(len(data.get(table, [])))
    ]
    return [(table, index) for _, _, table, index in sorted(entries)]


def _claims(
    raw: dict[str, Any] | None, loc: _Locator, grammar: CompiledGrammar, compile_at: Any
) -> tuple[ClaimSpec | None, Expression | None]:
    """Read ``[claims]``: every kind must be a rule of the answer grammar, with string values."""
    if raw is None:
        return None, None
    kinds_raw = raw.get("kinds")
    if not isinstance(kinds_raw, dict) or not kinds_raw:
        raise loc.error("claims", None, "kinds", "[claims] kinds must name at least one claim kind")
    rule_names = grammar.rule_names
    kinds: dict[str, tuple[str, ...]] = {}
    for kind, values in kinds_raw.items():
        if kind not in rule_names:
            raise loc.error(
                "claims", None, "kinds",
                f"claim kind {kind!r} is not a rule of the answer grammar{_suggest(kind, sorted(rule_names))}",
            )
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise loc.error("claims", None, "kinds", f"claim kind {kind!r} must list its values as strings")
        kinds[kind] = tuple(values)
    subject = raw.get("subject")
    if subject is not None and subject not in rule_names:
        raise loc.error(
            "claims", None, "subject",
            f"subject {subject!r} is not a rule of the answer grammar{_suggest(subject, sorted(rule_names))}",
        )
    nouns: dict[str, str] = {}
    for kind, noun in (raw.get("nouns") or {}).items():
        if kind not in kinds or not isinstance(noun, str) or noun not in rule_names:
            raise loc.error(
                "claims", None, "nouns",
                f"nouns: {kind!r} must be a claim kind naming a rule of the answer grammar, got {noun!r}",
            )
        nouns[noun] = kind
    within = raw.get("within")
    if within is not None and within not in rule_names:
        raise loc.error(
            "claims", None, "within",
            f"within {within!r} is not a rule of the answer grammar{_suggest(within, sorted(rule_names))}",
        )
    steady: dict[str, str] = {}
    for kind, value in (raw.get("steady") or {}).items():
        if kind not in kinds or value not in kinds[kind]:
            raise loc.error(
                "claims", None, "steady", f"steady: {value!r} is not a value of claim kind {kind!r}"
            )
        steady[kind] = value
    from_subject = raw.get("value_from_subject", [])
    for kind in from_subject:
        if kind not in kinds:
            raise loc.error(
                "claims", None, "value_from_subject",
                f"value_from_subject: {kind!r} is not a claim kind of [claims] kinds",
            )
    if from_subject and subject is None:
        raise loc.error(
            "claims", None, "value_from_subject",
            "value_from_subject needs [claims] subject: the rule whose mentions give the values",
        )
    target = compile_at("claims", None, "target", raw["target"], {"key"}) if "target" in raw else None
    spec = ClaimSpec(kinds, subject, nouns, steady, within, frozenset(from_subject))
    return spec, target


_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_FIELD = re.compile(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)")


def _check_field_names(
    data: dict[str, Any],
    loc: _Locator,
    answer_grammar: CompiledGrammar,
    key_grammar: CompiledGrammar,
    claims: ClaimSpec | None,
) -> None:
    """Refuse ``x.name`` where no node, attribute, claim or record of the rule has ``name``.

    A misspelled field (``self.change_yess``) would otherwise read as null on every answer and
    silently change verdicts; here it is a load error with the nearest known name.
    """
    known = set(answer_grammar.field_names) | set(key_grammar.field_names)
    known |= {entry["name"] for entry in data.get("attribute", [])}
    known |= set(data.get("key", {}))  # target.<name>
    if claims is not None:
        known |= set(claims.kinds) | CLAIM_FIELDS | KIND_FIELDS | {"hedged", "context_spans"}
    for table in ("key", "output", "keys_check"):
        for name, source in data.get(table, {}).items():
            _check_source(loc, table, None, name, source, known)
    for table, fields in (
        ("attribute", ("expr",)),
        ("component", ("key", "when", "values", "hedged")),
        ("let", ("expr",)),
        ("require", ("check", "when")),
        ("uncertain", ("check",)),
    ):
        for index, entry in enumerate(data.get(table, [])):
            for name in fields:
                if name in entry:
                    _check_source(loc, table, index, name, entry[name], known)
    if "when" in data.get("certainty", {}):
        _check_source(loc, "certainty", None, "when", data["certainty"]["when"], known)
    if claims is not None and "target" in data.get("claims", {}):
        _check_source(loc, "claims", None, "target", data["claims"]["target"], known)


def _check_source(
    loc: _Locator, table: str, index: int | None, name: str, source: str, known: set[str]
) -> None:
    code = _STRING.sub(lambda m: " " * len(m.group(0)), source)
    for match in _FIELD.finditer(code):
        if match.start() > 0 and code[match.start() - 1].isdigit():
            continue  # a decimal point
        field_name = match.group(1)
        if field_name not in known:
            raise loc.error(
                table, index, name,
                f"no node, attribute or claim has a field {field_name!r}"
                + (f" (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(field_name, sorted(known), n=1)) else ""),
            )


def _examples(entries: list[dict[str, Any]], loc: _Locator, outputs: set[str]) -> list[Example]:
    found = []
    for index, entry in enumerate(entries):
        if ("answer" in entry) == ("response" in entry):
            raise loc.error(
                "example",
                index,
                None,
                "an [[example]] needs exactly one of answer (the ANSWER text) or response (the full response)",
            )
        response = entry["response"] if "response" in entry else "ANSWER: " + entry["answer"]
        extract = entry.get("extract", {})
        for name in extract:
            if name not in outputs:
                raise loc.error(
                    "example",
                    index,
                    "extract",
                    f"extract names {name!r}, which is not in [output]{_suggest(name, list(outputs))}",
                )
        line, _ = loc.find("example", index, "key")
        reason = entry.get("reason", "")
        accept = entry.get("accept", reason == "")
        if accept and reason:
            raise loc.error(
                "example", index, "reason", "an accepted [[example]] has no reason (drop one of them)"
            )
        found.append(
            Example(
                key=entry["key"],
                response=response,
                accept=accept,
                reason=reason,
                extract=extract,
                note=entry.get("note", ""),
                line=line,
            )
        )
    return found
