"""What an audit found: the frozen records that ``run_audit`` and ``prove_rules`` build and every
report (terminal, JSON, Markdown, plot) only reads.

They live in the report stage, below the orchestration that fills them (``keyaudit.engine.audit``,
``keyaudit.engine.flag``), so a reporter needs nothing but these records and never imports the
code that runs an audit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..load.responses.records import RunInfo
from ..rule_language.authoring.keystructure import CellStructure
from ..stats.aggregate import check_levels

if TYPE_CHECKING:
    import numpy as np

    from ..load.benchmark import KeyItem


@dataclass(frozen=True)
class FlagRow:
    """One cell with flagged keys; ``evaluated`` and ``strict_correct`` pool all models."""

    domain: str
    level: int
    flagged: int
    total: int
    evaluated: int
    strict_correct: int

    @property
    def strict_accuracy(self) -> float | None:
        return self.strict_correct / self.evaluated if self.evaluated else None

    @property
    def candidate(self) -> bool:
        """Zero strict accuracy on at least one evaluated flagged response."""
        return self.evaluated > 0 and self.strict_correct == 0

    def as_json(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "level": self.level,
            "flagged": self.flagged,
            "total": self.total,
            "evaluated": self.evaluated,
            "strict_correct": self.strict_correct,
            "strict_accuracy": self.strict_accuracy,
            "candidate": self.candidate,
        }

ENGINES = ("numba", "reference")
#: How several samples of one item for one model are used (load.benchmark.EPOCH_POLICIES).
EPOCH_POLICIES = ("first", "all")
#: The lower "level" of one level (``--levels L``, or a benchmark that has one): below every
#: real level (ids give levels >= 0), so no domain is paired and the reports give before → after.
NO_LEVEL = -1


@dataclass(frozen=True)
class Settings:
    """The statistical settings of a run (all reported, so a report can be reproduced)."""

    levels: tuple[int, int] = (4, 5)
    resamples: int = 10_000
    seed: int = 0
    confidence: float = 0.95
    engine: str = "numba"
    #: ``first``: one sample per model and item (the lowest epoch); ``all``: every sample,
    #: averaged per item. Set from the loaded benchmark by ``run_audit``.
    epochs: str = "first"

    def __post_init__(self) -> None:
        if self.epochs not in EPOCH_POLICIES:
            raise UsageError(
                f"--epochs must be one of {', '.join(EPOCH_POLICIES)}, got {self.epochs!r}"
            )
        check_levels(self.levels)
        if self.resamples < 1:
            raise UsageError(f"--resamples must be at least 1, got {self.resamples}")
        if not 0.0 < self.confidence < 1.0:
            raise UsageError(
                f"--confidence must lie strictly between 0 and 1, got {self.confidence}"
            )
        if self.engine not in ENGINES:
            raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")

    @property
    def lo(self) -> int:
        return self.levels[0]

    @property
    def hi(self) -> int:
        return self.levels[1]


@dataclass(frozen=True)
class ExampleRun:
    """One of a rule's own examples, scored: what it states and what the rule did."""

    note: str
    line: int | None
    key: str
    response: str
    expect_accept: bool
    expect_reason: str
    accept: bool
    reason: str
    values: dict[str, Any]
    mismatches: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.mismatches


@dataclass(frozen=True)
class KeysCheckFailure:
    key: str
    answer: str
    problem: str
    reason: str


@dataclass(frozen=True)
class CellKeysCheck:
    """The keys check of one ruled cell over its full key corpus."""

    domain: str
    level: int
    n_keys: int
    distinct: int
    pairs_checked: int
    unparsed: tuple[tuple[str, str], ...]
    failures: tuple[KeysCheckFailure, ...]
    #: False when each key was checked against a sample of the others (very large cells).
    exhaustive: bool = True
    #: Of ``pairs_checked``, those accepted because ``[keys_check] accepts`` declares the other
    #: key a right answer too; the rest were rejected.
    pairs_accepted: int = 0

    @property
    def passed(self) -> bool:
        return not self.failures and not self.unparsed and self.n_keys > 0

    @property
    def pairs_rejected(self) -> int:
        return self.pairs_checked - self.pairs_accepted


@dataclass(frozen=True)
class Requirement:
    """One ``[[require]]`` clause as text: its reason, explanation, check and condition."""

    reason: str
    explain: str
    check: str
    when: str | None


