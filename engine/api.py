"""The Python API's implementation: an audited rule used as a benchmark's scorer.

``import keyaudit`` exports these names (``api/__init__.py``); ``docs/api.md`` is their manual.
Nothing here scores by itself: a :class:`ScoringRule` holds one engine
:class:`~.rule_language.scoring.scorer.Scorer` and hands every answer to it (one answer:
:meth:`Scorer.score`; many: the batch scorer), so a verdict from the API, from ``keyaudit score``
and from the inspect_ai and lm-evaluation-harness integrations is the same verdict, field for
field (:meth:`Verdict.record` is what ``keyaudit score`` prints).

A rule is frozen by its version (:func:`~.stats.rule_version.rule_version`, the hash of the files
that decide its verdicts): ``load_rule(name, version=...)`` refuses a rule whose files changed,
so a benchmark that adopted a rule scores with the rule it audited, or not at all.

May import every stage below the orchestration: errors, load, rule_language, stats, reports.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import DataError, RuleError, UsageError, printable
from .load.benchmark import DEFAULT_ID_PATTERN, parse_item_id
from .load.locate import display_path, resolve_rule_path
from .load.timelimit import ID_SECONDS, time_limit
from .reports.card_text import figure_text, set_label
from .rule_language.rules.rule import load_rule as load_rule_file
from .rule_language.scoring.batch import score_many as score_batch
from .rule_language.scoring.scorer import Scorer
from .rule_language.scoring.scorer import Verdict as EngineVerdict
from .stats.rule_version import rule_version
from .stats.validation_card import CardEntry, card_status

__all__ = ["DEFAULT_ID_PATTERN", "Card", "CardSet", "ScoringRule", "Verdict", "image_of", "load_rule"]


@dataclass(frozen=True)
class Verdict:
    """One answer's verdict: accepted or not, why not, what the rule extracted, how sure it is.

    ``values`` are the rule's ``[output]`` values, JSON-ready (physical_stability: ``status``
    and ``joint``); ``reason`` is empty when accepted; ``uncertain`` lists why the verdict may
    be a misreading (empty: certain); ``answer`` is the text of the answer line the verdict was
    given on (None: the response has none); ``detail`` says more when there is something to say
    (a rule error's message, a key's parse error, why an output is null).
    """

    accept: bool
    reason: str
    values: dict[str, Any]
    uncertain: tuple[str, ...]
    answer: str | None
    detail: str
    #: The version of the rule that gave the verdict (``sha256:`` and 16 hex digits).
    rule_version: str

    @property
    def certain(self) -> bool:
        return not self.uncertain

    def record(self) -> dict[str, Any]:
        """The verdict as ``keyaudit score`` prints it (without ``id``): ``accept``, the output
        values, ``reason``, ``uncertain``, and ``detail`` when there is one."""
        record: dict[str, Any] = {"accept": self.accept, **self.values}
        record["reason"] = self.reason
        record["uncertain"] = list(self.uncertain)
        if self.detail:
            record["detail"] = self.detail
        return record


@dataclass(frozen=True)
class CardSet:
    """One labelled set of a validation card (or one split of it: ``rows``, ``all`` or a split's
    name such as ``holdout``): ``agree`` of ``cases`` accept verdicts agreed with the labels,
    measured on the rule's ``version`` (``unknown``: recorded before cards) and from ``source``
    (``measured`` or ``history``). ``written_by`` (``independent``, ``rule-author`` or
    ``unknown``) and ``tuning`` (``before`` or ``after`` tuning on it; ``unknown`` on a card of
    format 1) are what the person recording it declared."""

    name: str
    cases: int
    agree: int
    date: str
    version: str
    source: str
    rows: str = "all"
    written_by: str = "unknown"
    tuning: str = "unknown"

    @property
    def agreement(self) -> float:
        return self.agree / self.cases if self.cases else math.nan


@dataclass(frozen=True)
class Card:
    """A rule's validation card: its accept agreement on labelled sets, set by set.

    ``state`` is ``none`` (no card or no set), ``current`` (every set measured on the rule's
    files as they are now), ``history`` (some recorded before cards existed, none outdated) or
    ``changed`` (some set measured on other files than the rule's now: re-measure before
    trusting the figure). The headline — ``headline`` (the set, with its rows), ``cases``,
    ``agree``, ``agreement`` and its Wilson 95% interval ``low``–``high`` — is the **lowest**
    per-set figure among the sets declared written independently of the rule; with no such set
    (``independent`` false) they are all None, and ``figure`` (the sentence ``keyaudit check``
    prints) says so. Never a pooled figure.
    """

    rule: str
    path: str
    state: str
    #: The rule's version now, which ``state`` compares each set's version with.
    version: str
    independent: bool
    headline: str | None
    cases: int | None
    agree: int | None
    agreement: float | None
    low: float | None
    high: float | None
    figure: str
    sets: tuple[CardSet, ...]

    def summary(self) -> dict[str, Any]:
        """The card's figure as plain JSON-ready data (the integrations' score metadata)."""
        return {
            "state": self.state,
            "independent": self.independent,
            "headline": self.headline,
            "cases": self.cases,
            "agree": self.agree,
            "agreement": self.agreement,
            "low": self.low,
            "high": self.high,
            "figure": self.figure,
        }


class ScoringRule:
    """A rule loaded once, scoring (key, response) pairs exactly as ``keyaudit score`` does.

    Made by :func:`load_rule`. Keeps one engine scorer, whose bounded memo answers a repeated
    (key, answer line) pair at once. Every answer is scored within the bounds of ``check``
    (length cut, CPU time, outputs): a hostile answer gets a ``rule error`` verdict naming the
    limit, never an exception or an endless wait. CPU-time bounds hold in the main thread of a
    POSIX process (see ``docs/security-and-limits.md``).
    """

    def __init__(self, scorer: Scorer, version: str) -> None:
        self._scorer = scorer
        self._version = version

    @property
    def name(self) -> str:
        return self._scorer.rule.name

    @property
    def path(self) -> Path:
        return self._scorer.rule.path

    @property
    def version(self) -> str:
        """The hash of the files that decide the rule's verdicts (``sha256:`` + 16 hex digits)."""
        return self._version

    @property
    def outputs(self) -> tuple[str, ...]:
        """The names of the rule's ``[output]`` values, in file order."""
        return tuple(self._scorer.rule.outputs)

    def __repr__(self) -> str:
        return f"ScoringRule({self.name!r}, version={self._version!r})"

    def score(self, key: str, response: str) -> Verdict:
        """The verdict on a full response (its answer line is found here) against ``key``."""
        _require_text(key, "key")
        _require_text(response, "response")
        return self._public(self._scorer.score(key, response))

    def score_many(self, pairs: Iterable[tuple[str, str]], jobs: int = 1) -> list[Verdict]:
        """The verdicts on many ``(key, response)`` pairs, in order: each distinct (key, answer
        line) is scored once, in ``jobs`` worker processes when there are enough of them (the
        batch scorer of ``check``). The same verdicts as :meth:`score` on each pair."""
        work = []
        for n, pair in enumerate(pairs):
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"pair {n}: expected a (key, response) tuple")
            _require_text(pair[0], f"pair {n}: key")
            _require_text(pair[1], f"pair {n}: response")
            work.append((0, pair[0], pair[1]))
        if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
            raise TypeError("jobs must be a whole number of at least 1")
        return [self._public(v) for v in score_batch([self._scorer], work, jobs)]

    def card(self) -> Card:
        """The rule's validation card (``rules/cards/<name>.card.toml`` beside the rule), read
        now; a rule without one has ``state`` ``none``. A malformed card is a ``DataError``."""
        status = card_status(self._scorer.rule)
        head = status.headline
        low, high = head.interval if head is not None else (None, None)
        return Card(
            rule=status.rule,
            path=status.path,
            state=status.state,
            version=status.version_now,
            independent=head is not None,
            headline=None if head is None else set_label(head),
            cases=None if head is None else head.cases,
            agree=None if head is None else head.agree,
            agreement=None if head is None else head.agreement,
            low=low,
            high=high,
            figure=figure_text(status),
            sets=tuple(_card_set(e) for e in status.entries),
        )

    def _public(self, verdict: EngineVerdict) -> Verdict:
        return Verdict(
            accept=verdict.accept,
            reason=verdict.reason,
            values=dict(verdict.values),
            uncertain=verdict.uncertain,
            answer=verdict.answer_text,
            detail=verdict.detail,
            rule_version=self._version,
        )


