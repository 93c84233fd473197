"""An engine-generated expression with a hand-written Python body beside it: a *native* step.

Why: a ``[[component]]``'s kind writes its checks as expressions of the rule language
(:mod:`..reading.components`), so ``--explain`` shows them and certainty reads them like any
clause; but the expression interpreter (closures or generated functions, :mod:`.codegen`) costs
several Python calls per operation. A native step keeps the expression — its ``source``,
``names`` and ``origin``, all the trace and certainty ever read — and evaluates it with a plain
Python function of the same meaning instead.

**Semantics.** The native function either returns the expression's value or raises; any
exception at all (a value of a type it does not expect, an unbound name) sends the evaluation to
the expression itself, from the start, which gives the value or the located error. So a native
function never has to produce an error, only to be right when it returns — exactly the contract
of the generated fast path. ``tests/test_native_kinds.py`` holds every native step of the bundled
rules to its expression on every labelled answer.

**Safety.** Only the engine makes native steps, for sources it generated itself from a kind; no
text of a rule file becomes one. What a rule file writes (its lets, requires, ``values``,
``when``, attributes) stays in the sandbox.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .expression import Expression

__all__ = ["NativeExpression", "Native", "plain"]

#: A native body: the expression's value for an environment, or any exception (then the
#: expression is evaluated instead).
Native = Callable[[Mapping[str, Any]], Any]


class NativeExpression(Expression):
    """An :class:`Expression` evaluated by a native function, with itself as the fallback."""

    __slots__ = ("native", "expression")

    def __init__(self, expression: Expression, native: Native) -> None:
        super().__init__(expression.source, expression.names, expression.origin, expression._evaluate)
        self.native = native
        #: The expression alone, as the rule language evaluates it (the reference).
        self.expression = expression

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        try:
            return self.native(env)
        except Exception:  # noqa: BLE001 - any surprise: the expression says what it is
            return self.expression.evaluate(env)

    def __repr__(self) -> str:
        return f"NativeExpression({self.source!r})"


def plain(expression: Expression) -> Expression:
    """``expression`` without its native body (itself when it has none): the reference the
    benchmark and the parity tests compare native steps with."""
    return expression.expression if isinstance(expression, NativeExpression) else expression
