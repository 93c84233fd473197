"""The benchmark data model and its loaders: a directory of JSON Lines files, read-only.

Layout (documented in README, "Data layout")::

    benchmark.toml        optional: name, id_pattern, roster, [fields]
    keys/*.jsonl[.gz]     the full answer-key corpus: {"id": ..., "answer": ...}
    responses/*.jsonl[.gz] one file per model: {"id", "model", "response", "correct"?}

Loading validates everything a later stage relies on, so scoring and statistics never meet a
half-valid record: duplicate ids, ids that do not match the pattern, responses without a key and
files that mix model names all stop the load with ``file:line: what is wrong``.
keyaudit only ever opens these files for reading.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import DataError, located
from . import keycache
from .jsonl import jsonl_files, read_jsonl, require_field
from .strict import strict_correct
from .tomlfile import load_toml

DEFAULT_ID_PATTERN = r"^(?P<domain>.+)_(?P<image>\d+)_q(?P<level>\d+)$"
_REQUIRED_GROUPS = ("domain", "image", "level")


@dataclass(frozen=True)
class FieldNames:
    """JSON field names used by the benchmark's files, when they differ from the defaults."""

    id: str = "id"
    answer: str = "answer"
    model: str = "model"
    response: str = "response"
    correct: str = "correct"


@dataclass(frozen=True)
class BenchmarkConfig:
    """What ``benchmark.toml`` says; every field has a default so the file is optional."""

    name: str
    id_pattern: re.Pattern[str]
    roster: tuple[str, ...] = ()
    fields: FieldNames = FieldNames()
    description: str = ""
    source: str = ""


class ItemRef(NamedTuple):
    """Where an item sits: its cell (domain, level) and its image cluster.

    ``cluster`` is ``"<domain>_<image>"``: all questions about one image share it, which is what
    the bootstrap resamples. (Named tuples, not dataclasses: a corpus has ~10^5 of them and
    tuples are several times cheaper to create.)
    """

    domain: str
    cluster: str
    level: int


class KeyItem(NamedTuple):
    """One answer key: an item id, where it sits, and the key string exactly as stored."""

    id: str
    ref: ItemRef
    answer: str


@dataclass(frozen=True, slots=True)
class Response:
    """One stored model response and the benchmark's current strict verdict on it.

    ``correct_computed`` is true when the file had no ``correct`` field and keyaudit computed the
    verdict itself with the strict scorer (reports say so).
    """

    id: str
    model: str
    ref: ItemRef
    text: str
    correct: bool
    correct_computed: bool = False


@dataclass(frozen=True)
class Benchmark:
    """A loaded benchmark: its configuration, every key, and every stored response."""

    root: Path
    config: BenchmarkConfig
    keys: dict[str, KeyItem]
    responses: tuple[Response, ...] = ()
    response_files: dict[str, Path] = field(default_factory=dict)
    _index: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def models(self) -> tuple[str, ...]:
        """Models that have a response file, in file-name order."""
        return tuple(self.response_files)

    @property
    def missing_models(self) -> tuple[str, ...]:
        """Roster models with no response file: reported, never filled in."""
        found = set(self.response_files)
        return tuple(name for name in self.config.roster if name not in found)

    @property
    def computed_models(self) -> tuple[str, ...]:
        """Models whose strict verdicts keyaudit computed because the file had none."""
        return tuple(sorted({r.model for r in self.responses if r.correct_computed}))

    def keys_in_cell(self, domain: str, level: int) -> list[KeyItem]:
        """All keys of one cell of the full corpus, in id order."""
        return list(self._cell_index().get((domain, level), ()))

    def cells(self) -> list[tuple[str, int]]:
        """Every (domain, level) cell of the key corpus, sorted."""
        return sorted(self._cell_index())

    def _cell_index(self) -> dict[tuple[str, int], tuple[KeyItem, ...]]:
        """Keys grouped by cell, each group in id order; built once, on first use."""
        index = self._index.get("cells")
        if index is None:
            grouped: dict[tuple[str, int], list[KeyItem]] = {}
            for key in self.keys.values():
                grouped.setdefault((key.ref.domain, key.ref.level), []).append(key)
            index = {cell: tuple(sorted(keys)) for cell, keys in grouped.items()}
            self._index["cells"] = index
        return index


