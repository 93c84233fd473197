"""``keyaudit keys`` (what the answer keys look like) and ``keyaudit flag`` (seed §5).

Thin: each command calls one engine function and renders its result as rich tables, or as JSON
with ``--json FILE|-`` (with ``-`` stdout carries only the JSON).
"""

from __future__ import annotations

from typing import Annotated

import typer

from keyaudit.engine.errors import UsageError
from keyaudit.engine.flag import flag_cells
from keyaudit.engine.load.locate import bundled_rule_names, resolve_rule_path
from keyaudit.engine.reports.findings import FlagRow
from keyaudit.engine.reports.formatting import pct, slot_values_text
from keyaudit.engine.rule_language.authoring.keystructure import (
    CellStructure,
    TemplateStat,
    benchmark_structure,
)
from keyaudit.engine.rule_language.rules.rule import Rule, load_rule

from .common import (
    BenchOption,
    EpochsOption,
    FilterOption,
    FoldingTable,
    FollowLinksOption,
    IdFieldOption,
    JsonOption,
    ModelNameOption,
    ResponseOptions,
    ResponsesOption,
    ScorerOption,
    check_output,
    console,
    describe_sources,
    load_for_cli,
    protected_paths,
    styled,
    write_json,
)

#: Console limits; ``--json`` always has everything.
MAX_TEMPLATES = 20
MAX_DISTINCT = 30
MAX_UNPARSED = 20

DomainOption = Annotated[
    str | None,
    typer.Option(
        "--domain", help="Only this domain; with --level, the full structure of the cell."
    ),
]
LevelOption = Annotated[
    int | None,
    typer.Option("--level", help="Only this level; with --domain, the full structure of the cell."),
]
RuleOption = Annotated[
    str | None,
    typer.Option(
        "--rule",
        help="Rule file or bundled rule name whose key grammar gives the templates of its cells "
        "(default: every bundled rule, for the cells it covers; other cells get induced templates).",
    ),
]


def _rules(rule: str | None) -> list[Rule]:
    if rule is not None:
        return [load_rule(resolve_rule_path(rule))]
    return [load_rule(resolve_rule_path(name)) for name in bundled_rule_names()]


def keys(
    bench: BenchOption = None,
    domain: DomainOption = None,
    level: LevelOption = None,
    rule: RuleOption = None,
    json: JsonOption = None,
    responses: ResponsesOption = None,
    epochs: EpochsOption = "first",
    scorer: ScorerOption = None,
    filter: FilterOption = None,
    id_field: IdFieldOption = None,
    model_name: ModelNameOption = None,
    follow_links: FollowLinksOption = False,
) -> None:
    """Show the structure of the answer keys: distinct strings, templates, slot values, misfits.

    With --responses the responses are read and checked against the keys too (a log scored
    against other keys is an error), and each cell shows how many items they evaluate.
    """
    options = ResponseOptions(
        responses, epochs, scorer, filter, id_field, model_name, follow_links
    )
    check_output("--json", json, protected_paths(bench, options))
    benchmark = load_for_cli(bench, options, with_responses=False)
    loaded = _rules(rule)
    structures = benchmark_structure(benchmark, loaded, domain, level)
    if rule is not None and not any(s.ruled for s in structures):
        covered = ", ".join(str(c) for c in loaded[0].cells)
        raise UsageError(f"rule {loaded[0].name!r} covers {covered}: none of the selected cells")
    if json is not None:
        write_json(json, [s.as_json() for s in structures])
        if json == "-":
            return
    describe_sources(console, benchmark)
    detail = domain is not None and level is not None
    if detail:
        _render_cell(structures[0])
    else:
        evaluated: dict[tuple[str, int], set[str]] = {}
        for r in benchmark.responses:
            evaluated.setdefault((r.ref.domain, r.ref.level), set()).add(r.id)
        counts = {cell: len(ids) for cell, ids in evaluated.items()} if benchmark.sources else None
        console.print(_overview_table(structures, counts))


def _overview_table(
    structures: list[CellStructure], evaluated: dict[tuple[str, int], int] | None = None
) -> FoldingTable:
    table = FoldingTable(title="Answer-key structure per cell")
    table.add_column("Domain")
    table.add_column("Level", justify="right")
    table.add_column("Keys", justify="right")
    table.add_column("Distinct", justify="right")
    table.add_column("Templates", justify="right")
    table.add_column("Rule")
    table.add_column("Unparsed", justify="right")
    if evaluated is not None:
        table.add_column("Evaluated items", justify="right")
    for s in structures:
        extra = [] if evaluated is None else [f"{evaluated.get((s.domain, s.level), 0):,}"]
        table.add_row(
            s.domain,
            f"L{s.level}",
            f"{s.n_keys:,}",
            f"{s.distinct:,}",
            f"{len(s.templates):,}",
            s.rule if s.rule else "—",
            "—" if s.unparsed is None else f"{len(s.unparsed):,}",
            *extra,
            style="bold red" if s.unparsed else None,
        )
    return table