@dataclass(frozen=True)
class RuleProof:
    """A rule as the report shows it, with its examples run and its keys checked."""

    name: str
    path: str
    description: str
    question: str
    cells: tuple[tuple[str, int], ...]
    key_grammar: str
    answer_grammar: str
    key_values: tuple[str, ...]
    outputs: tuple[str, ...]
    requirements: tuple[Requirement, ...]
    examples: tuple[ExampleRun, ...]
    keys_checks: tuple[CellKeysCheck, ...]
    example_targets: tuple[dict[str, Any], ...] = ()
    #: The rule's validation card (``keyaudit.engine.stats.validation_card.CardStatus``): its
    #: blind sets' agreement before tuning, and whether its files changed since.
    card: Any = None

    @property
    def examples_passed(self) -> bool:
        return all(e.passed for e in self.examples)

    @property
    def keys_passed(self) -> bool:
        return all(k.passed for k in self.keys_checks)

    @property
    def passed(self) -> bool:
        return self.examples_passed and self.keys_passed


@dataclass(frozen=True)
class Scope:
    """Models found vs the roster; who had ``correct`` computed by keyaudit."""

    benchmark: str
    n_keys: int
    n_responses: int
    domains: tuple[str, ...]
    levels: tuple[int, ...]
    models_found: tuple[str, ...]
    roster: tuple[str, ...]
    missing_models: tuple[str, ...]
    computed_models: tuple[str, ...]
    #: The epochs policy, the most samples a model has of one item, and how each file was read.
    epochs: str = "first"
    max_samples: int = 1
    sources: tuple[RunInfo, ...] = ()

    @property
    def log_sources(self) -> tuple[RunInfo, ...]:
        """Sources read from evaluation-framework logs (inspect, lm-eval)."""
        return tuple(s for s in self.sources if s.format not in ("jsonl", "csv"))


@dataclass(frozen=True)
class CellAudit:
    """One ruled cell: its corpus, its evaluated sample and its two baselines."""

    rule: str
    domain: str
    level: int
    n_keys: int
    n_evaluated: int
    status_counts: tuple[tuple[str, int], ...]
    baseline_before: float
    baseline_before_correct: int
    baseline_after: float
    baseline_after_correct: int
    best_constant: str
    best_constant_values: dict[str, Any]
    #: The ``[key]`` value ``status_counts`` count (``status``, or the rule's first ``[key]``
    #: value, which the reports then name).
    status_field: str = "status"

    def statuses_text(self) -> str:
        """``150 A, 150 B`` (``by bulb: 150 A, ...`` where the values are not a ``status``)."""
        listed = ", ".join(f"{n:,} {s}" for s, n in self.status_counts)
        return listed if self.status_field == "status" else f"by {self.status_field}: {listed}"


@dataclass(frozen=True)
class ModelCell:
    """One model in one ruled cell: strict vs structured accuracy and the flips between them."""

    model: str
    domain: str
    level: int
    n: int
    strict_correct: int | float
    structured_correct: int | float
    flips_up: tuple[str, ...]
    flips_down: tuple[str, ...]
    reasons: tuple[tuple[str, int], ...]
    #: Responses scored (``n`` counts items; more when ``--epochs all`` keeps several per item).
    n_samples: int = 0
    #: Uncertain verdicts (:mod:`~keyaudit.engine.rule_language.reading.certainty`): ``id`` (``id#epoch``
    #: with several samples) and why; and how far they could move ``structured_correct``.
    uncertain: tuple[tuple[str, tuple[str, ...]], ...] = ()
    structured_low: int | float = 0
    structured_high: int | float = 0
    #: The proposed accuracy corrected for the measured extraction error, with its interval over
    #: the rates' draws (None without adjudications).
    corrected: Span | None = None

    @property
    def strict(self) -> float:
        return self.strict_correct / self.n

    @property
    def structured(self) -> float:
        return self.structured_correct / self.n

    @property
    def structured_bounds(self) -> tuple[float, float]:
        """The proposed accuracy with every uncertain verdict wrong, and with every one right."""
        return self.structured_low / self.n, self.structured_high / self.n


@dataclass(frozen=True)
class WorkedExample:
    """A stored response scored by the rule: the first sampled item of a key status, per model."""

    model: str
    domain: str
    level: int
    id: str
    status: str
    target: dict[str, Any]
    answer_line: str | None
    extracted: dict[str, Any]
    accept: bool
    reason: str
    #: The question the key answers, when the key files carry it (the published CSV's prompt).
    question: str | None = None
    epoch: int = 1


