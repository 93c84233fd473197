"""Score work items on a Dask cluster: ``keyaudit check --executor dask --scheduler ADDRESS``.

:func:`~.batch.score_many` and :func:`~.batch.judge_many` find the distinct ``(rule, key, answer
line)`` items here as always; inside ``batch.remote(DaskExecutor(...))`` they send them to the
cluster in chunks (about four per worker) and put the answers back in item order, applying the
time-limit cut here (so the result is the one ``--jobs 1`` gives, byte for byte).

What travels is plain data, never code from the benchmark and never a pickled rule object:

* the **rule bundle**, once per batch (a task whose result is the bundle; its dependents fetch
  it from the worker that holds it, and Dask recomputes it if that worker is lost): each rule
  file's text and the texts of the grammars in its folder (``*.lark`` beside the rule and beside
  its named grammars), plus a fingerprint of this keyaudit (its version, its rule-language
  code and its bundled grammars). A worker checks the fingerprint, writes the files into a
  private temporary folder it creates and loads the rules from there with its own keyaudit; the
  loaded rules are kept per worker process by the bundle's digest, and their folder with them
  (a scorer reads its answer grammar's wording when it first judges certainty), removed when
  they are dropped or the worker exits;
* each **chunk**: ``(rule index, key, text)`` tuples of strings, and the time-limit counts;
* each **answer**: ``("ok", [(verdict tuple or value, slow), ...])`` or ``("error", kind,
  message)``, checked here to hold one outcome per item (never a silently missing verdict).

A worker lost mid-run (killed, out of memory) has its chunks run again on another worker by
Dask's own scheduler; after ``distributed.scheduler.allowed-failures`` losses of one chunk the
run stops with one line, exit 2.

A cluster is not trusted to be what it says, nor its workers to be honest:

* connecting is bounded: a ``tcp://`` address must answer with a Dask handshake of sane size
  within :data:`CONNECT_SECONDS` (a port that accepts and never answers hung, and one that
  answers something else made distributed allocate exabytes), and the whole connection is
  given up after that time;
* every answer is checked to be of the shape keyaudit's workers send, each outcome of the type
  its phase gives (a malformed tuple is one line, never a ``ValueError``);
* a chunk whose task failed but whose error never reached this process (a task ending in
  ``RecursionError``: the scheduler marks it erred, the client waits forever) is found by
  asking the scheduler, every :data:`POLL_SECONDS`, for the state of the chunks still pending;
* a sample of every chunk's items (:data:`CHECKED_PER_CHUNK`, drawn with a seed from the
  operating system, so a worker cannot know which) is scored again here, and any difference
  from what the worker returned stops the run with one line naming the worker: a worker that
  flips verdicts is caught, up to the chance that it flipped only unsampled ones.

Not bounded here: a Dask worker runs tasks in threads, where the per-answer CPU limit (a signal
timer, main thread only) does not apply; an answer that would hit it locally is scored to the end
(and then gets its verdict, not "not scored").
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import random
import shutil
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import KeyauditError, UsageError, one_line
from .batch import WorkerError, _describe, _error, _peak_kb, _score_items, plain_outcomes
from .fingerprint import engine_fingerprint
from .scorer import Scorer, conclusion_doubt_text

#: Grammar files shipped per folder at most, and bytes per rule bundle at most.
MAX_SHIPPED_GRAMMARS = 200
MAX_BUNDLE_BYTES = 64 * 1024 * 1024
#: Seconds to reach the scheduler.
CONNECT_SECONDS = 30
#: The largest first message a Dask scheduler sends (its handshake is a few hundred bytes).
MAX_HANDSHAKE_BYTES = 1 << 20
#: Seconds between asking the scheduler about chunks still pending.
POLL_SECONDS = 2.0
#: Items of each chunk scored again in this process to check the worker's answers.
CHECKED_PER_CHUNK = 8


def _missing_extra() -> UsageError:
    return UsageError(
        "--executor dask needs Dask: pip install 'keyaudit[dask]' (dask and distributed)"
    )


class DaskExecutor:
    """A connection to a Dask scheduler that scores chunks of work items (see the module)."""

    def __init__(self, address: str, *, client: Any = None) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise _missing_extra() from None
        self.address = address
        self._own = client is None
        if client is None:
            client = _connect(Client, address)
        self.client = client
        #: Where this run's sample of each chunk's items is drawn from (see the module).
        self._sampler = random.Random(int.from_bytes(os.urandom(16), "big"))
        #: The largest peak RSS (KiB) a worker reported.
        self.peak_kb = 0
        self._bundles: dict[tuple[int, ...], tuple[str, Any]] = {}

    def size(self) -> int:
        """The cluster's workers now (at least 1, for the chunk size)."""
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def run(self, scorers: Sequence[Scorer], phase: str, chunks: list) -> list[list]:
        from distributed import KilledWorker

        digest, bundle = self._bundle(scorers)
        start = [s.slow_answers for s in scorers]
        futures = [
            self.client.submit(
                score_remote, bundle, digest, start, phase, list(chunk), pure=False, retries=1
            )
            for chunk in chunks
        ]
        try:
            self._wait(futures)
            answers = self.client.gather(futures)
            workers = self.client.who_has(futures)
        except KilledWorker:
            raise WorkerError(
                f"the Dask cluster at {self.address} lost the workers scoring one chunk more "
                "often than its scheduler allows (distributed.scheduler.allowed-failures); rerun "
                "with --jobs N to score on this machine"
            ) from None
        except KeyauditError:
            raise
        except Exception as error:  # a task that raised (not keyaudit's: ours come as data)
            raise WorkerError(
                f"the Dask cluster at {self.address} failed a chunk "
                f"({type(error).__name__}: {' '.join(str(error).split())})"
            ) from None
        finally:
            for future in futures:
                future.release()
        parts = []
        for future, chunk, answer in zip(futures, chunks, answers, strict=True):
            worker = ", ".join(workers.get(future.key, ())) or "a worker"
            outcomes, peak = _checked_answer(answer, phase, len(chunk), worker)
            self._verify(scorers, phase, chunk, outcomes, worker)
            parts.append(outcomes)
            self.peak_kb = max(self.peak_kb, peak)
        return parts

    def _wait(self, futures: list) -> None:
        """Until every chunk is done; a chunk the scheduler holds as erred (or has forgotten)
        while this client still waits for it, at two questions in a row, stops the run with
        one line. The client's own state is looked at often, the scheduler asked every
        :data:`POLL_SECONDS`."""
        suspects: set = set()
        delay, asked = 0.01, time.monotonic()
        while True:
            pending = [f.key for f in futures if f.status == "pending"]
            if not pending:
                return
            time.sleep(delay)
            delay = min(2 * delay, POLL_SECONDS / 4)
            if time.monotonic() - asked < POLL_SECONDS:
                continue
            asked = time.monotonic()
            states = self.client.sync(self.client.scheduler.get_task_status, keys=pending)
            lost = {key for key, state in states.items() if state in ("erred", None)}
            if lost & suspects:
                raise WorkerError(
                    f"a chunk failed on the Dask cluster at {self.address} and its error never "
                    "reached this process (a worker that cannot report it, as after a "
                    "RecursionError); rerun with --jobs N to score on this machine"
                )
            suspects = lost

    def _verify(self, scorers, phase: str, chunk: list, outcomes: list, worker: str) -> None:
        """Score a sample of ``chunk`` here and compare with the worker's outcomes."""
        picked = sorted(self._sampler.sample(range(len(chunk)), min(CHECKED_PER_CHUNK, len(chunk))))
        counts = [s.slow_answers for s in scorers]
        try:
            mine = _score_items(scorers, phase, [chunk[at] for at in picked])
        finally:  # the count of slow answers is the run's, kept in item order elsewhere
            for scorer, count in zip(scorers, counts, strict=True):
                scorer.slow_answers = count
        for at, (value, slow) in zip(picked, mine, strict=True):
            if slow:  # at the time limit here; a worker (threads) scores it to the end
                continue
            if not _same_outcome(phase, value, outcomes[at][0]):
                _i, key, text = chunk[at]
                raise WorkerError(
                    f"the Dask worker {worker} at {self.address} returned a verdict that differs"
                    f" from this machine's for key {one_line(key)[:80]!r}, answer"
                    f" {one_line(str(text))[:80]!r}; its results are not used (check that every"
                    " worker runs the same keyaudit, or rerun with --jobs N)"
                )

    def _bundle(self, scorers: Sequence[Scorer]) -> tuple[str, Any]:
        """The rule bundle of ``scorers`` as a future on the cluster (one per set of rules)."""
        ident = tuple(id(s.rule) for s in scorers)
        if ident not in self._bundles:
            data = rule_bundle([s.rule for s in scorers])
            digest = bundle_digest(data)
            future = self.client.submit(_same, data, key=f"keyaudit-rules-{digest}", pure=False)
            self._bundles[ident] = (digest, future)
        return self._bundles[ident]

    def close(self) -> None:
        for _, future in self._bundles.values():
            with contextlib.suppress(Exception):
                future.release()
        self._bundles = {}
        if self._own:
            with contextlib.suppress(Exception):
                self.client.close()


