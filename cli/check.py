"""``keyaudit check RULE... [--bench DIR]``: the audit of one or more ruled cells."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from keyaudit.engine.benchmark import load_benchmark
from keyaudit.engine.locate import resolve_rule_path
from keyaudit.engine.overview import corpus_overview, strict_cell_accuracy
from keyaudit.engine.rule import load_rule
from rich.table import Table

from .common import BenchOption, bench_dir, console, pct


def check(
    rules: Annotated[list[str], typer.Argument(help="Rule file paths or bundled rule names.")],
    bench: BenchOption = None,
) -> None:
    """Audit the cells the rules cover: corpus overview and per-model strict accuracy."""
    loaded = [load_rule(resolve_rule_path(r)) for r in rules]
    benchmark = load_benchmark(bench_dir(bench))
    overview = corpus_overview(benchmark)
    console.print(f"[bold]{overview.name}[/bold] — {Path(benchmark.root)}")
    console.print(
        f"{overview.n_keys:,} keys in {len(overview.domains)} domains × levels "
        f"{', '.join(f'L{level}' for level in overview.levels)}; {overview.n_responses:,} stored responses"
    )
    console.print(
        f"Models: {len(overview.models_found)} found"
        + (f" of {overview.roster_size} expected" if overview.roster_size else "")
        + (f"; missing: {', '.join(overview.missing_models)}" if overview.missing_models else "")
    )
    for rule in loaded:
        for cell in rule.cells:
            table = Table(title=f"{cell}: current strict accuracy")
            table.add_column("Model")
            table.add_column("N", justify="right")
            table.add_column("Current strict", justify="right")
            for row in strict_cell_accuracy(benchmark, cell.domain, cell.level):
                table.add_row(row.model, str(row.n), pct(row.accuracy))
            console.print(table)