@dataclass(frozen=True)
class Difference:
    """L(hi)−L(lo) with its bootstrap interval, verdict and standard errors (fractions)."""

    estimate: float
    ci_low: float
    ci_high: float
    verdict: str
    bootstrap_se: float
    analytic_se: float
    design_effect: float
    clusters_per_stratum: dict[str, int]
    n_replicates: int


@dataclass(frozen=True)
class Bounds:
    """How far uncertain verdicts could move a model's figures after the rule.

    Each pair is (all uncertain verdicts wrong, all right); for the L5−L4 difference the low end
    counts the high level's uncertain verdicts wrong and the low level's right, and the high end
    the opposite, so the pair bounds the difference. ``verdicts`` are the difference's verdicts
    (bootstrap interval) at both ends.
    """

    n_uncertain: int
    raw: tuple[float, float]
    adjusted: tuple[float, float]
    overall: tuple[float, float]
    diff: tuple[float, float]
    verdicts: tuple[str, str]


@dataclass(frozen=True)
class Span:
    """A corrected figure with its interval (fractions)."""

    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class MisreadingRate:
    """One misreading rate of a rule (``certain false accept``: of the truly wrong answers among
    its certain verdicts, the share it accepts; ``... false reject``: of the truly right ones, the
    share it rejects; the same for its uncertain verdicts): how many labelled answers of that kind
    there are, how many the rule misread, the rate with its Wilson interval, and how many
    unlabelled verdicts it corrects. ``measured`` is False when none was labelled."""

    name: str
    labelled: int
    errors: int
    rate: float
    interval: tuple[float, float]
    unlabelled: int

    @property
    def measured(self) -> bool:
        return self.labelled > 0


@dataclass(frozen=True)
class RuleErrorRates:
    """A rule's misreading rates on this benchmark's responses, from the adjudicated sample."""

    rule: str
    rates: tuple[MisreadingRate, ...]

    def rate(self, name: str) -> MisreadingRate:
        return next(r for r in self.rates if r.name == name)

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """Rates that apply to unlabelled verdicts but have no labelled answer of their kind."""
        return tuple(r.name for r in self.rates if r.unlabelled and not r.measured)


@dataclass(frozen=True)
class Correction:
    """A model's after-figures corrected for the measured extraction error.

    ``raw_after`` (Raw L*hi*) and ``raw_change`` (its before→after change) carry the extraction
    error alone (interval over the rates' draws: the stored responses are not resampled);
    ``diff`` is L*hi*−L*lo* with the bootstrap interval that resamples image clusters and redraws
    the rates in each replicate, and its verdict."""

    raw_after: Span
    raw_change: Span
    diff: Span
    diff_verdict: str
    n_replicates: int


@dataclass(frozen=True)
class Extraction:
    """The rule's error on these responses, measured from ``--adjudications``, and what it does to
    the figures: per rule its misreading rates; the model order by corrected Raw L*hi* and the
    adjacent pairs whose order the interval of their difference (over the rate draws) does not
    settle; how many ruled verdicts stay unlabelled."""

    rules: tuple[RuleErrorRates, ...]
    order: tuple[str, ...]
    could_swap: tuple[tuple[str, str, float, float], ...]
    n_ruled: int
    n_unlabelled: int
    method: str

    @property
    def all_adjudicated(self) -> bool:
        return self.n_ruled > 0 and self.n_unlabelled == 0


@dataclass(frozen=True)
class ModelAggregate:
    """One model's aggregates before and after (see :class:`~.aggregate.ModelSummary`)."""

    model: str
    raw_before: float
    raw_after: float
    adjusted_before: float
    adjusted_after: float
    overall_before: float
    overall_after: float
    diff_before: Difference
    diff_after: Difference
    n_hi_cells: int
    n_paired: int
    n_cells: int
    #: None when no verdict of this model is marked uncertain (the uncertain verdicts cannot
    #: move its figures; the rule's unmarked misreadings still can: see ``correction``).
    bounds: Bounds | None = None
    #: The figures corrected for the measured extraction error (None without adjudications).
    correction: Correction | None = None

    @property
    def verdict_could_change_by_error(self) -> bool:
        """Whether the L5−L4 verdict after the rule differs once the measured extraction error is
        in its interval."""
        return self.correction is not None and self.correction.diff_verdict != self.diff_after.verdict

    @property
    def verdict_changed(self) -> bool:
        return self.diff_before.verdict != self.diff_after.verdict

    @property
    def verdict_could_change(self) -> bool:
        """Whether the L5−L4 verdict after the rule differs at either end of the bounds."""
        if self.bounds is None:
            return False
        return any(v != self.diff_after.verdict for v in self.bounds.verdicts)