_CONFIG_KEYS = {"name", "id_pattern", "roster", "fields", "description", "source"}


def load_config(root: Path) -> BenchmarkConfig:
    """Read ``benchmark.toml`` if present; unknown keys are errors, not silently ignored."""
    path = root / "benchmark.toml"
    if not path.exists():
        return BenchmarkConfig(name=root.name, id_pattern=re.compile(DEFAULT_ID_PATTERN))
    data = load_toml(path)
    for name in data:
        if name not in _CONFIG_KEYS:
            expected = ", ".join(sorted(_CONFIG_KEYS))
            raise DataError(
                located(path, None, None, f"unknown key {name!r} (expected one of {expected})")
            )
    pattern_text = _config_value(data, "id_pattern", str, DEFAULT_ID_PATTERN, path)
    try:
        pattern = re.compile(pattern_text)
    except re.error as error:
        raise DataError(
            located(path, None, None, f"id_pattern is not a valid regex: {error}")
        ) from None
    missing = [g for g in _REQUIRED_GROUPS if g not in pattern.groupindex]
    if missing:
        raise DataError(
            located(path, None, None, f"id_pattern lacks the named group(s) {', '.join(missing)}")
        )
    roster = _config_value(data, "roster", list, [], path)
    if not all(isinstance(name, str) for name in roster):
        raise DataError(located(path, None, None, "roster must be a list of model names"))
    if len(set(roster)) != len(roster):
        raise DataError(located(path, None, None, "roster names a model twice"))
    fields_table = _config_value(data, "fields", dict, {}, path)
    known = set(FieldNames.__dataclass_fields__)
    for name, value in fields_table.items():
        if name not in known or not isinstance(value, str):
            raise DataError(
                located(
                    path,
                    None,
                    None,
                    f"[fields] {name!r} is not one of {sorted(known)} or not a string",
                )
            )
    return BenchmarkConfig(
        name=_config_value(data, "name", str, root.name, path),
        id_pattern=pattern,
        roster=tuple(roster),
        fields=FieldNames(**fields_table),
        description=_config_value(data, "description", str, "", path),
        source=_config_value(data, "source", str, "", path),
    )


def _config_value(data: dict[str, Any], name: str, kind: type, default: Any, path: Path) -> Any:
    value = data.get(name, default)
    if not isinstance(value, kind):
        raise DataError(located(path, None, None, f"{name!r} must be a {kind.__name__}"))
    return value


def parse_item_id(item_id: str, pattern: re.Pattern[str], path: Path, line: int) -> ItemRef:
    """Split an id into domain, image cluster and level with the benchmark's id pattern."""
    match = pattern.match(item_id)
    if match is None:
        raise DataError(
            located(
                path,
                line,
                None,
                f"id {item_id!r} does not match the id pattern {pattern.pattern!r}",
            )
        )
    domain, image, level = match.group("domain", "image", "level")
    try:
        level_number = int(level)
    except ValueError:
        raise DataError(
            located(path, line, None, f"id {item_id!r}: level {level!r} is not an integer")
        ) from None
    return ItemRef(domain, domain + "_" + image, level_number)


def load_keys(root: Path, config: BenchmarkConfig) -> dict[str, KeyItem]:
    """Every key of ``keys/``; a duplicate id anywhere in the corpus is an error.

    A corpus that validated before, unchanged since, is read from :mod:`.keycache`.
    """
    folder = root / "keys"
    files = jsonl_files(folder) if folder.is_dir() else []
    if not files:
        raise DataError(
            located(folder, None, None, "no keys: expected keys/*.jsonl or keys/*.jsonl.gz")
        )
    # What the parsed records depend on besides the files; keycache.CACHE_FORMAT covers the rest.
    settings = repr((config.id_pattern.pattern, config.fields))
    cached = keycache.read(files, settings)
    if cached is not None:
        ids, answers, domains, clusters, levels = cached
        return {
            item_id: KeyItem(item_id, ItemRef(domain, cluster, level), answer)
            for item_id, answer, domain, cluster, level in zip(
                ids, answers, domains, clusters, levels, strict=True
            )
        }
    keys = _parse_keys(files, config)
    keycache.write(
        files,
        settings,
        (
            list(keys),
            [k.answer for k in keys.values()],
            [k.ref.domain for k in keys.values()],
            [k.ref.cluster for k in keys.values()],
            [k.ref.level for k in keys.values()],
        ),
    )
    return keys


