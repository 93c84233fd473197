"""The inspect_ai scorer ``keyaudit/rule_scorer``: an audited rule scoring an inspect task.

In a task file::

    from keyaudit.integrations.inspect_ai import rule_scorer
    Task(dataset=..., solver=generate(), scorer=rule_scorer("physical_stability"))

and on an existing log, without touching it (a new file is written)::

    inspect score LOG.eval --scorer keyaudit/rule_scorer -S rule=physical_stability \\
        --output-file rescored.eval

inspect_ai finds the scorer by its package name: ``pyproject.toml`` declares this module under
the ``inspect_ai`` entry-point group as ``keyaudit``, and inspect_ai loads it when a name starts
with ``keyaudit/``. Each sample is scored exactly as ``keyaudit score`` scores the pair (the
sample's target as the key, ``output.completion`` as the response: its answer line is found the
same way), so the two agree verdict for verdict. The :class:`~inspect_ai.scorer.Score` carries
``C``/``I``, the answer line's text as ``answer``, the reason (``accepted`` when accepted) as
``explanation``, and metadata: the rule's output values, the uncertain reasons, the rule's name
and version, its validation card's figure and the sample's image cluster. Metrics: accuracy and
a standard error clustered by image (:func:`clustered_stderr`).
"""

from __future__ import annotations

try:
    from inspect_ai.scorer import (
        CORRECT,
        INCORRECT,
        Metric,
        SampleScore,
        Score,
        Scorer,
        Target,
        accuracy,
        metric,
        scorer,
    )
    from inspect_ai.solver import TaskState
except ImportError as error:  # pragma: no cover - exercised with inspect_ai hidden
    raise ImportError(
        "keyaudit's inspect_ai scorer needs inspect_ai: pip install 'keyaudit[inspect]'"
    ) from error

from keyaudit.engine.api import DEFAULT_ID_PATTERN, ScoringRule, image_of, load_rule
from keyaudit.engine.errors import DataError, printable
from keyaudit.engine.stats.analytic_se import clustered_mean_se

__all__ = ["clustered_stderr", "rule_scorer"]

#: The Score metadata field holding a sample's image cluster (None: its id names no image).
IMAGE = "image"


@metric
def clustered_stderr() -> Metric:
    """Standard error of the accuracy, clustered by image: samples whose ids name the same image
    (``Score.metadata["image"]``, set by :func:`rule_scorer`) form one cluster, a sample whose id
    names none is a cluster of its own (with no image at all it is the plain standard error)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [s.score.as_float() for s in scores]
        clusters = [_cluster(s) for s in scores]
        return clustered_mean_se(values, clusters)

    return compute


def _cluster(sample: SampleScore) -> tuple[str, object]:
    image = (sample.score.metadata or {}).get(IMAGE)
    return ("image", image) if isinstance(image, str) else ("sample", sample.sample_id)


@scorer(metrics=[accuracy(), clustered_stderr()])
def rule_scorer(
    rule: str, version: str | None = None, id_pattern: str = DEFAULT_ID_PATTERN
) -> Scorer:
    """Score each sample with a keyaudit rule, as ``keyaudit score`` does.

    Args:
        rule: A bundled rule's name (``physical_stability``) or a rule file's path.
        version: The rule version adopted (``sha256:…``, as ``keyaudit check`` shows it):
            a rule whose files hash otherwise is refused before any sample is scored.
        id_pattern: The benchmark's id pattern (groups ``domain``, ``image``, ``level``), which
            names each sample's image for the clustered standard error.
    """
    scoring = load_rule(rule, version=version)
    image_of(0, id_pattern)  # a bad pattern is refused now, not on the first sample
    card = scoring.card().summary()

    async def score(state: TaskState, target: Target) -> Score:
        return score_sample(scoring, card, id_pattern, state.sample_id, target, state.output.completion)

    return score


def score_sample(
    scoring: ScoringRule,
    card: dict,
    id_pattern: str,
    sample_id: str | int,
    target: Target,
    completion: str,
) -> Score:
    """The Score of one sample: its one target as the key, its completion as the response."""
    verdict = scoring.score(_key(target, sample_id), completion)
    metadata = {
        "values": verdict.values,
        "uncertain": list(verdict.uncertain),
        "rule": scoring.name,
        "rule_version": verdict.rule_version,
        "card": card,
        IMAGE: image_of(sample_id, id_pattern),
    }
    if verdict.detail:
        metadata["detail"] = verdict.detail
    return Score(
        value=CORRECT if verdict.accept else INCORRECT,
        answer=verdict.answer,
        explanation=verdict.reason or "accepted",
        metadata=metadata,
    )


def _key(target: Target, sample_id: str | int) -> str:
    """The key a sample is scored against: its target, which must be one string."""
    if len(target) != 1:
        shown = printable(str(sample_id)[:80])
        raise DataError(
            f"sample {shown}: the target holds {len(target)} strings; a keyaudit rule scores"
            " against one key"
        )
    return target[0]
