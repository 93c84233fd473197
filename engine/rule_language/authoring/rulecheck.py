"""Prove a rule before it is used: its own examples, and its cell's own keys.

Examples run like doctests: each states a key, an answer, the expected verdict and reason, and
what should be extracted; any mismatch is reported and stops ``check``.

The keys check: every key, given as the answer to itself, must be accepted (a key no model could
ever match means the rule is too strict or the grammar misses a template); and for each distinct
key string, every other distinct string whose ``[key]`` values differ must be rejected when
given as its answer (otherwise the rule is too loose), and an answer that answers nothing
(:data:`NONSENSE`) must be rejected for every key. Keys that match no template are listed.
A cell with so many distinct keys that all pairs would exceed :data:`MAX_PAIRS` (compass_bearing
L5 has ~3,000: nine million pairs) checks each key against an even, deterministic sample of the
others instead, and says so (``exhaustive`` is false).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...load.answer_line import find_answer_line
from ..rules.rule import Example
from ..scoring.batch import judge_many
from ..scoring.scorer import Record, Scorer, Verdict, jsonable


@dataclass(frozen=True)
class ExampleResult:
    example: Example
    verdict: Verdict
    mismatches: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.mismatches


def _expected_value(value: Any) -> Any:
    """In an example's ``extract``, "" stands for null (TOML has no null)."""
    return None if value == "" else value


def run_examples(scorer: Scorer) -> list[ExampleResult]:
    """Score every example of the rule and compare with what it states."""
    results = []
    for example in scorer.rule.examples:
        verdict = scorer.score(example.key, example.response, certainty=False)
        mismatches = []
        if verdict.accept != example.accept:
            mismatches.append(
                f"verdict: expected {'accept' if example.accept else 'reject'}, got {'accept' if verdict.accept else 'reject'}"
            )
        if verdict.reason != example.reason:
            mismatches.append(f"reason: expected {example.reason!r}, got {verdict.reason!r}")
        for name, expected in example.extract.items():
            want = jsonable(_expected_value(expected))
            got = verdict.values.get(name)
            if got != want:
                mismatches.append(f"{name}: expected {want!r}, got {got!r}")
        if verdict.detail and mismatches:
            mismatches.append(f"detail: {verdict.detail}")
        results.append(ExampleResult(example, verdict, tuple(mismatches)))
    return results


#: Most (key, other key) pairs the keys check scores; beyond, each key meets an even sample.
MAX_PAIRS = 200_000
#: An answer that answers nothing: every key is also scored against it, and a rule that accepts
#: it is a failure (a rule whose only clause is ``true``, with ``[keys_check] accepts = "true"``,
#: passed every other part of the check).
NONSENSE = "\u2400"


@dataclass(frozen=True)
class KeyFailure:
    """One failure of the keys check: which key, which answer, what went wrong."""

    key: str
    answer: str
    problem: str
    reason: str = ""


@dataclass
class KeysCheck:
    """Result of the keys check over one cell's keys."""

    n_keys: int
    distinct: int
    unparsed: dict[str, str] = field(default_factory=dict)
    failures: list[KeyFailure] = field(default_factory=list)
    pairs_checked: int = 0
    #: Of those, the pairs the rule accepted because ``[keys_check] accepts`` says the other key
    #: is a right answer too (the rest were rejected, or are failures).
    pairs_accepted: int = 0
    #: False when the cell has so many distinct keys that each was checked against a sample.
    exhaustive: bool = True

    @property
    def passed(self) -> bool:
        return not self.failures and not self.unparsed