def _parse_keys(files: list[Path], config: BenchmarkConfig) -> dict[str, KeyItem]:
    names = config.fields
    keys: dict[str, KeyItem] = {}
    seen_at: dict[str, tuple[Path, int]] = {}
    for path in files:
        for line, record in read_jsonl(path):
            item_id = record.get(names.id)
            answer = record.get(names.answer)
            if type(item_id) is not str or type(answer) is not str:  # fast path: both valid
                item_id = require_field(record, names.id, path, line, str)
                answer = require_field(record, names.answer, path, line, str)
            if item_id in keys:
                first_path, first_line = seen_at[item_id]
                raise DataError(
                    located(
                        path,
                        line,
                        None,
                        f"duplicate id {item_id!r} (first at {first_path.name}:{first_line})",
                    )
                )
            keys[item_id] = KeyItem(
                item_id, parse_item_id(item_id, config.id_pattern, path, line), answer
            )
            seen_at[item_id] = (path, line)
    return keys


def load_responses(
    root: Path, config: BenchmarkConfig, keys: dict[str, KeyItem]
) -> tuple[tuple[Response, ...], dict[str, Path]]:
    """Every stored response of ``responses/``, one model per file.

    A benchmark without a ``responses/`` folder has none; commands that need only keys still work.
    """
    folder = root / "responses"
    if not folder.is_dir():
        return (), {}
    names = config.fields
    responses: list[Response] = []
    files: dict[str, Path] = {}
    for path in jsonl_files(folder):
        model, records = _load_model_file(path, names, config, keys)
        if model is None:
            continue
        if model in files:
            raise DataError(
                located(path, None, None, f"model {model!r} also has a file: {files[model].name}")
            )
        files[model] = path
        responses.extend(records)
    return tuple(responses), files


def _load_model_file(
    path: Path, names: FieldNames, config: BenchmarkConfig, keys: dict[str, KeyItem]
) -> tuple[str | None, list[Response]]:
    model: str | None = None
    records: list[Response] = []
    seen: set[str] = set()
    for line, record in read_jsonl(path):
        item_id = require_field(record, names.id, path, line, str)
        name = require_field(record, names.model, path, line, str)
        text = require_field(record, names.response, path, line, str)
        if model is None:
            model = name
        elif name != model:
            raise DataError(
                located(
                    path, line, None, f"model {name!r} differs from {model!r} earlier in this file"
                )
            )
        if item_id in seen:
            raise DataError(
                located(path, line, None, f"duplicate id {item_id!r} for model {model!r}")
            )
        seen.add(item_id)
        ref = parse_item_id(item_id, config.id_pattern, path, line)
        key = keys.get(item_id)
        if key is None:
            raise DataError(
                located(path, line, None, f"response id {item_id!r} has no key in keys/")
            )
        if names.correct in record:
            correct = require_field(record, names.correct, path, line, bool)
            computed = False
        else:
            correct, computed = strict_correct(text, key.answer), True
        records.append(Response(item_id, name, ref, text, correct, computed))
    return model, records


def load_benchmark(root: str | Path, *, with_responses: bool = True) -> Benchmark:
    """Load and validate a benchmark directory (never writes to it).

    The cyclic garbage collector is paused while the ~10^5 records are built: they hold no
    cycles, and its repeated scans of the growing heap would otherwise cost a third of the load.
    """
    root = Path(root)
    if not root.is_dir():
        raise DataError(located(root, None, None, "benchmark directory not found"))
    config = load_config(root)
    collecting = gc.isenabled()
    gc.disable()
    try:
        keys = load_keys(root, config)
        if not with_responses:
            return Benchmark(root, config, keys)
        responses, files = load_responses(root, config, keys)
        return Benchmark(root, config, keys, responses, files)
    finally:
        if collecting:
            gc.enable()
