"""``keyaudit check RULE...``: the audit of the cells the rules cover, before and after.

Thin: :func:`keyaudit.engine.audit.prove_rules` and :func:`~keyaudit.engine.audit.run_audit`
compute; this module renders their result as rich tables and writes the requested files. A rule
that fails one of its own examples or the keys check stops the run with exit code 1 after showing
why. The audit modules (numba) are imported inside the command, so ``keyaudit --help`` stays fast.

Exit codes are raised as ``SystemExit``, not ``typer.Exit``: ``app.main`` runs click with
``standalone_mode=False``, where a ``typer.Exit`` becomes a return value that ``main`` does not pass
on, so ``keyaudit check`` would exit 0 after a failing rule.
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from keyaudit.engine.errors import KeyauditError, UsageError, printable
from keyaudit.engine.load.output_file import write_output
from keyaudit.engine.reports.findings import NO_LEVEL
from keyaudit.engine.reports.formatting import (
    accuracy_span,
    bounds_cells,
    corrected_span,
    pct,
    pp,
    slot_values_text,
)

from .common import (
    BenchOption,
    EpochsOption,
    FilterOption,
    FoldingTable,
    FollowLinksOption,
    IdFieldOption,
    JobsOption,
    JsonOption,
    ModelNameOption,
    ResponseOptions,
    ResponsesOption,
    ScorerOption,
    check_output,
    console,
    err_console,
    jobs_or_default,
    load_for_cli,
    protected_paths,
    report_error,
    section,
    styled,
    visible,
    write_json_text,
)

if TYPE_CHECKING:
    from keyaudit.engine.reports.findings import Audit, RuleProof

MAX_LISTED = 20
#: Bootstrap resamples per model at most (10^6 keeps one model's replicates at 8 MB).
MAX_RESAMPLES = 1_000_000
#: Seeds are 64-bit: a larger one would silently reduce to another seed.
MAX_SEED = 2**64 - 1




def parse_levels(text: str) -> tuple[int, int]:
    """``"4,5"`` → ``(4, 5)``: the lower and the higher level compared; ``"5"`` →
    ``(NO_LEVEL, 5)``: one level, no difference of levels (the reports give before → after only)."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise UsageError(f"--levels must be one level or two, like 5 or 4,5, got {text!r}") from None
    if len(values) == 1:
        # one level: compared with NO_LEVEL, which no cell has, so no domain is paired and the
        # reports give before -> after only (engine/reports/design_text.no_level_pairs)
        return NO_LEVEL, values[0]
    if len(values) != 2:
        raise UsageError(f"--levels must be one level or two, like 5 or 4,5, got {text!r}")
    lo, hi = values
    if lo == hi:
        raise UsageError(f"--levels must name two different levels, got {text!r}")
    return lo, hi


