"""Score many stored responses: each distinct answer once, in worker processes when it pays.

:func:`score_many` gives every ``(rule, key, response)`` the verdict :meth:`Scorer.score` gives,
but does the work once per distinct *work item*:

1. **answer lines**: each response's answer line is found and cleaned here; the distinct
   ``(rule, key, cleaned line)`` triples are scored once (:meth:`Scorer.score_line`), in order of
   first appearance, and each verdict is mapped back to every response that has that triple (with
   the response's own ``answer_text``);
2. **conclusions**: a rejection for something missing also reads the response's conclusion (the
   line before the answer line, and the answer line); the distinct ``(rule, key, cleaned
   conclusion)`` triples not already scored in step 1 are scored once the same way.

With ``jobs > 1`` and at least :func:`parallel_threshold` distinct items, the items are scored in
``jobs`` worker processes: fresh interpreters (never a fork of a process whose numba threads may
be running), which receive only the rule files' paths and chunks of plain ``(rule index, key,
text)`` tuples; each loads the rules itself.

**Answers at the time limit.** After :data:`~.answer_limits.MAX_SLOW_ANSWERS` answers of a rule
exceed the per-answer CPU limit, the rule's remaining answers are **rule error** ("not scored").
That count is kept here, in work-item order (answer lines, then conclusions): an item after the
fifth slow one gets the "not scored" verdict whatever a worker returned, so the cut falls on the
same item for any number of workers, as with ``--jobs 1``. (A worker stops trying after five
slow answers of its own; its items all come later in that order, so it never skips an item the
count would have tried.) Which answers exceed the limit depends on CPU speed and load, with or
without workers.

Errors: a :class:`KeyauditError` in a worker (a rule file that changed and no longer loads) is
raised here as it was raised there; a worker that dies (killed, out of memory) is a
:class:`KeyauditError` saying so. Either way the CLI prints one line and exits 2.
"""

from __future__ import annotations

import contextlib
import marshal
import math
import os
import select
import struct
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import DataError, ExpressionError, KeyauditError, RuleError, UsageError
from ..load.answer_line import find_answer_line
from .answer_limits import MAX_SLOW_ANSWERS, cut_answer
from .scoring import (
    Scorer,
    Verdict,
    clean_answer,
    conclusion_doubt_text,
    conclusion_of,
    needs_conclusion,
    with_doubt,
)

#: Below this many distinct work items scoring stays in this process. Measured on the 2-core
#: reference machine: starting two workers (a fresh interpreter each, imports, the rules'
#: grammars, cold caches) costs about 1.3-1.6 s (the example's 1,339 items: 0.4 s in process, 2.0 s
#: with two workers), and one core scores about 2,000-3,000 items/s, so two workers repay their
#: start from roughly 5,000-8,000 items. ``KEYAUDIT_PARALLEL_MIN`` overrides it (tests set 0).
PARALLEL_MIN_ITEMS = 5000
#: Chunks per worker: enough to balance uneven items, few enough to keep messages cheap.
CHUNKS_PER_JOB = 4


class WorkerError(KeyauditError):
    """A scoring worker process died (killed, out of memory) before it returned."""