def _same(value: Any) -> Any:
    return value


# ---- reaching a scheduler -------------------------------------------------------------------------


def _connect(client_class, address: str):
    """A client of the scheduler at ``address``, or a one-line :class:`UsageError` within about
    :data:`CONNECT_SECONDS`."""
    _sniff(address)
    found: dict[str, Any] = {}

    def attempt() -> None:
        try:
            found["client"] = client_class(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except BaseException as error:  # noqa: BLE001 - reported below, on the caller's thread
            found["error"] = error

    thread = threading.Thread(target=attempt, name="keyaudit-dask-connect", daemon=True)
    thread.start()
    thread.join(CONNECT_SECONDS + 5)
    if thread.is_alive():  # distributed's own timeout did not end it: give up on it
        raise UsageError(
            f"--scheduler {address}: no Dask scheduler answered within {CONNECT_SECONDS} s"
        )
    error = found.get("error")
    if isinstance(error, MemoryError):
        raise UsageError(f"--scheduler {address}: not a Dask scheduler (it answered something else)")
    if error is not None:
        reason = one_line(str(error)) or type(error).__name__
        raise UsageError(f"--scheduler {address}: cannot reach the Dask scheduler ({reason})")
    return found["client"]


def _sniff(address: str) -> None:
    """For a ``tcp://`` address: the scheduler's first message must begin within
    :data:`CONNECT_SECONDS` and announce at most :data:`MAX_HANDSHAKE_BYTES` (distributed reads
    an 8-byte length and allocates it, whatever it says). Other schemes are left to the client."""
    scheme, _, location = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return
    host, _, port = location.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return  # the client says what is wrong with it
    deadline = time.monotonic() + CONNECT_SECONDS
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS) as sock:
            head = b""
            while len(head) < 8:
                sock.settimeout(max(0.1, deadline - time.monotonic()))
                more = sock.recv(8 - len(head))
                if not more:
                    raise UsageError(
                        f"--scheduler {address}: not a Dask scheduler (it closed the connection"
                        " without a handshake)"
                    )
                head += more
    except TimeoutError:
        raise UsageError(
            f"--scheduler {address}: no Dask scheduler answered within {CONNECT_SECONDS} s"
        ) from None
    except OSError as error:
        reason = one_line(error.strerror or str(error)) or type(error).__name__
        raise UsageError(f"--scheduler {address}: cannot reach the Dask scheduler ({reason})") from None
    (size,) = struct.unpack("<Q", head)
    if not 0 < size <= MAX_HANDSHAKE_BYTES:
        raise UsageError(f"--scheduler {address}: not a Dask scheduler (it answered something else)")


