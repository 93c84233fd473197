"""Accept agreement of the bundled rules on folders of labelled case files, per rule, per kind of
wording (the cases' ``phenomena`` tags) and per ``split``, with the certainty figures.

    python bench/agreement.py FOLDER [FOLDER ...] [--misses]

Each ``FOLDER/<rule>_*.jsonl`` (or ``<rule>_cases.jsonl``) is scored with the bundled rule of that
name. The figure that matters is the first one on a set nobody tuned on: record it before tuning.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

RULES = Path(__file__).resolve().parent.parent / "rules"


def rule_of(path: Path) -> str | None:
    names = sorted((p.stem for p in RULES.glob("*.toml")), key=len, reverse=True)
    return next((n for n in names if re.fullmatch(rf"{n}_.*", path.stem)), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--misses", action="store_true", help="print every disagreement")
    args = parser.parse_args()
    per_rule: dict[str, Counter] = defaultdict(Counter)
    per_tag: dict[str, Counter] = defaultdict(Counter)
    per_split: dict[str, Counter] = defaultdict(Counter)
    marked = Counter()
    misses = []
    for folder in args.folders:
        for path in sorted(folder.glob("*.jsonl")):
            rule = rule_of(path)
            if rule is None:
                continue
            scorer = Scorer(load_rule(RULES / f"{rule}.toml"))
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                case = json.loads(line)
                verdict = scorer.score(case["key"], case["response"])
                ok = verdict.accept == bool(case["accept"])
                uncertain = bool(verdict.uncertain)
                per_rule[rule]["n"] += 1
                per_rule[rule]["ok"] += ok
                for tag in case.get("phenomena", []) or ["untagged"]:
                    per_tag[tag]["n"] += 1
                    per_tag[tag]["ok"] += ok
                split = case.get("split", "all")
                per_split[split]["n"] += 1
                per_split[split]["ok"] += ok
                marked["n"] += 1
                marked["marked"] += uncertain
                marked["wrong"] += not ok
                marked["wrong_marked"] += (not ok) and uncertain
                if not ok:
                    misses.append((case["id"], case["key"], verdict.answer_text, case["accept"], verdict.reason, case.get("note", case.get("why", ""))))
    total = Counter()
    print("| rule | cases | agreement |\n|---|---:|---:|")
    for rule, c in sorted(per_rule.items()):
        total.update(c)
        print(f"| {rule} | {c['n']} | {c['ok'] / c['n']:.1%} |")
    print(f"| all | {total['n']} | {total['ok'] / max(total['n'], 1):.1%} |\n")
    print("| wording | cases | agreement |\n|---|---:|---:|")
    for tag, c in sorted(per_tag.items(), key=lambda t: t[1]["ok"] / t[1]["n"]):
        print(f"| {tag} | {c['n']} | {c['ok'] / c['n']:.1%} |")
    print("\n| split | cases | agreement |\n|---|---:|---:|")
    for split, c in sorted(per_split.items()):
        print(f"| {split} | {c['n']} | {c['ok'] / c['n']:.1%} |")
    print(
        f"\ncertainty: {marked['wrong_marked']} of {marked['wrong']} wrong verdicts marked; "
        f"{marked['marked'] / max(marked['n'], 1):.1%} of all verdicts marked"
    )
    if args.misses:
        for m in misses:
            print(f"\n{m[0]}  key={m[1]!r}\n  ANSWER: {m[2]}\n  label {'accept' if m[3] else 'reject'}; rule {m[4] or 'accept'}\n  note: {m[5]}")


if __name__ == "__main__":
    main()