def check(
    rules: Annotated[
        list[str] | None,
        typer.Argument(help="Rule file paths or bundled rule names (one rule per cell)."),
    ] = None,
    bench: BenchOption = None,
    levels: Annotated[
        str,
        typer.Option(
            "--levels",
            help="The two levels compared, lower first: LO,HI; or one level (no difference of levels).",
        ),
    ] = "4,5",
    resamples: Annotated[
        int,
        typer.Option(
            "--resamples", help="Bootstrap resamples per model.", min=1, max=MAX_RESAMPLES
        ),
    ] = 10_000,
    seed: Annotated[
        int,
        typer.Option("--seed", help="Seed of the bootstrap (0 to 2^64-1).", min=0, max=MAX_SEED),
    ] = 0,
    confidence: Annotated[
        float, typer.Option("--confidence", help="Confidence level of the intervals.")
    ] = 0.95,
    engine: Annotated[
        str, typer.Option("--engine", help="Bootstrap engine: numba (fast) or reference (numpy).")
    ] = "numba",
    json_target: JsonOption = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Write the audit report as Markdown here.")
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Write a forest plot of the differences (.png or .svg; needs keyaudit[plot]).",
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Write the audit as one self-contained HTML page (tables that sort, filters, "
            "every flip and uncertain verdict opened).",
        ),
    ] = None,
    responses: ResponsesOption = None,
    epochs: EpochsOption = "first",
    scorer: ScorerOption = None,
    filter: FilterOption = None,
    id_field: IdFieldOption = None,
    model_name: ModelNameOption = None,
    follow_links: FollowLinksOption = False,
    adjudications: Annotated[
        Path | None,
        typer.Option(
            "--adjudications",
            help="A review file with 'accept' filled in (keyaudit review): the labels overrule the rule.",
        ),
    ] = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Also every bundled rule whose cells the benchmark has (the whole-benchmark audit).",
        ),
    ] = False,
    jobs: JobsOption = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", help="Show each rule's own examples as a table (else one line, unless one fails)."
        ),
    ] = False,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="Where responses are scored: 'local' (--jobs processes here) or 'dask' (a Dask "
            "cluster at --scheduler; needs the 'dask' extra of keyaudit). The output is the same.",
        ),
    ] = "local",
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="The Dask scheduler's address for --executor dask."),
    ] = None,
) -> None:
    """Audit the cells the rules cover: rule proof, key structure, re-scored accuracy, aggregates."""
    from keyaudit.engine.profiling import mark

    mark("start (imports, options)")
    out = err_console if json_target == "-" else console
    try:
        with scoring_executor(executor, scheduler):
            _check(
                list(rules or []),
                bench,
                levels,
                resamples,
                seed,
                confidence,
                engine,
                json_target,
                markdown,
                plot,
                out,
                ResponseOptions(
                    responses, epochs, scorer, filter, id_field, model_name, follow_links
                ),
                adjudications,
                every,
                jobs_or_default(jobs),
                verbose,
                html,
            )
    except KeyauditError as error:
        report_error(error)
        raise SystemExit(error.exit_code) from None


@contextlib.contextmanager
def scoring_executor(executor: str, scheduler: str | None) -> Iterator[None]:
    """``--executor``/``--scheduler``: score on a Dask cluster within the block, or here."""
    if executor not in ("local", "dask"):
        raise UsageError(f"--executor must be 'local' or 'dask', got {executor!r}")
    if executor == "local":
        if scheduler is not None:
            raise UsageError("--scheduler needs --executor dask")
        yield
        return
    if not scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
    from keyaudit.engine.rule_language.scoring.batch import remote
    from keyaudit.engine.rule_language.scoring.dask_executor import DaskExecutor

    cluster = DaskExecutor(scheduler)
    try:
        with remote(cluster):
            yield
    finally:
        cluster.close()


