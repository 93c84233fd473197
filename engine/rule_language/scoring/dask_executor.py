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
  private temporary folder it creates, loads the rules from there with its own keyaudit, and
  removes the folder; the loaded rules are kept per worker process by the bundle's digest;
* each **chunk**: ``(rule index, key, text)`` tuples of strings, and the time-limit counts;
* each **answer**: ``("ok", [(verdict tuple or value, slow), ...])`` or ``("error", kind,
  message)``, checked here to hold one outcome per item (never a silently missing verdict).

A worker lost mid-run (killed, out of memory) has its chunks run again on another worker by
Dask's own scheduler; after ``distributed.scheduler.allowed-failures`` losses of one chunk the
run stops with one line, exit 2.

Not bounded here: a Dask worker runs tasks in threads, where the per-answer CPU limit (a signal
timer, main thread only) does not apply; an answer that would hit it locally is scored to the end
(and then gets its verdict, not "not scored").
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import KeyauditError, UsageError
from .batch import WorkerError, _describe, _error, _peak_kb, _score_items, plain_outcomes
from .fingerprint import engine_fingerprint
from .scorer import Scorer

#: Grammar files shipped per folder at most, and bytes per rule bundle at most.
MAX_SHIPPED_GRAMMARS = 200
MAX_BUNDLE_BYTES = 64 * 1024 * 1024
#: Seconds to reach the scheduler.
CONNECT_SECONDS = 30


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
            try:
                client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as error:
                reason = " ".join(str(error).split()) or type(error).__name__
                raise UsageError(
                    f"--scheduler {address}: cannot reach the Dask scheduler ({reason})"
                ) from None
        self.client = client
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
            answers = self.client.gather(futures)
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
        for answer in answers:
            if answer[0] != "ok":
                raise _error(*answer[1:])
            parts.append(answer[1])
            self.peak_kb = max(self.peak_kb, answer[2])
        return parts

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

#: Rules loaded in this worker process, by bundle digest (the few most recent).
_LOADED: dict[str, list[Scorer]] = {}
_KEEP = 4


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
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    while len(_LOADED) >= _KEEP:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[digest] = scorers
    return scorers
