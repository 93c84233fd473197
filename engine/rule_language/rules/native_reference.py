"""A loaded rule with its component steps' native bodies taken off: every expression evaluated by
the rule language alone, as before native kinds. The reference the native steps are measured
against (``bench/native_kinds.py``) and held to (``tests/test_native_kinds.py``), in one process."""

from __future__ import annotations

from dataclasses import replace

from ..expressions.native import plain
from .rule import Requirement, Rule

__all__ = ["without_natives"]


def without_natives(rule: Rule) -> Rule:
    """``rule`` with each native step replaced by its expression (a copy; ``rule`` unchanged)."""
    return replace(
        rule,
        lets=tuple((name, plain(e)) for name, e in rule.lets),
        requirements=tuple(
            Requirement(r.reason, plain(r.check), None if r.when is None else plain(r.when), r.explain)
            for r in rule.requirements
        ),
        outputs={name: plain(e) for name, e in rule.outputs.items()},
        attributes={kind: {name: plain(e) for name, e in table.items()} for kind, table in rule.attributes.items()},
    )