@dataclass
class KeysCheckPlan:
    """The keys check of one cell before any answer is scored: what to score, and what each
    verdict must be. Planning and judging are apart so that the pairs of several rules can be
    scored together, in worker processes (:func:`prove_rules` with ``jobs``)."""

    result: KeysCheck
    #: (key, answer line text) per verdict needed, in the order the failures are reported.
    pairs: list[tuple[str, str | None]] = field(default_factory=list)
    #: per pair: the other key given as the answer, or None for the key given as its own answer.
    others: list[str | None] = field(default_factory=list)
    #: per pair: whether the rule must accept it (its own key; another key only where the rule's
    #: ``[keys_check] accepts`` says that key is a right answer too).
    expected: list[bool] = field(default_factory=list)
    #: the positions of the probe pairs: each key against :data:`NONSENSE`, which no rule may
    #: accept (a rule whose clauses never reject passes every other part of the check when its
    #: ``[keys_check] accepts`` is true).
    probes: set[int] = field(default_factory=set)

    def finish(self, outcomes: Sequence[tuple[bool, str]]) -> KeysCheck:
        """The check's result, from the (accept, reason) of every pair."""
        result = self.result
        nonsense_accepted: list[str] = []
        for at, ((key, _line), other, expected, (accept, reason)) in enumerate(
            zip(self.pairs, self.others, self.expected, outcomes, strict=True)
        ):
            if at in self.probes:
                if accept:
                    nonsense_accepted.append(key)
                continue
            if other is None:
                if not accept:
                    result.failures.append(
                        KeyFailure(key, key, "a key given as its own answer is rejected", reason)
                    )
                continue
            result.pairs_checked += 1
            result.pairs_accepted += accept and expected
            if accept and not expected:
                result.failures.append(
                    KeyFailure(key, other, "a different key given as the answer is accepted")
                )
            elif expected and not accept:
                result.failures.append(
                    KeyFailure(
                        key, other, "a key that [keys_check] accepts as an answer is rejected", reason
                    )
                )
        if nonsense_accepted and len(nonsense_accepted) == len(self.probes):
            result.failures.append(
                KeyFailure(
                    nonsense_accepted[0],
                    NONSENSE,
                    f"the rule accepts every answer: {NONSENSE!r}, which answers nothing, is"
                    " accepted for every key (its clauses never reject)",
                )
            )
        else:
            result.failures += [
                KeyFailure(key, NONSENSE, f"{NONSENSE!r}, which answers nothing, is accepted")
                for key in nonsense_accepted
            ]
        return result


def plan_keys_check(scorer: Scorer, keys: Iterable[str], label: str | None = None) -> KeysCheckPlan:
    """The pairs the keys check of ``keys`` (all keys of the rule's cell, duplicates allowed)
    scores: each key as its own answer, and against the others with different ``[key]`` values."""
    fmt = scorer.rule.answer_format
    label = label or fmt.label
    all_keys = list(keys)
    distinct = sorted(set(all_keys))
    plan = KeysCheckPlan(KeysCheck(n_keys=len(all_keys), distinct=len(distinct)))
    parsed = {}
    for text in distinct:
        key = scorer.parse_key(text)
        if key.node is None:
            plan.result.unparsed[text] = key.error
        else:
            parsed[text] = key
    texts = list(parsed)
    per_key = len(texts) - 1
    if len(texts) * per_key > MAX_PAIRS:
        plan.result.exhaustive = False
        per_key = max(1, MAX_PAIRS // len(texts))

    def answer_line(answer: str) -> str | None:  # as Scorer.score finds it in "ANSWER: ..."
        line = find_answer_line(f"{label} {answer}", fmt.label, fmt.which)
        return None if line is None else line.text

    accepts = scorer.rule.keys_accept
    for position, text in enumerate(texts):
        key = parsed[text]
        plan.pairs.append((text, answer_line(text)))
        plan.others.append(None)
        plan.expected.append(True)
        plan.probes.add(len(plan.pairs))
        plan.pairs.append((text, answer_line(NONSENSE)))
        plan.others.append(None)
        plan.expected.append(False)
        for other_text in _others(texts, position, per_key):
            other = parsed[other_text]
            if other.target == key.target:
                continue
            plan.pairs.append((text, answer_line(other_text)))
            plan.others.append(other_text)
            plan.expected.append(
                accepts is not None
                and accepts.evaluate({"target": Record(key.target), "other": Record(other.target)})
                is True
            )
    return plan


def keys_check(scorer: Scorer, keys: Iterable[str], label: str | None = None) -> KeysCheck:
    """Run the keys check on ``keys`` (all keys of the rule's cell, duplicates allowed), in this
    process (:func:`~keyaudit.engine.audit.prove_rules` judges many rules' pairs at once)."""
    plan = plan_keys_check(scorer, keys, label)
    return plan.finish(judge_many([scorer], [(0, key, line) for key, line in plan.pairs]))


def _others(texts: list[str], position: int, count: int) -> list[str]:
    """``count`` other strings for the key at ``position``: all of them, or an even spread.

    The spread starts right after the key and steps evenly through the sorted list, so every key
    meets neighbours and far-away strings alike, and the choice is the same on every run.
    """
    n = len(texts)
    if count >= n - 1:
        return texts[:position] + texts[position + 1 :]
    step = (n - 1) / count
    return [texts[(position + 1 + int(i * step)) % n] for i in range(count)]
