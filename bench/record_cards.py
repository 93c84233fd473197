"""Re-record every bundled rule's validation card from the labelled sets in tests/data/phrasings,
each with the authorship and tuning that folder's ``provenance.toml`` declares for it.

    python bench/record_cards.py             # rewrites rules/cards/*.card.toml
    python bench/record_cards.py --check     # exit 1, writing nothing, if any card would change
    python bench/record_cards.py --rule fbd  # one rule's card only (repeatable)

Why a script, when ``keyaudit test-rule RULE --cases FILE --card`` records one set: a bundled
rule's card is never rewritten by keyaudit (it belongs to the installed package), and the bundled
cards must be re-recorded together, on the rules' files as they are, from one declaration of
where each set comes from. Each card is written whole: one entry per set and, for a set whose
declaration tunes by ``split``, one per split; an entry whose figure, version and declarations are
unchanged keeps its date, so re-running on unchanged rules changes no byte. A ``*.jsonl`` that no
declaration covers is refused: a set is recorded only once someone has said who wrote it.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from keyaudit.engine.errors import DataError
from keyaudit.engine.load.casefile import read_cases
from keyaudit.engine.load.tomlfile import load_toml
from keyaudit.engine.rule_language.authoring.agreement import measure_agreement
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer
from keyaudit.engine.stats.validation_card import (
    ALL_ROWS,
    TUNINGS,
    WRITERS,
    CardEntry,
    card_path,
    card_text,
    measured_entry,
    read_card_file,
    write_card,
)

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
SETS = ROOT / "tests" / "data" / "phrasings"
PROVENANCE = "provenance.toml"


@dataclass(frozen=True)
class Declaration:
    """One ``[[set]]`` of provenance.toml: the files it covers and what is declared of them."""

    pattern: str
    written_by: str
    #: ``before``/``after`` for every row, or by split: ``{"tune": "after", "holdout": "before"}``.
    tuning: str | dict[str, str]
    note: str


def read_provenance(path: Path) -> list[Declaration]:
    """The declarations, in order (a file takes the first that matches it)."""
    data = load_toml(path, DataError)
    rows = data.get("set")
    if not isinstance(rows, list) or not rows:
        raise DataError(f"{path}: needs [[set]] tables")
    out = []
    for n, row in enumerate(rows, start=1):
        where = f"{path}: set {n}"
        pattern, writer, tuning = row.get("pattern"), row.get("written_by"), row.get("tuning")
        if not isinstance(pattern, str) or not pattern.endswith(".jsonl"):
            raise DataError(f"{where}: 'pattern' must be a glob ending in .jsonl")
        if writer not in WRITERS:
            raise DataError(f"{where}: 'written_by' must be one of {', '.join(WRITERS)}")
        splits = tuning.values() if isinstance(tuning, dict) else [tuning]
        if not splits or any(t not in TUNINGS for t in splits):
            raise DataError(
                f"{where}: 'tuning' must be one of {', '.join(TUNINGS)}, or a table of them by split"
            )
        note = row.get("note", "")
        if not isinstance(note, str):
            raise DataError(f"{where}: 'note' must be a string")
        out.append(Declaration(pattern, writer, tuning, note))
    return out


def rule_of(set_file: Path, names: list[str]) -> str | None:
    """The longest rule name the file's name starts with (``<rule>.jsonl`` or ``<rule>_….jsonl``)."""
    stem = set_file.stem
    fits = [n for n in names if stem == n or stem.startswith(n + "_")]
    return max(fits, key=len, default=None)


def declared_sets(sets: Path, rules: Path) -> dict[str, list[tuple[Path, Declaration]]]:
    """Every labelled set of ``sets``, by rule, with the declaration that covers it."""
    declarations = read_provenance(sets / PROVENANCE)
    names = sorted(p.stem for p in rules.glob("*.toml"))
    by_rule: dict[str, list[tuple[Path, Declaration]]] = {n: [] for n in names}
    for path in sorted(sets.glob("*.jsonl")):
        declaration = next((d for d in declarations if fnmatch.fnmatchcase(path.name, d.pattern)), None)
        if declaration is None:
            raise DataError(
                f"{path.name}: no [[set]] of {PROVENANCE} covers it; declare who wrote it and"
                " whether the rules were tuned on it before recording it"
            )
        rule = rule_of(path, names)
        if rule is None:
            raise DataError(f"{path.name}: its name starts with no bundled rule's name")
        by_rule[rule].append((path, declaration))
    return by_rule