def load_rule(rule: str | Path, *, version: str | None = None) -> ScoringRule:
    """Load a rule by bundled name (``"physical_stability"``) or by path, once.

    With ``version`` (a version this rule had when it was audited, as :attr:`ScoringRule.version`
    and ``keyaudit check`` show it), a rule whose files hash to anything else is refused: its
    verdicts are no longer the audited ones. Errors are :class:`~keyaudit.KeyauditError` with a
    one-line message naming the file (and line) where one is known.
    """
    if not isinstance(rule, (str, Path)):
        raise TypeError("rule must be a bundled rule's name or a path to a rule file")
    if version is not None and not isinstance(version, str):
        raise TypeError("version must be a string such as 'sha256:0123456789abcdef'")
    loaded = load_rule_file(resolve_rule_path(str(rule)))
    now = rule_version(loaded)
    if version is not None and version.strip() != now:
        raise RuleError(
            f"{display_path(loaded.path)}: the rule's files are version {now}, not the adopted"
            f" version {printable(version.strip()[:80])}: its verdicts may differ from the audited"
            " ones; re-audit it (keyaudit check) and adopt the new version, or restore the files"
        )
    return ScoringRule(Scorer(loaded), now)


def _require_text(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, not {type(value).__name__}")


def _card_set(entry: CardEntry) -> CardSet:
    return CardSet(
        name=entry.set,
        cases=entry.cases,
        agree=entry.agree,
        date=entry.date,
        version=entry.version,
        source=entry.source,
        rows=entry.rows,
        written_by=entry.written_by,
        tuning=entry.tuning,
    )



def image_of(item_id: str | int, id_pattern: str = DEFAULT_ID_PATTERN) -> str | None:
    """The image cluster (``<domain>_<image>``) an item id names by a benchmark's id pattern,
    as ``check``'s bootstrap clusters it; None when the id names none (the pattern does not match
    it, or it is longer than an id may be). The pattern runs within the id's CPU-time bound. A
    pattern that is not a regex with the groups ``domain``, ``image`` and ``level`` is a
    ``UsageError``."""
    pattern = _compiled_id_pattern(id_pattern)
    try:
        with time_limit(ID_SECONDS, "the id pattern"):
            return parse_item_id(str(item_id), pattern, "id", None).cluster
    except DataError:
        return None


@lru_cache(maxsize=16)
def _compiled_id_pattern(text: str) -> re.Pattern[str]:
    try:
        pattern = re.compile(text)
    except (re.error, OverflowError, RecursionError, ValueError) as error:
        raise UsageError(f"id_pattern is not a valid regex: {error}") from None
    missing = [g for g in ("domain", "image", "level") if g not in pattern.groupindex]
    if missing:
        raise UsageError(f"id_pattern lacks the named group(s) {', '.join(missing)}")
    return pattern