@dataclass(frozen=True)
class CellSummary:
    """One ruled cell at a glance (the first table of ``check --all``): corpus keys, evaluated
    items and responses, the baseline and the models' mean accuracy before → after, and the
    verdict flips both ways over all models."""

    rule: str
    domain: str
    level: int
    n_keys: int
    n_items: int
    n_responses: int
    baseline_before: float
    baseline_after: float
    mean_before: float
    mean_after: float
    flips_up: int
    flips_down: int
    n_uncertain: int


@dataclass(frozen=True)
class RuledSamples:
    """Every sample of the ruled cells with the verdict the audit counted: what the HTML page's
    verdict browser lists, one entry per sample in each column (the audit's own columns, not a
    copy per sample: about 20 bytes each, the verdicts shared).

    ``model`` indexes ``models``; ``item`` indexes ``keys`` (the id, the key, the cell);
    ``epoch``; ``strict``, the benchmark's stored verdict; ``verdicts``, the rule's verdict as the
    audit counted it (``Sequence[Verdict]``, a person's label applied where ``labelled``)."""

    models: tuple[str, ...]
    keys: Sequence[KeyItem]
    model: np.ndarray
    item: np.ndarray
    epoch: np.ndarray
    strict: np.ndarray
    labelled: np.ndarray
    verdicts: Sequence[Any]


@dataclass(frozen=True)
class Audit:
    """Everything ``keyaudit check`` reports."""

    settings: Settings
    scope: Scope
    rules: tuple[RuleProof, ...]
    key_structure: tuple[CellStructure, ...]
    cells: tuple[CellAudit, ...]
    models: tuple[ModelCell, ...]
    worked_examples: tuple[WorkedExample, ...]
    aggregates: tuple[ModelAggregate, ...]
    flagged: tuple[FlagRow, ...]
    #: What ``--adjudications`` did (None without it): ``keyaudit.engine.review.AdjudicationSummary``.
    adjudications: Any = None
    #: The rule's measured extraction error and the corrected figures (None without adjudications).
    extraction: Extraction | None = None
    #: Before → after for any design: per model and cell, the leaderboard, Kendall's τ, the pairs
    #: whose order flips (``keyaudit.engine.stats.design.DesignStats``).
    design: Any = None
    #: Every ruled sample with its verdict (None when the audit was built without them).
    samples: RuledSamples | None = None

    @property
    def verdicts_that_could_change_by_error(self) -> tuple[ModelAggregate, ...]:
        return tuple(a for a in self.aggregates if a.verdict_could_change_by_error)

    @property
    def verdict_changes(self) -> tuple[ModelAggregate, ...]:
        return tuple(a for a in self.aggregates if a.verdict_changed)

    @property
    def n_ruled_responses(self) -> int:
        return sum(m.n for m in self.models)

    @property
    def cell_summaries(self) -> tuple[CellSummary, ...]:
        """One row per ruled cell, in the order of :attr:`cells`."""
        rows = []
        for cell in self.cells:
            models = [m for m in self.models if (m.domain, m.level) == (cell.domain, cell.level)]
            if not models:
                continue
            rows.append(
                CellSummary(
                    rule=cell.rule,
                    domain=cell.domain,
                    level=cell.level,
                    n_keys=cell.n_keys,
                    n_items=cell.n_evaluated,
                    n_responses=sum(m.n_samples or m.n for m in models),
                    baseline_before=cell.baseline_before,
                    baseline_after=cell.baseline_after,
                    mean_before=math.fsum(m.strict for m in models) / len(models),
                    mean_after=math.fsum(m.structured for m in models) / len(models),
                    flips_up=sum(len(m.flips_up) for m in models),
                    flips_down=sum(len(m.flips_down) for m in models),
                    n_uncertain=sum(len(m.uncertain) for m in models),
                )
            )
        return tuple(rows)

    @property
    def n_uncertain(self) -> int:
        return sum(len(m.uncertain) for m in self.models)

    @property
    def verdicts_that_could_change(self) -> tuple[ModelAggregate, ...]:
        return tuple(a for a in self.aggregates if a.verdict_could_change)


def format_value(value: Any) -> str:
    """A ``[key]``/``[output]`` value as text: ``(B,A)`` for pairs, ``none`` for null."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "(" + ",".join(format_value(v) for v in value) + ")"
    return str(value)