def default_jobs() -> int:
    """The cores this process may run on (its affinity mask), else ``os.cpu_count()``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def parallel_threshold() -> int:
    """Distinct work items from which workers are used (``KEYAUDIT_PARALLEL_MIN`` overrides)."""
    value = os.environ.get("KEYAUDIT_PARALLEL_MIN", "")
    return int(value) if value.isascii() and value.isdigit() else PARALLEL_MIN_ITEMS


#: What a response contributes: the index of its scorer, the key, the full response text.
Work = tuple[int, str, str]


def score_many(
    scorers: Sequence[Scorer], work: Sequence[Work], jobs: int = 1, stats: dict | None = None
) -> list[Verdict]:
    """The verdicts ``scorers[i].score(key, text)`` for every ``(i, key, text)`` of ``work``, in
    order (see the module docstring). ``stats``, when given, receives the counts of responses and
    distinct work items and whether workers were used."""
    fmts = [s.rule.answer_format for s in scorers]
    # Step 1: the distinct (scorer, key, cleaned line) items; None stands for "no answer line".
    index: dict[tuple[int, str, str | None], int] = {}
    items: list[tuple[int, str, str | None]] = []
    own: list[tuple[int, str | None]] = []  # per response: its item, its cut answer text
    for i, key, text in work:
        fmt = fmts[i]
        line = find_answer_line(text, fmt.label, fmt.which)
        raw = None if line is None else cut_answer(line.text)
        ident = (i, key, None if raw is None else clean_answer(raw, fmt))
        at = index.get(ident)
        if at is None:
            at = index[ident] = len(items)
            items.append((i, key, raw))
        own.append((at, raw))
    pool = _Pool(scorers, jobs, len(items))
    try:
        verdicts = pool.run("line", items)
        results = []
        for at, raw in own:
            verdict = verdicts[at]
            if verdict.answer_text != raw:
                verdict = replace(verdict, answer_text=raw)
            results.append(verdict)
        # Step 2: conclusions of rejections for something missing, each distinct one once.
        seconds: dict[tuple[int, str, str], int] = {}
        second_items: list[tuple[int, str, str]] = []
        wanted: list[tuple[int, Any]] = []  # (response, item index, or the doubt known from step 1)
        for n, ((i, key, text), verdict) in enumerate(zip(work, results, strict=True)):
            if not needs_conclusion(verdict):
                continue
            conclusion = conclusion_of(text, verdict.answer_text)
            if not conclusion:
                continue
            cleaned = clean_answer(conclusion, fmts[i])
            known = index.get((i, key, cleaned))
            if known is not None:
                wanted.append((n, (conclusion_doubt_text(verdicts[known].accept),)))
                continue
            ident = (i, key, cleaned)
            at = seconds.get(ident)
            if at is None:
                at = seconds[ident] = len(second_items)
                second_items.append((i, key, conclusion))
            wanted.append((n, at))
        doubts = pool.run("conclusion", second_items) if second_items else []
    finally:
        pool.close()
    for n, found in wanted:
        doubt = found[0] if isinstance(found, tuple) else doubts[found]
        if doubt:
            results[n] = with_doubt(results[n], doubt)
    if stats is not None:
        stats.update(
            responses=len(work),
            line_items=len(items),
            conclusion_items=len(second_items),
            workers=pool.count,
            worker_peak_mb=pool.peak_kb / 1024,
        )
    return results


def judge_many(
    scorers: Sequence[Scorer], items: Sequence[tuple[int, str, str | None]], jobs: int = 1
) -> list[tuple[bool, str]]:
    """``(accept, reason)`` of ``scorers[i].score_line(key, line, certainty=False)`` for every
    ``(i, key, line)`` of ``items``, in order: the keys check's pairs, in workers when it pays."""
    pool = _Pool(scorers, jobs, len(items))
    try:
        return pool.run("judge", items)
    finally:
        pool.close()