def _status_text(template: TemplateStat) -> str:
    listed = ", ".join(f"{value} {n:,}" for value, n in template.status_counts.items())
    field = template.status_field
    return listed if field in (None, "status") or not listed else f"{field}: {listed}"


def _render_cell(s: CellStructure) -> None:
    how = f"rule {s.rule}" if s.rule else "induced: capital letters and numbers are slots"
    console.print(
        styled("[bold]{} L{}[/bold] ", s.domain, s.level),
        f"— {s.n_keys:,} keys, "
        f"{s.distinct:,} distinct strings, {len(s.templates):,} templates ({how})",
        sep="",
    )
    templates = FoldingTable(title="Templates")
    templates.add_column("#", justify="right")
    templates.add_column("Count", justify="right")
    templates.add_column("Share", justify="right")
    if s.ruled:
        templates.add_column("Status")
    templates.add_column("Template")
    for number, t in enumerate(s.templates[:MAX_TEMPLATES], start=1):
        cells = [str(number), f"{t.count:,}", pct(t.count / s.n_keys)]
        if s.ruled:
            cells.append(_status_text(t))
        templates.add_row(*cells, t.template)
    console.print(templates)
    if len(s.templates) > MAX_TEMPLATES:
        console.print(f"… {len(s.templates) - MAX_TEMPLATES:,} more templates (see --json)")

    slots = FoldingTable(title="Slot values (value count)")
    slots.add_column("#", justify="right")
    slots.add_column("Slot")
    slots.add_column("Values")
    for number, t in enumerate(s.templates[:MAX_TEMPLATES], start=1):
        for name, values in t.slot_values.items():
            slots.add_row(str(number), name, slot_values_text(values))
    if slots.row_count:
        console.print(slots)

    console.print(f"{len(s.examples)} verbatim examples", style="bold")
    for number, example in enumerate(s.examples, start=1):
        console.print(f"{number:>3}. {example.id}: {example.key}", soft_wrap=True)
        if example.question:
            console.print(f"     question: {example.question}", soft_wrap=True)

    if s.distinct <= MAX_DISTINCT:
        distinct = FoldingTable(title="Distinct strings")
        distinct.add_column("Count", justify="right")
        distinct.add_column("String")
        for text, n in s.distinct_strings.items():
            distinct.add_row(f"{n:,}", text)
        console.print(distinct)

    if s.unparsed is None:
        return
    if not s.unparsed:
        console.print("Every key matches a template of the rule's key grammar.")
        return
    unparsed = FoldingTable(title=f"{len(s.unparsed):,} keys match no template", style="red")
    unparsed.add_column("Id")
    unparsed.add_column("Key")
    unparsed.add_column("Error")
    for item in s.unparsed[:MAX_UNPARSED]:
        unparsed.add_row(item.id, item.key, item.error)
    console.print(unparsed)
    if len(s.unparsed) > MAX_UNPARSED:
        console.print(f"… {len(s.unparsed) - MAX_UNPARSED:,} more (see --json)")


def flag(
    bench: BenchOption = None,
    json: JsonOption = None,
    responses: ResponsesOption = None,
    epochs: EpochsOption = "first",
    scorer: ScorerOption = None,
    filter: FilterOption = None,
    id_field: IdFieldOption = None,
    model_name: ModelNameOption = None,
    follow_links: FollowLinksOption = False,
) -> None:
    """Flag other sentence-valued or multi-clause keys and their current strict accuracy (seed §5)."""
    options = ResponseOptions(
        responses, epochs, scorer, filter, id_field, model_name, follow_links
    )
    check_output("--json", json, protected_paths(bench, options))
    benchmark = load_for_cli(bench, options)
    rows = flag_cells(benchmark)
    if json is not None:
        write_json(json, [{**row.as_json(), "epochs": benchmark.epochs} for row in rows])
        if json == "-":
            return
    describe_sources(console, benchmark)
    console.print(_flag_table(rows))
    candidates = [r for r in rows if r.candidate]
    if candidates:
        console.print(
            styled("[bold red]Highlighted[/bold red]: ")
            + "0 strict-correct on every evaluated flagged "
            f"response ({len(candidates)} cell(s)) — candidates for their own rule. A signal, "
            "not proof the current scoring is wrong."
        )


def _flag_table(rows: list[FlagRow]) -> FoldingTable:
    table = FoldingTable(title="Sentence-valued or multi-clause keys (not a container; ';' or ≥ 6 tokens)")
    table.add_column("Domain")
    table.add_column("Level", justify="right")
    table.add_column("Flagged corpus items", justify="right")
    table.add_column("Total corpus items at level", justify="right")
    table.add_column("Evaluated responses", justify="right")
    table.add_column("Current strict correct", justify="right")
    table.add_column("Current strict accuracy", justify="right")
    for r in rows:
        table.add_row(
            r.domain,
            f"L{r.level}",
            f"{r.flagged:,}",
            f"{r.total:,}",
            f"{r.evaluated:,}",
            f"{r.strict_correct:,}",
            pct(r.strict_accuracy),
            style="bold red" if r.candidate else None,
        )
    return table
