"""A rule's validation card: its agreement on labelled sets, each set with who wrote it and
whether the rule was tuned on it, as the person recording it declared them.

A card is a TOML data file beside the rule, in a ``cards/`` folder
(``rules/cards/physical_stability.card.toml``: not ``rules/*.toml``, which are the bundled rules),
read as data and never run. It holds one entry per labelled set — or per split of a set (its
``holdout`` rows, say), keyed by the set's file name and the rows measured — with: cases, cases
agreed (accept verdict), the date, the rule's version (:func:`~.rule_version.rule_version`) the
figure was measured on, where it comes from (``measured`` by ``keyaudit test-rule RULE --cases
FILE --card``, or ``history``: copied from records older than cards, version ``unknown``), and,
since card format 2, two declarations:

* ``written_by``: ``independent`` (by someone who never saw the rule's grammars, rule file or
  tests), ``rule-author`` (by its author, or by anyone who saw them) or ``unknown``;
* ``tuning``: ``before`` (the rule's files were not changed in light of its verdicts on these
  rows: a first measurement, or rows kept apart as a holdout) or ``after`` (they were: the figure
  is optimistic).

Why: a pooled figure is dominated by whichever style of set is largest, and sets written by the
rule's author measure the rule on the wording it was written for. So the card's **headline** is
the lowest per-set figure among its independent sets (:attr:`CardStatus.headline`), never a
pooled one, and a card with no independent set says so.

Cards of format 1 (no ``format`` key: every card before issue 39) still load: their sets' author
and tuning were never declared, so they read as ``unknown`` and no set counts as independent.
Recording onto such a card is refused with how to re-record (:func:`record_measurement`).

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
#: The card format this keyaudit writes; 1 (no ``format`` key) is still read.
FORMAT = 2
#: Who wrote a set, as declared (``unknown``: the recorder cannot say; every format-1 set).
WRITERS = ("independent", "rule-author", UNKNOWN)
#: Whether the rule was tuned on a set's rows, as declared (``unknown`` only in format 1).
TUNINGS = ("before", "after")
#: The rows of a set measured when no split is named: all of them.
ALL_ROWS = "all"


@dataclass(frozen=True)
class CardEntry:
    """One labelled set's figure: ``agree`` of ``cases`` accept verdicts agreed with the labels
    on the set's ``rows`` (``all``, or the name of a split such as ``holdout``)."""

    set: str
    cases: int
    agree: int
    date: str
    version: str
    source: str
    note: str = ""
    written_by: str = UNKNOWN
    tuning: str = UNKNOWN
    rows: str = ALL_ROWS

    @property
    def agreement(self) -> float:
        return self.agree / self.cases if self.cases else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.agree, self.cases, CONFIDENCE)

    @property
    def key(self) -> tuple[str, str]:
        """What identifies the entry on its card: the set's file name and the rows measured."""
        return self.set, self.rows

    @property
    def independent(self) -> bool:
        return self.written_by == "independent"

    def lowness(self) -> tuple[float, float, int, str, str]:
        """Orders entries from the lowest figure up: by agreement, then by the interval's lower
        end (the smaller set first), then by name, so the lowest is the same in any order."""
        return self.agreement, self.interval[0], self.cases, self.set, self.rows


@dataclass(frozen=True)
class CardStatus:
    """A rule's card as ``check`` reports it: where it is (or would be), its format, its entries,
    and the rule's version now. ``entries`` is empty when there is no card."""

    rule: str
    path: str
    exists: bool
    version_now: str
    entries: tuple[CardEntry, ...] = ()
    format: int = FORMAT

    @property
    def independent(self) -> tuple[CardEntry, ...]:
        """The entries declared written by someone who never saw the rule's files."""
        return tuple(e for e in self.entries if e.independent)

    @property
    def headline(self) -> CardEntry | None:
        """The card's figure: the lowest per-set figure among its independent sets (None: no
        set is declared independent). Never pooled: a pooled figure is the largest sets' style."""
        return min(self.independent, key=CardEntry.lowness, default=None)

    @property
    def lowest(self) -> CardEntry | None:
        """The lowest per-set figure of any author (what a card with no independent set quotes,
        as its author's own)."""
        return min(self.entries, key=CardEntry.lowness, default=None)

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
    rule's folder and record on the copy; the project re-records its own with
    ``bench/record_cards.py``). A rule folder is often downloaded: its ``cards/`` may be a link,
    but only to a folder inside the rule's folder, or the card would be written elsewhere. The
    card itself is written by :func:`~keyaudit.engine.load.output_file.write_output`, so a link
    planted at its name, or at any temporary name, is replaced, never written through.
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


