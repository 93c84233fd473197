"""Hard time bounds for work whose cost depends on user patterns: one answer, one id.

A rule's grammar terminals and a benchmark's ``id_pattern`` are regular expressions run by
Python's backtracking engine, where a pattern such as ``(a|aa)+b`` takes exponential time on a
few dozen characters. Refusing such patterns when they load can only be heuristic, so keyaudit
bounds the *time* instead: the work is done under a CPU-time timer (``ITIMER_VIRTUAL``) whose
signal handler raises :class:`TimeLimitExceeded`. Python's regex engine checks for signals while
it backtracks, so even a catastrophic match is stopped; the caller turns the exception into a
verdict (``rule error``) or a one-line error naming the limit.

The timer counts CPU time, not wall time, so a busy machine does not turn a slow answer into a
time-out. Bounds apply in the main thread of a POSIX process; elsewhere (a worker thread,
Windows) the work runs unbounded, as signals cannot be used there.

:class:`TimeLimitExceeded` derives from ``BaseException`` so that a library's ``except
Exception`` cannot swallow it; if something does, the timer fires again every 50 ms until the
bounded block is left.
"""

from __future__ import annotations

import _signal
import signal
import threading

#: CPU seconds one answer may take to be scored (answer line, cleaning, parsing, the rule).
ANSWER_SECONDS = 2.0
#: CPU seconds the benchmark's ``id_pattern`` may take on one id.
ID_SECONDS = 1.0
_REFIRE = 0.05


class TimeLimitExceeded(BaseException):  # noqa: N818 - it is a limit, not an error of the code
    """Raised inside a bounded block when it runs longer than its limit."""

    def __init__(self, seconds: float, what: str) -> None:
        super().__init__(f"{what} took longer than the limit of {seconds:g} s of CPU time")
        self.seconds = seconds
        self.what = what


class _State:
    active: tuple[float, str] | None = None


_state = _State()


def available() -> bool:
    """Whether bounds can be enforced here (main thread, POSIX interval timers)."""
    return (
        hasattr(signal, "setitimer")
        and hasattr(signal, "SIGVTALRM")
        and threading.current_thread() is threading.main_thread()
    )


def _expired(signum: int, frame: object) -> None:
    active = _state.active
    if active is None:
        return
    signal.setitimer(signal.ITIMER_VIRTUAL, _REFIRE)  # again, should this one be swallowed
    raise TimeLimitExceeded(*active)


class time_limit:  # noqa: N801 - used as a function: ``with time_limit(2.0, "scoring"):``
    """Run the block with at most ``seconds`` of CPU time, else raise :class:`TimeLimitExceeded`.

    Nested blocks run under the outermost bound. Where bounds are unavailable, the block simply
    runs. A class, not a generator-based context manager, and the handler read through
    ``_signal`` (``signal.getsignal`` converts it to an enum, which cost more than the timer):
    it brackets every answer scored, so its few microseconds count.
    """

    __slots__ = ("seconds", "what", "bounded", "previous", "resident")

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.bounded = False

    def __enter__(self) -> None:
        if _state.active is not None or not available():
            return
        # keyaudit's handler stays installed once set where nobody else had one (it does
        # nothing outside a bounded block): two signal() calls per answer would cost more than
        # the timer.
        previous = _signal.getsignal(signal.SIGVTALRM)
        self.previous = previous
        self.resident = previous in (signal.SIG_DFL, None, _expired)
        if previous is not _expired:
            signal.signal(signal.SIGVTALRM, _expired)
        _state.active = (self.seconds, self.what)
        self.bounded = True
        signal.setitimer(signal.ITIMER_VIRTUAL, self.seconds)

    def __exit__(self, *exc: object) -> None:
        if not self.bounded:
            return
        self.bounded = False
        _state.active = None
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        if not self.resident:
            signal.signal(signal.SIGVTALRM, self.previous)


class ItemClock:
    """Bounds each item of a long loop of tiny items at near-zero cost per item.

    ``with ItemClock(seconds, what) as clock:`` arms one repeating timer for the whole loop; each
    item is bracketed by :meth:`start` and :meth:`stop` (two attribute writes). The timer ticks
    every quarter of the limit; an item still running after four ticks raises
    :class:`TimeLimitExceeded` (so an item is stopped after between one and one and a quarter
    limits). Where bounds are unavailable, it does nothing.
    """

    TICKS = 4

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.count = 0
        self.running = False
        self._seen = -1
        self._strikes = 0
        self._previous: object = None
        self._armed = False

    def start(self) -> None:
        self.count += 1
        self.running = True

    def stop(self) -> None:
        self.running = False

    def _tick(self, signum: int, frame: object) -> None:
        if not self.running or self.count != self._seen:
            self._seen, self._strikes = self.count, 0
            return
        self._strikes += 1
        if self._strikes >= self.TICKS:
            self._strikes = 0
            raise TimeLimitExceeded(self.seconds, self.what)

    def __enter__(self) -> ItemClock:
        self.running, self._seen, self._strikes = False, -1, 0
        if _state.active is None and available():
            self._previous = signal.signal(signal.SIGVTALRM, self._tick)
            interval = self.seconds / self.TICKS
            signal.setitimer(signal.ITIMER_VIRTUAL, interval, interval)
            _state.active = (self.seconds, self.what)
            self._armed = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.running = False
        if self._armed:
            _state.active = None
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, self._previous)  # type: ignore[arg-type]
            self._armed = False
