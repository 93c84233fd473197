"""``keyaudit bench ...``: timing commands. Thin: call the engine, render a rich table."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from keyaudit.engine.errors import KeyauditError, UsageError
from keyaudit.engine.stats.bootstrap_bench import BenchRow, cpu_count, run_bootstrap_bench

#: Simulated image clusters (models x domains x images) at most: 6x the full-corpus job.
MAX_CELLS = 10_000_000

app = typer.Typer(help="Time keyaudit's numeric kernels on simulated data.", no_args_is_help=True)


@app.callback()
def _bench() -> None:
    """Time keyaudit's numeric kernels on simulated data."""


def render_rows(rows: list[BenchRow], title: str) -> Table:
    """The bench rows as a rich table (also used by ``bench/bootstrap.py``)."""
    table = Table(
        title=title, caption="* pure Python timed on fewer resamples, extrapolated per draw"
    )
    for column in ("run", "thr", "resamples", "draws", "wall s", "M draws/s", "× numpy"):
        if column == "run":
            table.add_column(column, no_wrap=True)
        else:
            table.add_column(column, justify="right")
    for r in rows:
        ratio = f"{r.ratio_to_numpy:.2f}" if r.ratio_to_numpy is not None else ""
        table.add_row(
            r.name + (" *" if r.extrapolated else ""),
            str(r.threads),
            f"{r.resamples:,}",
            f"{r.draws:,}",
            f"{r.seconds:.3f}",
            f"{r.draws_per_second / 1e6:,.1f}",
            ratio,
        )
    return table


@app.command()
def bootstrap(
    models: Annotated[
        int, typer.Option(help="Models in the simulated benchmark.", min=1, max=1000)
    ] = 10,
    domains: Annotated[int, typer.Option(help="Paired domains (strata).", min=1, max=1000)] = 31,
    images: Annotated[
        int, typer.Option(help="Image clusters per domain.", min=1, max=1_000_000)
    ] = 50,
    resamples: Annotated[
        int, typer.Option(help="Bootstrap resamples per model.", min=1, max=1_000_000)
    ] = 10_000,
    seed: Annotated[
        int,
        typer.Option(help="Seed of the simulation and of the bootstrap.", min=0, max=2**64 - 1),
    ] = 0,
    corpus: Annotated[
        bool, typer.Option(help="Also time the full-corpus job (16 x 34 x 3,000).")
    ] = True,
) -> None:
    """Time the bootstrap kernel (1 thread, all threads) against the numpy and Python references."""
    if models * domains * images > MAX_CELLS:
        raise UsageError(
            f"--models x --domains x --images is {models * domains * images:,}; the simulation"
            f" holds at most {MAX_CELLS:,} image clusters"
        )
    console = Console()
    try:
        rows = run_bootstrap_bench(models, domains, images, resamples, seed, corpus=corpus)
    except KeyauditError as error:
        console.print(f"error: {error}", markup=False)
        raise typer.Exit(error.exit_code) from None
    title = f"bootstrap: {models} models x {domains} domains x {images} images, {cpu_count()} CPUs"
    console.print(render_rows(rows, title))
