"""Read lm-evaluation-harness ``--log_samples`` output: ``samples_<task>_<ts>.jsonl`` + results.

lm-eval writes, per model folder, ``samples_<task>_<timestamp>.jsonl`` (one line per document and
filter: ``doc`` the dataset row, ``doc_id`` its row index, ``target``, ``resps`` the raw
generations, ``filtered_resps`` what was scored, ``filter``, and one field per metric such as
``exact_match``) and ``results_<timestamp>.json`` (``model_name``, ``config``, each task's
``configs.<task>.filter_list``). The model's name is only in the results file, so a samples file
without its results file is an error.

The benchmark's id is a field of ``doc`` (``doc_id`` is only the row index): ``id_field``, default
``id`` else ``question_id``. The verdict is the chosen filter's metric (default: the first filter
of the task's config, and its only or first metric); 1/0 and true/false are verdicts, anything
else is an error. The response scored by rules is the raw generation (``resps``): with
``repeats: k`` there are k of them, epochs 1..k, all carrying the document's one verdict (lm-eval
scores the filtered result once per document).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import DataError, located
from ..budget import ResponseBudget
from ..jsondoc import parse_document, read_document_bytes
from ..jsonl import read_jsonl
from .records import LoggedRun, LoggedSample, ResponseSource
from .records import renamed as _renamed

SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>[^_]+)\.jsonl$")
DEFAULT_ID_FIELDS = ("id", "question_id")


def looks_like_samples(record: dict[str, Any]) -> bool:
    """A line of an lm-eval samples file (used by format detection)."""
    return "doc_id" in record and "doc" in record and ("resps" in record or "filter" in record)


def results_path(path: Path) -> Path:
    """The ``results_<ts>.json`` written with ``samples_<task>_<ts>.jsonl``."""
    match = SAMPLES_NAME.match(path.name)
    if match is None:
        raise DataError(
            located(
                path,
                None,
                None,
                "an lm-eval samples file must be named samples_<task>_<timestamp>.jsonl",
            )
        )
    return path.with_name(f"results_{match.group('stamp')}.json")


def read_lm_eval(
    path: Path, source: ResponseSource, budget: ResponseBudget | None = None
) -> LoggedRun:
    """One samples file and its results file as a :class:`LoggedRun`; each kept generation and
    the results document are charged to ``budget`` (default: a fresh run's)."""
    budget = budget if budget is not None else ResponseBudget()
    task = SAMPLES_NAME.match(path.name)
    results_file = results_path(path)
    if not results_file.is_file():
        raise DataError(
            located(
                path,
                None,
                None,
                f"no {results_file.name} beside it: lm-eval writes the model's name only there; "
                "keep the samples file with its results file",
            )
        )
    results = _results(results_file, budget)
    model = results.get("model_name")
    if not isinstance(model, str) or not model:
        raise DataError(located(results_file, None, None, "missing 'model_name'"))
    task_name = task.group("task") if task else ""
    filters = _filter_names(results, task_name, results_file)
    chosen = source.filter or (filters[0] if filters else None)
    if chosen is None:
        raise DataError(
            located(results_file, None, None, f"no filter listed for task {task_name!r}")
        )
    if filters and chosen not in filters:
        raise DataError(
            located(
                path,
                None,
                None,
                f"unknown filter {chosen!r} (filters of {task_name}: {', '.join(filters)})",
            )
        )
    samples: list[LoggedSample] = []
    metric_used: str | None = None
    id_used: str | None = None
    seen_filter = False
    for line, record in read_jsonl(path):
        where = f"{path}:{line}"
        if record.get("filter") != chosen:
            if "filter" not in record:
                raise DataError(located(where, None, None, "missing field 'filter'"))
            continue
        seen_filter = True
        doc = record.get("doc")
        if not isinstance(doc, dict):
            raise DataError(located(where, None, None, "missing field 'doc'"))
        id_used = id_used or _id_field(doc, source, where)
        item_id = doc.get(id_used)
        if not isinstance(item_id, (str, int)) or isinstance(item_id, bool):
            raise DataError(
                located(where, None, None, f"doc field {id_used!r} is missing or not an id")
            )
        metric_used = metric_used or _metric(record, source, where)
        verdict = _verdict(record.get(metric_used), metric_used, where)
        target = record.get("target")
        generations = _generations(record.get("resps"), where)
        for epoch, generation in enumerate(generations, start=1):
            text = budget.keep(generation, where, str(item_id))
            samples.append(
                LoggedSample(
                    id=str(item_id),
                    text=text,
                    correct=verdict,
                    epoch=epoch,
                    target=None if target is None else str(target),
                    where=where,
                )
            )
    if not seen_filter:
        raise DataError(located(path, None, None, f"no line with filter {chosen!r}"))
    details = (
        ("filter", chosen),
        ("metric", metric_used or ""),
        ("id", f"doc.{id_used}"),
        *_renamed(source, model),
    )
    return LoggedRun(path, "lm-eval", source.model or model, samples, details)


def _results(path: Path, budget: ResponseBudget) -> dict[str, Any]:
    value = parse_document(read_document_bytes(path, budget), path, budget)
    if not isinstance(value, dict):
        raise DataError(located(path, None, None, "expected a JSON object"))
    return value


def _filter_names(results: dict[str, Any], task: str, where: Path) -> list[str]:
    """The filters the task's config lists; a config of the wrong type is an error naming the
    field, never a crash."""
    configs = results.get("configs")
    if configs is None:
        configs = {}
    if not isinstance(configs, dict):
        raise DataError(
            located(where, None, None, f"'configs' must be an object, {_kind(configs)}")
        )
    config = configs.get(task)
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise DataError(
            located(where, None, None, f"'configs.{task}' must be an object, {_kind(config)}")
        )
    listed = config.get("filter_list")
    if listed is None:
        listed = []
    if not isinstance(listed, list):
        raise DataError(
            located(
                where, None, None, f"'configs.{task}.filter_list' must be a list, {_kind(listed)}"
            )
        )
    names = []
    for entry in listed:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            names.append(entry["name"])
    return names


def _kind(value: Any) -> str:
    """What a JSON value is, without showing it (a log's content is not echoed)."""
    kinds = {bool: "a boolean", dict: "an object", list: "a list", str: "a string"}
    return "got " + kinds.get(type(value), "null" if value is None else "a number")


def _id_field(doc: dict[str, Any], source: ResponseSource, where: str) -> str:
    if source.id_field:
        if source.id_field not in doc:
            raise DataError(located(where, None, None, f"doc has no field {source.id_field!r}"))
        return source.id_field
    for name in DEFAULT_ID_FIELDS:
        if name in doc:
            return name
    raise DataError(
        located(
            where,
            None,
            None,
            "doc has no 'id' or 'question_id' field: name the field holding the benchmark id "
            "(--id-field or id_field in benchmark.toml)",
        )
    )


def _metric(record: dict[str, Any], source: ResponseSource, where: str) -> str:
    listed = record.get("metrics")
    names = [m for m in listed if isinstance(m, str)] if isinstance(listed, list) else []
    if source.metric:
        if source.metric not in record:
            raise DataError(located(where, None, None, f"no metric {source.metric!r} on this line"))
        return source.metric
    if not names:
        raise DataError(located(where, None, None, "no 'metrics' listed: name the metric"))
    return names[0]


def _verdict(value: Any, metric: str, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    shown = (
        repr(value)
        if isinstance(value, (int, float, str)) or value is None
        else type(value).__name__
    )
    raise DataError(
        located(
            where,
            None,
            None,
            f"metric {metric!r} value {shown:.40} is not a right/wrong verdict (1/0)",
        )
    )


def _generations(resps: Any, where: str) -> list[str]:
    """``resps`` of a generation task: ``[[g1, ..., gk]]`` (k = repeats)."""
    if (
        isinstance(resps, list)
        and len(resps) == 1
        and isinstance(resps[0], list)
        and resps[0]
        and all(isinstance(g, str) for g in resps[0])
    ):
        return resps[0]
    raise DataError(
        located(where, None, None, "'resps' is not a list of generations (a generate_until task)")
    )
