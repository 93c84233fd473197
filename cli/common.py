"""Shared CLI plumbing: option types, the console, JSON output targets, error handling."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from keyaudit.engine.load.locate import example_benchmark_dir

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

BenchOption = Annotated[
    Path | None,
    typer.Option(
        "--bench", help="Benchmark directory (default: the embedded GRIP-Benchmark-34 example)."
    ),
]
JsonOption = Annotated[
    str | None,
    typer.Option("--json", help="Write every figure as JSON to this file, or '-' for stdout."),
]


def bench_dir(bench: Path | None) -> Path:
    """The benchmark to use: ``--bench`` or the embedded example."""
    return bench if bench is not None else example_benchmark_dir()


def write_json(target: str, payload: Any) -> None:
    """Write ``payload`` as stable, sorted-key JSON to ``target`` (``-`` = stdout)."""
    text = json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text, encoding="utf-8")
