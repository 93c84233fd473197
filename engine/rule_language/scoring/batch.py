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
``jobs`` worker processes of a :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn``
start method (fresh interpreters: never a fork of a process whose numba threads may be running),
started isolated (see :class:`_ProcessPool`). Workers receive only the rule files' paths and
chunks of plain ``(rule index, key, text)`` tuples; each loads the rules itself. Inside
:func:`remote` (``check --executor dask``) the chunks go to that executor instead, whatever the
number of items.

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
import itertools
import math
import os
import re
import shlex
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ...errors import DataError, ExpressionError, KeyauditError, RuleError, UsageError, one_line
from ...load.answer_line import find_answer_line
from .answer_limits import MAX_SLOW_ANSWERS, cut_answer
from .scorer import (
    Scorer,
    Verdict,
    clean_answer,
    conclusion_doubt_text,
    conclusion_of,
    needs_conclusion,
    with_doubt,
)
from .verdict_list import VerdictList

#: Below this many distinct work items scoring stays in this process. Measured on the 2-core
#: reference machine (with the hand-written pool this module had before; the standard pool
#: measured the same, ``bench/results/pool.md``): starting two workers (a fresh interpreter each,
#: imports, the rules' grammars, cold caches) costs about 1.3-1.6 s (the example's 1,339 items: 0.4 s in process, 2.0 s
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


class _Miss:
    """The value of an item an :class:`AnswerCache` does not hold (``None`` is a value)."""

    def __repr__(self) -> str:
        return "MISS"


MISS: Any = _Miss()


class AnswerCache(Protocol):
    """What :func:`score_many` asks of a cache of items scored before (the verdict cache,
    :mod:`keyaudit.engine.verdict_cache`). Values are plain data: a line's verdict as
    :func:`verdict_tuple` gives it, a conclusion's doubt as :meth:`Scorer.conclusion_doubt`."""

    def lookup(self, phase: str, items: Sequence[tuple[int, str, Any]]) -> list[Any]:
        """Each item's stored value, or :data:`MISS`."""

    def remember(self, phase: str, items: Sequence[tuple[int, str, Any]], values: Sequence[Any]) -> None:
        """The values just scored for ``items``: the cache keeps those it may."""

    def cleaned(self, i: int, text: str) -> str | None:
        """The cleaned form of an answer text of ``scorers[i]`` stored before, or None."""

    def remember_cleaned(self, i: int, text: str, cleaned: str) -> None:
        """The cleaned form just computed for an answer text of ``scorers[i]``."""