# ---- what a worker sends back ---------------------------------------------------------------------


def _checked_answer(answer: Any, phase: str, n: int, worker: str) -> tuple[list, int]:
    """A chunk's answer, checked to be what keyaudit's workers send: ``("ok", n outcomes,
    peak KiB)`` with each outcome of its phase's shape, or ``("error", kind, message)`` (raised
    here as that error). Anything else is a one-line :class:`WorkerError`."""
    if isinstance(answer, (tuple, list)) and len(answer) == 3 and answer[0] == "error":
        _, kind, message = answer
        if isinstance(kind, str) and isinstance(message, str):
            raise _error(one_line(kind)[:100], one_line(message))
    elif isinstance(answer, (tuple, list)) and len(answer) == 3 and answer[0] == "ok":
        _, outcomes, peak = answer
        if (
            isinstance(outcomes, (list, tuple))
            and isinstance(peak, int)
            and not isinstance(peak, bool)
            and peak >= 0
        ):
            if len(outcomes) != n:  # never a silently missing verdict
                raise WorkerError(
                    f"a scoring worker returned {len(outcomes):,} results for {n:,} items; "
                    "rerun with --jobs 1 to score in one process"
                )
            checked = [_checked_outcome(o, phase) for o in outcomes]
            if all(o is not None for o in checked):
                return checked, peak
    raise WorkerError(
        f"the Dask worker {worker} returned an answer keyaudit's workers never send (not one"
        " outcome of the right shape per item); rerun with --jobs N to score on this machine"
    )


