"""``keyaudit new-rule`` (scaffold a rule from a cell's keys) and ``keyaudit test-rule``.

Thin: each command calls one engine function (:mod:`keyaudit.engine.rule_language.scaffold`) and renders it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.rule_language.keystructure import require_cell
from keyaudit.engine.rule_language.rule import load_rule
from keyaudit.engine.rule_language.scaffold import CellTest, scaffold_rule
from keyaudit.engine.rule_language.scaffold import test_rule as run_rule_test

from .common import BenchOption, bench_dir, console

#: Keys-check failures and unparsed keys shown per cell (the counts are always shown).
MAX_LISTED = 20


def new_rule(
    domain: Annotated[str, typer.Argument(help="Domain of the cell, e.g. gauge_reading.")],
    level: Annotated[int, typer.Option("--level", help="Level of the cell, e.g. 5.")],
    bench: BenchOption = None,
    out: Annotated[
        Path,
        typer.Option("--out", help="Folder for <domain>.toml and its two grammars (default: .)."),
    ] = Path("."),
) -> None:
    """Scaffold a rule and its key/answer grammars from the cell's induced key templates."""
    benchmark = load_benchmark(bench_dir(bench), with_responses=False)
    require_cell(benchmark, domain, level)
    keys = [k.answer for k in benchmark.keys_in_cell(domain, level)]
    files = scaffold_rule(domain, level, keys, out)
    console.print(
        f"{len(files.templates)} template(s) from {len(keys):,} keys of {domain} L{level}:"
    )
    for item in files.templates:
        console.print(f"  {item.count:>6,}  {escape(item.template)}")
    for path in files.paths:
        console.print(f"wrote {path}", soft_wrap=True)
    hint = f"next: keyaudit test-rule {files.rule}" + (f" --bench {bench}" if bench else "")
    console.print(hint, soft_wrap=True)


def test_rule(
    rule: Annotated[str, typer.Argument(help="Rule file path or bundled rule name.")],
    bench: BenchOption = None,
    per_reason: Annotated[
        int, typer.Option("--per-reason", help="Sample responses shown per verdict and reason.")
    ] = 3,
) -> None:
    """Run a rule's examples and keys check; show sample verdicts. Exit 1 if anything fails."""
    loaded = load_rule(resolve_rule_path(rule))
    benchmark = load_benchmark(bench_dir(bench))
    result = run_rule_test(loaded, benchmark, per_reason)
    passed = sum(r.passed for r in result.examples)
    console.print(f"[bold]{loaded.name}[/bold] — {loaded.path}", soft_wrap=True)
    console.print(f"Examples: {passed}/{len(result.examples)} pass")
    for number, item in enumerate(result.examples, start=1):
        example = item.example
        where = f"line {example.line}" if example.line else f"#{number}"
        mark = "[green]PASS[/green]" if item.passed else "[red]FAIL[/red]"
        text = example.response.removeprefix("ANSWER: ")
        console.print(f"  {mark} {where}: {escape(text[:100])}", soft_wrap=True)
        for mismatch in item.mismatches:
            console.print(f"       {escape(mismatch)}", soft_wrap=True)
    for cell in result.cells:
        _render_cell(cell)
    ok = result.passed
    console.print("[green]rule OK[/green]" if ok else "[red]rule FAILS: see above[/red]")
    if not ok:
        raise typer.Exit(1)


def _render_cell(cell: CellTest) -> None:
    check = cell.keys
    console.print(
        f"\n[bold]{cell.cell}[/bold] keys check: {'pass' if check.passed else 'FAIL'} — "
        f"{check.n_keys:,} keys, {check.distinct} distinct, {check.pairs_checked:,} pairs"
        f"{'' if check.exhaustive else ' (sampled: too many distinct keys for all pairs)'}, "
        f"{len(check.failures)} failures, {len(check.unparsed)} unparsed",
        soft_wrap=True,
    )
    for failure in check.failures[:MAX_LISTED]:
        reason = f" ({failure.reason})" if failure.reason else ""
        console.print(
            f"  key {escape(failure.key)!r}, answer {escape(failure.answer)!r}: "
            f"{failure.problem}{escape(reason)}",
            soft_wrap=True,
        )
    for key in cell.unparsed[:MAX_LISTED]:
        more = f" (+{len(key.ids) - 1} more)" if len(key.ids) > 1 else ""
        console.print(f"  unparsed {key.ids[0]}{more}: {escape(key.text)!r}", soft_wrap=True)
        console.print(f"    {escape(key.error)}", soft_wrap=True)
    if not cell.reasons:
        console.print("  no stored responses in this cell")
        return
    table = Table(title=f"{cell.cell}: verdicts on stored responses")
    table.add_column("Model")
    reasons = list(cell.reasons)
    for reason in reasons:
        table.add_column(reason or "accept", justify="right")
    for model, counts in cell.per_model.items():
        table.add_row(model, *(str(counts.get(r, 0)) for r in reasons))
    table.add_row("all", *(str(cell.reasons[r]) for r in reasons), style="bold")
    console.print(table)
    for reason in reasons:
        console.print(f"[bold]{escape(reason or 'accept')}[/bold] ({cell.reasons[reason]}):")
        for sample in cell.samples.get(reason, ()):
            values = ", ".join(f"{k}={v!r}" for k, v in sample.values.items())
            console.print(
                f"  {sample.id} {escape(sample.model)} key={escape(sample.key)!r}", soft_wrap=True
            )
            console.print(f"    ANSWER: {escape(str(sample.answer))}", soft_wrap=True)
            console.print(f"    extracted: {escape(values)}", soft_wrap=True)
            if sample.detail:
                console.print(f"    {escape(sample.detail)}", soft_wrap=True)
