"""Shared CLI plumbing: option types, the console, JSON output targets, error handling."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.rule import Rule

from keyaudit.engine.errors import UsageError
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir
from keyaudit.engine.load.responses.records import ResponseSource

#: Width when output is not a terminal: wide enough that no table value is ever cut (rich would
#: otherwise assume 80 columns and end values in "…").
PIPE_WIDTH = 10_000
#: Width of section rules when output is not a terminal (a rule spans the whole width).
PIPE_RULE_WIDTH = 100

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def fit_to_output() -> None:
    """Give a console whose stream is not a terminal (a pipe, a file, a test) an unlimited width,
    so tables keep every value whole; a terminal keeps its own width."""
    for out in (console, err_console):
        if not out.is_terminal:
            out.width = PIPE_WIDTH


def section(out: Console, title: str) -> None:
    """A section rule: the terminal's width, or a fixed width when output is not a terminal."""
    out.print(Rule(title), width=None if out.is_terminal else PIPE_RULE_WIDTH)


fit_to_output()

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


# ---- response sources (check, keys, flag) -------------------------------------------------------

ResponsesOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--responses",
        help="Responses to audit, as a file or folder: keyaudit .jsonl/.csv files, inspect .eval/.json "
        "logs, lm-eval samples files (with their results file); the format is detected from the "
        "content. Repeatable; replaces the benchmark's own responses.",
    ),
]
EpochsOption = Annotated[
    str,
    typer.Option(
        "--epochs",
        help="Several samples of one item for one model (inspect epochs, lm-eval repeats): 'first' "
        "scores the lowest epoch only, 'all' scores every one and averages per item.",
    ),
]
ScorerOption = Annotated[
    str | None,
    typer.Option(
        "--scorer",
        help="inspect logs: the scorer whose value is the current verdict (default: the first the "
        "log lists).",
    ),
]
FilterOption = Annotated[
    str | None,
    typer.Option(
        "--filter",
        help="lm-eval samples: the filter whose metric is the current verdict (default: the "
        "task's first filter).",
    ),
]
IdFieldOption = Annotated[
    str | None,
    typer.Option(
        "--id-field",
        help="Where the benchmark id is: lm-eval, a field of doc (default id, else question_id); "
        "inspect, a field of the sample's metadata (default: the sample id).",
    ),
]
ModelNameOption = Annotated[
    str | None,
    typer.Option(
        "--model-name",
        help="Display name of the model read from --responses (default: the name its log gives).",
    ),
]


@dataclass(frozen=True)
class ResponseOptions:
    """The response options of a command, as given."""

    responses: list[Path] | None = None
    epochs: str = "first"
    scorer: str | None = None
    filter: str | None = None
    id_field: str | None = None
    model_name: str | None = None

    def sources(self) -> tuple[ResponseSource, ...] | None:
        """``--responses`` as sources (``None``: the benchmark's own)."""
        tuned = any(v is not None for v in (self.scorer, self.filter, self.id_field, self.model_name))
        if not self.responses:
            if tuned:
                raise UsageError(
                    "--scorer, --filter, --id-field and --model-name apply to --responses"
                )
            return None
        return tuple(
            ResponseSource(
                path,
                scorer=self.scorer,
                filter=self.filter,
                id_field=self.id_field,
                model=self.model_name,
            )
            for path in self.responses
        )


def load_for_cli(bench: Path | None, options: ResponseOptions, *, with_responses: bool = True):
    """The benchmark of ``--bench`` (or the example) with the command's response options."""
    sources = options.sources()
    return load_benchmark(
        bench_dir(bench),
        with_responses=with_responses or sources is not None,
        responses=sources,
        epochs=options.epochs,
    )


def describe_sources(out: Console, benchmark) -> None:
    """One line for the epochs policy and one per log read (what was read, and how)."""
    if not benchmark.sources:
        return
    if benchmark.epochs == "all":
        out.print(
            f"Samples: every epoch, averaged per item (--epochs all; up to {benchmark.n_epochs} per "
            "model and item).",
            markup=False,
        )
    else:
        out.print("Samples: the first epoch of each model and item (--epochs first).", markup=False)
    for info in benchmark.sources:
        if info.format not in ("jsonl", "csv"):
            out.print(f"Read from {info.describe()}", markup=False, soft_wrap=True)