def score_many(
    scorers: Sequence[Scorer],
    work: Iterable[Work],
    jobs: int = 1,
    stats: dict | None = None,
    cache: AnswerCache | None = None,
) -> VerdictList:
    """The verdicts ``scorers[i].score(key, text)`` for every ``(i, key, text)`` of ``work``, in
    order (see the module docstring), as a :class:`~.verdict_list.VerdictList` (a sequence of
    verdicts kept as codes). ``work`` is iterated twice (a list, or an iterable that makes its
    items again each time: the audit's ruled responses). ``stats``, when given, receives the
    counts of responses and distinct work items and whether workers were used. ``cache``, when
    given, answers the items it holds; only the others are scored (and given to it)."""
    fmts = [s.rule.answer_format for s in scorers]
    # Step 1: the distinct (scorer, key, cleaned line) items; None stands for "no answer line".
    # A response's verdict is its item's with its own cut answer text: one per distinct pair.
    # Most responses cut the text their item was first seen with; their code is the item's. A
    # pair with another text (same cleaned line) is coded -1, -2, ... until the items are known.
    index: dict[tuple[int, str, str | None], int] = {}
    items: list[tuple[int, str, str | None]] = []
    other_of: dict[tuple[int, str | None], int] = {}
    others: list[tuple[int, str | None]] = []  # (item index, another cut answer text)
    results = VerdictList()
    codes = results.codes
    clean = _Cleaner(fmts, cache)
    seen: dict[tuple[int, str, str | None], int] = {}  # a response's code by its cut answer text
    for i, key, text in work:
        fmt = fmts[i]
        line = find_answer_line(text, fmt.label, fmt.which)
        raw = None if line is None else cut_answer(line.text)
        at = seen.get((i, key, raw))
        if at is not None:  # the same line for the same key: the same code
            codes.append(at)
            continue
        ident = (i, key, None if raw is None else clean(i, raw))
        at = index.get(ident)
        if at is None:
            at = index[ident] = len(items)
            items.append((i, key, raw))
        elif raw != items[at][2]:
            other = other_of.get((at, raw))
            if other is None:
                other = other_of[(at, raw)] = len(others)
                others.append((at, raw))
            at = -1 - other
        seen[(i, key, raw)] = at
        codes.append(at)
    del other_of, seen
    if others:  # the other pairs follow the items
        column = np.frombuffer(codes, dtype=np.int32)
        column[column < 0] = len(items) - 1 - column[column < 0]
    pool = _Pool(scorers, jobs, len(items), cache)
    try:
        verdicts = pool.run("line", items)
        for at, raw in itertools.chain(((at, item[2]) for at, item in enumerate(items)), others):
            verdict = verdicts[at]
            results.distinct.append(
                verdict if verdict.answer_text == raw else replace(verdict, answer_text=raw)
            )
        del others
        # Step 2: conclusions of rejections for something missing, each distinct one once.
        seconds: dict[tuple[int, str, str], int] = {}
        second_items: list[tuple[int, str, str]] = []
        wanted: list[tuple[int, Any]] = []  # (response, item index, or the doubt known from step 1)
        distinct = results.distinct
        for n, (i, key, text) in enumerate(work):
            verdict = distinct[codes[n]]
            if not needs_conclusion(verdict):
                continue
            conclusion = conclusion_of(text, verdict.answer_text)
            if not conclusion:
                continue
            cleaned = clean(i, conclusion)
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
            code = codes[n]
            results.recode(n, (code, doubt), lambda c=code, d=doubt: with_doubt(distinct[c], d))
    results.done()
    if stats is not None:
        stats.update(
            responses=len(results),
            line_items=len(items),
            conclusion_items=len(second_items),
            cached_items=pool.cached,
            workers=pool.count,
            worker_peak_mb=pool.peak_kb / 1024,
        )
    return results


def judge_many(
    scorers: Sequence[Scorer],
    items: Sequence[tuple[int, str, str | None]],
    jobs: int = 1,
    cache: AnswerCache | None = None,
) -> list[tuple[bool, str]]:
    """``(accept, reason)`` of ``scorers[i].score_line(key, line, certainty=False)`` for every
    ``(i, key, line)`` of ``items``, in order: the keys check's and the baselines' pairs, in
    workers when it pays, from ``cache`` where it holds them."""
    pool = _Pool(scorers, jobs, len(items), cache)
    try:
        return pool.run("judge", items)
    finally:
        pool.close()


#: The executor of :func:`remote`, if any (a :class:`RemoteExecutor`).
_REMOTE: list = []


@contextlib.contextmanager
def remote(executor) -> Iterator[None]:
    """Within this block every batch is scored by ``executor`` (e.g. a Dask cluster, see
    :mod:`.dask_executor`): ``executor.run(scorers, phase, chunks)`` returns each chunk's
    ``(value, slow)`` outcomes in order (``value`` as plain data: a verdict tuple per answer
    line), or raises a one-line :class:`KeyauditError`; ``executor.size()`` is its number of
    workers."""
    _REMOTE.append(executor)
    try:
        yield
    finally:
        _REMOTE.pop()


class _Cleaner:
    """:func:`clean_answer` of each answer format's texts, each distinct text cleaned once per run
    (many keys share an answer line), and from ``cache`` where it holds the cleaned text (a run
    over answers seen before cleans none of them: cleaning is a third of an answer's time)."""

    def __init__(self, fmts: Sequence[Any], cache: AnswerCache | None) -> None:
        self.fmts = fmts
        self.cache = cache
        self.done: dict[tuple[int, str], str] = {}

    def __call__(self, i: int, text: str) -> str:
        cleaned = self.done.get((i, text))
        if cleaned is None:
            cache = self.cache
            cleaned = None if cache is None else cache.cleaned(i, text)
            if cleaned is None:
                cleaned = clean_answer(text, self.fmts[i])
                if cache is not None:
                    cache.remember_cleaned(i, text, cleaned)
            self.done[(i, text)] = cleaned
        return cleaned