def _checked_outcome(outcome: Any, phase: str) -> tuple | None:
    """``(value, slow)`` as the phase gives it, or None when it is not of that shape."""
    if not (isinstance(outcome, (tuple, list)) and len(outcome) == 2):
        return None
    value, slow = outcome
    if not isinstance(slow, bool):
        return None
    if phase == "line":
        if not (isinstance(value, (tuple, list)) and len(value) == 6):
            return None
        accept, reason, values, answer_text, detail, uncertain = value
        if not (
            isinstance(accept, bool)
            and isinstance(reason, str)
            and isinstance(values, dict)
            and all(isinstance(k, str) and _plain(v) for k, v in values.items())
            and (answer_text is None or isinstance(answer_text, str))
            and isinstance(detail, str)
            and isinstance(uncertain, (tuple, list))
            and all(isinstance(u, str) for u in uncertain)
        ):
            return None
        return (accept, reason, values, answer_text, detail, tuple(uncertain)), slow
    if phase == "judge":
        if not (
            isinstance(value, (tuple, list))
            and len(value) == 2
            and isinstance(value[0], bool)
            and isinstance(value[1], str)
        ):
            return None
        return (value[0], value[1]), slow
    if value is not None and not isinstance(value, str):
        return None
    return value, slow


def _plain(value: Any, depth: int = 0) -> bool:
    """JSON-ready data of at most 32 levels (what an ``[output]`` value is)."""
    if depth > 32:
        return False
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _same_outcome(phase: str, mine: Any, theirs: Any) -> bool:
    """Whether a worker's outcome is this machine's: a verdict's accept, reason, values and
    answer text (its certainty names may differ under CPU-time limits), a judged pair as is, a
    conclusion's doubt unless judging it hit this machine's time limit."""
    if phase == "line":
        return (mine.accept, mine.reason, mine.values, mine.answer_text) == tuple(theirs[:4])
    if phase == "judge":
        return tuple(mine) == tuple(theirs)
    if mine is not None and mine != conclusion_doubt_text(True):
        return True  # this machine's own judging hit a limit: nothing to compare
    return mine == theirs


# ---- the rule bundle ----------------------------------------------------------------------------


