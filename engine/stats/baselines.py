"""Constant-answer baselines of a cell, before (strict scorer) and after (a rule).

A cell's *baseline* is the accuracy of the best answer a model could give to every item without
looking at the image. The adjusted score subtracts it, so it must be computed with the same scorer
as the accuracy it adjusts:

* **strict baseline** (every cell, "before"): :func:`keyaudit.engine.stats.metrics.strict_baseline` of
  the keys of the cell's *evaluated* items (items at least one model was evaluated on): the share of
  the most frequent normalised key string.
* **rule baseline** (ruled cells, "after"): the best accuracy over candidate constant answers, where
  the candidates are the distinct key strings of the evaluated items. Each candidate is given as
  ``<label> <key>`` (e.g. ``ANSWER: stable; after removing block C, ...``) and scored by the rule
  against every evaluated item's key; the baseline is the largest number of acceptances divided by
  the number of evaluated items. On the bundled example's physical_stability L5 cell the rule only
  checks the status for stable keys, so any stable key string is accepted on all 26 stable items:
  26/50 = 52%, against 8/50 = 16% for the strict scorer.

Why key strings as candidates: they are answers the rule is guaranteed to understand (the keys
check proves every key is accepted as its own answer), they cover every value the rule compares
(every status, every joint), and the set is finite and data-derived, so the baseline needs no
hand-written list of "obvious" answers. A cleverer constant (a phrasing that matches several keys at
once) would have to be accepted by the rule for keys with different ``[key]`` values, which the
keys check rejects as too loose. Ties between candidates are broken by the candidate string, so the
reported best answer is deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..errors import DataError
from ..load.answer_line import find_answer_line
from ..rule_language.scoring.scorer import Scorer
from .metrics import strict_baseline

__all__ = ["RuleBaseline", "rule_baseline", "rule_baselines", "strict_baselines"]


@dataclass(frozen=True)
class RuleBaseline:
    """The rule baseline of one cell: the best constant answer and how many items it gets right.

    ``candidates`` lists every candidate key string with its number of acceptances, best first
    (ties in string order).
    """

    accuracy: float
    correct: int
    n: int
    best_answer: str
    candidates: tuple[tuple[str, int], ...]


def rule_baseline(scorer: Scorer, keys: Sequence[str]) -> RuleBaseline:
    """Rule baseline over ``keys``, the keys of the cell's evaluated items (duplicates counted).

    Each distinct candidate is scored once per group of keys that every answer scores alike
    (:func:`_key_groups`), so the cost is candidates × groups, not (items)².
    """
    (base,) = rule_baselines([(scorer, keys)])
    return base


#: Judges ``(cell index, key, answer line text or None)`` items: ``(accept, reason)`` each, in
#: order, as ``Scorer.score_line(key, line, certainty=False)`` (``batch.judge_many``).
Judge = Callable[[list[tuple[int, str, "str | None"]]], Sequence[tuple[bool, str]]]


def rule_baselines(
    cells: Sequence[tuple[Scorer, Sequence[str]]], judge: Judge | None = None
) -> list[RuleBaseline]:
    """:func:`rule_baseline` of each ``(scorer, keys)``, with every (candidate, key group) pair
    of every cell judged in one call of ``judge`` (in worker processes when the caller's judge
    uses them: at full size the pairs number about 100,000). Without ``judge`` each pair is
    scored here. The candidate ``<label> <key>`` is read as a stored response is: its answer
    line is found, and the line's text judged."""
    if any(not keys for _, keys in cells):
        raise DataError("cannot compute a constant-answer baseline for a cell with no keys")
    plans = []
    items: list[tuple[int, str, str | None]] = []
    for index, (scorer, keys) in enumerate(cells):
        fmt = scorer.rule.answer_format
        counts = Counter(keys)
        distinct = sorted(counts)
        groups = _key_groups(scorer, counts)
        for candidate in distinct:
            found = find_answer_line(f"{fmt.label} {candidate}", fmt.label, fmt.which)
            line = None if found is None else found.text
            items.extend((index, key, line) for key, _ in groups)
        plans.append((distinct, groups, len(keys)))
    if judge is None:
        scorers = [scorer for scorer, _ in cells]
        judged: Sequence[tuple[bool, str]] = [
            (v.accept, v.reason)
            for v in (scorers[i].score_line(key, line, certainty=False) for i, key, line in items)
        ]
    else:
        judged = judge(items)
    at = 0
    out = []
    for distinct, groups, n_keys in plans:
        scored = []
        for candidate in distinct:
            correct = sum(n for (_, n), (accept, _) in zip(groups, judged[at:at + len(groups)], strict=True) if accept)
            at += len(groups)
            scored.append((candidate, correct))
        scored.sort(key=lambda item: (-item[1], item[0]))
        best, correct = scored[0]
        out.append(RuleBaseline(correct / n_keys, correct, n_keys, best, tuple(scored)))
    return out


def _key_groups(scorer: Scorer, counts: Counter) -> list[tuple[str, int]]:
    """(representative key, number of items) per group of keys that every answer scores alike.

    When no expression reads the key node itself (:attr:`Rule.reads_key_node`), a verdict depends
    on a key only through its ``[key]`` values and ``[claims]`` target, so keys sharing them form
    one group: compass_bearing L5's 2,992 distinct keys are 5 letters, and the baseline costs
    candidates × groups scorings instead of candidates × keys (9 million at full size). A key that
    matches no template, or any key of a rule that reads ``key``, is its own group.
    """
    if scorer.rule.reads_key_node:
        return sorted(counts.items())
    groups: dict[object, list] = {}
    for key in sorted(counts):
        parsed = scorer.parse_key(key)
        signature = (
            ("values", repr(sorted(parsed.target.items())), repr(parsed.claims_target))
            if parsed.node is not None
            else ("unparsed", key)
        )
        group = groups.setdefault(signature, [key, 0])
        group[1] += counts[key]
    return [(key, n) for key, n in groups.values()]


def strict_baselines(
    cell_keys: Iterable[tuple[tuple[str, int], str]],
) -> dict[tuple[str, int], float]:
    """``{(domain, level): strict baseline}`` from ``((domain, level), key)`` pairs of evaluated items."""
    by_cell: dict[tuple[str, int], list[str]] = {}
    for cell, key in cell_keys:
        by_cell.setdefault(cell, []).append(key)
    return {cell: strict_baseline(keys) for cell, keys in sorted(by_cell.items())}
