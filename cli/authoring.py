"""``keyaudit new-rule`` (scaffold a rule from a cell's keys) and ``keyaudit test-rule``.

Thin: each command calls one engine function (:mod:`keyaudit.engine.rule_language.authoring.scaffold`) and renders it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from keyaudit.engine.errors import UsageError, printable
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.casefile import read_cases
from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.reports.claim_text import claim_line
from keyaudit.engine.reports.explain_text import explain_answer
from keyaudit.engine.reports.formatting import pct
from keyaudit.engine.rule_language.authoring.agreement import Agreement, measure_agreement
from keyaudit.engine.rule_language.authoring.keystructure import require_cell
from keyaudit.engine.rule_language.authoring.scaffold import CellTest, check_domain, scaffold_rule
from keyaudit.engine.rule_language.authoring.scaffold import test_rule as run_rule_test
from keyaudit.engine.rule_language.authoring.stress import stress as run_stress
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer

from .common import (
    BenchOption,
    FoldingTable,
    FollowLinksOption,
    bench_dir,
    check_output,
    console,
    protected_paths,
    styled,
)

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
    follow_links: FollowLinksOption = False,
) -> None:
    """Scaffold a rule and its key/answer grammars from the cell's induced key templates."""
    check_domain(domain)  # before any work: the domain names the files
    check_output("--out", out, protected_paths(bench), folder=True)
    benchmark = load_benchmark(
        bench_dir(bench), with_responses=False, follow_links=follow_links
    )
    require_cell(benchmark, domain, level)
    keys = [k.answer for k in benchmark.keys_in_cell(domain, level)]
    files = scaffold_rule(domain, level, keys, out)
    console.print(
        f"{len(files.templates)} template(s) from {len(keys):,} keys of {domain} L{level}:"
    )
    for item in files.templates:
        console.print(f"  {item.count:>6,}  {item.template}")
    for path in files.paths:
        console.print(f"wrote {path}", soft_wrap=True)
    hint = f"next: keyaudit test-rule {files.rule}" + (f" --bench {bench}" if bench else "")
    console.print(hint, soft_wrap=True)


