"""The bounds every rule expression evaluation is held to, and the budget that enforces them.

An expression runs once per answer, on text a model wrote, so its cost must not depend on what a
rule author (or a hostile rule file) can make it do. Each evaluation gets a :class:`Budget` of
:data:`MAX_STEPS` steps; every operation is charged *before* it runs by the size of what it
touches:

* a comprehension: one step per item;
* a built-in function or operator that reads a whole value: its elements and characters, nested
  lists counted in full (``unique``, ``sum``, ``min``, ``count``, ``in``, ``==`` on lists or
  strings...; ``sorted`` ``log2(n)`` times over); ``find`` the text its node spans; functions
  that read a bounded amount (``len``, ``first``, ``abs``...) are free;
* every list, tuple or string built: its length.

Values are bounded too. A list or tuple built holds at most :data:`MAX_ITEMS` elements and a string
at most :data:`MAX_CHARS` characters (checked in O(1) when built). A value read in full, and every
``[output]`` value, holds at most :data:`MAX_SIZE` elements and characters counted at every depth
(a list holding one 100,000-element list 100,000 times is 10^10, not 2 × 10^5: sharing makes it
cheap to build, not to read), nested at most :data:`MAX_DEPTH` deep; an integer lies within 64
bits (:data:`MIN_INT` to :data:`MAX_INT`). Since everything built is charged, one evaluation
never allocates more than :data:`MAX_STEPS` elements and characters in all.

Exceeding any of these raises :class:`LimitError` (an ``ExpressionError``) naming the limit; during
scoring the answer gets the verdict **rule error** with that message. Nothing here depends on
time, so the verdict is the same on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...errors import ExpressionError

#: Steps (items and elements/characters touched or built) one evaluation may use.
MAX_STEPS = 1_000_000
#: Longest list or tuple an expression may build.
MAX_ITEMS = 100_000
#: Longest string an expression may build.
MAX_CHARS = 100_000
#: Largest total size of one value: elements and characters at every depth, shared parts counted
#: each time they appear.
MAX_SIZE = 1_000_000
#: Deepest nesting of lists and tuples in one value.
MAX_DEPTH = 32
#: Integers are 64-bit.
MAX_INT = 2**63 - 1
MIN_INT = -(2**63)
#: ``round(x, n)``: the most decimals either way (a float has at most ~330 meaningful ones).
MAX_ROUND_DIGITS = 400


#: Element types whose size is more than one.
_NESTED = frozenset({str, list, tuple})


class LimitError(ExpressionError):
    """An evaluation exceeded one of the bounds above; the message names it."""


def check_int(value: Any) -> Any:
    """``value`` unchanged, or :class:`LimitError` if it is an int outside 64 bits."""
    if type(value) is int and not MIN_INT <= value <= MAX_INT:
        raise LimitError(
            f"integer result of {value.bit_length()} bits; integers are limited to 64 bits"
        )
    return value


class Budget:
    """The steps left to one evaluation, and the sizes of the values it has measured."""

    __slots__ = ("left", "_sizes")

    def __init__(self, steps: int = MAX_STEPS) -> None:
        self.left = steps
        #: id(value) -> (value, size, depth); the value is kept so its id is not reused.
        self._sizes: dict[int, tuple[Any, int, int]] | None = None

    def charge(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            self.left = 0
            raise LimitError(
                f"evaluation exceeds {MAX_STEPS:,} steps (comprehension items, and elements and "
                "characters that functions and operators touch or build)"
            )

    def size(self, value: Any) -> int:
        """The total size of ``value`` (1 for a scalar or node, the length of a string, 1 plus
        the sizes of the elements of a list or tuple), measured once per value and charged."""
        kind = type(value)
        if kind is str:
            return len(value) or 1
        if kind is not list and kind is not tuple:
            return 1
        return self._measure(value)[0]

    def _measure(self, value: list | tuple, level: int = 1) -> tuple[int, int]:
        if not _NESTED.intersection(map(type, value)):  # flat: no walk, nothing to remember
            self.charge(len(value))
            return len(value) + 1, 1
        if self._sizes is None:
            self._sizes = {}
        known = self._sizes.get(id(value))
        if known is not None and known[0] is value:
            return known[1], known[2]
        if level > MAX_DEPTH:
            raise LimitError(f"a value nested deeper than {MAX_DEPTH} levels")
        self.charge(len(value))
        total, depth = 1, 1
        for item in value:
            kind = type(item)
            if kind is str:
                total += len(item) or 1
            elif kind is list or kind is tuple:
                inner, inner_depth = self._measure(item, level + 1)
                total += inner
                if inner_depth >= depth:
                    depth = inner_depth + 1
                    if depth > MAX_DEPTH:
                        raise LimitError(f"a value nested deeper than {MAX_DEPTH} levels")
            else:
                total += 1
            if total > MAX_SIZE:
                raise LimitError(
                    f"a value larger than {MAX_SIZE:,} elements and characters in all "
                    "(nested lists counted in full)"
                )
        self._sizes[id(value)] = (value, total, depth)
        return total, depth

    def built(self, value: Any) -> Any:
        """Charge and check a list, tuple or string an operation has just built (O(1))."""
        kind = type(value)
        if kind is str:
            if len(value) > MAX_CHARS:
                raise LimitError(f"string of {len(value)} characters; the limit is {MAX_CHARS}")
            self.charge(len(value))
        elif kind is list or kind is tuple:
            if len(value) > MAX_ITEMS:
                raise LimitError(f"result has {len(value)} elements; the limit is {MAX_ITEMS}")
            self.charge(len(value))
        return value

    def reading(self, value: Any) -> int:
        """Steps to read all of ``value`` (0 for a scalar)."""
        kind = type(value)
        if kind is str:
            return len(value)
        if kind is list or kind is tuple:
            return self._measure(value)[0]
        return 0

    def comparing(self, a: Any, b: Any) -> None:
        """Charge ``a == b`` (or ``<``...): at most the smaller of the two is read."""
        ka, kb = type(a), type(b)
        if (ka is list or ka is tuple or ka is str) and (kb is list or kb is tuple or kb is str):
            self.charge(min(self.reading(a), self.reading(b)))


def log2_factor(n: int) -> int:
    """Comparisons per element of a sort of ``n`` elements."""
    return max(1, math.ceil(math.log2(n + 1)))


def budgeted(evaluate: Callable[[Any], Any], env: Any, budget: Budget) -> Any:
    """Run ``evaluate(env)`` with ``budget`` full (the closures of one compiled expression share
    one :class:`Budget`); an evaluation of the same expression inside it (a derived attribute
    read again on another node) gets a full budget too, and the outer one's is restored after."""
    saved = budget.left, budget._sizes
    budget.left, budget._sizes = MAX_STEPS, None
    try:
        return evaluate(env)
    finally:
        budget.left, budget._sizes = saved