def _choice(row: dict, name: str, choices: tuple[str, ...], path: Path, where: str) -> str:
    value = row.get(name)
    if value not in choices:
        raise DataError(
            located(path, None, None, f"{where}: {name!r} must be one of {', '.join(choices)}")
        )
    return value


def _format(data: dict, path: Path) -> int:
    """The card's format: 1 when it has no ``format`` key (every card before issue 39)."""
    value = data.get("format", 1)
    if isinstance(value, bool) or value not in (1, FORMAT):
        raise DataError(
            located(
                path, None, None,
                f"'format' must be 1 or {FORMAT} (the card formats this keyaudit reads)",
            )
        )
    return value


def read_card(path: Path) -> tuple[str, tuple[CardEntry, ...]]:
    """The rule name and entries of the card at ``path`` (a :class:`DataError` naming the file
    and the entry when anything is off)."""
    rule, entries, _ = read_card_file(path)
    return rule, entries


def read_card_file(path: Path) -> tuple[str, tuple[CardEntry, ...], int]:
    """The rule name, entries and format of the card at ``path``. A format-1 card's entries
    declare neither author nor tuning: they read as ``unknown``."""
    data = load_toml(path, DataError)
    rule = data.get("rule")
    if not isinstance(rule, str):
        raise DataError(located(path, None, None, "a card needs 'rule' (the rule's name)"))
    version = _format(data, path)
    rows = data.get("set", [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DataError(located(path, None, None, "'set' must be a list of [[set]] tables"))
    entries: list[CardEntry] = []
    seen: set[tuple[str, str]] = set()
    for index, row in enumerate(rows, start=1):
        where = f"set {index}"
        name = _field(row, "name", str, path, where)
        cases = _field(row, "cases", int, path, where)
        agree = _field(row, "agree", int, path, where)
        if not 0 <= agree <= cases:
            raise DataError(located(path, None, None, f"{where}: 'agree' must lie in 0..cases"))
        source = _choice(row, "source", SOURCES, path, where)
        if version == 1:
            written_by, tuning, measured_rows = UNKNOWN, UNKNOWN, ALL_ROWS
        else:
            written_by = _choice(row, "written_by", WRITERS, path, where)
            tuning = _choice(row, "tuning", TUNINGS, path, where)
            measured_rows = _field(row, "rows", str, path, where)
            if not measured_rows.strip():
                raise DataError(located(path, None, None, f"{where}: 'rows' must not be empty"))
        if (name, measured_rows) in seen:
            what = name if measured_rows == ALL_ROWS else f"{name} ({measured_rows} rows)"
            raise DataError(located(path, None, None, f"{where}: a second entry for {what!r}"))
        seen.add((name, measured_rows))
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
                written_by=written_by,
                tuning=tuning,
                rows=measured_rows,
            )
        )
    return rule, tuple(entries), version


