"""How big the bundled rules' expressions are (issue 22, item 3: rules as declarations).

Sums the characters of every TOML string the engine compiles as an expression — ``[key]`` and
``[output]`` entries, ``[keys_check] accepts``, ``[claims] target``, ``[certainty] when``,
``[[attribute]] expr``, ``[[component]]`` ``key``/``when``/``values``/``hedged``/``denied``, ``[[let]] expr``,
``[[require]]`` ``check``/``when`` and ``[[uncertain]] check`` — with every whitespace run collapsed to
one space, and counts the expression lines over 120 characters (a line of the file that holds
expression text and is longer than 120 characters). Prints a table per rule and the total.

    python bench/rule_size.py                 # the bundled rules/*.toml
    python bench/rule_size.py FILE.toml ...   # these files
    python bench/rule_size.py --rev ff26af6   # the bundled rules as they were at a commit
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 120
#: Tables whose every entry is an expression.
FREE_TABLES = ("key", "output")
#: (table, fields compiled as expressions) for single tables and arrays of tables.
TABLE_FIELDS = {
    "keys_check": ("accepts",),
    "claims": ("target",),
    "certainty": ("when",),
}
ARRAY_FIELDS = {
    "attribute": ("expr",),
    "component": ("key", "when", "values", "hedged", "denied"),
    "let": ("expr",),
    "require": ("check", "when"),
    "uncertain": ("check",),
}


def expressions(data: dict) -> list[str]:
    """Every expression string of a parsed rule file."""
    found: list[str] = []
    for table in FREE_TABLES:
        found += [v for v in data.get(table, {}).values() if isinstance(v, str)]
    for table, fields in TABLE_FIELDS.items():
        found += [data[table][f] for f in fields if isinstance(data.get(table, {}).get(f), str)]
    for table, fields in ARRAY_FIELDS.items():
        for entry in data.get(table, []):
            found += [entry[f] for f in fields if isinstance(entry.get(f), str)]
    return found


_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z_]+)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


def _expression_field(table: str, name: str) -> bool:
    return (
        table in FREE_TABLES
        or name in TABLE_FIELDS.get(table, ())
        or name in ARRAY_FIELDS.get(table, ())
    )


def long_lines(text: str) -> list[int]:
    """Lengths of the file's lines over LIMIT that hold expression text (every physical line of a
    multi-line expression value counts)."""
    found = []
    table = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        header = _HEADER.match(line)
        if header:
            table = header.group(1)
            i += 1
            continue
        assign = _ASSIGN.match(line)
        if not assign:
            i += 1
            continue
        value = assign.group(2)
        span = [line]
        for quote in ('"""', "'''"):
            if value.startswith(quote) and value.count(quote) == 1:
                while i + 1 < len(lines):
                    i += 1
                    span.append(lines[i])
                    if quote in lines[i]:
                        break
        if _expression_field(table, assign.group(1)):
            found += [len(x) for x in span if len(x) > LIMIT]
        i += 1
    return found


def measure(text: str) -> tuple[int, int, int, int]:
    """(expressions, characters, lines over LIMIT, longest such line) of one rule file's text."""
    exprs = expressions(tomllib.loads(text))
    chars = sum(len(re.sub(r"\s+", " ", e.strip())) for e in exprs)
    long = long_lines(text)
    return len(exprs), chars, len(long), max(long, default=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="rule files (default: rules/*.toml)")
    parser.add_argument("--rev", help="read the bundled rules at this git revision instead")
    args = parser.parse_args()
    rows = []
    if args.rev:
        names = subprocess.run(
            ["git", "ls-tree", "--name-only", args.rev, "rules/"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout.split()
        for name in sorted(n for n in names if n.endswith(".toml")):
            text = subprocess.run(
                ["git", "show", f"{args.rev}:{name}"], cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout
            rows.append((Path(name).stem, *measure(text)))
    else:
        files = [Path(f) for f in args.files] or sorted((ROOT / "rules").glob("*.toml"))
        rows = [(f.stem, *measure(f.read_text(encoding="utf-8"))) for f in files]
    print(f"| rule | expressions | characters | lines > {LIMIT} | longest |")
    print("|---|---:|---:|---:|---:|")
    for name, count, chars, long, longest in rows:
        print(f"| {name} | {count} | {chars:,} | {long} | {longest} |")
    total = sum(r[2] for r in rows)
    print(f"| **total** | {sum(r[1] for r in rows)} | **{total:,}** | {sum(r[3] for r in rows)} | "
          f"{max((r[4] for r in rows), default=0)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