def rule_bundle(rules: Sequence[Any]) -> dict:
    """Plain data a worker loads the rules from: per rule, its file name and text and the
    grammar files of its folder(s) as ``(relative path, text)``; and this keyaudit's
    fingerprint."""
    from ..reading.grammar import bundled_grammar_dir

    bundled = bundled_grammar_dir().resolve()
    shipped = []
    total = 0
    for rule in rules:
        if rule.path is None:
            raise UsageError("--executor dask scores rules loaded from files only")
        path = Path(rule.path)
        folder = path.resolve().parent
        text = path.read_bytes().decode("utf-8")
        grammars: dict[str, str] = {}
        folders = {folder}
        for grammar in (rule.key_grammar.path, rule.answer_grammar.path):
            where = Path(grammar).resolve().parent
            if where != bundled and (where == folder or folder in where.parents):
                folders.add(where)
        for where in sorted(folders):
            found = sorted(where.glob("*.lark"))
            if len(found) > MAX_SHIPPED_GRAMMARS:
                raise UsageError(
                    f"{where}: more than {MAX_SHIPPED_GRAMMARS} grammar files to ship to the "
                    "Dask workers"
                )
            for file in found:
                if file.is_file():
                    grammars[file.relative_to(folder).as_posix()] = file.read_bytes().decode(
                        "utf-8", "surrogateescape"
                    )
        total += len(text) + sum(len(t) for t in grammars.values())
        if total > MAX_BUNDLE_BYTES:
            raise UsageError(
                f"the rules' files exceed {MAX_BUNDLE_BYTES:,} bytes to ship to the Dask workers"
            )
        shipped.append((path.name, str(path), text, sorted(grammars.items())))
    return {"format": 1, "fingerprint": fingerprint(), "rules": shipped}


def bundle_digest(bundle: dict) -> str:
    text = repr((bundle["fingerprint"], bundle["rules"]))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


#: This keyaudit, as a worker must match it (it could give other verdicts otherwise).
fingerprint = engine_fingerprint


# ---- on a worker ---------------------------------------------------------------------------------

#: Rules loaded in this worker process, by bundle digest (the few most recent), and the folder
#: their files were written to (kept while they are: a scorer reads its grammar again later).
_LOADED: dict[str, list[Scorer]] = {}
_FOLDERS: dict[str, str] = {}
_KEEP = 4


def _drop(digest: str) -> None:
    _LOADED.pop(digest, None)
    folder = _FOLDERS.pop(digest, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@atexit.register
def _drop_all() -> None:
    for digest in list(_FOLDERS):
        _drop(digest)


def score_remote(bundle: dict, digest: str, start: list[int], phase: str, items: list) -> tuple:
    """A chunk scored on a Dask worker: ``("ok", outcomes)`` or ``("error", kind, message)``."""
    try:
        scorers = _scorers(bundle, digest)
        for scorer, count in zip(scorers, start, strict=True):
            scorer.slow_answers = count
        outcomes = _score_items(scorers, phase, [tuple(item) for item in items])
        return ("ok", plain_outcomes(phase, outcomes), _peak_kb())
    except Exception as error:
        return ("error", *_describe(error))


def _scorers(bundle: dict, digest: str) -> list[Scorer]:
    if digest in _LOADED:
        return _LOADED[digest]
    if bundle.get("format") != 1 or bundle.get("fingerprint") != fingerprint():
        raise KeyauditError(
            f"a Dask worker runs keyaudit {fingerprint()}, this run is keyaudit "
            f"{bundle.get('fingerprint')}: install the same keyaudit on every worker"
        )
    from ..rules.rule import load_rule

    scorers = []
    folder = tempfile.mkdtemp(prefix="keyaudit-rules-")  # private: 0700, a fresh name
    loaded = False
    try:
        for number, (name, origin, text, grammars) in enumerate(bundle["rules"]):
            home = Path(folder, str(number))
            home.mkdir()
            for relative, grammar in grammars:
                target = (home / relative).resolve()
                if home.resolve() not in target.parents:
                    raise KeyauditError(f"{origin}: a shipped grammar path leaves its folder")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(grammar.encode("utf-8", "surrogateescape"))
            rule_path = home / name
            rule_path.write_text(text, encoding="utf-8")
            try:
                scorers.append(Scorer(load_rule(rule_path)))
            except KeyauditError as error:  # name the rule's own file, not the temporary one
                message = str(error).replace(str(rule_path), origin)
                raise type(error)(message.replace(str(home), os.path.dirname(origin))) from None
        loaded = True
    finally:
        if not loaded:
            shutil.rmtree(folder, ignore_errors=True)
    while len(_LOADED) >= _KEEP:
        _drop(next(iter(_LOADED)))
    _LOADED[digest] = scorers
    _FOLDERS[digest] = folder
    return scorers