def card_status(rule: Rule) -> CardStatus:
    """The card of a loaded rule, with the rule's version now (no card: no entries)."""
    path = card_path(rule.path)
    version = version_of(rule_files(rule))
    shown = _shown_path(path)
    if not path.exists():
        return CardStatus(rule.name, shown, False, version)
    _, entries, form = read_card_file(path)
    return CardStatus(rule.name, shown, True, version, entries, form)


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
    """The card file's text (format 2): a header comment, the format and rule's name, then one
    ``[[set]]`` per entry (sorted by set name and rows) with its declarations and counts, the
    rate and Wilson interval repeated for a reader."""
    lines = [
        f"# Validation card of the rule {rule_name}: accept agreement on labelled sets, one entry per",
        "# set (or per split of a set: 'rows'), each with who wrote it and whether the rule was tuned",
        "# on it, as the person recording it declared them:",
        "#   written_by = independent (never saw the rule's grammars, rule file or tests) |",
        "#                rule-author (its author, or anyone who saw them) | unknown",
        "#   tuning     = before (the rule's files were not changed in light of its verdicts on these",
        "#                rows) | after (they were: the figure is optimistic)",
        "# Reports quote the LOWEST per-set figure among independent sets, never a pooled one.",
        "# Written by `keyaudit test-rule RULE --cases FILE --card --written-by W --before-tuning`",
        "# (or --after-tuning). Data, never code: 'agreement', 'ci_low' and 'ci_high' are recomputed",
        "# from 'cases' and 'agree' when read. version = the rule's files' hash when measured.",
        "",
        f"format = {FORMAT}",
        f"rule = {_toml_string(rule_name)}",
    ]
    for e in sorted(entries, key=lambda e: e.key):
        low, high = e.interval
        lines += [
            "",
            "[[set]]",
            f"name = {_toml_string(e.set)}",
            f"rows = {_toml_string(e.rows)}",
            f"written_by = {_toml_string(e.written_by)}",
            f"tuning = {_toml_string(e.tuning)}",
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


def measured_entry(
    rule: Rule,
    set_name: str,
    cases: int,
    agree: int,
    *,
    written_by: str,
    tuning: str,
    rows: str = ALL_ROWS,
    date: datetime.date | None = None,
    note: str = "",
) -> CardEntry:
    """The entry of a figure just measured on ``rule`` as it is now, with its declarations
    checked (a :class:`UsageError` for a value outside :data:`WRITERS` / :data:`TUNINGS`)."""
    if written_by not in WRITERS:
        raise UsageError(f"--written-by must be one of {', '.join(WRITERS)}, got {printable(written_by)!r}")
    if tuning not in TUNINGS:
        raise UsageError(f"tuning must be one of {', '.join(TUNINGS)}, got {printable(tuning)!r}")
    if cases < 1:
        what = set_name if rows == ALL_ROWS else f"{set_name} ({rows} rows)"
        raise DataError(f"{what}: no labelled case, nothing to record on the card")
    return CardEntry(
        set=set_name,
        cases=cases,
        agree=agree,
        date=(date or datetime.date.today()).isoformat(),
        version=version_of(rule_files(rule)),
        source="measured",
        note=note,
        written_by=written_by,
        tuning=tuning,
        rows=rows,
    )


def record_measurement(
    rule: Rule,
    set_name: str,
    cases: int,
    agree: int,
    *,
    written_by: str,
    tuning: str,
    rows: str = ALL_ROWS,
    date: datetime.date | None = None,
) -> tuple[Path, CardEntry, CardEntry | None]:
    """Write (or update) the rule's card with the figure a ``test-rule --cases`` run measured on
    the set ``set_name`` (its ``rows``): the entry of that set and rows is replaced, the others
    are kept. Returns the card's path, the new entry and the one it replaced.

    A format-1 card is refused, not converted: its sets' author and tuning were never declared,
    and a card mixing declared and undeclared sets would quote the undeclared ones as if they had
    been; the message says how to re-record."""
    entry = measured_entry(
        rule, set_name, cases, agree, written_by=written_by, tuning=tuning, rows=rows, date=date
    )
    path = card_target(rule.path)
    entries: tuple[CardEntry, ...] = ()
    if path.exists():
        name, entries, form = read_card_file(path)
        if name != rule.name:
            raise DataError(
                located(path, None, None, f"the card is the card of {name!r}, not of {rule.name!r}")
            )
        if form == 1:
            raise DataError(
                located(
                    path, None, None,
                    "a card of format 1, which does not say who wrote its sets or whether the rule"
                    " was tuned on them; move it aside and re-record each set with `keyaudit"
                    " test-rule RULE --cases FILE --card --written-by independent|rule-author|unknown"
                    " --before-tuning|--after-tuning`",
                )
            )
    old = next((e for e in entries if e.key == entry.key), None)
    kept = tuple(e for e in entries if e.key != entry.key)
    write_card(path, rule.name, (*kept, entry))
    return path, entry, old


def write_card(path: Path, rule_name: str, entries: tuple[CardEntry, ...]) -> None:
    """Write the card file whole (its folder made if need be), or not at all."""
    try:
        path.parent.mkdir(exist_ok=True)
    except OSError as error:
        raise DataError(
            located(path, None, None, f"cannot write the card: {error.strerror or error}")
        ) from None
    write_output(path, card_text(rule_name, entries))


__all__ = [
    "ALL_ROWS",
    "FORMAT",
    "TUNINGS",
    "WRITERS",
    "CardEntry",
    "CardStatus",
    "card_path",
    "card_status",
    "card_target",
    "card_text",
    "measured_entry",
    "read_card",
    "read_card_file",
    "record_measurement",
    "write_card",
]
