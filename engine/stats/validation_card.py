"""A rule's validation card: its agreement on blind sets, measured before tuning on them.

A card is a TOML data file beside the rule, in a ``cards/`` folder
(``rules/cards/physical_stability.card.toml``: not ``rules/*.toml``, which are the bundled rules),
read as data and never run. It holds one entry per labelled set, keyed by the set's file name:
cases, cases agreed (accept verdict), the date, the rule's version
(:func:`~.rule_version.rule_version`) the figure was measured on, and where it comes from —
``measured`` (written by ``keyaudit test-rule RULE --cases FILE --card``) or ``history`` (copied
from the project's records of a figure measured before the card existed; version ``unknown``).
Rates and Wilson 95% intervals are recomputed from the counts whenever a card is read; the file
repeats them only for a person reading it.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, UsageError, located, printable
from ..load.output_file import write_output
from ..load.tomlfile import load_toml
from ..rule_language.rules.rule import Rule
from .rule_version import rule_files, version_of
from .wilson import wilson_interval

CARD_FOLDER = "cards"
CARD_SUFFIX = ".card.toml"
#: The version of a figure measured before its rule had a card.
UNKNOWN = "unknown"
SOURCES = ("measured", "history")
CONFIDENCE = 0.95


@dataclass(frozen=True)
class CardEntry:
    """One labelled set's figure: ``agree`` of ``cases`` accept verdicts agreed with the labels."""

    set: str
    cases: int
    agree: int
    date: str
    version: str
    source: str
    note: str = ""

    @property
    def agreement(self) -> float:
        return self.agree / self.cases if self.cases else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.agree, self.cases, CONFIDENCE)


@dataclass(frozen=True)
class CardStatus:
    """A rule's card as ``check`` reports it: where it is (or would be), its entries, and the
    rule's version now. ``entries`` is empty when there is no card."""

    rule: str
    path: str
    exists: bool
    version_now: str
    entries: tuple[CardEntry, ...] = ()

    @property
    def cases(self) -> int:
        return sum(e.cases for e in self.entries)

    @property
    def agree(self) -> int:
        return sum(e.agree for e in self.entries)

    @property
    def agreement(self) -> float:
        return self.agree / self.cases if self.cases else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """Wilson 95% of the pooled agreement (every set's cases together)."""
        return wilson_interval(self.agree, self.cases, CONFIDENCE)

    @property
    def current(self) -> tuple[CardEntry, ...]:
        """Entries measured on the rule's files as they are now."""
        return tuple(e for e in self.entries if e.version == self.version_now)

    @property
    def from_history(self) -> tuple[CardEntry, ...]:
        return tuple(e for e in self.entries if e.version == UNKNOWN)

    @property
    def outdated(self) -> tuple[CardEntry, ...]:
        """Entries measured on another version: the rule's files changed since."""
        return tuple(e for e in self.entries if e.version not in (UNKNOWN, self.version_now))

    @property
    def state(self) -> str:
        """``none`` (no card or no entry), ``current`` (every entry on this version),
        ``history`` (some from before cards, none outdated), ``changed`` (some entry measured on
        other files than the rule's now)."""
        if not self.entries:
            return "none"
        if self.outdated:
            return "changed"
        if self.from_history:
            return "history"
        return "current"


def card_path(rule_path: Path) -> Path:
    """Where the card of the rule at ``rule_path`` lives: ``cards/<name>.card.toml`` beside it."""
    return rule_path.parent / CARD_FOLDER / (rule_path.stem + CARD_SUFFIX)


def card_target(rule_path: Path) -> Path:
    """The card ``test-rule --card`` may write for the rule at ``rule_path``, checked before any
    work (a :class:`UsageError`, one line, otherwise).

    A bundled rule's card is part of the installed package: it is never rewritten (copy the
    rule's folder and record on the copy). A rule folder is often downloaded: its ``cards/`` may
    be a link, but only to a folder inside the rule's folder, or the card would be written
    elsewhere. The card itself is written by :func:`~keyaudit.engine.load.output_file.write_output`,
    so a link planted at its name, or at any temporary name, is replaced, never written through.
    """
    from ..load.locate import bundled_rules_dir

    home = rule_path.parent
    try:
        bundled = home.resolve() == bundled_rules_dir().resolve()
        inside = home.resolve()
        folder = home / CARD_FOLDER
        resolved = folder.resolve()
    except (OSError, RuntimeError) as error:
        raise UsageError(f"--card: {printable(str(home))}: cannot be resolved: {error}") from None
    if bundled:
        raise UsageError(
            f"--card: {rule_path.stem} is a bundled rule, whose card belongs to the installed"
            " package and is never rewritten; copy the rule's folder (the .toml, its grammars and"
            " cards/) and record on the copy"
        )
    if resolved != inside / CARD_FOLDER and inside not in resolved.parents:
        raise UsageError(
            f"--card: {printable(str(folder))} is a link to {printable(str(resolved))}, outside the"
            " rule's folder; the card is written only inside it"
        )
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--card: {printable(str(folder))} is not a folder")
    return card_path(rule_path)


def _field(row: dict, name: str, kind: type, path: Path, where: str):
    value = row.get(name)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise DataError(located(path, None, None, f"{where}: {name!r} must be a whole number"))
    if kind is str and not isinstance(value, str):
        raise DataError(located(path, None, None, f"{where}: {name!r} must be a string"))
    return value


