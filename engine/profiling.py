"""Stage times on stderr when ``KEYAUDIT_PROFILE=1``: where a long run spends its time.

:func:`mark` prints ``keyaudit profile: <stage>: <seconds since the previous mark> s (total
<seconds since the first mark> s, peak RSS <MB> MB)`` and costs nothing when the variable is
unset. Used by ``check`` and by ``bench/scale.py``. The report itself never changes.
"""

from __future__ import annotations

import os
import sys
import time

_last: list[float] = []


def enabled() -> bool:
    return os.environ.get("KEYAUDIT_PROFILE", "") not in ("", "0")


def mark(stage: str, detail: str = "") -> None:
    """End ``stage``: print its wall time (since the previous mark) if profiling is on."""
    if not enabled():
        return
    now = time.perf_counter()
    if not _last:
        _last.extend((now, now))
    elapsed, total = now - _last[1], now - _last[0]
    _last[1] = now
    try:
        import resource

        memory = f", peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB"
    except (ImportError, OSError):  # not POSIX
        memory = ""
    extra = f" [{detail}]" if detail else ""
    sys.stderr.write(
        f"keyaudit profile: {stage}: {elapsed:.2f} s (total {total:.2f} s{memory}){extra}\n"
    )
    sys.stderr.flush()
