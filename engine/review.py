"""The review queue and adjudications: the verdicts a person should check, and their labels.

``keyaudit review`` scores every response of the ruled cells and writes, for a person to label,
every *uncertain* verdict (see :mod:`~keyaudit.engine.rule_language.certainty`) and a seeded
random sample of *certain* ones — the sample is what estimates the rule's error rate where it
claims to be sure. ``check --adjudications`` reads the labelled file back (:mod:`.load.adjudications`),
checks every row still names a response with the same key and answer line, and lets the labels
overrule the rule, with provenance (:class:`AdjudicationSummary`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import DataError, located
from .load.adjudications import Adjudication
from .load.answer_line import find_answer_line
from .load.benchmark import Benchmark, Response
from .rule_language.batch import score_many
from .rule_language.rule import Rule
from .rule_language.scoring import Scorer, Verdict, jsonable
from .stats.wilson import wilson_interval


@dataclass(frozen=True)
class ReviewRow:
    """One response to label, with what the rule read and decided."""

    id: str
    model: str
    epoch: int
    key: str
    answer_line: str | None
    extracted: dict
    verdict: str
    uncertain: tuple[str, ...]
    selected: str  # "uncertain" or "sample"


@dataclass(frozen=True)
class AdjudicationSummary:
    """What the labels did: how many applied, how many overturned the rule, and the error rate
    of the rule's *certain* verdicts estimated from the random sample (Wilson interval)."""

    source: str
    applied: int
    overturned: int
    uncertain_labelled: int
    uncertain_overturned: int
    sample_n: int
    sample_errors: int
    error_rate_ci: tuple[float, float]

    @property
    def error_rate(self) -> float:
        return self.sample_errors / self.sample_n if self.sample_n else float("nan")


def answer_line_of(scorer: Scorer, text: str) -> str | None:
    """The answer line as a person sees it (the stripped line that holds the label)."""
    fmt = scorer.rule.answer_format
    found = find_answer_line(text, fmt.label, fmt.which)
    if found is None:
        return None
    return text.splitlines()[found.line_number - 1].strip()


def _ruled(benchmark: Benchmark, rules: Sequence[Rule], scorers: Sequence[Scorer]):
    by_cell = {(c.domain, c.level): s for r, s in zip(rules, scorers, strict=True) for c in r.cells}
    for r in sorted(benchmark.responses, key=lambda r: (r.model, r.id, r.epoch)):
        scorer = by_cell.get((r.ref.domain, r.ref.level))
        if scorer is not None:
            yield r, scorer


def review_queue(
    benchmark: Benchmark,
    rules: Sequence[Rule],
    sample: int,
    seed: int,
    scorers: Sequence[Scorer] | None = None,
    jobs: int = 1,
) -> list[ReviewRow]:
    """Every uncertain verdict of the ruled cells, then ``sample`` certain ones drawn with
    ``seed`` (the same inputs and seed give the same file, for any ``jobs``: the processes that
    score, see :func:`~.rule_language.batch.score_many`)."""
    if sample < 0:
        raise DataError("--sample must be 0 or more")
    scorers = list(scorers) if scorers is not None else [Scorer(rule) for rule in rules]
    uncertain: list[ReviewRow] = []
    certain: list[ReviewRow] = []
    ruled = list(_ruled(benchmark, rules, scorers))
    position = {id(s): i for i, s in enumerate(scorers)}
    work = [(position[id(s)], benchmark.keys[r.id].answer, r.text) for r, s in ruled]
    for (response, scorer), verdict in zip(ruled, score_many(scorers, work, jobs), strict=True):
        row = _row(benchmark, response, scorer, verdict)
        (uncertain if verdict.uncertain else certain).append(row)
    drawn = random.Random(seed).sample(certain, min(sample, len(certain)))
    drawn.sort(key=lambda row: (row.model, row.id, row.epoch))
    return uncertain + [
        ReviewRow(**{**row.__dict__, "selected": "sample"}) for row in drawn
    ]


def _row(benchmark: Benchmark, response: Response, scorer: Scorer, verdict: Verdict) -> ReviewRow:
    return ReviewRow(
        id=response.id,
        model=response.model,
        epoch=response.epoch,
        key=benchmark.keys[response.id].answer,
        answer_line=answer_line_of(scorer, response.text),
        extracted={k: jsonable(v) for k, v in verdict.values.items()},
        verdict="accept" if verdict.accept else f"reject: {verdict.reason}",
        uncertain=verdict.uncertain,
        selected="uncertain" if verdict.uncertain else "certain",
    )


def match_adjudications(
    benchmark: Benchmark,
    rules: Sequence[Rule],
    scorers: Sequence[Scorer],
    rows: Sequence[Adjudication],
) -> dict[tuple[str, str, int], Adjudication]:
    """Check every labelled row against the benchmark: the response must exist in a ruled cell,
    with the same key and the same answer line as when it was reviewed. Any mismatch is an error
    naming the row: a label must never silently apply to a different answer."""
    index = {(r.model, r.id, r.epoch): (r, s) for r, s in _ruled(benchmark, rules, scorers)}
    matched: dict[tuple[str, str, int], Adjudication] = {}
    for row in rows:
        found = index.get((row.model, row.id, row.epoch))
        if found is None:
            raise DataError(
                located(row.path, row.line, None,
                        f"no response of model {row.model!r} to {row.id!r} (epoch {row.epoch}) in the ruled cells")
            )
        response, scorer = found
        if benchmark.keys[response.id].answer != row.key:
            raise DataError(located(row.path, row.line, None, f"the key of {row.id!r} changed since review"))
        if answer_line_of(scorer, response.text) != row.answer_line:
            raise DataError(
                located(row.path, row.line, None, f"the answer of {row.model!r} to {row.id!r} changed since review")
            )
        matched[(row.model, row.id, row.epoch)] = row
    return matched


def summarize_adjudications(
    source: Path, matched: dict[tuple[str, str, int], Adjudication], verdicts: dict, confidence: float
) -> AdjudicationSummary:
    """Provenance of the labels against the rule's own verdicts (``verdicts`` by (model, id, epoch))."""
    applied = overturned = unc = unc_over = sample_n = sample_err = 0
    for ident, row in matched.items():
        verdict = verdicts[ident]
        applied += 1
        differs = verdict.accept != row.accept
        overturned += differs
        if verdict.uncertain:
            unc += 1
            unc_over += differs
        elif row.selected == "sample":
            sample_n += 1
            sample_err += differs
    return AdjudicationSummary(
        str(source), applied, overturned, unc, unc_over, sample_n, sample_err,
        wilson_interval(sample_err, sample_n, confidence),
    )