def test_rule(
    rule: Annotated[str, typer.Argument(help="Rule file path or bundled rule name.")],
    bench: BenchOption = None,
    per_reason: Annotated[
        int,
        typer.Option(
            "--per-reason", help="Sample responses shown per verdict and reason.", min=0, max=1000
        ),
    ] = 3,
    cases: Annotated[
        Path | None,
        typer.Option(
            "--cases",
            help="Labelled cases (JSONL of {id, key, response, accept, reason?}): print the "
            "agreement, the confusion, counts per reason and every disagreement.",
        ),
    ] = None,
    min_agreement: Annotated[
        float | None,
        typer.Option(
            "--min-agreement",
            help="With --cases: exit 1 when accept agreement is below this percentage.",
        ),
    ] = None,
    explain: Annotated[
        str | None,
        typer.Option("--explain", help="An answer text to explain (needs --key): claims, verdict, why."),
    ] = None,
    key: Annotated[str | None, typer.Option("--key", help="The key --explain scores against.")] = None,
    tree: Annotated[
        bool,
        typer.Option("--tree", help="With --explain: also print the answer grammar's parse tree."),
    ] = False,
    card: Annotated[
        bool,
        typer.Option(
            "--card",
            help="With --cases: record this run's agreement on the rule's validation card "
            "(cards/RULE.card.toml beside the rule), keyed by the cases file's name and --split; "
            "needs --written-by and --before-tuning or --after-tuning.",
        ),
    ] = False,
    written_by: Annotated[
        str | None,
        typer.Option(
            "--written-by",
            help="With --card: who wrote the cases, as you declare it: independent (never saw "
            "the rule's grammars, rule file or tests), rule-author (its author, or anyone who "
            "saw them) or unknown.",
        ),
    ] = None,
    before_tuning: Annotated[
        bool | None,
        typer.Option(
            "--before-tuning/--after-tuning",
            help="With --card: whether the rule's files as they are now were written without "
            "looking at its verdicts on these cases (a first measurement, or a holdout kept "
            "apart), or changed after they were looked at (the figure is optimistic).",
            show_default=False,
        ),
    ] = None,
    split: Annotated[
        str | None,
        typer.Option(
            "--split",
            help="With --cases: measure only the cases whose 'split' is this (e.g. holdout).",
        ),
    ] = None,
    follow_links: FollowLinksOption = False,
    stress: Annotated[
        bool,
        typer.Option(
            "--stress",
            help="Run the behavioural test matrix: answers built from the cell's keys in each "
            "kind of wording (wrappers, restated question, contrast, conditions, corrections, "
            "hedges, alternatives, lower case, typos, number words), each with the verdict it "
            "must get; print agreement per kind with a failing example.",
        ),
    ] = False,
) -> None:
    """Run a rule's examples and keys check; show sample verdicts. Exit 1 if anything fails.

    With --cases, measure the rule on labelled cases instead of the stored responses; with
    --explain TEXT --key KEY, show how one answer is read; with --stress, run the behavioural
    test matrix on the cell's keys.
    """
    loaded = load_rule(resolve_rule_path(rule))
    if tree and explain is None:
        raise UsageError("--tree goes with --explain TEXT --key KEY: the tree of that answer")
    if explain is not None or key is not None:
        if explain is None or key is None:
            raise UsageError("--explain and --key go together: the answer text and its key")
        scorer = Scorer(loaded)
        _render_explanation(scorer, key, explain)
        if tree:
            _render_tree(scorer, explain)
        return
    if stress and cases is not None:
        raise UsageError("--stress and --cases are two measurements: run them one at a time")
    if min_agreement is not None and cases is None and not stress:
        raise UsageError("--min-agreement needs --cases or --stress")
    if card and cases is None:
        raise UsageError("--card needs --cases: the labelled set whose agreement it records")
    if split is not None and cases is None:
        raise UsageError("--split needs --cases: the labelled set whose rows it selects")
    if (written_by is not None or before_tuning is not None) and not card:
        raise UsageError("--written-by, --before-tuning and --after-tuning go with --card")
    if card:
        _require_declarations(written_by, before_tuning)
    if min_agreement is not None and not 0 <= min_agreement <= 100:
        raise UsageError(f"--min-agreement is a percentage from 0 to 100, got {min_agreement}")
    if cases is not None:
        if card:  # refused before the measurement: a bundled rule, cards/ leading out
            from keyaudit.engine.stats.validation_card import card_target

            card_target(loaded.path)
        labelled = read_cases(cases, labelled=True)
        if split is not None:
            labelled = _only_split(labelled, cases, split)
        agreement = measure_agreement(Scorer(loaded), labelled)
        if split is not None and agreement.n == 0:
            raise UsageError(f"--split {printable(split)}: no case of {printable(str(cases))} has that split")
        _render_agreement(loaded.name, cases, agreement, split)
        if card:
            tuning = "before" if before_tuning else "after"
            record_on_card(loaded, cases, agreement, written_by or "", tuning, split)
        if min_agreement is not None and agreement.rate * 100 < min_agreement:
            console.print(
                f"agreement {pct(agreement.rate)} is below --min-agreement {min_agreement:g}%",
                style="red",
            )
            raise typer.Exit(1)
        return
    benchmark = load_benchmark(bench_dir(bench), follow_links=follow_links)
    if stress:
        _run_stress(loaded, benchmark, min_agreement)
        return
    result = run_rule_test(loaded, benchmark, per_reason)
    passed = sum(r.passed for r in result.examples)
    console.print(styled("[bold]{}[/bold] — {}", loaded.name, loaded.path), soft_wrap=True)
    console.print(f"Examples: {passed}/{len(result.examples)} pass")
    for number, item in enumerate(result.examples, start=1):
        example = item.example
        where = f"line {example.line}" if example.line else f"#{number}"
        mark = styled("[green]PASS[/green]") if item.passed else styled("[red]FAIL[/red]")
        # one line: a whole-response example's line breaks shown as \n, not printed
        text = printable(example.response.removeprefix("ANSWER: "))
        shown = text if len(text) <= 100 else text[:99] + "…"
        console.print("  ", mark, f" {where}: {shown}", sep="", soft_wrap=True)
        for mismatch in item.mismatches:
            console.print(f"       {mismatch}", soft_wrap=True)
    for cell in result.cells:
        _render_cell(cell)
    _render_grammar_notes(loaded)
    ok = result.passed
    console.print(styled("[green]rule OK[/green]") if ok else styled("[red]rule FAILS: see above[/red]"))
    if not ok:
        raise typer.Exit(1)


