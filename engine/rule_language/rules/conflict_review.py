"""A rule load refuses grammar rules whose reductions Lark hides, unless the rule file says why.

A shift/reduce conflict Lark resolves silently can make part of a grammar rule unreachable (see
:mod:`..reading.conflicts`). Issue 22 asks that this fail loudly at load with ``file:line``, not
only when an author thinks of running ``test-rule``. Some shifts are what the author meant (a
longer reading wins over a shorter one that would end a clause too early); the rule file then
names the grammar rule in its ``[reviewed_conflicts]`` table with the reason, which both silences
the error and documents the decision where the next reader of the rule looks::

    [reviewed_conflicts]
    explicit = "a joint read in the tail keeps going: 'B on A, not C on B' is one joint list"

A named rule that has no hidden reduction any more is refused too, so the table never outlives
the grammar it describes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...errors import RuleError, located
from ..reading.conflicts import GrammarNote

__all__ = ["TABLE", "check_reviewed_conflicts"]

#: The rule file's table: grammar rule name -> why Lark's shift is intended there.
TABLE = "reviewed_conflicts"
#: Longest reason kept (it is documentation, not data the engine reads).
MAX_REASON_CHARS = 2_000

#: ``error(name, message)``: a :class:`RuleError` located at the table's entry ``name`` (or
#: the table's header when ``name`` is None).
LocatedError = Callable[[str | None, str], RuleError]


def check_reviewed_conflicts(reviewed: Any, notes: Sequence[GrammarNote], rule_file: str, error: LocatedError) -> None:
    """Raise for the first hidden reduction of ``notes`` (the key and answer grammars') that
    ``reviewed`` does not name, or for an entry of ``reviewed`` that is malformed or names a rule
    with no hidden reduction. ``rule_file`` is how the message names the rule file."""
    if reviewed is None:
        reviewed = {}
    if not isinstance(reviewed, dict):
        raise error(None, f"[{TABLE}] must be a table: grammar rule name = \"why the shift is intended\"")
    for name, why in reviewed.items():
        if not isinstance(why, str) or not why.strip():
            raise error(name, f"[{TABLE}] {name} must be a non-empty string saying why the shift is intended")
        if len(why) > MAX_REASON_CHARS:
            raise error(name, f"[{TABLE}] {name} is {len(why):,} characters; the limit is {MAX_REASON_CHARS:,}")
    hidden = {note.rule for note in notes}
    for name in reviewed:
        if name not in hidden:
            raise error(name, f"[{TABLE}] names {name!r}, which has no hidden reduction in the key or answer grammar (remove it)")
    for note in notes:
        if note.rule not in reviewed:
            message = (
                f"shift/reduce conflict in rule {note.rule}: before {', '.join(note.terminals)} Lark "
                f"shifts, so that reduction of {note.rule} never happens there; rewrite the rule, or "
                f"if the shift is intended name it in [{TABLE}] of {rule_file} with why"
            )
            raise RuleError(located(note.path, note.line, None, message))
