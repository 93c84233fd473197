"""Read inspect_ai evaluation logs: ``.eval`` archives and ``--log-format json`` files.

An ``.eval`` is a ZIP archive: ``header.json`` (``status``, ``eval.model``, the scorers),
``samples/<id>_epoch_<n>.json`` (``id``, ``epoch``, ``target``, ``output.completion``,
``scores.<scorer>.value``) and bookkeeping keyaudit does not read (``summaries.json`` collapses
newlines, so it is never taken as the response; ``reductions.json``, ``_journal/``). A ``.json``
log holds the same header fields and a ``samples`` list.

A run that did not finish is refused: an ``.eval`` without ``header.json`` (inspect writes it
last, so a crashed or killed run leaves none) or a header whose ``status`` is not ``success``.
The response is ``output.completion`` (inline even when ``input``/``messages`` use
``attachment://`` references); the verdict is the chosen scorer's value (``C``/``I``, 1/0 or
true/false; anything else, such as a partial ``P``, is an error).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import DataError, located
from ..budget import ResponseBudget
from ..jsondoc import parse_document, read_document_bytes
from .records import LoggedRun, LoggedSample, ResponseSource
from .records import renamed as _renamed
from .zipmember import open_archive, read_member

_SAMPLE_MEMBER = re.compile(r"^samples/[^/]+\.json$")
_TRUE = {"c", "correct", "yes", "true", "1"}
_FALSE = {"i", "incorrect", "no", "false", "0"}

#: The largest epoch a sample may have: the response table keeps epochs as 64-bit integers.
MAX_EPOCH = 2**63 - 1


def read_inspect(
    path: Path, source: ResponseSource, budget: ResponseBudget | None = None
) -> LoggedRun:
    """One inspect log (``.eval`` or ``.json``) as a :class:`LoggedRun`; each kept response and
    each document read is charged to ``budget`` (default: a fresh run's)."""
    budget = budget if budget is not None else ResponseBudget()
    if is_zip(path) or path.name.endswith(".eval"):
        return _read_eval(path, source, budget)  # a .eval that is not a ZIP fails here, saying so
    return _read_json_log(path, source, budget)


def is_zip(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"PK\x03\x04"
    except OSError as error:
        raise DataError(located(path, None, None, f"cannot read file: {error}")) from None


def _read_eval(path: Path, source: ResponseSource, budget: ResponseBudget) -> LoggedRun:
    with open_archive(path) as archive:
        names = archive.namelist()
        if len(set(names)) != len(names):  # zipfile would silently read the last of them
            seen: set[str] = set()
            twice = next(n for n in names if n in seen or seen.add(n))
            raise DataError(
                located(
                    f"{path}:{twice}",
                    None,
                    None,
                    "the archive holds this member twice: which one is the log's is unknowable",
                )
            )
        if "header.json" not in names:
            raise DataError(
                located(
                    path,
                    None,
                    None,
                    "no header.json: the inspect run did not finish (failed or interrupted); "
                    "rerun it or point at a complete log",
                )
            )
        where = f"{path}:header.json"
        header = _json(read_member(archive, "header.json", path, budget), where, budget)
        model, scorer = _header(header, source, where)
        identity = _identity(header)
        samples: list[LoggedSample] = []
        digests: list[bytes] = []
        for name in sorted(n for n in names if _SAMPLE_MEMBER.match(n)):
            where = f"{path}:{name}"
            record = _json(read_member(archive, name, path, budget), where, budget)
            sample = _sample(record, scorer, source, where)
            del record  # the rest of the sample (messages, events) is not kept
            samples.append(_kept(sample, budget, where, digests))
    return _run(path, model, scorer, source, samples, identity, _fingerprint(digests))


def _read_json_log(path: Path, source: ResponseSource, budget: ResponseBudget) -> LoggedRun:
    log = _json(read_document_bytes(path, budget), str(path), budget)
    model, scorer = _header(log, source, str(path))
    records = log.get("samples")
    if not isinstance(records, list):
        raise DataError(located(path, None, None, "inspect log has no 'samples' list"))
    samples: list[LoggedSample] = []
    digests: list[bytes] = []
    for i, record in enumerate(records):
        where = f"{path}:samples[{i}]"
        sample = _sample(record, scorer, source, where)
        samples.append(_kept(sample, budget, where, digests))
    return _run(path, model, scorer, source, samples, _identity(log), _fingerprint(digests))


def _kept(
    sample: LoggedSample, budget: ResponseBudget, where: str, digests: list[bytes]
) -> LoggedSample:
    """``sample`` with what is kept of its text (:meth:`ResponseBudget.keep`), charged; the
    digest of the whole sample goes to ``digests`` first."""
    whole = json.dumps(
        [sample.id, sample.epoch, sample.correct, sample.target, sample.text], ensure_ascii=False
    )
    digests.append(hashlib.sha256(whole.encode("utf-8", "surrogatepass")).digest())
    text = budget.keep(sample.text, where, sample.id)
    return sample if text is sample.text else replace(sample, text=text)


def _identity(header: dict[str, Any]) -> str | None:
    """The run's ``eval.eval_id`` (a string), if the log has one."""
    evaluation = header.get("eval")
    value = evaluation.get("eval_id") if isinstance(evaluation, dict) else None
    return value if isinstance(value, str) and value else None


def _fingerprint(digests: list[bytes]) -> str:
    """One digest of a run's samples, whatever their order in the file."""
    return hashlib.sha256(b"".join(sorted(digests))).hexdigest()


def _run(
    path: Path,
    model: str,
    scorer: str,
    source: ResponseSource,
    samples: list[LoggedSample],
    identity: str | None = None,
    fingerprint: str | None = None,
) -> LoggedRun:
    id_field = f"metadata.{source.id_field}" if source.id_field else "sample id"
    return LoggedRun(
        path,
        "inspect",
        source.model or model,
        samples,
        (("scorer", scorer), ("id", id_field), *_renamed(source, model)),
        identity,
        fingerprint,
    )


def _json(
    data: bytes | bytearray | str, where: str, budget: ResponseBudget | None = None
) -> dict[str, Any]:
    value = parse_document(data, where, budget)
    if not isinstance(value, dict):
        raise DataError(located(where, None, None, "expected a JSON object"))
    return value


def _header(header: dict[str, Any], source: ResponseSource, where: str) -> tuple[str, str]:
    """The log's model and the scorer giving the verdict (checked against the log's scorers).
    A field of the wrong type is an error naming it, never a crash."""
    status = header.get("status")
    if status != "success":
        shown = repr(status) if isinstance(status, str) and len(status) <= 40 else None
        raise DataError(
            located(
                where,
                None,
                None,
                f"run status is {shown or _kind(status)}, not 'success': its samples are "
                "incomplete",
            )
        )
    evaluation = _table(header, "eval", where)
    model = evaluation.get("model")
    if not isinstance(model, str) or not model:
        raise DataError(located(where, None, None, "missing 'eval.model' (a non-empty string)"))
    scorers = _scorer_names(header, evaluation, where)
    if source.scorer is not None:
        if source.scorer not in scorers:
            known = ", ".join(scorers) or "none"
            raise DataError(
                located(where, None, None, f"unknown scorer {source.scorer!r} (scorers: {known})")
            )
        return model, source.scorer
    if not scorers:
        raise DataError(located(where, None, None, "the run has no scorer: no verdict to read"))
    return model, scorers[0]


def _scorer_names(header: dict[str, Any], evaluation: dict[str, Any], where: str) -> list[str]:
    names: list[str] = []
    results = _table(header, "results", where)
    for entry in _list(results, "scores", where, "results.scores"):
        name = (entry.get("scorer") or entry.get("name")) if isinstance(entry, dict) else None
        if isinstance(name, str) and name not in names:
            names.append(name)
    if not names:
        for entry in _list(evaluation, "scorers", where, "eval.scorers"):
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def _table(parent: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    """``parent[name]``: an object, or ``{}`` when absent or null; another type is an error."""
    value = parent.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(
            located(where, None, None, f"'{name}' must be an object, got {_kind(value)}")
        )
    return value


def _list(parent: dict[str, Any], name: str, where: str, shown: str) -> list[Any]:
    """``parent[name]``: a list, or ``[]`` when absent or null; another type is an error."""
    value = parent.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise DataError(located(where, None, None, f"'{shown}' must be a list, got {_kind(value)}"))
    return value


def _kind(value: Any) -> str:
    """What a JSON value is, without showing it (a log's content is not echoed)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _sample(
    record: dict[str, Any], scorer: str, source: ResponseSource, where: str
) -> LoggedSample:
    if not isinstance(record, dict):
        raise DataError(located(where, None, None, "expected a JSON object"))
    if source.id_field:
        metadata = record.get("metadata")
        item_id = metadata.get(source.id_field) if isinstance(metadata, dict) else None
        if item_id is None:
            raise DataError(located(where, None, None, f"no metadata field {source.id_field!r}"))
    else:
        item_id = record.get("id")
    if not isinstance(item_id, (str, int)) or isinstance(item_id, bool):
        raise DataError(located(where, None, None, "missing or invalid sample id"))
    epoch = record.get("epoch", 1)
    if not isinstance(epoch, int) or isinstance(epoch, bool) or not 1 <= epoch <= MAX_EPOCH:
        raise DataError(
            located(where, None, None, f"invalid 'epoch': a whole number from 1 to {MAX_EPOCH:,}")
        )
    output = record.get("output")
    text = output.get("completion") if isinstance(output, dict) else None
    if not isinstance(text, str):
        raise DataError(located(where, None, None, "missing 'output.completion'"))
    scores = record.get("scores")
    score = scores.get(scorer) if isinstance(scores, dict) else None
    if not isinstance(score, dict) or "value" not in score:
        raise DataError(located(where, None, None, f"no score from scorer {scorer!r}"))
    return LoggedSample(
        id=str(item_id),
        text=text,
        correct=_verdict(score["value"], scorer, where),
        epoch=epoch,
        target=_target(record.get("target"), where),
        where=where,
    )


def _verdict(value: Any, scorer: str, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    shown = repr(value) if isinstance(value, (str, int, float)) else type(value).__name__
    raise DataError(
        located(
            where,
            None,
            None,
            f"scorer {scorer!r} value {shown:.40} is not a right/wrong verdict (C/I, 1/0, true/false)",
        )
    )


def _target(value: Any, where: str) -> str | tuple[str, ...] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise DataError(located(where, None, None, "'target' must be a string or a list of strings"))
