"""keyaudit's Python API: an audited rule used as a benchmark's scorer (manual: docs/api.md).

    import keyaudit

    rule = keyaudit.load_rule("physical_stability")       # a bundled name or a path, once
    verdict = rule.score(key, response)                     # as ``keyaudit score`` scores it
    verdict.accept, verdict.values, verdict.reason, verdict.uncertain, verdict.rule_version
    rule.card().figure                                      # its validation card

The names below are the stable API. They are imported when first used (PEP 562), so
``import keyaudit`` costs nothing and the command line, which lives in ``keyaudit.cli``, never
loads what it does not need. This package is the ``api/`` folder of the repository; the
implementation is :mod:`keyaudit.engine.api`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keyaudit.engine.api import Card, CardSet, ScoringRule, Verdict, image_of, load_rule
    from keyaudit.engine.errors import DataError, KeyauditError, RuleError, UsageError

__all__ = [
    "Card",
    "CardSet",
    "DataError",
    "KeyauditError",
    "RuleError",
    "ScoringRule",
    "UsageError",
    "Verdict",
    "image_of",
    "load_rule",
]

_HOME = {
    "Card": "keyaudit.engine.api",
    "CardSet": "keyaudit.engine.api",
    "ScoringRule": "keyaudit.engine.api",
    "Verdict": "keyaudit.engine.api",
    "load_rule": "keyaudit.engine.api",
    "image_of": "keyaudit.engine.api",
    "DataError": "keyaudit.engine.errors",
    "KeyauditError": "keyaudit.engine.errors",
    "RuleError": "keyaudit.engine.errors",
    "UsageError": "keyaudit.engine.errors",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'keyaudit' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