def measure_set(rule, path: Path, declaration: Declaration, date: datetime.date) -> list[CardEntry]:
    """The card entries of one set: one for all its rows, or one per split it declares."""
    scorer = Scorer(rule)
    cases = list(read_cases(path, labelled=True))
    tuning = declaration.tuning
    if isinstance(tuning, str):
        groups = {ALL_ROWS: (tuning, cases)}
    else:
        splits = Counter(c.split for c in cases)
        undeclared = sorted(str(s) for s in splits if s not in tuning)
        if undeclared:
            raise DataError(
                f"{path.name}: rows with split {', '.join(undeclared)}, which its declaration"
                f" ({declaration.pattern}) does not tune by"
            )
        groups = {s: (t, [c for c in cases if c.split == s]) for s, t in sorted(tuning.items())}
    entries = []
    for rows, (tuned, chosen) in groups.items():
        agreement = measure_agreement(scorer, chosen)
        entries.append(
            measured_entry(
                rule, path.name, agreement.n, agreement.agree,
                written_by=declaration.written_by, tuning=tuned, rows=rows, date=date,
                note=declaration.note,
            )
        )
    return entries


def _same_figure(a: CardEntry, b: CardEntry) -> bool:
    return (a.key, a.cases, a.agree, a.version, a.written_by, a.tuning, a.source, a.note) == (
        b.key, b.cases, b.agree, b.version, b.written_by, b.tuning, b.source, b.note
    )


def keep_dates(new: list[CardEntry], old: tuple[CardEntry, ...]) -> list[CardEntry]:
    """An entry whose figure, version and declarations are unchanged keeps its recorded date."""
    earlier = {e.key: e for e in old}
    out = []
    for entry in new:
        before = earlier.get(entry.key)
        if before is not None and _same_figure(entry, before):
            entry = before
        out.append(entry)
    return out


def card_for(rule_name: str, rules: Path, sets: list[tuple[Path, Declaration]], date: datetime.date):
    """The card path of ``rule_name`` and the text it should hold."""
    rule = load_rule(rules / f"{rule_name}.toml")
    entries = [e for path, d in sets for e in measure_set(rule, path, d, date)]
    path = card_path(rule.path)
    if path.exists():
        _, old, form = read_card_file(path)
        if form != 1:
            entries = keep_dates(entries, old)
    return path, card_text(rule.name, tuple(entries)), tuple(entries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a card would change")
    parser.add_argument("--rule", action="append", default=[], help="only this rule's card (repeatable)")
    parser.add_argument("--date", type=datetime.date.fromisoformat, default=None,
                        help="the date of new figures (YYYY-MM-DD; default: today)")
    parser.add_argument("--rules-dir", type=Path, default=RULES, help=argparse.SUPPRESS)
    parser.add_argument("--sets-dir", type=Path, default=SETS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    date = args.date or datetime.date.today()
    try:
        by_rule = declared_sets(args.sets_dir, args.rules_dir)
        unknown = sorted(set(args.rule) - set(by_rule))
        if unknown:
            raise DataError(f"--rule: no bundled rule {', '.join(unknown)}")
        changed = []
        for name in sorted(args.rule or by_rule):
            if not by_rule[name]:
                raise DataError(f"{name}: no labelled set in {args.sets_dir} to record")
            path, text, entries = card_for(name, args.rules_dir, by_rule[name], date)
            old = path.read_text(encoding="utf-8") if path.exists() else None
            head = min((e for e in entries if e.independent), key=CardEntry.lowness, default=None)
            figure = (
                f"{head.set} ({head.rows}) {head.agree}/{head.cases} = {head.agreement:.2%}"
                if head is not None else "no independent set"
            )
            print(f"{name}: {len(entries)} entries; headline {figure}"
                  + ("" if old == text else " (changed)"))
            if old != text:
                changed.append(name)
                if not args.check:
                    write_card(path, name, entries)
    except DataError as error:
        print(f"record_cards: error: {error}", file=sys.stderr)
        return 2
    if args.check and changed:
        print(f"cards that would change: {', '.join(changed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