def _run_stress(rule, benchmark, min_agreement: float | None) -> None:
    """``test-rule --stress``: the behavioural matrix over the keys of the rule's cells."""
    keys = []
    for cell in rule.cells:
        require_cell(benchmark, cell.domain, cell.level)
        keys += [item.answer for item in benchmark.keys_in_cell(cell.domain, cell.level)]
    result = run_stress(Scorer(rule), keys)
    table = FoldingTable(title=f"{rule.name}: behavioural test matrix ({result.n:,} answers)")
    table.add_column("kind of wording")
    table.add_column("answers", justify="right")
    table.add_column("agreement", justify="right")
    table.add_column("a failing answer (expected → read)")
    for wording in result.wordings:
        failing = ""
        if wording.failure is not None:
            probe, read = wording.failure
            expected = "accept" if probe.expect else "reject"
            failing = f"{probe.answer} ({expected} → {read})"
        table.add_row(wording.wording, f"{wording.n:,}", pct(wording.rate), failing)
    console.print(table)
    for key in result.unusable_keys:
        console.print(f"key not accepted as its own answer (no probe built): {key}", soft_wrap=True)
    console.print(f"agreement {pct(result.rate)} over {result.n:,} answers", soft_wrap=True)
    if min_agreement is not None and result.rate * 100 < min_agreement:
        console.print(f"below --min-agreement {min_agreement:g}%", style="red")
        raise typer.Exit(1)


def _require_declarations(written_by: str | None, before_tuning: bool | None) -> None:
    """``--card`` records who wrote the set and whether the rule was tuned on it, as declared:
    neither has a default, since a card's headline counts only sets declared independent."""
    from keyaudit.engine.stats.validation_card import WRITERS

    choices = "|".join(WRITERS)
    if written_by is None:
        raise UsageError(
            f"--card needs --written-by {choices}: who wrote the cases, as you declare it"
            " (only independent sets count for the card's headline)"
        )
    if written_by not in WRITERS:
        raise UsageError(f"--written-by must be one of {choices}, got {printable(written_by)!r}")
    if before_tuning is None:
        raise UsageError(
            "--card needs --before-tuning or --after-tuning: whether the rule's files as they are"
            " now were written without looking at its verdicts on these cases"
        )


def _only_split(cases, source: Path, split: str):
    """The labelled cases whose ``split`` is ``split`` (a file with no split at all is refused
    on its first case, not read through)."""
    marked = False
    for case in cases:
        marked = marked or case.split is not None
        if case.split == split:
            yield case
    if not marked:
        raise UsageError(f"--split {printable(split)}: {printable(str(source))} marks no case with a 'split'")


def record_on_card(
    rule, cases: Path, agreement, written_by: str, tuning: str, split: str | None = None
) -> None:
    """``test-rule --cases FILE --card``: record the agreement just measured on the rule's
    validation card, keyed by the cases file's name and split, with the declarations, and say
    what it replaced."""
    from keyaudit.engine.reports.card_text import entry_text
    from keyaudit.engine.stats.validation_card import ALL_ROWS, record_measurement

    path, entry, old = record_measurement(
        rule, cases.name, agreement.n, agreement.agree,
        written_by=written_by, tuning=tuning, rows=split or ALL_ROWS,
    )
    console.print(f"Validation card {path}: {entry_text(entry)}", markup=False, soft_wrap=True)
    if old is not None:
        console.print(
            f"  replaces {entry_text(old)} ({old.source})", markup=False, soft_wrap=True
        )


def _render_explanation(scorer: Scorer, key: str, text: str) -> None:
    explanation = explain_answer(scorer, key, text)
    console.print(f"key:    {key!r}", soft_wrap=True)
    console.print(f"answer: {text!r}", soft_wrap=True)
    for line in explanation.lines()[:-1]:
        console.print(line, soft_wrap=True, markup=False, highlight=False)
    if explanation.accept:
        console.print(styled("verdict: [green]accept[/green] (every clause holds)"))
    else:
        detail = f" — {explanation.detail}" if explanation.detail else ""
        console.print(styled("verdict: [red]reject[/red]: {}{}", explanation.reason, detail), soft_wrap=True)


def _render_grammar_notes(rule) -> None:
    """The reductions the rule's grammars hide (shift/reduce conflicts Lark resolves silently;
    engine/rule_language/reading/conflicts.py). The load refused any the rule file does not
    review, so each one shown here is reviewed: printed with the author's reason."""
    notes = rule.key_grammar.hidden_reductions + rule.answer_grammar.hidden_reductions
    if not notes:
        console.print("Grammar notes: no rule reduction hidden by a shift/reduce conflict")
        return
    console.print(f"Grammar notes: {len(notes)} rule(s) with a reduction hidden by a shift/reduce conflict, each reviewed")
    for note in notes:
        why = rule.reviewed_conflicts.get(note.rule, "")
        console.print(f"  {note} — reviewed: {why}", soft_wrap=True, markup=False, highlight=False)


