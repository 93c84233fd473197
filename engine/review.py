"""The review queue and adjudications: the verdicts a person should check, and their labels.

``keyaudit review`` scores every response of the ruled cells and writes, for a person to label,
every *uncertain* verdict (see :mod:`~keyaudit.engine.rule_language.reading.certainty`) and a seeded
random sample of *certain* ones — the sample is what estimates the rule's error rate where it
claims to be sure. ``check --adjudications`` reads the labelled file back (:mod:`.load.adjudications`),
checks every row still names a response with the same key and answer line, and lets the labels
overrule the rule, with provenance (:class:`AdjudicationSummary`).

The random sample is verifiable: every ``sample`` row records the draw (:class:`Draw`: seed,
sample size, the ruled cells, and the size and SHA-256 of the population of certain verdicts it
was drawn from).
``check`` recomputes the population from the rule's own verdicts, draws again, and refuses a row
marked ``sample`` that the draw did not pick, or a sample whose population is no longer the one
it was drawn from — the error rate is estimated only from rows really drawn at random.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import DataError, located
from .load.adjudications import Adjudication, Draw
from .load.answer_line import find_answer_line
from .load.benchmark import Benchmark
from .load.items import Response
from .rule_language.rules.rule import Rule
from .rule_language.scoring.scorer import Scorer, Verdict, jsonable
from .stats.wilson import wilson_interval
from .verdict_cache import score_cached


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
    #: The draw a ``sample`` row came from; None on an uncertain row.
    draw: Draw | None = None


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


Identity = tuple[str, str, int]  # (model, id, epoch)


def population_digest(population: Sequence[Identity]) -> str:
    """SHA-256 of the certain verdicts a sample is drawn from, in drawing order: each identity
    length-prefixed (``len:model len:id epoch;``), so no text can imitate another split; hashed
    in chunks, so a population of millions is never one big string."""
    digest = hashlib.sha256()
    for start in range(0, len(population), 10_000):
        digest.update(
            "".join(
                f"{len(model)}:{model}{len(item)}:{item}{epoch};"
                for model, item, epoch in population[start : start + 10_000]
            ).encode("utf-8", "surrogatepass")
        )
    return digest.hexdigest()


def draw_sample(
    population: Sequence[Identity], size: int, seed: int, cells: Sequence[tuple[str, int]]
) -> tuple[Draw, list[int]]:
    """The draw of ``size`` (at most the population) of ``population`` (the certain verdicts of
    ``cells``, in (model, id, epoch) order) with ``seed``, and the positions drawn. ``review``
    writes the draw; ``check`` draws again from its record to verify the sample."""
    size = min(size, len(population))
    picked = random.Random(seed).sample(range(len(population)), size)
    cells = tuple(sorted(set(cells)))
    return Draw(seed, size, len(population), cells, population_digest(population)), picked


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
    score, see :func:`~.rule_language.scoring.batch.score_many`)."""
    if sample < 0:
        raise DataError("--sample must be 0 or more")
    scorers = list(scorers) if scorers is not None else [Scorer(rule) for rule in rules]
    uncertain: list[ReviewRow] = []
    certain: list[ReviewRow] = []
    ruled = list(_ruled(benchmark, rules, scorers))
    position = {id(s): i for i, s in enumerate(scorers)}
    work = [(position[id(s)], benchmark.keys[r.id].answer, r.text) for r, s in ruled]
    for (response, scorer), verdict in zip(ruled, score_cached(scorers, work, jobs), strict=True):
        row = _row(benchmark, response, scorer, verdict)
        (uncertain if verdict.uncertain else certain).append(row)
    cells = [(c.domain, c.level) for rule in rules for c in rule.cells]
    draw, picked = draw_sample([(r.model, r.id, r.epoch) for r in certain], sample, seed, cells)
    drawn = sorted((certain[i] for i in picked), key=lambda row: (row.model, row.id, row.epoch))
    return uncertain + [
        ReviewRow(**{**row.__dict__, "selected": "sample", "draw": draw}) for row in drawn
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


class Matched(dict):
    """The labels by (model, id, epoch), as :func:`match_adjudications` found them, and the
    ruled responses of the cells the random sample was drawn from (None: no sample row), for
    :func:`verify_sample`."""

    drawn_cells: frozenset[Identity] | None = None


def match_adjudications(
    benchmark: Benchmark,
    rules: Sequence[Rule],
    scorers: Sequence[Scorer],
    rows: Sequence[Adjudication],
) -> Matched:
    """Check every labelled row against the benchmark: the response must exist in a ruled cell,
    with the same key and the same answer line as when it was reviewed. Any mismatch is an error
    naming the row: a label must never silently apply to a different answer."""
    index = {(r.model, r.id, r.epoch): (r, s) for r, s in _ruled(benchmark, rules, scorers)}
    matched = Matched()
    draw = next((row.draw for row in rows if row.draw is not None), None)
    if draw is not None:
        cells = set(draw.cells)
        matched.drawn_cells = frozenset(
            ident for ident, (r, _) in index.items() if (r.ref.domain, r.ref.level) in cells
        )
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


def verify_sample(matched: dict[Identity, Adjudication], verdicts: dict) -> None:
    """Refuse any row marked ``sample`` that the review's draw did not pick: the population of
    certain verdicts is recomputed from the rule's own ``verdicts`` (every ruled response, by
    (model, id, epoch)) and must be the one drawn from (same size and SHA-256); the draw is then
    made again from the recorded seed and size. An error names the first offending row."""
    sampled = [row for row in matched.values() if row.selected == "sample"]
    if not sampled:
        return
    first = min(sampled, key=lambda row: row.line)
    draw = first.draw
    if draw is None:  # pragma: no cover - read_adjudications refuses a sample row without one
        raise DataError(located(first.path, first.line, None, "a 'sample' row without its 'draw'"))
    within = getattr(matched, "drawn_cells", None)
    population = sorted(
        ident for ident, verdict in verdicts.items()
        if not verdict.uncertain and (within is None or ident in within)
    )
    if len(population) != draw.population or population_digest(population) != draw.sha256:
        raise DataError(
            located(
                first.path, first.line, None,
                f"the random sample cannot be verified: it was drawn from {draw.population:,} "
                f"certain verdicts and the rule now gives {len(population):,}"
                f"{'' if len(population) != draw.population else ' others'} (the rule, the "
                "responses or --epochs changed since review); run keyaudit review again, or "
                "clear 'selected' on the sample rows to apply their labels without an error rate",
            )
        )
    _, picked = draw_sample(population, draw.sample, draw.seed, draw.cells)
    drawn = {population[i] for i in picked}
    for row in sorted(sampled, key=lambda row: row.line):
        if (row.model, row.id, row.epoch) not in drawn:
            raise DataError(
                located(
                    row.path, row.line, None,
                    f"marked 'selected: sample' but not drawn at random (seed {draw.seed}, "
                    f"{draw.sample:,} of {draw.population:,} certain verdicts): only rows the "
                    "draw picked count as the random sample; clear 'selected' to apply the "
                    "label without counting it",
                )
            )


def summarize_adjudications(
    source: Path, matched: dict[tuple[str, str, int], Adjudication], verdicts: dict, confidence: float
) -> AdjudicationSummary:
    """Provenance of the labels against the rule's own verdicts (``verdicts`` by (model, id,
    epoch), every ruled response), after :func:`verify_sample` has checked the random sample."""
    verify_sample(matched, verdicts)
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