class _Pool:
    """Scores work items in order, in this process, in worker processes or on a remote executor,
    keeping the count of answers at the time limit per scorer in item order."""

    def __init__(
        self, scorers: Sequence[Scorer], jobs: int, size: int, cache: AnswerCache | None = None
    ) -> None:
        self.scorers = scorers
        self.cache = cache
        #: Items the cache answered.
        self.cached = 0
        self.processes: _ProcessPool | None = None
        self.remote = _REMOTE[-1] if _REMOTE and size else None
        #: The largest peak RSS (KiB) a worker reported.
        self.peak_kb = 0
        self.count = 0
        self.jobs = jobs
        #: Whether workers were considered yet: on the first batch, by what is left to score.
        self.started = self.remote is not None
        if self.remote is not None:
            self.count = self.remote.size()

    def _start_workers(self, size: int) -> None:
        """Workers start on the first batch with enough items left to score to repay their start
        (:func:`parallel_threshold`): items a cache answers do not count."""
        if self.started:
            return
        self.started = True
        paths = [s.rule.path for s in self.scorers]
        if self.jobs > 1 and size >= max(parallel_threshold(), 1) and all(paths):
            setup = ([str(p) for p in paths], [s.slow_answers for s in self.scorers])
            self.processes = _ProcessPool(setup, self.jobs)
            self.count = self.jobs

    def run(self, phase: str, items: Sequence[tuple[int, str, Any]]) -> list[Any]:
        """Each item's value, in order: from the cache where it holds one, else scored here, in
        workers or remotely. A cached item counts as one that was not slow, so the time-limit
        cut falls where it falls without the cache."""
        if self.cache is None or not items:
            self._start_workers(len(items))
            if not items or (self.processes is None and self.remote is None):
                return [value for value, _ in _score_items(self.scorers, phase, items)]
            return self._in_order(phase, items, self._outcomes(phase, items))
        stored = self.cache.lookup(phase, items)
        todo = [item for item, value in zip(items, stored, strict=True) if value is MISS]
        self.cached += len(items) - len(todo)
        self._start_workers(len(todo))
        if self.processes is None and self.remote is None:
            return self._with_stored_here(phase, items, stored)
        outcomes = self._outcomes(phase, todo)
        self.cache.remember(phase, todo, [_plain(phase, value) for value, _ in outcomes])
        fresh = iter(outcomes)
        shared = _Shared()
        merged = [
            next(fresh) if value is MISS else (shared.verdict(value) if phase == "line" else value, False)
            for value in stored
        ]
        return self._in_order(phase, items, merged)

    def _with_stored_here(self, phase: str, items, stored: list[Any]) -> list[Any]:
        """In this process: each item in order, a stored value unless the scorer stopped
        trying answers (then the "not scored" verdict a cold run would give)."""
        shared = _Shared()
        results: list[Any] = []
        scored_items: list[tuple[int, str, Any]] = []
        scored_values: list[Any] = []
        for item, value in zip(items, stored, strict=True):
            if value is MISS or self.scorers[item[0]].slow_answers >= MAX_SLOW_ANSWERS:
                value = _score_items(self.scorers, phase, [item])[0][0]
                scored_items.append(item)
                scored_values.append(_plain(phase, value))
            elif phase == "line":
                value = shared.verdict(value)
            results.append(value)
        self.cache.remember(phase, scored_items, scored_values)
        return results

    def _outcomes(self, phase: str, items: Sequence[tuple[int, str, Any]]) -> list[tuple[Any, bool]]:
        """``(value, slow)`` of every item, scored in workers or remotely (a line's value a
        verdict); the time-limit count is not applied yet (:meth:`_in_order`)."""
        if not items:
            return []
        size = max(64, math.ceil(len(items) / (max(self.count, 1) * CHUNKS_PER_JOB)))
        chunks = [items[at : at + size] for at in range(0, len(items), size)]
        if self.remote is not None:
            parts = self.remote.run(self.scorers, phase, chunks)
            self.peak_kb = max(self.peak_kb, getattr(self.remote, "peak_kb", 0))
        else:
            parts = self.processes.run(phase, chunks)
            self.peak_kb = self.processes.peak_kb
        outcomes = []
        for chunk, part in zip(chunks, parts, strict=True):
            if len(part) != len(chunk):  # never a silently missing verdict
                raise WorkerError(
                    f"a scoring worker returned {len(part):,} results for {len(chunk):,} items; "
                    "rerun with --jobs 1 to score in one process"
                )
            outcomes += part
        if phase == "line":
            shared = _Shared()
            outcomes = [(shared.verdict(value), slow) for value, slow in outcomes]
        return outcomes

    def _in_order(self, phase: str, items, outcomes) -> list[Any]:
        """Workers' results with the time-limit count applied in item order (this process's
        scorers keep it): after MAX_SLOW_ANSWERS slow answers of a scorer, its later items are
        not scored, whatever a worker computed for them."""
        results = []
        for (i, key, text), (value, slow) in zip(items, outcomes, strict=True):
            scorer = self.scorers[i]
            if scorer.slow_answers >= MAX_SLOW_ANSWERS:
                if phase == "line":  # as in this process: no answer line is "answer missing"
                    value = scorer.not_scored(text) if text is not None else scorer.score_line(key, None)
                elif phase == "judge":
                    value = (False, scorer.not_scored(text).reason)
                else:
                    value = None
            elif slow:
                scorer.slow_answers += 1
            results.append(value)
        return results

    def close(self) -> None:
        if self.processes is not None:
            self.processes.close()
            self.processes = None


