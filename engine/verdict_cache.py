"""A cache of verdicts across runs: an answer line a rule has scored once is not scored again.

A maintainer tuning a rule re-runs ``check`` many times over stored responses that have not
changed; every run scored them all again (issue 38). A verdict depends only on

* the rule's files — its ``.toml``, its grammars and every grammar they import
  (:func:`~keyaudit.engine.stats.rule_version.rule_version`);
* the code that scores (:func:`~keyaudit.engine.rule_language.scoring.fingerprint.engine_fingerprint`),
  Lark's version and Python's;
* the key and the answer line (for a rejection for something missing, also the conclusion the
  certainty reads, scored as its own item; for the rule baselines, each candidate answer judged
  against each group of keys, without certainty);

so each rule version has one entry, ``verdicts/<hash>.verdicts`` in the private cache folder
(:mod:`keyaudit.engine.load.safe_io`: the same rules as the key, parser and proof caches —
``$KEYAUDIT_CACHE_DIR``, ``off`` turns it off; nothing is read from a folder another user can
write). The entry maps ``(phase, key, answer line)`` to the verdict as plain data (and each answer
text to its cleaned form, which decides which answers are the same item)
(:mod:`marshal`: it builds only plain values and cannot run code), sealed by its SHA-256 and
checked by shape when used; anything odd is a miss and the answer is scored again.

What is never stored: a verdict reached at a limit (the CPU-time bound, Python's recursion limit,
memory), since another run on another machine may finish it, and a certainty doubt that says
judging it hit a limit. So a warm run gives what a cold run gives, byte for byte.

Bounds: at most :data:`MAX_ANSWERS` answers per rule version and :data:`MAX_ENTRY_BYTES` per
entry, the most recently used kept (a run's own answers first, then older ones in the order they
were last used); at most :data:`KEEP` entries (rule versions), the least recently used removed.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import lark

from .load.safe_io import PrivateDir, read_sealed, seal
from .rule_language.rules.rule import RULE_ERROR
from .rule_language.scoring.batch import MISS, Work, judge_many, score_many
from .rule_language.scoring.fingerprint import engine_fingerprint
from .rule_language.scoring.scorer import LIMIT_DOUBT_ENDINGS, Scorer, conclusion_doubt_text
from .rule_language.scoring.verdict_list import VerdictList
from .stats.rule_version import rule_version

__all__ = ["VerdictCache", "judge_cached", "score_cached"]

FORMAT = "verdicts-v1"
FOLDER = "verdicts"
#: Rule versions kept (most recently used first).
KEEP = 32
#: Entries (verdicts and cleaned answer texts) kept per rule version: a 2.5 M-response benchmark
#: has ~170,000 distinct answer lines over its 11 rules.
MAX_ANSWERS = 250_000
#: Largest entry read or written (bytes).
MAX_ENTRY_BYTES = 96 << 20
_SUFFIX = ".verdicts"
#: The phases whose values are cached, each by its own tag: answer lines, conclusions, and the
#: pairs judged without certainty (the keys check's and the rule baselines', ``judge_many``).
PHASES = {"line": "l", "conclusion": "c", "judge": "j"}


def score_cached(
    scorers: Sequence[Scorer], work: Iterable[Work], jobs: int = 1, stats: dict | None = None
) -> VerdictList:
    """:func:`~.rule_language.scoring.batch.score_many` answered from the verdict cache where it
    can, what it scored written back (a run of ``check`` or ``review``)."""
    cache = VerdictCache.open(scorers)
    verdicts = score_many(scorers, work, jobs, stats, cache)
    if cache is not None:
        cache.save()
    return verdicts


def judge_cached(
    scorers: Sequence[Scorer], items: Sequence[tuple[int, str, str | None]], jobs: int = 1
) -> list[tuple[bool, str]]:
    """:func:`~.rule_language.scoring.batch.judge_many` answered from the verdict cache where it
    can (the rule baselines' pairs: about 100,000 at full size, the same on every run)."""
    cache = VerdictCache.open(scorers)
    judged = judge_many(scorers, items, jobs, cache)
    if cache is not None:
        cache.save()
    return judged


def cacheable(phase: str, value: Any) -> bool:
    """Whether ``value`` (a line verdict as plain data, or a conclusion's doubt) may be stored:
    never one reached at a limit (see the module docstring)."""
    if phase == "conclusion":
        return value is None or value == conclusion_doubt_text(True)
    if phase == "judge":
        return value[1] != RULE_ERROR
    accept, reason, _values, _text, _detail, uncertain = value
    return reason != RULE_ERROR and not any(u.endswith(LIMIT_DOUBT_ENDINGS) for u in uncertain)


class _RuleEntry:
    """One rule version's answers: those read from the cache folder and those of this run."""

    def __init__(self, name: str, key: str) -> None:
        self.name = name
        self.key = key
        self.old: dict[tuple[str, str, str | None], Any] | None = None  # read when first asked
        #: This run's answers (hits and new ones), in the order they were used.
        self.used: dict[tuple[str, str, str | None], Any] = {}
        self.new = 0


class VerdictCache:
    """The verdict cache for one run's scorers (see the module docstring). :meth:`lookup` and
    :meth:`remember` are called per phase by the batch scorer; :meth:`save` writes what is new."""

    def __init__(self, scorers: Sequence[Scorer]) -> None:
        self.entries: list[_RuleEntry | None] = [_rule_entry(s) for s in scorers]

    @classmethod
    def open(cls, scorers: Sequence[Scorer]) -> VerdictCache | None:
        """The cache for these scorers, or None when caching is off or unsupported."""
        folder = PrivateDir.open(FOLDER)
        if folder is None:
            return None
        folder.close()
        return cls(scorers)

    def lookup(self, phase: str, items: Sequence[tuple[int, str, Any]]) -> list[Any]:
        """Each item's cached value, or :data:`MISS`."""
        tag = PHASES[phase]
        out = []
        for i, key, text in items:
            entry = self.entries[i]
            if entry is None:
                out.append(MISS)
                continue
            ident = (tag, key, text)
            value = entry.used.get(ident, MISS)
            if value is MISS:
                value = self._old(entry).get(ident, MISS)
                if value is not MISS and not _shaped(phase, value):
                    value = MISS
                if value is not MISS:
                    entry.used[ident] = value
            out.append(value)
        return out

    def remember(self, phase: str, items: Sequence[tuple[int, str, Any]], values: Sequence[Any]) -> None:
        """Keep the values scored this run (those that may be stored) for :meth:`save`."""
        tag = PHASES[phase]
        for (i, key, text), value in zip(items, values, strict=True):
            entry = self.entries[i]
            if entry is not None and cacheable(phase, value):
                entry.used[(tag, key, text)] = value
                entry.new += 1

    def cleaned(self, i: int, text: str) -> str | None:
        """The cleaned form of one of ``scorers[i]``'s answer texts, if stored."""
        entry = self.entries[i]
        if entry is None:
            return None
        ident = ("n", "", text)
        value = entry.used.get(ident)
        if value is None:
            value = self._old(entry).get(ident)
            if type(value) is not str:
                return None
            entry.used[ident] = value
        return value

    def remember_cleaned(self, i: int, text: str, cleaned: str) -> None:
        """Keep the cleaned form of an answer text for :meth:`save`."""
        entry = self.entries[i]
        if entry is not None:
            entry.used[("n", "", text)] = cleaned
            entry.new += 1

    def save(self) -> None:
        """Write each rule version's entry that has new answers; mark the others as used.
        Failures are ignored (the cache is only an optimisation)."""
        folder = PrivateDir.open(FOLDER)
        if folder is None:
            return
        with folder:
            for entry in self.entries:
                if entry is None or not entry.used:
                    continue
                if not entry.new:
                    folder.touch(entry.name)
                    continue
                kept = dict(entry.used)
                for ident, value in (entry.old or {}).items():
                    if len(kept) >= MAX_ANSWERS:
                        break
                    kept.setdefault(ident, value)
                data = _sealed(entry.key, kept)
                if data is not None:
                    folder.write(entry.name, data)
            folder.prune(lambda name: name.endswith(_SUFFIX), KEEP)

    def _old(self, entry: _RuleEntry) -> dict:
        if entry.old is None:
            entry.old = _read(entry)
        return entry.old


def _rule_entry(scorer: Scorer) -> _RuleEntry | None:
    """The entry of ``scorer``'s rule version; None for a rule that has no files (built in
    memory: there is nothing to version it by)."""
    if scorer.rule.path is None:
        return None
    engine = f"{engine_fingerprint()}\0{lark.__version__}\0{sys.version_info[:2]}"
    key = hashlib.sha256(f"{FORMAT}\0{engine}\0{rule_version(scorer.rule)}".encode()).hexdigest()
    return _RuleEntry(key[:40] + _SUFFIX, key)


def _read(entry: _RuleEntry) -> dict:
    """The stored answers of ``entry`` (empty on any miss or damage)."""
    payload = read_sealed(FOLDER, entry.name, FORMAT, entry.key, MAX_ENTRY_BYTES)
    if payload is None:
        return {}
    try:
        stored = marshal.loads(payload)
    except Exception:  # noqa: BLE001 - any damage is a miss
        return {}
    return stored if type(stored) is dict else {}


def _sealed(key: str, kept: dict) -> bytes | None:
    """The entry's bytes, the newest answers kept until it fits :data:`MAX_ENTRY_BYTES`."""
    while kept:
        try:
            data = seal(FORMAT, key, marshal.dumps(kept))
        except (ValueError, TypeError):
            return None
        if len(data) <= MAX_ENTRY_BYTES:
            return data
        kept = dict(list(kept.items())[: len(kept) // 2])
    return None


def _shaped(phase: str, value: Any) -> bool:
    """Whether a stored value has exactly the shape this phase's values have."""
    if phase == "conclusion":
        return value is None or type(value) is str
    if phase == "judge":
        return type(value) is tuple and len(value) == 2 and type(value[0]) is bool and type(value[1]) is str
    if type(value) is not tuple or len(value) != 6:
        return False
    accept, reason, values, text, detail, uncertain = value
    return (
        type(accept) is bool
        and type(reason) is str
        and type(values) is dict
        and all(type(k) is str for k in values)
        and (text is None or type(text) is str)
        and type(detail) is str
        and type(uncertain) is tuple
        and all(type(u) is str for u in uncertain)
    )
