"""How one answer is read, in words: what ``keyaudit test-rule --explain`` prints and what each row
of the HTML page's verdict browser opens to, written once so the two cannot differ.

The claims the claim layer read (kind, words, polarity, value, subject), what each kind
concluded, the extracted values, each ``[[require]]`` clause with its outcome up to the first that
fails, and the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rule_language.scoring.scorer import Scorer
from .claim_text import claim_line

__all__ = ["Explanation", "explain_answer"]


#: Said in place of the claims when there are none to show.
NO_CLAIMS = "claims: (this rule does not use the claim layer, or the answer did not parse)"


@dataclass(frozen=True)
class Explanation:
    """One answer read by one rule: ``claims`` is None when the rule has no claim layer or the
    answer did not parse; ``why`` holds ``(mark, reason, check)`` per clause, mark ``pass``,
    ``FAIL`` or ``skip``."""

    claims: tuple[str, ...] | None
    kinds: tuple[str, ...]
    extracted: str
    why: tuple[tuple[str, str, str], ...]
    accept: bool
    reason: str
    detail: str

    @property
    def verdict_line(self) -> str:
        if self.accept:
            return "verdict: accept (every clause holds)"
        detail = f" — {self.detail}" if self.detail else ""
        return f"verdict: reject: {self.reason}{detail}"

    def lines(self) -> list[str]:
        """The explanation as ``--explain`` prints it after the key and the answer."""
        out = [NO_CLAIMS] if self.claims is None else [f"claims ({len(self.claims)}):"]
        out += [f"  {line}" for line in self.claims or ()]
        out += [f"  {line}" for line in self.kinds]
        out += [f"extracted: {self.extracted}", "why:"]
        out += [f"  {mark}  {reason}: {check}" for mark, reason, check in self.why]
        out.append(self.verdict_line)
        return out


def explain_answer(scorer: Scorer, key: str, text: str) -> Explanation:
    """How ``scorer`` reads the answer text ``text`` (the answer line after its label) for
    ``key``."""
    verdict, found = scorer.explain(key, text)
    claims = kinds = None
    if found is not None:
        claims = tuple(claim_line(c.describe()) for c in found.all_claims())
        kinds = tuple(
            f"→ {kind}: values {result.values!r}, denied {result.denied!r}"
            f"{', hedged' if result.hedged else ''}"
            for kind, result in found.kinds.items()
        )
    why = tuple(
        ("skip" if passed is None else ("pass" if passed else "FAIL"), r.reason, r.check.source)
        for r, passed in scorer.trace(key, text)
    )
    return Explanation(
        claims=claims,
        kinds=kinds or (),
        extracted=", ".join(f"{k}={v!r}" for k, v in verdict.values.items()),
        why=why,
        accept=verdict.accept,
        reason=verdict.reason,
        detail=verdict.detail,
    )