class _Shared:
    """Builds verdicts from workers' plain tuples sharing equal parts: each tuple arrives as its
    own copies of the reason, values, detail and uncertain names, which a million verdicts (25 M
    responses) repeat a few thousand ways; shared, a verdict costs its object and answer text.
    Nothing changes a verdict's values (they are read, or copied)."""

    def __init__(self) -> None:
        self.parts: dict[Any, Any] = {}

    def verdict(self, value: tuple) -> Verdict:
        accept, reason, values, answer_text, detail, uncertain = value
        parts = self.parts
        reason = parts.setdefault(reason, reason)
        detail = parts.setdefault(detail, detail)
        uncertain = parts.setdefault(("uncertain", *uncertain), uncertain)
        values = parts.setdefault(("values", repr(values)), values)
        return Verdict(accept, reason, values, answer_text, detail, uncertain)


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
# The pool is the standard library's ProcessPoolExecutor with the spawn start method, made safe
# to start in a folder the user does not trust (a downloaded benchmark):
#
# * multiprocessing starts a child (and its resource tracker) as ``python -c PROGRAM``, which puts
#   the current folder first on ``sys.path``: a ``multiprocessing/``, ``concurrent/``,
#   ``lark.py`` or ``keyaudit/`` there would run. The pool's "interpreter" (``set_executable``,
#   for the pool's lifetime) is a two-line shell launcher in a private temporary folder that
#   runs ``python -I -c BOOT <multiprocessing's arguments>``: isolated mode keeps the current
#   folder, PYTHONPATH and the user site off ``sys.path``;
# * BOOT adds the parent's own import folders back with ``site.addsitedir`` (their ``.pth``
#   hooks run: an editable or ``--user`` install still imports), minus the current folder and
#   ``''``, then runs multiprocessing's program with its preparation data stripped of the
#   parent's ``sys.path`` (which may hold the current folder) and of the parent's main module
#   (which spawn would run again in every worker: the CLI, or pytest);
# * a worker ends within 0.2 s of its parent's death (a thread watches the parent's pid), and
#   ignores SIGINT (Ctrl-C reaches the parent, which shuts the pool down);
# * the launcher folder (``keyaudit-workers-<pid>-*`` in the temporary folder) goes with the
#   pool: closed, the pool removes it; its parent SIGKILLed, the workers remove it as they end;
#   all of them killed at once, the next pool removes the folders of pools whose process is gone.
#
# Measured against the hand-written pool it replaces (subprocesses, marshal over pipes, select)
# on the same inputs: no difference beyond the machine's noise (bench/results/pool.md).