def _check(
    rule_args: list[str],
    bench: Path | None,
    levels: str,
    resamples: int,
    seed: int,
    confidence: float,
    engine: str,
    json_target: str | None,
    markdown: Path | None,
    plot: Path | None,
    out: Console,
    options: ResponseOptions,
    adjudications: Path | None = None,
    every: bool = False,
    jobs: int = 1,
    verbose: bool = False,
    html: Path | None = None,
) -> None:
    from keyaudit.engine.audit import Settings, prove_rules, run_audit
    from keyaudit.engine.load.adjudications import read_adjudications
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.profiling import mark
    from keyaudit.engine.reports.json_report import audit_to_json, dumps, proofs_to_json
    from keyaudit.engine.rule_language.rules.rule import load_rule
    from keyaudit.engine.rule_language.scoring.scorer import Scorer

    settings = Settings(
        parse_levels(levels), resamples, seed, confidence, engine, epochs=options.epochs
    )
    if not 0 < confidence < 1:
        raise UsageError(f"--confidence must lie strictly between 0 and 1, got {confidence}")
    if plot is not None:
        from keyaudit.engine.reports.plot import check_plot_target

        check_plot_target(plot)
    if not rule_args and not every:
        raise UsageError(
            "name at least one rule, or use --all for every bundled rule (see 'keyaudit check --help')"
        )
    rule_paths = [resolve_rule_path(r) for r in rule_args]
    # Every output is checked before any work: a missing folder, a directory, an unwritable file
    # or a place inside the benchmark fails now, not after the audit ran.
    inputs = (*rule_paths, *([Path(adjudications)] if adjudications is not None else []))
    protected = protected_paths(bench, options, inputs)
    targets = {"--json": json_target, "--markdown": markdown, "--plot": plot, "--html": html}
    for option, target in targets.items():
        check_output(option, target, protected)
    named = [Path(str(t)).resolve() for t in targets.values() if t is not None and str(t) != "-"]
    if len(set(named)) < len(named):
        raise UsageError("--json, --markdown, --plot and --html must name different files")
    rules = [load_rule(path) for path in rule_paths]
    labels = read_adjudications(adjudications) if adjudications is not None else []
    mark("rules loaded")
    bundled = bundled_rules() if every else []
    benchmark = load_for_cli(bench, options, rules=[*rules, *bundled])
    mark("benchmark loaded", f"{len(benchmark.keys):,} keys, {len(benchmark.responses):,} responses")
    if every:
        rules += bundled_rules_for(benchmark, rules, bundled)
        if not rules:
            raise UsageError("no bundled rule covers a cell of this benchmark")
    # The loaded benchmark (155,000 keys on the example) lives until the end: keep the cyclic
    # garbage collector from rescanning it on every collection of the later stages.
    gc.freeze()
    scorers = [Scorer(rule) for rule in rules]
    proofs = prove_rules(benchmark, rules, scorers, jobs)
    mark("rules proved (examples, keys check)")
    render_rules(out, proofs, verbose)
    if not all(p.passed for p in proofs):
        if json_target is not None:
            write_json_text(json_target, dumps({"passed": False, **proofs_to_json(proofs)}))
        raise SystemExit(1)

    audit = run_audit(
        benchmark,
        rules,
        settings,
        proofs=proofs,
        progress=_progress(out),
        scorers=scorers,
        adjudications=labels,
        jobs=jobs,
    )
    render_audit(out, audit)
    mark("terminal report")
    if json_target is not None:
        write_json_text(json_target, dumps({"passed": True, **audit_to_json(audit)}))
        mark("JSON report")
    if markdown is not None:
        from keyaudit.engine.reports.markdown_report import render_markdown

        write_output(markdown, render_markdown(audit))
        out.print(f"Markdown report written to {markdown}")
        mark("Markdown report")
    if plot is not None:
        from keyaudit.engine.reports.plot import forest_plot

        forest_plot(audit, plot)
        out.print(f"Forest plot written to {plot}")
    if html is not None:
        _write_html(html, audit, rules)
        out.print(f"HTML report written to {html}")
        mark("HTML report")


def _write_html(target: Path, audit, rules) -> None:
    """The HTML page, every verdict opening to how its cell's rule reads the answer line (what
    test-rule --explain prints). The page explains one cell after another, each with a scorer of
    its own dropped after it: a scorer keeps what it parsed (24 MB over the 15,714 distinct
    answers of a full-size cell), and the audit's scorers would keep it for every cell at once."""
    from keyaudit.engine.reports.explain_text import explain_answer
    from keyaudit.engine.reports.html_report import html_report
    from keyaudit.engine.rule_language.scoring.scorer import Scorer

    rule_of = {(cell.domain, cell.level): rule for rule in rules for cell in rule.cells}
    current: dict[tuple[str, int], Scorer] = {}

    def explain(cell: tuple[str, int], key: str, text: str):
        scorer = current.get(cell)
        if scorer is None:
            current.clear()
            scorer = current[cell] = Scorer(rule_of[cell])
        return explain_answer(scorer, key, text)

    write_output(target, html_report(audit, explain))