class _Pool:
    """Scores work items in order, in this process or in worker processes, keeping the count of
    answers at the time limit per scorer in item order."""

    def __init__(self, scorers: Sequence[Scorer], jobs: int, size: int) -> None:
        self.scorers = scorers
        self.workers: list[_Worker] = []
        #: The largest peak RSS (KiB) a worker reported.
        self.peak_kb = 0
        paths = [s.rule.path for s in scorers]
        if jobs > 1 and size >= max(parallel_threshold(), 1) and all(paths):
            setup = ([str(p) for p in paths], [s.slow_answers for s in scorers])
            try:
                for _ in range(jobs):
                    self.workers.append(_Worker(setup))
            except BaseException:
                self.close()
                raise
        self.count = len(self.workers)

    def run(self, phase: str, items: Sequence[tuple[int, str, Any]]) -> list[Any]:
        if not self.workers:
            return [value for value, _ in _score_items(self.scorers, phase, items)]
        size = max(64, math.ceil(len(items) / (len(self.workers) * CHUNKS_PER_JOB)))
        chunks = [items[at : at + size] for at in range(0, len(items), size)]
        done: list[list | None] = [None] * len(chunks)
        waiting = list(range(len(chunks)))[::-1]  # chunks go out in order
        busy: dict[int, tuple[_Worker, int]] = {}
        for worker in self.workers:
            if waiting:
                chunk = waiting.pop()
                worker.send((phase, chunks[chunk]))
                busy[worker.fileno()] = (worker, chunk)
        while busy:
            ready, _, _ = select.select(list(busy), [], [])
            for fd in ready:
                worker, chunk = busy.pop(fd)
                done[chunk], peak = worker.receive(phase)
                self.peak_kb = max(self.peak_kb, peak)
                if waiting:
                    chunk = waiting.pop()
                    worker.send((phase, chunks[chunk]))
                    busy[fd] = (worker, chunk)
        outcomes = [outcome for part in done for outcome in part or ()]
        return self._in_order(phase, items, outcomes)

    def _in_order(self, phase: str, items, outcomes) -> list[Any]:
        """Workers' results with the time-limit count applied in item order (this process's
        scorers keep it): after MAX_SLOW_ANSWERS slow answers of a scorer, its later items are
        not scored, whatever a worker computed for them."""
        results = []
        for (i, _key, text), (value, slow) in zip(items, outcomes, strict=True):
            scorer = self.scorers[i]
            if scorer.slow_answers >= MAX_SLOW_ANSWERS:
                if phase == "line":
                    value = scorer.not_scored(text)
                elif phase == "judge":
                    value = (False, scorer.not_scored(text).reason)
                else:
                    value = None
            elif slow:
                scorer.slow_answers += 1
            results.append(value)
        return results

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        self.workers = []


def _score_items(scorers: Sequence[Scorer], phase: str, items) -> list[tuple[Any, bool]]:
    """Score items with ``scorers``: ``(verdict, slow)`` per answer line, ``((accept, reason),
    slow)`` per pair judged, ``(doubt or None, slow)`` per conclusion; ``slow`` tells whether the
    item exceeded the time limit."""
    out: list[tuple[Any, bool]] = []
    for i, key, text in items:
        scorer = scorers[i]
        before = scorer.slow_answers
        if phase == "line":
            value: Any = scorer.score_line(key, text)
        elif phase == "judge":
            verdict = scorer.score_line(key, text, certainty=False)
            value = (verdict.accept, verdict.reason)
        else:
            value = scorer.conclusion_doubt(key, text)
        out.append((value, scorer.slow_answers > before))
    return out


# ---- worker processes -------------------------------------------------------------------------
#
# A worker is ``python -c 'from keyaudit.engine.rule_language.batch import worker_main; ...'``: a
# fresh interpreter that imports only the rule language (no numba, no CLI, and never the caller's
# main module, which multiprocessing's spawn and forkserver would run again in every worker). It
# talks over its stdin and stdout in length-prefixed ``marshal`` data (plain tuples, strings and
# numbers: reading it cannot run code, and no keyaudit module unpickles anything):
# first the rule files' paths and the time-limit counts, then one chunk at a time, each answered
# before the next is sent (so neither side can block the other). Its stderr goes to a private
# temporary file, quoted (last line) if it dies.

_HEADER = struct.Struct("!Q")
_ERRORS = {cls.__name__: cls for cls in (DataError, RuleError, ExpressionError, UsageError)}


def _write(stream, value: Any) -> None:
    data = marshal.dumps(value)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read(stream) -> Any:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return marshal.loads(data)


#: The worker's start: ``-I`` (isolated mode) keeps the current folder, ``PYTHONPATH`` and the
#: user's site folder off ``sys.path``, so a ``lark.py`` or ``keyaudit/`` in the folder the user
#: stands in (a downloaded benchmark, say) is never imported. The parent's own import folders are
#: then added back by ``site.addsitedir`` (which also runs their ``.pth`` hooks: an editable or
#: ``--user`` install of keyaudit still imports), minus the current folder and ``''``.
_WORKER_CODE = (
    "import sys, site\n"
    "for folder in sys.argv[1:]:\n"
    "    if folder not in sys.path:\n"
    "        site.addsitedir(folder)\n"
    "from keyaudit.engine.rule_language.batch import worker_main\n"
    "worker_main()\n"
)