def _render_tree(scorer: Scorer, text: str) -> None:
    lines = scorer.tree(text)
    if isinstance(lines, str):
        console.print(f"tree: ({lines})", soft_wrap=True)
        return
    console.print("tree:")
    for line in lines:
        console.print("  " + line, soft_wrap=True, markup=False, highlight=False)


def _render_agreement(name: str, source: Path, agreement: Agreement, split: str | None = None) -> None:
    rows = f" ({split} rows)" if split is not None else ""
    console.print(
        styled("[bold]{}[/bold] on {}{}: {} labelled cases", name, source, rows, f"{agreement.n:,}"),
        soft_wrap=True,
    )
    console.print(
        f"accept agreement: {agreement.agree:,}/{agreement.n:,} = {pct(agreement.rate)}"
        + (
            f"; verdict and reason agree: {agreement.reason_agree:,}/{agreement.reason_labelled:,}"
            if agreement.reason_labelled
            else ""
        )
    )
    table = FoldingTable(title="confusion")
    table.add_column("label")
    table.add_column("rule accepts", justify="right")
    table.add_column("rule rejects", justify="right")
    for label in (True, False):
        table.add_row(
            "accept" if label else "reject",
            str(agreement.confusion[(label, True)]),
            str(agreement.confusion[(label, False)]),
        )
    console.print(table)
    reasons = ", ".join(f"{r or 'accept'} {n}" for r, n in sorted(agreement.reasons.items()))
    console.print(f"rule's reasons: {reasons}", soft_wrap=True)
    console.print(f"disagreements ({len(agreement.disagreements)}):")
    for item in agreement.disagreements:
        label = "accept" if item.label_accept else f"reject ({item.label_reason or '?'})"
        ruled = "accept" if item.accept else f"reject ({item.reason})"
        console.print(f"  {item.id} key={item.key!r}", soft_wrap=True)
        console.print(f"    label {label}; rule {ruled}", soft_wrap=True)
        console.print(f"    ANSWER: {item.answer}", soft_wrap=True)
        values = ", ".join(f"{k}={v!r}" for k, v in item.values.items())
        console.print(f"    extracted: {values}", soft_wrap=True)
        for claim in item.claims:
            console.print("    claim " + claim_line(claim), soft_wrap=True)


def _render_cell(cell: CellTest) -> None:
    check = cell.keys
    console.print()
    console.print(
        styled("[bold]{}[/bold] ", cell.cell),
        f"keys check: {'pass' if check.passed else 'FAIL'} — "
        f"{check.n_keys:,} keys, {check.distinct} distinct, {check.pairs_checked:,} pairs"
        f"{'' if check.exhaustive else ' (sampled: too many distinct keys for all pairs)'}, "
        f"{len(check.failures)} failures, {len(check.unparsed)} unparsed",
        sep="",
        soft_wrap=True,
    )
    for failure in check.failures[:MAX_LISTED]:
        reason = f" ({failure.reason})" if failure.reason else ""
        console.print(
            f"  key {failure.key!r}, answer {failure.answer!r}: {failure.problem}{reason}",
            soft_wrap=True,
        )
    for key in cell.unparsed[:MAX_LISTED]:
        more = f" (+{len(key.ids) - 1} more)" if len(key.ids) > 1 else ""
        console.print(f"  unparsed {key.ids[0]}{more}: {key.text!r}", soft_wrap=True)
        console.print(f"    {key.error}", soft_wrap=True)
    if not cell.reasons:
        console.print("  no stored responses in this cell")
        return
    table = FoldingTable(title=f"{cell.cell}: verdicts on stored responses")
    table.add_column("Model")
    reasons = list(cell.reasons)
    for reason in reasons:
        table.add_column(reason or "accept", justify="right")
    for model, counts in cell.per_model.items():
        table.add_row(model, *(str(counts.get(r, 0)) for r in reasons))
    table.add_row("all", *(str(cell.reasons[r]) for r in reasons), style="bold")
    console.print(table)
    for reason in reasons:
        console.print(styled("[bold]{}[/bold] ({}):", reason or "accept", cell.reasons[reason]))
        for sample in cell.samples.get(reason, ()):
            values = ", ".join(f"{k}={v!r}" for k, v in sample.values.items())
            console.print(
                f"  {sample.id} {sample.model} key={sample.key!r}", soft_wrap=True
            )
            console.print(f"    ANSWER: {sample.answer}", soft_wrap=True)
            console.print(f"    extracted: {values}", soft_wrap=True)
            if sample.detail:
                console.print(f"    {sample.detail}", soft_wrap=True)
