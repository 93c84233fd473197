"""``keyaudit review RULE... --out FILE``: the verdicts a person should check, in a file to label.

Thin: :func:`keyaudit.engine.review.review_queue` picks the rows, the report writer formats them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from keyaudit.engine.errors import KeyauditError, UsageError

from .common import (
    BenchOption,
    EpochsOption,
    FilterOption,
    IdFieldOption,
    JobsOption,
    ModelNameOption,
    ResponseOptions,
    ResponsesOption,
    ScorerOption,
    check_output,
    console,
    jobs_or_default,
    load_for_cli,
    protected_paths,
)


def review(
    rules: Annotated[list[str], typer.Argument(help="Rule file paths or bundled rule names.")],
    out: Annotated[
        Path,
        typer.Option("--out", help="The review file to write: .jsonl or .csv (by extension)."),
    ],
    sample: Annotated[
        int,
        typer.Option(
            "--sample",
            help="Certain verdicts drawn at random, to estimate the rule's error rate.",
            max=1_000_000,
        ),
    ] = 50,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random sample.")] = 0,
    bench: BenchOption = None,
    responses: ResponsesOption = None,
    epochs: EpochsOption = "first",
    scorer: ScorerOption = None,
    filter: FilterOption = None,
    id_field: IdFieldOption = None,
    model_name: ModelNameOption = None,
    jobs: JobsOption = None,
) -> None:
    """Write every uncertain verdict, and a seeded sample of certain ones, for a person to label."""
    try:
        _review(rules, out, sample, seed, bench,
                ResponseOptions(responses, epochs, scorer, filter, id_field, model_name),
                jobs_or_default(jobs))
    except KeyauditError as error:
        from .app import report_error

        report_error(error)
        raise SystemExit(error.exit_code) from None


def _review(
    rule_args, out: Path, sample: int, seed: int, bench, options: ResponseOptions, jobs: int = 1
) -> None:
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.reports.review_file import review_csv, review_jsonl
    from keyaudit.engine.review import review_queue
    from keyaudit.engine.rule_language.rule import load_rule

    suffix = out.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise UsageError(f"--out must end in .jsonl or .csv, got {out.name!r}")
    if sample < 0:
        raise UsageError(f"--sample must be 0 or more, got {sample}")
    rule_paths = [resolve_rule_path(r) for r in rule_args]
    check_output("--out", out, protected_paths(bench, options, tuple(rule_paths)))
    rules = [load_rule(path) for path in rule_paths]
    benchmark = load_for_cli(bench, options)
    rows = review_queue(benchmark, rules, sample, seed, jobs=jobs)
    text = review_csv(rows) if suffix == ".csv" else review_jsonl(rows)
    out.write_text(text, encoding="utf-8", newline="")  # the CSV's CRLF as written
    n_uncertain = sum(r.selected == "uncertain" for r in rows)
    console.print(
        f"{len(rows)} verdicts to review written to {out}: {n_uncertain} uncertain, "
        f"{len(rows) - n_uncertain} certain drawn at random (seed {seed}). Fill 'accept' "
        "(true/false) and 'note', then: keyaudit check ... --adjudications "
        f"{out}",
        markup=False,
        soft_wrap=True,
    )