def read_card(path: Path) -> tuple[str, tuple[CardEntry, ...]]:
    """The rule name and entries of the card at ``path`` (a :class:`DataError` naming the file
    and the entry when anything is off)."""
    data = load_toml(path, DataError)
    rule = data.get("rule")
    if not isinstance(rule, str):
        raise DataError(located(path, None, None, "a card needs 'rule' (the rule's name)"))
    rows = data.get("set", [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DataError(located(path, None, None, "'set' must be a list of [[set]] tables"))
    entries: list[CardEntry] = []
    seen: set[str] = set()
    for index, row in enumerate(rows, start=1):
        where = f"set {index}"
        name = _field(row, "name", str, path, where)
        cases = _field(row, "cases", int, path, where)
        agree = _field(row, "agree", int, path, where)
        if not 0 <= agree <= cases:
            raise DataError(located(path, None, None, f"{where}: 'agree' must lie in 0..cases"))
        source = _field(row, "source", str, path, where)
        if source not in SOURCES:
            raise DataError(
                located(path, None, None, f"{where}: 'source' must be one of {', '.join(SOURCES)}")
            )
        if name in seen:
            raise DataError(located(path, None, None, f"{where}: a second entry for {name!r}"))
        seen.add(name)
        note = row.get("note", "")
        entries.append(
            CardEntry(
                set=name,
                cases=cases,
                agree=agree,
                date=_field(row, "date", str, path, where),
                version=_field(row, "version", str, path, where),
                source=source,
                note=note if isinstance(note, str) else "",
            )
        )
    return rule, tuple(entries)


def card_status(rule: Rule) -> CardStatus:
    """The card of a loaded rule, with the rule's version now (no card: no entries)."""
    path = card_path(rule.path)
    version = version_of(rule_files(rule))
    shown = _shown_path(path)
    if not path.exists():
        return CardStatus(rule.name, shown, False, version)
    _, entries = read_card(path)
    return CardStatus(rule.name, shown, True, version, entries)


def _shown_path(path: Path) -> str:
    """``rules/cards/<name>.card.toml`` for a bundled rule's card, else the path as it is."""
    from ..load.locate import bundled_rules_dir

    try:
        if path.parent.parent.resolve() == bundled_rules_dir().resolve():
            return f"rules/{CARD_FOLDER}/{path.name}"
    except OSError:
        pass
    return str(path)


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and every control character escaped."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04X}" if not 0xD800 <= code <= 0xDFFF else "\\uFFFD")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def card_text(rule_name: str, entries: tuple[CardEntry, ...]) -> str:
    """The card file's text: a header comment, the rule's name, then one ``[[set]]`` per entry
    (sorted by set name) with its counts, the rate and Wilson interval repeated for a reader."""
    lines = [
        f"# Validation card of the rule {rule_name}: accept agreement on labelled sets written by",
        "# people who never saw its grammars, each measured BEFORE any tuning on it.",
        "# Written by `keyaudit test-rule RULE --cases FILE --card` (one entry per set, keyed by the",
        "# set's file name). Data, never code: 'agreement', 'ci_low' and 'ci_high' are recomputed",
        "# from 'cases' and 'agree' when read. version = the rule's files' hash when measured",
        '# ("unknown": recorded from the project\'s history, before this card existed).',
        "",
        f"rule = {_toml_string(rule_name)}",
    ]
    for e in sorted(entries, key=lambda e: e.set):
        low, high = e.interval
        lines += [
            "",
            "[[set]]",
            f"name = {_toml_string(e.set)}",
            f"cases = {e.cases}",
            f"agree = {e.agree}",
            f"agreement = {e.agreement:.4f}",
            f"ci_low = {low:.4f}",
            f"ci_high = {high:.4f}",
            f"date = {_toml_string(e.date)}",
            f"version = {_toml_string(e.version)}",
            f"source = {_toml_string(e.source)}",
        ]
        if e.note:
            lines.append(f"note = {_toml_string(e.note)}")
    return "\n".join(lines) + "\n"


def record_measurement(
    rule: Rule, set_name: str, cases: int, agree: int, date: datetime.date | None = None
) -> tuple[Path, CardEntry, CardEntry | None]:
    """Write (or update) the rule's card with the figure a ``test-rule --cases`` run measured on
    the set ``set_name``: the entry keyed by that name is replaced (an entry from the history
    too), the others are kept. Returns the card's path, the new entry and the one it replaced."""
    if cases < 1:
        raise DataError(f"{set_name}: no labelled case, nothing to record on the card")
    path = card_target(rule.path)
    entries: tuple[CardEntry, ...] = ()
    if path.exists():
        name, entries = read_card(path)
        if name != rule.name:
            raise DataError(
                located(path, None, None, f"the card is the card of {name!r}, not of {rule.name!r}")
            )
    entry = CardEntry(
        set=set_name,
        cases=cases,
        agree=agree,
        date=(date or datetime.date.today()).isoformat(),
        version=version_of(rule_files(rule)),
        source="measured",
    )
    old = next((e for e in entries if e.set == set_name), None)
    kept = tuple(e for e in entries if e.set != set_name)
    text = card_text(rule.name, (*kept, entry))
    try:
        path.parent.mkdir(exist_ok=True)
    except OSError as error:
        raise DataError(
            located(path, None, None, f"cannot write the card: {error.strerror or error}")
        ) from None
    write_output(path, text)
    return path, entry, old


__all__ = [
    "CardEntry",
    "CardStatus",
    "card_path",
    "card_status",
    "card_target",
    "card_text",
    "read_card",
    "record_measurement",
]
