"""``keyaudit review RULE... --out FILE``: the verdicts a person should check, in a file to label.

Thin: :func:`keyaudit.engine.review.review_queue` picks the rows, the report writer formats them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from keyaudit.engine.errors import KeyauditError, UsageError
from keyaudit.engine.load.output_file import write_output

from .common import (
    BenchOption,
    EpochsOption,
    FilterOption,
    FollowLinksOption,
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
    report_error,
)


def review(
    rules: Annotated[list[str], typer.Argument(help="Rule file paths or bundled rule names.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="The review file to write: .jsonl or .csv (by extension)."),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Also (or only) write the queue as a page to label in a browser; its 'Download "
            "adjudications' writes the file check --adjudications reads.",
        ),
    ] = None,
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
    follow_links: FollowLinksOption = False,
    jobs: JobsOption = None,
) -> None:
    """Write every uncertain verdict, and a seeded sample of certain ones, for a person to label."""
    try:
        _review(rules, out, sample, seed, bench,
                ResponseOptions(
                    responses, epochs, scorer, filter, id_field, model_name, follow_links
                ),
                jobs_or_default(jobs), html)
    except KeyauditError as error:
        report_error(error)
        raise SystemExit(error.exit_code) from None


def _review(
    rule_args,
    out: Path | None,
    sample: int,
    seed: int,
    bench,
    options: ResponseOptions,
    jobs: int = 1,
    html: Path | None = None,
) -> None:
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.reports.review_file import review_csv, review_jsonl
    from keyaudit.engine.review import review_queue
    from keyaudit.engine.rule_language.rules.rule import load_rule

    if out is None and html is None:
        raise UsageError("give --out FILE.jsonl|FILE.csv, --html FILE.html, or both")
    suffix = out.suffix.lower() if out is not None else ""
    if out is not None and suffix not in (".jsonl", ".csv"):
        raise UsageError(f"--out must end in .jsonl or .csv, got {out.name!r}")
    if html is not None and out is not None and html.resolve() == out.resolve():
        raise UsageError("--html and --out name the same file")
    if sample < 0:
        raise UsageError(f"--sample must be 0 or more, got {sample}")
    rule_paths = [resolve_rule_path(r) for r in rule_args]
    protected = protected_paths(bench, options, tuple(rule_paths))
    for option, path in (("--out", out), ("--html", html)):
        if path is not None:
            check_output(option, path, protected)
    rules = [load_rule(path) for path in rule_paths]
    benchmark = load_for_cli(bench, options, rules=rules)
    rows = review_queue(benchmark, rules, sample, seed, jobs=jobs)
    n_uncertain = sum(r.selected == "uncertain" for r in rows)
    counts = (
        f"{len(rows)} verdicts to review: {n_uncertain} uncertain, "
        f"{len(rows) - n_uncertain} certain drawn at random (seed {seed})."
    )
    if out is not None:
        text = review_csv(rows) if suffix == ".csv" else review_jsonl(rows)
        write_output(out, text)  # the CSV's CRLF as written
        console.print(
            f"{counts} Written to {out}: fill 'accept' (true/false) and 'note', then: "
            f"keyaudit check ... --adjudications {out}",
            markup=False,
            soft_wrap=True,
        )
    if html is not None:
        from keyaudit.engine.reports.review_page import review_html

        write_output(html, review_html(rows))
        console.print(
            f"{counts} Page written to {html}: open it in a browser, label the rows, "
            "'Download adjudications', then: keyaudit check ... --adjudications adjudications.jsonl",
            markup=False,
            soft_wrap=True,
        )