def worker_command() -> list[str]:
    """The command that starts a worker: isolated, with the parent's import folders but never the
    current folder (see ``_WORKER_CODE``)."""
    here = os.path.realpath(os.getcwd())
    folders = [
        folder
        for folder in sys.path
        if folder and os.path.isabs(folder) and os.path.realpath(folder) != here
    ]
    return [sys.executable, "-I", "-c", _WORKER_CODE, *folders]


class _Worker:
    def __init__(self, setup: tuple[list[str], list[int]]) -> None:
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        try:
            self.process = subprocess.Popen(
                worker_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.errors,
                close_fds=True,
            )
        except OSError as error:
            self.errors.close()
            raise WorkerError(
                f"cannot start a scoring worker process ({error.strerror or error}); rerun with "
                "--jobs 1 to score in one process"
            ) from None
        self.send(setup)

    def fileno(self) -> int:
        return self.process.stdout.fileno()

    def send(self, message: Any) -> None:
        try:
            _write(self.process.stdin, message)
        except (BrokenPipeError, OSError):
            self._died()

    def receive(self, phase: str) -> tuple[list, int]:
        try:
            status, *payload = _read(self.process.stdout)
        except (EOFError, OSError, ValueError, TypeError):
            self._died()
        if status == "ok":
            outcomes, peak = payload
            if phase == "line":  # answer lines: verdicts as tuples
                outcomes = [(Verdict(*value), slow) for value, slow in outcomes]
            return outcomes, peak
        kind, message = payload
        if kind in _ERRORS:
            raise _ERRORS[kind](message)
        if kind == "KeyauditError":
            raise KeyauditError(message)
        raise RuntimeError(f"{kind} in a scoring worker: {message}")

    def _died(self) -> None:
        code = self.process.wait()
        self.errors.seek(0)
        lines = self.errors.read().decode("utf-8", "replace").strip().splitlines()
        why = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        last = f": {lines[-1]}" if lines else ""
        raise WorkerError(
            f"a scoring worker process stopped unexpectedly ({why}{last}); rerun with --jobs 1 "
            "to score in one process"
        )

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.errors.close()


def worker_main() -> None:
    """A worker's loop: load the rules, then answer each chunk (see above)."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write into the answer pipe
    _exit_with_parent()
    try:
        paths, start = _read(source)
    except EOFError:
        return
    scorers: list[Scorer] | None = None
    failure: tuple[str, str] | None = None
    try:
        from .rule import load_rule

        scorers = [Scorer(load_rule(Path(p))) for p in paths]
        for scorer, count in zip(scorers, start, strict=True):
            scorer.slow_answers = count
    except Exception as error:  # reported with the first chunk, as the parent would raise it
        failure = _describe(error)
    while True:
        try:
            phase, items = _read(source)
        except EOFError:
            return
        if failure is not None:
            _write(sink, ("error", *failure))
            continue
        try:
            outcomes = _score_items(scorers, phase, items)
        except Exception as error:
            _write(sink, ("error", *_describe(error)))
            continue
        if phase == "line":
            outcomes = [(_verdict_tuple(v), slow) for v, slow in outcomes]
        _write(sink, ("ok", outcomes, _peak_kb()))


def _exit_with_parent(poll_seconds: float = 0.2) -> None:
    """End this worker within ``poll_seconds`` of its parent's death (a SIGTERM or SIGKILL of
    the parent closes no pipe a worker busy on a chunk would notice): a daemon thread watches
    the parent's pid, and an orphan is reparented, so its parent pid changes."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(poll_seconds)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="keyaudit-parent-watch", daemon=True).start()


def _verdict_tuple(v: Verdict) -> tuple:
    """A verdict as plain data (its ``values`` are JSON-ready already: see ``Outputs``)."""
    return (v.accept, v.reason, v.values, v.answer_text, v.detail, v.uncertain)


def _describe(error: BaseException) -> tuple[str, str]:
    name = type(error).__name__
    if isinstance(error, KeyauditError) and name not in _ERRORS:
        name = "KeyauditError"
    return name, str(error)


def _peak_kb() -> int:
    """The worker's own peak RSS in KiB: ``VmHWM`` (``ru_maxrss`` would also count the parent's
    peak before the exec that started the worker), 0 where unknown."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0