def bundled_rules() -> list:
    """Every bundled rule, loaded (``--all``: before the benchmark, whose load keeps the texts of
    their cells)."""
    from keyaudit.engine.load.locate import bundled_rule_names, resolve_rule_path
    from keyaudit.engine.rule_language.rules.rule import load_rule

    return [load_rule(resolve_rule_path(name)) for name in bundled_rule_names()]


def bundled_rules_for(benchmark, given, bundled) -> list:
    """The ``bundled`` rules that cover a cell the benchmark has, less those a given rule
    replaces: one covering any of their cells (one rule per cell).

    A given rule with a bundled rule's name that covers none of its cells would have dropped the
    bundled rule without a word (the report names rules by name): that is a usage error, before
    any work."""
    cells = set(benchmark.cells())
    taken = {(c.domain, c.level) for r in given for c in r.cells}
    by_name = {r.name: r for r in given}
    found = []
    for rule in bundled:
        covered = {(c.domain, c.level) for c in rule.cells}
        if not covered & cells or covered & taken:
            continue
        same = by_name.get(rule.name)
        if same is not None:
            raise UsageError(
                f"--all: the rule {printable(str(same.path))} is named {rule.name!r}, like the"
                " bundled rule --all also runs on other cells; rename it (reports name rules by"
                " name)"
            )
        found.append(rule)
    return found