_ERRORS = {cls.__name__: cls for cls in (DataError, RuleError, ExpressionError, UsageError)}

_BOOT = (
    "import sys, site\n"
    "for folder in {folders!r}:\n"
    "    if folder not in sys.path:\n"
    "        site.addsitedir(folder)\n"
    "args = sys.argv[1:]\n"
    "at = args.index('-c')\n"
    "program = args[at + 1]\n"
    "sys.argv = ['-c', *args[at + 2:]]\n"
    "import multiprocessing.spawn as spawn\n"
    "prepare = spawn.prepare\n"
    "def isolated(data):\n"
    "    for name in ('sys_path', 'init_main_from_name', 'init_main_from_path'):\n"
    "        data.pop(name, None)\n"
    "    prepare(data)\n"
    "spawn.prepare = isolated\n"
    "del args, at, folder, isolated\n"
    "exec(compile(program, '<string>', 'exec'))\n"
)


def parent_folders() -> list[str]:
    """The parent's import folders a worker gets: absolute ones, never the current folder."""
    here = os.path.realpath(os.getcwd())
    return [
        folder
        for folder in sys.path
        if folder and os.path.isabs(folder) and os.path.realpath(folder) != here
    ]


def launcher_script() -> str:
    """The shell launcher multiprocessing starts instead of ``python`` (see above)."""
    boot = _BOOT.format(folders=parent_folders())
    command = " ".join(shlex.quote(a) for a in (sys.executable, "-I", "-c", boot))
    return f'#!/bin/sh\nexec {command} "$@"\n'


#: The launcher folders' names: ``keyaudit-workers-<pid of the run>-<random>``.
POOL_FOLDER_PREFIX = "keyaudit-workers-"
_POOL_FOLDER = re.compile(re.escape(POOL_FOLDER_PREFIX) + r"([0-9]{1,10})-[A-Za-z0-9_]+")


