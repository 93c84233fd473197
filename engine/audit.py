"""The audit behind ``keyaudit check``: every figure of the report, computed once, printed nowhere.

Stages, in one direction: the loaded :class:`~keyaudit.engine.load.benchmark.Benchmark` and rules →
:func:`prove_rules` (each rule's own examples, and the keys check over its cells' full key corpus)
→ :func:`run_audit` (key structure, scoring of the stored responses, baselines, per-model cell
tables, worked examples, aggregates and bootstrap before/after, other flagged cells). The result is
a tree of frozen dataclasses that the reporters (terminal, JSON, Markdown, plot) only read.

"Before" scores every response with the benchmark's stored strict verdict (``Response.correct``)
and every cell with the strict baseline. "After" is the same, except that the responses of ruled
cells are scored by their rule and those cells use the rule baseline (:mod:`.baselines`). When
several rules are given their cells change together. Rates are fractions in [0, 1]; a figure that
does not exist (a model with no paired domain) is NaN.

Several samples of one item for one model (loaded with ``--epochs all``: inspect epochs, lm-eval
repeats) are each scored, before and after, and averaged per item: an item's rate is the share of
its samples that are right, and a cell's rate the mean of its items' rates. Counts stay integers:
every item of a model weighs ``L`` units (``L`` the least common multiple of its items' sample
counts, the sample count itself when all items have the same), of which ``right · L / samples`` are
right. The bootstrap still resamples image clusters, each carrying its items' averaged units.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .errors import UsageError, printable
from .flag import flag_cells
from .load.adjudications import Adjudication
from .load.answer_line import find_answer_line
from .load.benchmark import Benchmark
from .load.items import KeyItem, Response
from .load.locate import display_path
from .load.response_table import ResponseTable
from .profiling import mark
from .proof_cache import Proved, proof_key, read_proof, write_proof
from .reports.findings import (
    NO_LEVEL,
    Audit,
    Bounds,
    CellAudit,
    CellKeysCheck,
    Correction,
    Difference,
    ExampleRun,
    Extraction,
    FlagRow,
    KeysCheckFailure,
    MisreadingRate,
    ModelAggregate,
    ModelCell,
    Requirement,
    RuledSamples,
    RuleErrorRates,
    RuleProof,
    Scope,
    Settings,
    Span,
    WorkedExample,
    format_value,
)
from .review import match_adjudications, summarize_adjudications
from .rule_language.authoring.keystructure import CellStructure, cell_structure
from .rule_language.authoring.rulecheck import KeysCheckPlan, plan_keys_check, run_examples
from .rule_language.rules.rule import Rule
from .rule_language.scoring.batch import judge_many
from .rule_language.scoring.scorer import Scorer, jsonable
from .stats.aggregate import OutcomeColumns, cell_table, summarize
from .stats.baselines import rule_baselines, strict_baselines
from .stats.corrected import CorrectionInputs
from .stats.design import before_after_columns
from .stats.extraction_error import RuleErrorSample
from .stats.samples import KeyPlaces, outcome_variants
from .stats.validation_card import card_status
from .verdict_cache import judge_cached, score_cached

Progress = Callable[[int, int], None]
#: The reason a rejection carries when a person's label, not the rule, rejected the answer.
ADJUDICATED = "adjudicated: rejected"


# ---- stage 1: prove the rules -----------------------------------------------------------------


#: Replicates of the before -> after statistics (at most; --resamples when fewer): their
#: intervals are for reading, not for the survives/reverses verdict, and each replicate is a
#: matrix product per domain over every image.
DESIGN_RESAMPLES = 2000


def _check_cells_disjoint(rules: Sequence[Rule]) -> None:
    """One rule per cell, and one rule per name (the reports name rules by name)."""
    owner: dict[tuple[str, int], str] = {}
    for rule in rules:
        for cell in rule.cells:
            key = (cell.domain, cell.level)
            if key in owner:
                raise UsageError(
                    f"cell {cell} is covered by two rules ({owner[key]} and {rule.name}); give one rule per cell"
                )
            owner[key] = rule.name
    named: dict[str, Rule] = {}
    for rule in rules:
        if rule.name in named:
            raise UsageError(
                f"two rules are named {rule.name!r} ({printable(str(named[rule.name].path))} and"
                f" {printable(str(rule.path))}); reports name rules by name: rename one"
            )
        named[rule.name] = rule


def prove_rules(
    benchmark: Benchmark,
    rules: Sequence[Rule],
    scorers: Sequence[Scorer] | None = None,
    jobs: int = 1,
) -> tuple[RuleProof, ...]:
    """Run each rule's examples and the keys check of each of its cells (full key corpus).

    The keys check is run only when every example passes: a rule that fails its own examples is
    not worth checking further, and the CLI stops there. The keys checks' pairs of all rules are
    scored together, in ``jobs`` worker processes when there are enough of them (the result is
    the same for any ``jobs``).
    """
    _check_cells_disjoint(rules)
    scorers = scorers if scorers is not None else [Scorer(rule) for rule in rules]
    examples_of: list[tuple[ExampleRun, ...]] = []
    plans_of: list[list[tuple[Any, KeysCheckPlan]]] = []
    cached_of: list[Proved | None] = []
    keys_of: list[str] = []
    for rule, scorer in zip(rules, scorers, strict=True):
        cell_keys = [
            (cell.domain, cell.level, [k.answer for k in benchmark.keys_in_cell(cell.domain, cell.level)])
            for cell in rule.cells
        ]
        keys_of.append(proof_key(rule, cell_keys))
        cached = read_proof(keys_of[-1])
        cached_of.append(cached)
        if cached is not None:  # the same rule files, keys and engine: proved before
            examples_of.append(cached[0])
            plans_of.append([])
            continue
        examples = tuple(
            ExampleRun(
                note=r.example.note,
                line=r.example.line,
                key=r.example.key,
                response=r.example.response,
                expect_accept=r.example.accept,
                expect_reason=r.example.reason,
                accept=r.verdict.accept,
                reason=r.verdict.reason,
                values=dict(r.verdict.values),
                mismatches=r.mismatches,
            )
            for r in run_examples(scorer)
        )
        examples_of.append(examples)
        plans: list[tuple[Any, KeysCheckPlan]] = []
        if all(e.passed for e in examples):
            for cell, (_d, _lv, keys) in zip(rule.cells, cell_keys, strict=True):
                plans.append((cell, plan_keys_check(scorer, keys)))
        plans_of.append(plans)
    # Every pair of every rule's keys check, scored in one go (in workers when it pays).
    items = [
        (index, key, line)
        for index, plans in enumerate(plans_of)
        for _cell, plan in plans
        for key, line in plan.pairs
    ]
    outcomes = iter(judge_many(scorers, items, jobs))
    proofs = []
    for rule, scorer, examples, plans, cached, key in zip(
        rules, scorers, examples_of, plans_of, cached_of, keys_of, strict=True
    ):
        checks = []
        for cell, plan in plans:
            result = plan.finish([next(outcomes) for _ in plan.pairs])
            checks.append(
                CellKeysCheck(
                    domain=cell.domain,
                    level=cell.level,
                    n_keys=result.n_keys,
                    distinct=result.distinct,
                    pairs_checked=result.pairs_checked,
                    pairs_accepted=result.pairs_accepted,
                    exhaustive=result.exhaustive,
                    unparsed=tuple(sorted(result.unparsed.items())),
                    failures=tuple(
                        KeysCheckFailure(f.key, f.answer, f.problem, f.reason)
                        for f in result.failures
                    ),
                )
            )
        if cached is not None:
            checks, targets = list(cached[1]), cached[2]
        else:
            targets = tuple(
                {k: jsonable(v) for k, v in scorer.parse_key(e.key).target.items()}
                for e in examples
            )
            write_proof(key, (examples, tuple(checks), targets))
        proofs.append(
            RuleProof(
                name=rule.name,
                path=display_path(rule.path),
                description=rule.description,
                question=rule.question,
                cells=tuple((c.domain, c.level) for c in rule.cells),
                key_grammar=rule.key_grammar.path.name,
                answer_grammar=rule.answer_grammar.path.name,
                key_values=tuple(rule.key_values),
                outputs=tuple(rule.outputs),
                requirements=tuple(
                    Requirement(
                        r.reason,
                        r.explain,
                        r.check.source,
                        r.when.source if r.when is not None else None,
                    )
                    for r in rule.requirements
                ),
                examples=examples,
                keys_checks=tuple(checks),
                example_targets=targets,
                card=card_status(rule),
            )
        )
    return tuple(proofs)


# ---- stage 2: the audit -----------------------------------------------------------------------


def status_of(scorer: Scorer, key: str) -> str:
    """The key's status for grouping: its value of the rule's ``status_field`` (``status`` if
    the rule defines it, else its first ``[key]`` value)."""
    target = scorer.parse_key(key).target
    if not target:
        return "unparsed"
    return format_value(jsonable(target.get(scorer.rule.status_field)))


def _answer_line(scorer: Scorer, text: str) -> str | None:
    fmt = scorer.rule.answer_format
    found = find_answer_line(text, fmt.label, fmt.which)
    if found is None:
        return None
    return text.splitlines()[found.line_number - 1].strip()


def _difference(estimate: Any) -> Difference:
    return Difference(
        estimate=estimate.estimate,
        ci_low=estimate.ci_low,
        ci_high=estimate.ci_high,
        verdict=estimate.verdict,
        bootstrap_se=estimate.bootstrap_se,
        analytic_se=estimate.analytic_se,
        design_effect=estimate.design_effect,
        clusters_per_stratum=dict(sorted(estimate.clusters_per_stratum.items())),
        n_replicates=estimate.n_replicates,
    )


_NO_DIFFERENCE = Difference(
    math.nan, math.nan, math.nan, "no paired domain", math.nan, math.nan, math.nan, {}, 0
)


def run_audit(
    benchmark: Benchmark,
    rules: Sequence[Rule],
    settings: Settings = Settings(),  # noqa: B008 (frozen dataclass)
    proofs: tuple[RuleProof, ...] | None = None,
    progress: Progress | None = None,
    scorers: Sequence[Scorer] | None = None,
    adjudications: Sequence[Adjudication] = (),
    jobs: int = 1,
) -> Audit:
    """Compute the whole audit. ``progress(done, total)`` follows the two bootstrap runs.

    ``jobs`` is how many processes score the responses (:func:`~.rule_language.scoring.batch.score_many`;
    1: this one). The audit is the same for any ``jobs``.
    """

    _check_cells_disjoint(rules)
    settings = replace(settings, epochs=benchmark.epochs)  # the policy the responses were loaded with
    levels = sorted({level for _, level in benchmark.cells()})
    if len(levels) == 1 and settings.hi != levels[0]:
        # a benchmark of one level: its level is the one the reports speak of (its Raw, its
        # corrected accuracies), never the default L4/L5 it does not have
        settings = replace(settings, levels=(NO_LEVEL, levels[0]))
    scorers = list(scorers) if scorers is not None else [Scorer(rule) for rule in rules]
    if proofs is None:
        proofs = prove_rules(benchmark, rules, scorers, jobs)
    lo, hi = settings.levels
    ruled: dict[tuple[str, int], tuple[Rule, Scorer]] = {}
    for rule, scorer in zip(rules, scorers, strict=True):
        for cell in rule.cells:
            ruled[(cell.domain, cell.level)] = (rule, scorer)

    scope = Scope(
        benchmark=benchmark.config.name,
        n_keys=len(benchmark.keys),
        n_responses=len(benchmark.responses),
        domains=tuple(sorted({domain for domain, _ in benchmark.cells()})),
        levels=tuple(sorted({level for _, level in benchmark.cells()})),
        models_found=benchmark.models,
        roster=benchmark.config.roster,
        missing_models=benchmark.missing_models,
        computed_models=benchmark.computed_models,
        epochs=benchmark.epochs,
        max_samples=benchmark.n_epochs,
        sources=benchmark.sources,
    )
    key_structure = _key_structure(benchmark, rules)
    mark("key structure")

    responses = benchmark.response_table()
    labels = match_adjudications(benchmark, rules, scorers, adjudications) if adjudications else {}
    split: list[OutcomeColumns] | None = [] if adjudications else None
    (before, after, low, high), scored, rule_verdicts = _score_responses(
        benchmark, responses, ruled, labels, scorers, jobs, split
    )
    mark("outcomes (per model and item, four variants)")
    adjudicated = (
        summarize_adjudications(
            adjudications[0].path, labels, rule_verdicts, settings.confidence
        )
        if adjudications
        else None
    )

    baselines_before, baselines_after, cells = _cell_audits(
        benchmark, scored.table, scored.id_rank, ruled, key_structure, jobs
    )
    mark("baselines")

    models, worked = _model_cells(benchmark, scored, ruled)
    mark("model cells and worked examples")

    extraction = None
    if split is not None:
        samples = _error_samples(benchmark, rules, ruled, rule_verdicts, labels)
        rule_of_cell = {
            (c.domain, c.level): g for g, rule in enumerate(rules) for c in rule.cells
        }
        inputs = CorrectionInputs(tuple(split), rule_of_cell, samples, baselines_after)
    aggregates = _aggregates(
        (before, after, low, high), baselines_before, baselines_after, settings, progress
    )
    mark("aggregates and bootstrap")
    if split is not None:
        aggregates, models, extraction = _extraction(
            inputs, aggregates, models, settings, len(rule_verdicts), progress
        )
        mark("extraction error: rates and corrected figures")
    design = before_after_columns(
        before, after, baselines_before, baselines_after,
        resamples=min(settings.resamples, DESIGN_RESAMPLES), seed=settings.seed,
        confidence=settings.confidence,
    )
    mark("before -> after, leaderboard")
    flagged = _flagged(benchmark)
    mark("flagged cells")
    return Audit(
        settings=settings,
        scope=scope,
        rules=proofs,
        key_structure=key_structure,
        cells=tuple(cells),
        models=tuple(models),
        worked_examples=tuple(worked),
        aggregates=tuple(aggregates),
        adjudications=adjudicated,
        flagged=flagged,
        extraction=extraction,
        design=design,
        samples=scored.samples(),
    )


@dataclass(frozen=True)
class Scored:
    """The ruled samples, scored: rows of the response ``table`` (in (model, id) order), their
    rule verdicts with adjudicated labels applied (``labelled``: where a label was), and each
    row's item code (its id's rank)."""

    table: ResponseTable
    rows: np.ndarray
    verdicts: list[Any]
    id_rank: np.ndarray
    labelled: np.ndarray

    def samples(self) -> RuledSamples:
        """The samples as the reports read them (the HTML page's verdict browser)."""
        table, rows = self.table, self.rows
        return RuledSamples(
            models=table.models, keys=table.keys, model=table.model[rows], item=table.item[rows],
            epoch=table.epoch[rows], strict=table.correct[rows], labelled=self.labelled,
            verdicts=self.verdicts,
        )


def _id_ranks(keys: Sequence[KeyItem]) -> np.ndarray:
    """Each key's rank by id (item index -> position in id order)."""
    order = sorted(range(len(keys)), key=lambda k: keys[k].id)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


class _RuledWork:
    """The ruled samples' work items ``(scorer index, key, text)`` for
    :func:`~.rule_language.scoring.batch.score_many`, made again on each pass (a list of them
    took hundreds of megabytes at 25 M responses)."""

    def __init__(self, table: ResponseTable, rows: np.ndarray, key_rule: np.ndarray) -> None:
        self.table, self.rows, self.key_rule = table, rows, key_rule

    def __iter__(self) -> Iterator[tuple[int, str, str]]:
        texts, item = self.table.texts, self.table.item
        rule_of = self.key_rule.tolist()
        answers = [k.answer for k in self.table.keys]
        for start in range(0, len(self.rows), 1 << 16):  # a chunk of Python ints at a time
            rows = self.rows[start : start + (1 << 16)]
            for r, k in zip(rows.tolist(), item[rows].tolist(), strict=True):
                yield rule_of[k], answers[k], texts[r]


def _score_responses(
    benchmark: Benchmark,
    responses: Sequence[Response],
    ruled: dict[tuple[str, int], tuple[Rule, Scorer]],
    labels: dict[tuple[str, str, int], Adjudication] | None = None,
    scorers: Sequence[Scorer] = (),
    jobs: int = 1,
    split: list[OutcomeColumns] | None = None,
) -> tuple[tuple[OutcomeColumns, ...], Scored, dict]:
    """Score every response once: before = its stored strict verdict, after = its rule's verdict
    in a ruled cell (else the strict one), and after with every uncertain verdict counted wrong
    (low) and right (high). Returns one outcome per (model, item) for each of the four, the
    samples of an item averaged (see the module docstring); the ruled samples with their verdicts,
    adjudicated labels applied (a label is certain); and, when there are labels, the rule's own
    verdicts by (model, id, epoch).

    Samples are taken in (model, id) order, as columns (:class:`~.load.response_table.ResponseTable`).
    The rule verdicts come from :func:`~.rule_language.scoring.batch.score_many`: each distinct
    (rule, key, cleaned answer line) is scored once, in ``jobs`` processes when that pays.

    ``split``, when given, receives the after outcomes split for the extraction-error correction
    (:data:`~.stats.corrected.SIDES`): the known right units (a label, or a cell no rule changes),
    then the unlabelled rule verdicts by kind (certain/uncertain accepts/rejects)."""
    position = {id(scorer): i for i, scorer in enumerate(scorers)}
    for _, scorer in ruled.values():
        if id(scorer) not in position:
            position[id(scorer)] = len(scorers)
            scorers = [*scorers, scorer]
    table = ResponseTable.from_responses(responses, benchmark.keys)
    keys = table.keys
    rule_at = {cell: position[id(scorer)] for cell, (_, scorer) in ruled.items()}
    key_rule = np.fromiter(
        (rule_at.get((k.ref.domain, k.ref.level), -1) for k in keys), dtype=np.int64, count=len(keys)
    )
    id_rank = _id_ranks(keys)
    model_rank = np.argsort(np.argsort(np.array(table.models, dtype=object), kind="stable"))
    item = table.item
    sort_key = model_rank[table.model]  # (model, id) as one int64, built in place
    sort_key *= max(len(keys), 1)
    sort_key += id_rank[item]
    order = np.argsort(sort_key, kind="stable")
    del sort_key
    in_rule = (key_rule >= 0)[item[order]]  # per sample, in (model, id) order
    rows = order[in_rule]
    stats: dict[str, Any] = {}
    verdicts = score_cached(scorers, _RuledWork(table, rows, key_rule), jobs, stats)
    mark(
        "scoring",
        f"{stats['responses']:,} ruled responses, {stats['line_items']:,} distinct answer "
        f"lines, {stats['conclusion_items']:,} conclusions, {stats['cached_items']:,} of them "
        "from the verdict cache, "
        + (f"{stats['workers']} workers (peak RSS {stats['worker_peak_mb']:,.0f} MB)"
           if stats["workers"] else "in process"),
    )
    rule_verdicts: dict[tuple[str, str, int], Any] = {}
    labelled = np.zeros(len(rows), dtype=bool)
    if labels:
        models = table.models
        for n, (r, k) in enumerate(zip(rows.tolist(), item[rows].tolist(), strict=True)):
            sample = (models[table.model[r]], keys[k].id, int(table.epoch[r]))
            verdict = verdicts[n]
            rule_verdicts[sample] = verdict
            label = labels.get(sample)
            if label is not None:
                labelled[n] = True
                verdicts[n] = replace(
                    verdict,
                    accept=label.accept,
                    reason="" if label.accept else ADJUDICATED,
                    uncertain=(),
                )
    accept = verdicts.column(lambda v: v.accept)
    doubt = verdicts.column(lambda v: bool(v.uncertain))
    before = table.correct[order]
    after, low, high = before.copy(), before.copy(), before.copy()
    after[in_rule] = accept
    low[in_rule] = accept & ~doubt
    high[in_rule] = accept | doubt
    sides = [before, after, low, high]
    if split is not None:
        known = before.copy()  # a cell no rule changes: its strict verdict; a label: the label
        known[in_rule] = accept & labelled
        kind = np.where(labelled, -1, 2 * doubt + ~accept)
        for k in range(4):
            part = np.zeros(len(order), dtype=bool)
            part[in_rule] = kind == k
            sides.append(part)
        sides.insert(4, known)
    places = KeyPlaces([(k.ref.domain, k.ref.cluster, k.ref.level) for k in keys])
    variants = outcome_variants(  # (model, id) order: each item's samples adjacent
        table.models, table.model[order], item[order], places, sides, grouped=True
    )
    if split is not None:
        split.extend(variants[4:])
    return variants[:4], Scored(table, rows, verdicts, id_rank, labelled), rule_verdicts


def _cell_audits(
    benchmark: Benchmark,
    table: ResponseTable,
    id_rank: np.ndarray,
    ruled: dict[tuple[str, int], tuple[Rule, Scorer]],
    key_structure: Sequence[CellStructure],
    jobs: int = 1,
) -> tuple[dict[tuple[str, int], float], dict[tuple[str, int], float], list[CellAudit]]:
    """Baselines before (strict) and after (the rule's best constant answer) over the evaluated
    items (those any model was evaluated on, in id order), and one CellAudit per ruled cell
    (the rule baselines' pairs judged in ``jobs`` processes when that pays)."""
    present = np.unique(table.item)
    present = present[np.argsort(id_rank[present], kind="stable")]
    evaluated = [table.keys[k] for k in present.tolist()]
    cell_keys = [((k.ref.domain, k.ref.level), k.answer) for k in evaluated]
    baselines_before = strict_baselines(cell_keys)
    baselines_after = dict(baselines_before)
    by_cell: dict[tuple[str, int], list[str]] = {}
    for cell, key in cell_keys:
        if cell in ruled:
            by_cell.setdefault(cell, []).append(key)
    corpus_size = {(st.domain, st.level): st.n_keys for st in key_structure}
    with_keys = [(cell, entry) for cell, entry in sorted(ruled.items()) if by_cell.get(cell)]
    # every cell's (candidate, key group) pairs judged together, in workers when that pays
    scorers: list[Scorer] = []
    for _, (_, scorer) in with_keys:
        if all(s is not scorer for s in scorers):
            scorers.append(scorer)
    at = [next(n for n, s in enumerate(scorers) if s is scorer) for _, (_, scorer) in with_keys]

    def judge(items: list[tuple[int, str, str | None]]) -> list[tuple[bool, str]]:
        return judge_cached(scorers, [(at[i], key, line) for i, key, line in items], jobs)

    bases = rule_baselines([(scorer, by_cell[cell]) for cell, (_, scorer) in with_keys], judge)
    cells = []
    for ((domain, level), (rule, scorer)), base in zip(with_keys, bases, strict=True):
        keys = by_cell[(domain, level)]
        n_keys = corpus_size[(domain, level)]
        baselines_after[(domain, level)] = base.accuracy
        strict_count = round(baselines_before[(domain, level)] * len(keys))
        statuses = Counter(status_of(scorer, k) for k in keys)
        cells.append(
            CellAudit(
                rule=rule.name,
                domain=domain,
                level=level,
                n_keys=n_keys,
                n_evaluated=len(keys),
                status_counts=tuple(sorted(statuses.items())),
                status_field=rule.status_field,
                baseline_before=baselines_before[(domain, level)],
                baseline_before_correct=strict_count,
                baseline_after=base.accuracy,
                baseline_after_correct=base.correct,
                best_constant=base.best_answer,
                best_constant_values={
                    k: jsonable(v) for k, v in scorer.parse_key(base.best_answer).target.items()
                },
            )
        )

    return baselines_before, baselines_after, cells


def _aggregates(
    variants: tuple[OutcomeColumns, ...],
    baselines_before: dict[tuple[str, int], float],
    baselines_after: dict[tuple[str, int], float],
    settings: Settings,
    progress: Progress | None,
) -> list[ModelAggregate]:
    """Per-model aggregates before and after, with the bootstrap runs of the L5−L4 gap; where
    verdicts are uncertain, the same figures at both ends of what they could be (:class:`Bounds`)."""
    from .stats.bootstrap import bootstrap_differences  # numba: imported only when an audit runs

    before, after, low, high = (  # lists of Outcome (from tests) become columns too
        v if isinstance(v, OutcomeColumns) else OutcomeColumns.from_outcomes(v) for v in variants
    )
    # A model's figures can move exactly where its outcome with every uncertain verdict wrong
    # differs from the one with every uncertain verdict right.
    moving = np.bincount(low.model[low.correct != high.correct], minlength=len(low.models))
    uncertain = {low.models[m]: int(k) for m, k in enumerate(moving) if k}
    uncertain_models = set(uncertain)
    lo_level, hi_level = settings.levels
    # The difference's ends: the high level's uncertain verdicts wrong and the low level's right,
    # and the opposite.
    diff_low = low.with_correct(np.where(low.level == lo_level, high.correct, low.correct))
    diff_high = low.with_correct(np.where(low.level == hi_level, high.correct, low.correct))
    summary_before = summarize(cell_table(before), baselines_before, settings.levels)
    summary_after = summarize(cell_table(after), baselines_after, settings.levels)
    common = dict(
        levels=settings.levels,
        resamples=settings.resamples,
        seed=settings.seed,
        confidence=settings.confidence,
        engine=settings.engine,
    )
    has_pairs = any(s.n_paired for s in summary_before.values())
    # before, after, and, only where uncertain verdicts can move anything, both ends of the
    # difference: bootstrapped together (one pass of draws for all of them)
    variants = [(before, baselines_before), (after, baselines_after)]
    if uncertain_models:
        variants += [(diff_low, baselines_after), (diff_high, baselines_after)]
        summary_low, summary_high, diff_summary_low, diff_summary_high = (
            summarize(cell_table(outcomes), baselines_after, settings.levels)
            for outcomes in (low, high, diff_low, diff_high)
        )
    boots = (
        bootstrap_differences(variants, progress=progress, **common)
        if has_pairs
        else [{} for _ in variants]
    )
    boot_before, boot_after = boots[0], boots[1]
    if uncertain_models:
        boot_low, boot_high = boots[2], boots[3]

    def difference(boots: dict, model: str, paired: int) -> Difference:
        return _difference(boots[model]) if model in boots and paired else _NO_DIFFERENCE

    aggregates = []
    for model in sorted(summary_before):
        b, a = summary_before[model], summary_after[model]
        bounds = None
        if model in uncertain_models:
            lo, hi = summary_low[model], summary_high[model]
            d_lo = difference(boot_low, model, a.n_paired)
            d_hi = difference(boot_high, model, a.n_paired)
            bounds = Bounds(
                n_uncertain=uncertain[model],
                raw=(lo.raw_hi, hi.raw_hi),
                adjusted=(lo.adjusted_hi, hi.adjusted_hi),
                overall=(lo.overall, hi.overall),
                diff=(diff_summary_low[model].diff, diff_summary_high[model].diff),
                verdicts=(d_lo.verdict, d_hi.verdict),
            )
        aggregates.append(
            ModelAggregate(
                model=model,
                raw_before=b.raw_hi,
                raw_after=a.raw_hi,
                adjusted_before=b.adjusted_hi,
                adjusted_after=a.adjusted_hi,
                overall_before=b.overall,
                overall_after=a.overall,
                diff_before=difference(boot_before, model, b.n_paired),
                diff_after=difference(boot_after, model, a.n_paired),
                n_hi_cells=b.n_hi_cells,
                n_paired=b.n_paired,
                n_cells=b.n_cells,
                bounds=bounds,
            )
        )
    return aggregates


def _error_samples(
    benchmark: Benchmark,
    rules: Sequence[Rule],
    ruled: dict[tuple[str, int], tuple[Rule, Scorer]],
    rule_verdicts: dict[tuple[str, str, int], Any],
    labels: dict[tuple[str, str, int], Adjudication],
) -> tuple[RuleErrorSample, ...]:
    """Per rule, the labelled answers that measure its misreading rates — the random sample of
    certain verdicts (``selected`` = ``sample``) for the certain rates, every labelled uncertain
    verdict for the uncertain ones —: per rate, the labelled answers of its kind (truly wrong for
    a false-accept rate, truly right for a false-reject rate) and how many the rule misread; and
    its unlabelled verdicts per kind (certain/uncertain accepts/rejects)."""
    index = {rule.name: g for g, rule in enumerate(rules)}
    labelled = [[0] * 4 for _ in rules]
    errors = [[0] * 4 for _ in rules]
    unlabelled = [[0] * 4 for _ in rules]
    for sample, verdict in rule_verdicts.items():
        ref = benchmark.keys[sample[1]].ref
        g = index[ruled[(ref.domain, ref.level)][0].name]
        uncertain = bool(verdict.uncertain)
        label = labels.get(sample)
        if label is None:
            unlabelled[g][2 * uncertain + (not verdict.accept)] += 1
        elif uncertain or label.selected == "sample":
            k = 2 * uncertain + bool(label.accept)  # false accept among wrong, reject among right
            labelled[g][k] += 1
            errors[g][k] += label.accept != verdict.accept
    return tuple(
        RuleErrorSample(rule.name, tuple(labelled[g]), tuple(errors[g]), tuple(unlabelled[g]))
        for g, rule in enumerate(rules)
    )


#: How the extraction error enters the figures (the JSON's ``extraction_error.method``).
METHOD = (
    "Rogan-Gladen per cell and level: the unlabelled certain (and uncertain) verdicts' truly-right"
    " count is (accepted - fa * n) / (1 - fa - fr), kept within [0, n], with the rule's false-accept"
    " rate fa and false-reject rate fr as measured on the adjudicated random sample (e/m: with no"
    " misreading observed the figure is the uncorrected one); labelled verdicts count as labelled. Intervals: the image-cluster bootstrap"
    " redrawing every rate from its Jeffreys posterior Beta(e+1/2, m-e+1/2) in each replicate"
    " (L(hi)-L(lo), with two levels); the rate draws alone for accuracies and their before->after change"
)


def _extraction(
    inputs: CorrectionInputs,
    aggregates: list[ModelAggregate],
    models: list[ModelCell],
    settings: Settings,
    n_ruled: int,
    progress: Progress | None,
) -> tuple[list[ModelAggregate], list[ModelCell], Extraction]:
    """The measured extraction error and the corrected figures (see :mod:`.stats.corrected`)."""
    from .stats.corrected import (
        corrected_accuracies,
        corrected_bootstrap,
        difference_interval,
    )
    from .stats.extraction_error import RATES, rate_draws

    engine = "numba" if settings.engine == "numba" else "python"
    rates = rate_draws(inputs.samples, settings.resamples, settings.seed, engine)
    accuracy = corrected_accuracies(
        inputs, settings.hi, rates, settings.confidence, settings.seed, engine
    )
    has_pairs = any(a.n_paired for a in aggregates)
    diffs = (
        corrected_bootstrap(
            inputs, settings.levels, rates, settings.resamples, settings.seed,
            settings.confidence, settings.engine,
        )
        if has_pairs
        else {}
    )
    corrected_models = [
        replace(m, corrected=_span(accuracy.cells.get((m.model, m.domain, m.level))))
        for m in models
    ]
    out = []
    for a in aggregates:
        raw = accuracy.raw_hi.get(a.model)
        d = diffs.get(a.model)
        if raw is None:
            out.append(a)
            continue
        change = Span(raw.estimate - a.raw_before, raw.low - a.raw_before, raw.high - a.raw_before)
        diff = (
            Span(d.estimate, d.ci_low, d.ci_high) if d is not None and a.n_paired
            else Span(math.nan, math.nan, math.nan)
        )
        out.append(
            replace(
                a,
                correction=Correction(
                    raw_after=_span(raw),
                    raw_change=change,
                    diff=diff,
                    diff_verdict=d.verdict if d is not None and a.n_paired else "no paired domain",
                    n_replicates=d.n_replicates if d is not None else 0,
                ),
            )
        )
    order = tuple(
        sorted(accuracy.raw_hi, key=lambda m: (-accuracy.raw_hi[m].estimate, m))
    )
    swaps = []
    for first, second in zip(order[:-1], order[1:], strict=True):
        low, high = difference_interval(
            accuracy.raw_hi_draws[first], accuracy.raw_hi_draws[second], settings.confidence
        )
        if low <= 0.0:
            swaps.append((first, second, low, high))
    rules = tuple(
        RuleErrorRates(
            s.rule,
            tuple(
                MisreadingRate(
                    RATES[k], s.labelled[k], s.errors[k],
                    s.errors[k] / s.labelled[k] if s.labelled[k] else math.nan,
                    s.interval(k, settings.confidence),
                    s.unlabelled[0] + s.unlabelled[1] if k < 2 else s.unlabelled[2] + s.unlabelled[3],
                )
                for k in range(4)
            ),
        )
        for s in inputs.samples
    )
    n_unlabelled = sum(sum(s.unlabelled) for s in inputs.samples)
    extraction = Extraction(rules, order, tuple(swaps), n_ruled, n_unlabelled, METHOD)
    return out, corrected_models, extraction


def _span(interval: Any) -> Span | None:
    return None if interval is None else Span(interval.estimate, interval.low, interval.high)


def _model_cells(
    benchmark: Benchmark,
    scored: Scored,
    ruled: dict[tuple[str, int], tuple[Rule, Scorer]],
) -> tuple[list[ModelCell], list[WorkedExample]]:
    """Per (model, ruled cell): counts and flips; and the worked examples, first per key status.

    ``n`` counts items; with several samples per item the correct counts are sums of per-item
    rates, flips name ``id#epoch`` and reasons count samples. A worked example shows an item's
    lowest epoch.
    """
    table, rows, verdicts = scored.table, scored.rows, scored.verdicts
    keys = table.keys
    item = table.item[rows].astype(np.int64)
    epoch = table.epoch[rows]
    correct = table.correct[rows]
    cell_names = sorted(ruled)
    cell_at = {cell: n for n, cell in enumerate(cell_names)}
    key_cell = np.fromiter(
        (cell_at.get((k.ref.domain, k.ref.level), -1) for k in keys), dtype=np.int64, count=len(keys)
    )
    # one group per (model, ruled cell); within it, samples by (id, epoch)
    group = key_cell[item] * max(len(table.models), 1) + table.model[rows]
    order = np.lexsort((epoch, scored.id_rank[item], group))
    bounds = np.flatnonzero(np.diff(group[order])) + 1
    runs = np.split(order, bounds) if len(order) else []
    every = benchmark.epochs == "all"
    rank = {m: i for i, m in enumerate(benchmark.models)}

    def place(run: np.ndarray) -> tuple[str, int, int, str]:
        model = table.models[int(table.model[rows[run[0]]])]
        domain, level = cell_names[int(key_cell[item[run[0]]])]
        return domain, level, rank.get(model, 0), model

    models: list[ModelCell] = []
    worked: list[WorkedExample] = []
    statuses: dict[int, str] = {}
    for run in sorted(runs, key=place):
        domain, level, _, model = place(run)
        scorer = ruled[(domain, level)][1]
        up, down, reasons, uncertain = [], [], Counter(), []
        first: dict[str, int] = {}
        items: dict[int, list[tuple[bool, bool, bool, bool]]] = {}
        for n in run.tolist():
            v = verdicts[n]
            k = int(item[n])
            right = bool(correct[n])
            item_id = keys[k].id
            name = f"{item_id}#{int(epoch[n])}" if every else item_id
            if v.accept and not right:
                up.append(name)
            if right and not v.accept:
                down.append(name)
            reasons[v.reason or "accepted"] += 1
            if v.uncertain:
                uncertain.append((name, tuple(v.uncertain)))
            low = v.accept and not v.uncertain
            high = v.accept or bool(v.uncertain)
            items.setdefault(k, []).append((right, v.accept, low, high))
            status = statuses.get(k)
            if status is None:
                status = statuses[k] = status_of(scorer, keys[k].answer)
            first.setdefault(status, n)
        models.append(
            ModelCell(
                model=model,
                domain=domain,
                level=level,
                n=len(items),
                strict_correct=_rate_sum(items.values(), 0),
                structured_correct=_rate_sum(items.values(), 1),
                flips_up=tuple(up),
                flips_down=tuple(down),
                reasons=tuple(sorted(reasons.items())),
                n_samples=len(run),
                uncertain=tuple(uncertain),
                structured_low=_rate_sum(items.values(), 2),
                structured_high=_rate_sum(items.values(), 3),
            )
        )
        for status in sorted(first):
            n = first[status]
            v = verdicts[n]
            key = keys[int(item[n])]
            target = scorer.parse_key(key.answer).target
            worked.append(
                WorkedExample(
                    model=model,
                    domain=domain,
                    level=level,
                    id=key.id,
                    status=status,
                    target={k: jsonable(x) for k, x in target.items()},
                    answer_line=_answer_line(scorer, table.texts[int(rows[n])]),
                    extracted=dict(v.values),
                    accept=v.accept,
                    reason=v.reason,
                    question=key.question,
                    epoch=int(epoch[n]),
                )
            )
    return models, worked


def _rate_sum(items, side: int) -> int | float:
    """Sum over items of the share of their samples that are right (an int when single)."""
    total = 0.0
    single = True
    for pairs in items:
        single = single and len(pairs) == 1
        total += sum(p[side] for p in pairs) / len(pairs)
    return round(total) if single else total


def _key_structure(benchmark: Benchmark, rules: Sequence[Rule]) -> tuple[CellStructure, ...]:
    return tuple(
        cell_structure(benchmark, cell.domain, cell.level, rule)
        for rule in rules
        for cell in rule.cells
    )


def _flagged(benchmark: Benchmark) -> tuple[FlagRow, ...]:
    return tuple(flag_cells(benchmark))