class _progress:
    """A rich progress bar over the two bootstrap runs; invisible when output is not a terminal."""

    def __init__(self, out: Console) -> None:
        self.out = out
        self.bar = None
        self.task = None

    def __call__(self, done: int, total: int) -> None:
        if not self.out.is_terminal:
            return
        if self.bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self.bar = Progress(
                TextColumn("bootstrap"),
                BarColumn(),
                MofNCompleteColumn(),
                console=self.out,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("bootstrap", total=total)
        self.bar.update(self.task, completed=done)
        if done >= total:
            self.bar.stop()


# ---- rendering -----------------------------------------------------------------------------------


def _values(values: dict) -> str:
    from keyaudit.engine.reports.findings import format_value

    return ", ".join(f"{k}={format_value(v)}" for k, v in values.items())


def render_rules(out: Console, proofs: tuple[RuleProof, ...], verbose: bool = True) -> None:
    """Section 1: each rule, its examples run, and the keys check of its cells. The examples are
    one line when they all pass, unless ``verbose`` (the table shows every example)."""
    for proof in proofs:
        cells = ", ".join(f"{d} L{lv}" for d, lv in proof.cells)
        section(out, f"Rule {proof.name}")
        out.print(f"File: {proof.path}", markup=False)
        out.print(f"Cells: {cells}", markup=False)
        out.print(f"Grammars: key {proof.key_grammar}, answer {proof.answer_grammar}", markup=False)
        if proof.description:
            out.print(" ".join(proof.description.split()), markup=False)
        if proof.card is not None:
            from keyaudit.engine.reports.card_text import card_lines

            for line in card_lines(proof.card):
                out.print(line.replace("`", ""), markup=False)
        failed = [e for e in proof.examples if not e.passed]
        if not verbose and not failed:
            out.print(
                styled("[green]All {} examples pass[/green]", len(proof.examples)),
                " (--verbose shows them).",
                sep="",
            )
            _render_keys_checks(out, proof)
            continue
        table = FoldingTable(title=f"{proof.name}: its own examples", title_justify="left")
        table.add_column("#", justify="right", min_width=2)
        table.add_column("line", justify="right", min_width=4)
        table.add_column("expected → got")
        # In a terminal long answers end in "…"; piped or redirected output keeps them whole.
        short = out.is_terminal
        table.add_column(
            "answer", no_wrap=True, overflow="ellipsis" if short else "fold", max_width=60 if short else None
        )
        table.add_column("result", min_width=6)
        for i, e in enumerate(proof.examples, start=1):
            expected = "accept" if e.expect_accept else f"reject ({e.expect_reason})"
            got = "accept" if e.accept else f"reject ({e.reason})"
            shown = expected if expected == got else f"{expected} → {got}"
            answer = e.response.removeprefix("ANSWER: ")
            result = styled("[green]pass[/green]") if e.passed else styled("[red]FAIL[/red]")
            table.add_row(str(i), str(e.line or ""), shown, " ".join(answer.split()), result)
        out.print(table)
        if failed:
            for e in failed:
                out.print(styled("[red]Example at {}:{} fails:[/red]", proof.path, e.line))
                for m in e.mismatches:
                    out.print(f"  {m}", markup=False)
            out.print(f"{len(failed)} of {len(proof.examples)} examples fail; stopping.", style="red")
            continue
        out.print(f"All {len(proof.examples)} examples pass.", style="green")
        _render_keys_checks(out, proof)


def _render_keys_checks(out: Console, proof: RuleProof) -> None:
    """Each cell's keys check: one line when it passes, the failures when not."""
    for k in proof.keys_checks:
        where = f"{k.domain} L{k.level}"
        if k.passed:
            out.print(
                styled("[green]Keys check passes[/green] on {}: ", where),
                f"{k.n_keys:,} keys, {k.distinct}"
                f" distinct strings each accepted as its own answer, {k.pairs_rejected:,} pairs of"
                " different keys rejected"
                + (
                    f", {k.pairs_accepted:,} accepted as [keys_check] accepts declares"
                    if k.pairs_accepted
                    else ""
                )
                + (
                    "."
                    if k.exhaustive
                    else " (a deterministic sample: too many keys for all pairs)."
                ),
                sep="",
            )
            continue
        out.print(styled("[red]Keys check fails on {}[/red] ({} keys):", where, f"{k.n_keys:,}"))
        if k.n_keys == 0:
            out.print("  the benchmark has no keys in this cell")
        for key, error in k.unparsed[:MAX_LISTED]:
            out.print(f"  matches no template: {key!r}: {error}", markup=False)
        for f in k.failures[:MAX_LISTED]:
            extra = f" ({f.reason})" if f.reason else ""
            out.print(f"  {f.problem}{extra}: key {f.key!r}, answer {f.answer!r}", markup=False)
        hidden = max(0, len(k.unparsed) - MAX_LISTED) + max(0, len(k.failures) - MAX_LISTED)
        if hidden:
            out.print(f"  ... and {hidden} more (all in --json)")


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render_audit(out: Console, audit: Audit) -> None:
    """Sections 2–6 of the terminal report (with a summary first when several cells are ruled)."""
    if len(audit.cell_summaries) > 1:
        _render_summary(out, audit)
    _render_structure(out, audit)
    _render_scope(out, audit)
    _render_models(out, audit)
    _render_worked(out, audit)
    _render_aggregates(out, audit)
    _render_design(out, audit)


def _render_design(out: Console, audit: Audit) -> None:
    """Before → after for any design: per ruled cell and model, and the leaderboard."""
    from keyaudit.engine.reports.design_text import (
        cell_rows,
        flip_sentences,
        leaderboard_rows,
        tau_sentence,
    )

    if audit.design is None:
        return
    conf = f"{100 * audit.design.confidence:g}%"
    section(out, "Before → after: every ruled cell and the leaderboard")
    table = FoldingTable()
    for column in ("Cell", "Model", "Before", "After", "Change", f"{conf} interval"):
        table.add_column(column, justify="left" if column in ("Cell", "Model") else "right")
    for row in cell_rows(audit):
        table.add_row(*row)
    out.print(table)
    table = FoldingTable(title="Leaderboard (overall: mean adjusted score over every cell)", title_justify="left")
    for column in ("Model", "Overall before", "Overall after", "Change", f"{conf} interval", "Rank"):
        table.add_column(column, justify="left" if column == "Model" else "right")
    for row in leaderboard_rows(audit):
        table.add_row(*row)
    out.print(table)
    out.print(tau_sentence(audit), markup=False, soft_wrap=True)
    for sentence in flip_sentences(audit):
        out.print(sentence, markup=False, soft_wrap=True)


def _render_summary(out: Console, audit: Audit) -> None:
    section(out, "Every ruled cell: strict scoring vs its rule")
    table = FoldingTable()
    for column in (
        "Cell", "Rule", "Keys", "Items", "Responses", "Baseline", "Mean accuracy",
        "Wrong→right", "Right→wrong", "Uncertain",
    ):
        table.add_column(column, justify="left" if column in ("Cell", "Rule") else "right")
    for c in audit.cell_summaries:
        table.add_row(
            f"{c.domain} L{c.level}",
            c.rule,
            f"{c.n_keys:,}",
            f"{c.n_items:,}",
            f"{c.n_responses:,}",
            f"{pct(c.baseline_before)} → {pct(c.baseline_after)}",
            f"{pct(c.mean_before)} → {pct(c.mean_after)}",
            f"{c.flips_up:,}",
            f"{c.flips_down:,}",
            f"{c.n_uncertain:,}",
        )
    out.print(table)
    out.print(
        "The aggregates at the end apply every rule together; the sections below are per cell.",
        markup=False,
    )


def _render_structure(out: Console, audit: Audit) -> None:
    for st in audit.key_structure:
        section(out, f"Key structure: {st.domain} L{st.level}")
        table = FoldingTable(
            title=f"{st.n_keys:,} keys, {st.distinct} distinct complete strings",
            title_justify="left",
        )
        table.add_column("#", justify="right")
        table.add_column("values")
        table.add_column("count", justify="right")
        table.add_column("template", overflow="fold")
        table.add_column("slot values", overflow="fold")
        for i, t in enumerate(st.templates, start=1):
            values = "; ".join(f"{n}: {', '.join(c)}" for n, c in t.target_counts.items())
            slots = "; ".join(
                f"{s}: " + slot_values_text(t.slot_values.get(s, {}))
                for s in t.slots
            )
            table.add_row(str(i), values, f"{t.count:,}", t.template, slots)
        out.print(table)
        unparsed = st.unparsed or ()
        if unparsed:
            out.print(f"{len(unparsed):,} of {st.n_keys:,} keys match no template:", style="red")
            for u in unparsed[:MAX_LISTED]:
                out.print(f"  {u.id}: {u.key}", markup=False)
            if len(unparsed) > MAX_LISTED:
                out.print(f"  ... and {len(unparsed) - MAX_LISTED:,} more (all in --json)")
        else:
            out.print(f"Parse coverage: all {st.n_keys:,} keys match a template.")
        out.print("Examples (verbatim):")
        for e in st.examples:
            out.print(f"  {e.id}: {e.key}", markup=False)


def _render_scope(out: Console, audit: Audit) -> None:
    scope = audit.scope
    section(out, "Corpus and models")
    out.print(
        f"{scope.n_keys:,} keys in {len(scope.domains)} domains"
        f" (levels {', '.join(f'L{level}' for level in scope.levels)});"
        f" {scope.n_responses:,} stored responses.",
        markup=False,
    )
    found = len(scope.models_found)
    text = f"{scope.benchmark}: {found} models found"
    if scope.roster:
        text += f" of {len(scope.roster)} in the roster"
    out.print(text + ".", markup=False)
    if scope.missing_models:
        out.print(
            f"Missing (no stored responses, not filled in): {', '.join(scope.missing_models)}",
            markup=False,
        )
    from keyaudit.engine.reports.markdown_report import epochs_sentence

    out.print("Samples: " + epochs_sentence(audit).replace("`", ""), markup=False)
    for info in scope.log_sources:
        out.print(f"Read from {info.describe()}", markup=False, soft_wrap=True)
    if scope.computed_models:
        out.print(
            "`correct` computed by keyaudit (strict scorer; the files have none) for: "
            + ", ".join(scope.computed_models),
            markup=False,
        )


def _render_models(out: Console, audit: Audit) -> None:
    for cell in audit.cells:
        where = f"{cell.domain} L{cell.level}"
        section(out, f"{where}: strict vs rule")
        out.print(
            f"Evaluated items: {cell.n_evaluated} ({cell.statuses_text()}) of {cell.n_keys:,} keys. Baseline"
            f" {cell.baseline_before_correct}/{cell.n_evaluated} = {pct(cell.baseline_before)} →"
            f" {cell.baseline_after_correct}/{cell.n_evaluated} = {pct(cell.baseline_after)}"
            f" (best constant answer: {cell.best_constant!r}).",
            markup=False,
        )
        table = FoldingTable()
        for column in (
            "Model",
            "N",
            "Current strict",
            "Proposed structured",
            "Wrong→right",
            "Right→wrong",
            "Uncertain",
            "Could be",
            *(["Corrected"] if audit.extraction is not None else []),
        ):
            table.add_column(column, justify="left" if column == "Model" else "right")
        rows = [m for m in audit.models if (m.domain, m.level) == (cell.domain, cell.level)]
        for m in rows:
            table.add_row(
                m.model,
                str(m.n),
                pct(m.strict),
                pct(m.structured),
                str(len(m.flips_up)),
                str(len(m.flips_down)),
                str(len(m.uncertain)),
                accuracy_span(m),
                *([corrected_span(m)] if audit.extraction is not None else []),
            )
        out.print(table)
        n_uncertain = sum(len(m.uncertain) for m in rows)
        out.print(
            f"Uncertain verdicts: {n_uncertain} of {sum(m.n_samples for m in rows)}"
            " (keyaudit review lists them with why; 'Could be' counts them all wrong … all right).",
            markup=False,
        )
        for m in rows:
            if m.flips_down:
                out.print(f"{m.model} right→wrong: {', '.join(m.flips_down)}", markup=False)
            if m.flips_up:
                shown = ", ".join(m.flips_up[:8]) + (" …" if len(m.flips_up) > 8 else "")
                out.print(f"{m.model} wrong→right ({len(m.flips_up)}): {shown}", markup=False)


def _render_worked(out: Console, audit: Audit) -> None:
    if not audit.worked_examples:
        return
    section(out, "Worked examples: stored responses scored by the rule")
    # The question is the item's, not the answer's: said once above the table where every
    # example shares it, else with its item; the ANSWER line column holds the answer line only.
    questions = {w.question for w in audit.worked_examples}
    shared = next(iter(questions)) if len(questions) == 1 else None
    if shared:
        out.print(Text(visible(f"Question (every example): {shared}")))
    table = FoldingTable(show_lines=True)
    table.add_column("Model / item / target" + (" / question" if len(questions) > 1 else ""), overflow="fold")
    table.add_column("ANSWER line (verbatim)", overflow="fold", ratio=3)
    table.add_column("Extracted", overflow="fold")
    table.add_column("Verdict", overflow="fold")
    for w in audit.worked_examples:
        verdict = styled("[green]ACCEPT[/green]") if w.accept else styled("[red]REJECT[/red]\n{}", w.reason)
        item = f"{w.id} (epoch {w.epoch})" if audit.settings.epochs == "all" else w.id
        line = w.answer_line if w.answer_line is not None else "(no ANSWER line)"
        asked = f"\nquestion: {w.question}" if w.question and not shared else ""
        table.add_row(
            Text(visible(f"{w.model}\n{item}\n{_values(w.target)}{asked}")),
            Text(visible(line)),
            _values(w.extracted),
            verdict,
        )
    out.print(table)


def _render_aggregates(out: Console, audit: Audit) -> None:
    from keyaudit.engine.reports.markdown_report import verdict_sentence

    if not audit.aggregates:
        return
    from keyaudit.engine.reports.design_text import no_level_pairs

    if (sentence := no_level_pairs(audit)) is not None:
        section(out, "Effect on aggregates")
        out.print(sentence, markup=False, soft_wrap=True)
        _render_extraction_error(out, audit)
        return
    lo, hi = audit.settings.levels
    conf = f"{100 * audit.settings.confidence:g}%"
    section(out, "Effect on aggregates")
    table = FoldingTable()
    for column in (
        "Model",
        "",
        f"Raw L{hi}",
        f"Adjusted L{hi}",
        f"L{hi}−L{lo}",
        f"{conf} CI",
        "Verdict",
        "Overall",
    ):
        table.add_column(
            column,
            justify="left" if column in ("Model", "", "Verdict") else "right",
            min_width=10 if column == f"L{hi}−L{lo}" else None,
        )
    for a in audit.aggregates:
        for when, raw, adjusted, diff, overall in (
            ("before", a.raw_before, a.adjusted_before, a.diff_before, a.overall_before),
            ("after", a.raw_after, a.adjusted_after, a.diff_after, a.overall_after),
        ):
            changed = when == "after" and a.verdict_changed
            table.add_row(
                a.model if when == "before" else "",
                when,
                pct(raw),
                pct(adjusted),
                pp(diff.estimate),
                _ci(diff),
                styled("[bold yellow]{}[/bold yellow]", diff.verdict) if changed else diff.verdict,
                pct(overall),
                end_section=when == "after",
            )
    out.print(table)
    table = FoldingTable(title=f"Uncertainty of L{hi}−L{lo} (before → after)", title_justify="left")
    for column in ("Model", "Clusters per stratum", "Bootstrap SE", "Analytic SE", "Design effect"):
        table.add_column(column, justify="left" if column == "Model" else "right")
    for a in audit.aggregates:
        sizes = sorted(a.diff_after.clusters_per_stratum.values())
        clusters = (
            "—"
            if not sizes
            else f"{len(sizes)} strata × {sizes[0]}"
            if sizes[0] == sizes[-1]
            else f"{len(sizes)} strata × {sizes[0]}–{sizes[-1]}"
        )
        table.add_row(
            a.model,
            clusters,
            f"{_se(a.diff_before.bootstrap_se)} → {_se(a.diff_after.bootstrap_se)}",
            f"{_se(a.diff_before.analytic_se)} → {_se(a.diff_after.analytic_se)}",
            f"{_num(a.diff_before.design_effect)} → {_num(a.diff_after.design_effect)}",
        )
    out.print(table)
    bounded = [a for a in audit.aggregates if a.bounds is not None]
    if bounded:
        table = FoldingTable(
            title="If every uncertain verdict were wrong … right (after the rule)", title_justify="left"
        )
        for column in ("Model", "Uncertain", f"Raw L{hi}", f"Adjusted L{hi}", f"L{hi}−L{lo}", "Verdict", "Overall"):
            table.add_column(column, justify="left" if column in ("Model", "Verdict") else "right")
        for a in bounded:
            table.add_row(a.model, str(a.bounds.n_uncertain), *bounds_cells(a.bounds))
        out.print(table)
    out.print(verdict_sentence(audit), markup=False)
    _render_extraction_error(out, audit)


def _render_extraction_error(out: Console, audit: Audit) -> None:
    """The rule's own misreadings: the corrected figures and the closing sentences (one level
    or two: the adjudications' counts and rates are said here either way)."""
    from keyaudit.engine.reports.extraction_text import closing_sentences, correction_table

    section(out, "Extraction error: the rule's own misreadings")
    header, rows = correction_table(audit)
    if rows:
        table = FoldingTable(title="Corrected for the error measured on the adjudicated sample", title_justify="left")
        for column in header:
            table.add_column(column, justify="left" if column in ("Model", header[-1]) else "right")
        for row in rows:
            table.add_row(*row)
        out.print(table)
    for sentence in closing_sentences(audit):
        out.print(sentence.replace("`", ""), markup=False)


def _ci(d) -> str:
    if math.isnan(d.ci_low):
        return "—"
    return f"{100 * d.ci_low:+.2f} to {100 * d.ci_high:+.2f} pp"


def _se(value: float) -> str:
    return "—" if math.isnan(value) else f"{100 * value:.2f} pp"


def _num(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.2f}"