def remove_dead_pool_folders(where: str | None = None) -> None:
    """Remove the launcher folders of pools whose process is gone (every process of the run was
    killed at once, so nobody removed it): only real folders (not links) of this user, named as
    :func:`_ProcessPool` names them, whose pid is no running process."""
    where = where or tempfile.gettempdir()
    try:
        entries = list(os.scandir(where))
    except OSError:
        return
    for entry in entries:
        match = _POOL_FOLDER.fullmatch(entry.name)
        if match is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        if not _gone(int(match.group(1))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False  # alive (another user's) or not a pid we can ask about: keep it
    return False


def _died(detail: str = "") -> WorkerError:
    return WorkerError(
        f"a scoring worker process stopped unexpectedly{detail}; rerun with --jobs 1 to score "
        "in one process"
    )


class _ProcessPool:
    """``jobs`` isolated spawn workers (see above), each with the rules loaded."""

    def __init__(self, setup: tuple[list[str], list[int]], jobs: int) -> None:
        import multiprocessing
        import multiprocessing.spawn as spawn
        from concurrent.futures import ProcessPoolExecutor

        self.executor = None
        #: The largest peak RSS (KiB) a worker reported.
        self.peak_kb = 0
        self.previous = spawn.get_executable()
        remove_dead_pool_folders()
        self.folder = tempfile.mkdtemp(prefix=f"{POOL_FOLDER_PREFIX}{os.getpid()}-")
        try:
            launcher = os.path.join(self.folder, "python")
            with open(launcher, "w", encoding="utf-8") as out:
                out.write(launcher_script())
            os.chmod(launcher, 0o700)
            spawn.set_executable(launcher)
            self.executor = ProcessPoolExecutor(
                jobs,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(setup, os.path.join(self.folder, "stderr")),
            )
        except OSError as error:
            self.close()
            raise WorkerError(
                f"cannot start a scoring worker process ({error.strerror or error}); rerun with "
                "--jobs 1 to score in one process"
            ) from None
        except BaseException:
            self.close()
            raise

    def run(self, phase: str, chunks: list) -> list[list]:
        from concurrent.futures.process import BrokenProcessPool

        try:
            futures = [self.executor.submit(_score_chunk, phase, chunk) for chunk in chunks]
        except (BrokenProcessPool, OSError, RuntimeError, ValueError):
            # ValueError: multiprocessing's spawn can fail with "bad value(s) in fds_to_keep"
            # when a worker it started died at once and its pipes were closed under it
            raise self._died() from None
        parts = []
        for future in futures:
            try:
                status, *payload = future.result()
            except BrokenProcessPool:
                raise self._died() from None
            if status != "ok":
                raise _error(*payload)
            outcomes, peak = payload
            self.peak_kb = max(self.peak_kb, peak)
            parts.append(outcomes)
        return parts

    def _died(self) -> WorkerError:
        """The error for a worker that died: its stderr's last line, if it wrote one."""
        try:
            with open(os.path.join(self.folder, "stderr"), "rb") as errors:
                lines = errors.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            lines = []
        return _died(f": {one_line(lines[-1])[:300]}" if lines else " (killed, or out of memory)")

    def close(self) -> None:
        import multiprocessing.spawn as spawn

        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None
        spawn.set_executable(self.previous)
        shutil.rmtree(self.folder, ignore_errors=True)


def _error(kind: str, message: str) -> KeyauditError:
    """A worker's error as this process raises it (its message is one line already)."""
    if kind in _ERRORS:
        return _ERRORS[kind](message)
    if kind == "KeyauditError":
        return KeyauditError(message)
    return WorkerError(f"{kind} in a scoring worker: {message}")


#: A worker's loaded rules, or the error loading them (reported with the first chunk).
_WORKER: dict[str, Any] = {}


def _start_worker(setup: tuple[list[str], list[int]], errors: str) -> None:
    """A worker's initializer: watch the parent, leave Ctrl-C to it, write its stderr into the
    pool's private file ``errors`` (quoted if it dies; never onto the user's terminal), load the
    rules."""
    import signal

    _exit_with_parent(folder=os.path.dirname(errors))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        fd = os.open(errors, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(fd, 2)
        os.close(fd)
    paths, start = setup
    try:
        from ..rules.rule import load_rule

        scorers = [Scorer(load_rule(Path(p))) for p in paths]
        for scorer, count in zip(scorers, start, strict=True):
            scorer.slow_answers = count
        _WORKER["scorers"] = scorers
    except Exception as error:
        _WORKER["failure"] = _describe(error)


def _score_chunk(phase: str, items) -> tuple:
    """``("ok", outcomes as plain data, peak RSS KiB)`` or ``("error", kind, message)``."""
    if "failure" in _WORKER:
        return ("error", *_WORKER["failure"])
    try:
        outcomes = _score_items(_WORKER["scorers"], phase, items)
        return ("ok", plain_outcomes(phase, outcomes), _peak_kb())
    except Exception as error:
        return ("error", *_describe(error))


def plain_outcomes(phase: str, outcomes: list[tuple[Any, bool]]) -> list[tuple[Any, bool]]:
    """Outcomes as plain data: a verdict becomes a tuple (``Verdict(*value)`` makes it again)."""
    return [(_plain(phase, v), slow) for v, slow in outcomes]


def _exit_with_parent(poll_seconds: float = 0.2, folder: str | None = None) -> None:
    """End this worker within ``poll_seconds`` of its parent's death (a SIGTERM or SIGKILL of
    the parent closes no pipe a worker busy on a chunk would notice): a daemon thread watches
    the parent's pid, and an orphan is reparented, so its parent pid changes. The pool's
    launcher ``folder``, which the dead parent can no longer remove, goes first."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(poll_seconds)
            if os.getppid() != parent:
                if folder is not None:
                    shutil.rmtree(folder, ignore_errors=True)
                os._exit(1)

    threading.Thread(target=watch, name="keyaudit-parent-watch", daemon=True).start()


def _plain(phase: str, value: Any) -> Any:
    """A value as a cache keeps it: a line's verdict as plain data, anything else as it is."""
    return verdict_tuple(value) if phase == "line" else value


def verdict_tuple(v: Verdict) -> tuple:
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
