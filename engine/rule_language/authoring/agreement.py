"""How far a rule agrees with labelled cases (``keyaudit test-rule --cases``), and why it differs.

Labels come from people (or helpers) who read the rule's written semantics, never its grammar, so
agreement on them is the honest measure of a rule on phrasings nobody tuned it to. Each
disagreement carries what the rule extracted and, for rules on the claim layer, every claim it
read, so an author sees at once whether a phrase was missed, mis-scoped or mis-attributed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...load.casefile import Case
from ..scoring.scorer import Scorer


@dataclass(frozen=True)
class Disagreement:
    """One labelled case the rule decided differently."""

    id: Any
    key: str
    answer: str | None
    label_accept: bool
    label_reason: str | None
    accept: bool
    reason: str
    values: dict[str, Any]
    claims: tuple[dict[str, Any], ...]


@dataclass
class Agreement:
    """Accept agreement over labelled cases, its confusion table and per-reason counts."""

    n: int = 0
    agree: int = 0
    reason_agree: int = 0
    reason_labelled: int = 0
    #: (label accept, rule accept) → count.
    confusion: Counter = field(default_factory=Counter)
    #: The rule's reason ("" = accepted) → count.
    reasons: Counter = field(default_factory=Counter)
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else 0.0


def measure_agreement(scorer: Scorer, cases: Iterable[Case]) -> Agreement:
    """Score every labelled case and compare with its label (``accept``, and ``reason`` if given).

    A case counts as a disagreement when the accept verdict differs, or when it carries a
    reason label and the rule gives another reason.
    """
    result = Agreement()
    for case in cases:
        verdict = scorer.score(case.key, case.response)
        result.n += 1
        result.reasons[verdict.reason] += 1
        result.confusion[(bool(case.accept), verdict.accept)] += 1
        accept_ok = verdict.accept == case.accept
        result.agree += accept_ok
        reason_ok = True
        if case.reason is not None:
            result.reason_labelled += 1
            reason_ok = verdict.reason == case.reason
            result.reason_agree += reason_ok and accept_ok
        if accept_ok and reason_ok:
            continue
        claims: tuple[dict[str, Any], ...] = ()
        if verdict.answer_text is not None:
            _, found = scorer.explain(case.key, verdict.answer_text)
            if found is not None:
                claims = tuple(c.describe() for c in found.all_claims())
        result.disagreements.append(
            Disagreement(
                case.id,
                case.key,
                verdict.answer_text,
                bool(case.accept),
                case.reason,
                verdict.accept,
                verdict.reason,
                dict(verdict.values),
                claims,
            )
        )
    return result
