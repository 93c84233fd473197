"""The benchmark data model and its loaders: a directory of key and response files, read-only.

Layout (documented in README, "Data layout")::

    benchmark.toml         optional: name, id_pattern, roster, [fields], [keys], [[responses]]
    keys/*.jsonl[.gz]      the full answer-key corpus: {"id": ..., "answer": ..., "question"?: ...}
      (or keys/*.csv, or a published Dataset/<domain>_dataset_<n>/answer_key.csv tree)
    responses/             keyaudit's own *.jsonl[.gz] (one model or several per file: {"id",
                           "model", "response", "correct"?}), inspect_ai logs, lm-eval samples

Responses may also come from sources named in ``benchmark.toml`` or on the command line
(:class:`ResponseSource`); each sample is checked against the key of its id (a log's own target
must equal it), and several samples of one id for one model (epochs, repeats) are kept or reduced
by the epochs policy: ``first`` keeps the lowest epoch, ``all`` keeps every one.

Loading validates everything a later stage relies on, so scoring and statistics never meet a
half-valid record: duplicate ids, ids that do not match the pattern, responses without a key and
one (model, id, epoch) twice all stop the load with ``file:line: what is wrong``.
keyaudit only ever opens these files for reading.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError, KeyauditError, UsageError, located
from . import keycache, response_cache
from .budget import ENVIRONMENT as BUDGET_VARIABLE
from .budget import ResponseBudget
from .csv_keys import QUESTION_COLUMNS, csv_tree_files, read_csv_keys
from .excerpt import Excerpter
from .filekind import exists_at_all, file_problem, folder_problem
from .items import ItemRef, KeyItem, Response
from .jsonl import data_files, jsonl_files, read_jsonl, require_field
from .links import LinkPolicy
from .response_table import ResponseTable, TableBuilder, column
from .responses.records import FORMATS, FieldNames, LoggedRun, ResponseSource, RunInfo
from .responses.sources import iter_source, source_files, task_of
from .strict import strict_correct
from .timelimit import ID_SECONDS, ItemClock, TimeLimitExceeded
from .tomlfile import load_toml

DEFAULT_ID_PATTERN = r"^(?P<domain>.+)_(?P<image>\d+)_q(?P<level>\d+)$"
_REQUIRED_GROUPS = ("domain", "image", "level")
#: Policies for several samples of one id and model (inspect epochs, lm-eval repeats).
EPOCH_POLICIES = ("first", "all")
KEY_FORMATS = ("auto", "jsonl", "csv")
#: Longest item id accepted (characters); the id pattern never sees a longer one.
MAX_ID_CHARS = 1000
#: Largest level number (levels are small integers such as 1-5).
MAX_LEVEL = 1_000_000
#: Bounds the id pattern's time on each id while :func:`load_benchmark` runs (one repeating
#: timer for the whole load; two attribute writes per id).
_ID_CLOCK = ItemClock(ID_SECONDS, "the id pattern")


@dataclass(frozen=True)
class BenchmarkConfig:
    """What ``benchmark.toml`` says; every field has a default so the file is optional."""

    name: str
    id_pattern: re.Pattern[str]
    roster: tuple[str, ...] = ()
    fields: FieldNames = FieldNames()
    description: str = ""
    source: str = ""
    #: ``[keys]``: where the keys are (relative to the benchmark) and their format.
    keys_path: str | None = None
    keys_format: str = "auto"
    #: ``[[responses]]``: response sources (paths already relative to the benchmark's root).
    responses: tuple[ResponseSource, ...] = ()
    #: Where the links the benchmark holds may lead (:mod:`.links`); none: nowhere out of it.
    links: LinkPolicy | None = None


@dataclass(frozen=True)
class Benchmark:
    """A loaded benchmark: its configuration, every key, and every stored response.

    ``responses`` is a :class:`~.response_table.ResponseTable` when loaded (columns: a few bytes a
    response), or any sequence of :class:`Response` when built by hand; :meth:`response_table`
    gives the columns either way.
    """

    root: Path
    config: BenchmarkConfig
    keys: dict[str, KeyItem]
    responses: Sequence[Response] = ()
    response_files: dict[str, Path] = field(default_factory=dict)
    #: The epochs policy the responses were loaded with, and how each response file was read.
    epochs: str = "first"
    sources: tuple[RunInfo, ...] = ()
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

    def response_table(self) -> ResponseTable:
        """The responses as columns (built once when they were given as objects)."""
        if isinstance(self.responses, ResponseTable):
            return self.responses
        table = self._index.get("table")
        if table is None:
            table = self._index["table"] = ResponseTable.from_responses(self.responses, self.keys)
        return table

    @property
    def computed_models(self) -> tuple[str, ...]:
        """Models whose strict verdicts keyaudit computed because the file had none."""
        table = self.response_table()
        found = np.unique(table.model[table.computed])
        return tuple(sorted(table.models[m] for m in found.tolist()))

    @property
    def n_epochs(self) -> int:
        """The most samples any model has of one id (1 unless logs have epochs or repeats).

        Counted per model over the item column (a sort of one int64 code per response took
        about 800 MB at 25 M responses); computed once."""
        found = self._index.get("n_epochs")
        if found is None:
            table = self.response_table()
            found = 1
            if len(table):
                order = np.argsort(table.model, kind="stable")  # each model's rows together
                bounds = np.searchsorted(table.model[order], np.arange(len(table.models) + 1))
                for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
                    if b > a:
                        counts = np.bincount(table.item[order[a:b]], minlength=1)
                        found = max(found, int(counts.max()))
            self._index["n_epochs"] = found
        return found

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


_CONFIG_KEYS = {
    "name",
    "id_pattern",
    "roster",
    "fields",
    "description",
    "source",
    "keys",
    "responses",
}
_SOURCE_KEYS = {"path", "format", "scorer", "filter", "metric", "id_field", "model", "task"}


def load_config(root: Path, follow_links: bool = False) -> BenchmarkConfig:
    """Read ``benchmark.toml`` if present; unknown keys are errors, not silently ignored.
    ``follow_links`` (``--follow-links``) lets the links the benchmark holds lead anywhere."""
    path = root / "benchmark.toml"
    links = LinkPolicy.for_benchmark(root, follow_links)
    if not exists_at_all(path):
        return BenchmarkConfig(
            name=root.name, id_pattern=re.compile(DEFAULT_ID_PATTERN), links=links
        )
    problem = file_problem(path, "a TOML file")
    if problem is not None:  # a dangling link, a directory...: never silently the defaults
        raise DataError(located(path, None, None, problem))
    data = load_toml(path, DataError)
    for name in data:
        if name not in _CONFIG_KEYS:
            expected = ", ".join(sorted(_CONFIG_KEYS))
            raise DataError(
                located(path, None, None, f"unknown key {name!r} (expected one of {expected})")
            )
    pattern_text = _config_value(data, "id_pattern", str, DEFAULT_ID_PATTERN, path)
    try:
        pattern = re.compile(pattern_text)
    except (re.error, OverflowError, RecursionError, ValueError) as error:
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
    keys_table = _config_value(data, "keys", dict, {}, path)
    for name, value in keys_table.items():
        if name not in ("path", "format") or not isinstance(value, str):
            raise DataError(
                located(
                    path, None, None, f"[keys] {name!r} is not 'path' or 'format', or not a string"
                )
            )
    keys_format = keys_table.get("format", "auto")
    if keys_format not in KEY_FORMATS:
        raise DataError(
            located(path, None, None, f"[keys] format must be one of {', '.join(KEY_FORMATS)}")
        )
    config = BenchmarkConfig(
        keys_path=keys_table.get("path"),
        keys_format=keys_format,
        responses=tuple(
            _source(entry, root, path, links)
            for entry in _config_value(data, "responses", list, [], path)
        ),
        name=_config_value(data, "name", str, root.name, path),
        id_pattern=pattern,
        roster=tuple(roster),
        fields=FieldNames(**fields_table),
        description=_config_value(data, "description", str, "", path),
        source=_config_value(data, "source", str, "", path),
        links=links,
    )
    lines = _path_lines(path)
    if config.keys_path is not None:
        confine(root, config.keys_path, path, lines.get(("keys", 0)), "[keys] path", links)
    for number, entry in enumerate(data.get("responses", ())):
        line = lines.get(("responses", number))
        confine(root, entry["path"], path, line, "[[responses]] path", links)
    return config


def confine(
    root: Path, value: str, toml: Path, line: int | None, what: str, links: LinkPolicy
) -> None:
    """A path ``benchmark.toml`` names must lie in the benchmark folder: not absolute, not
    climbing out with ``..``, and not leading through a symbolic link anywhere ``links`` does
    not allow (the benchmark, its repository's git-annex or DVC store; anywhere with
    ``--follow-links``). A path given on the command line is the user's choice and is not
    confined."""
    inside = "; name it on the command line (--responses) to read it" if "respon" in what else ""
    if "\0" in value:
        raise DataError(located(toml, line, None, f"{what} contains a NUL character"))
    if os.path.isabs(value):
        reason = "is absolute"
    elif os.path.normpath(value).split(os.sep)[0] == os.pardir:
        reason = "climbs out of the benchmark folder with '..'"
    elif not links.allows(root / value):
        reason = "leads out of the benchmark folder through a symbolic link"
        inside += " (or --follow-links)"
    else:
        return
    raise DataError(
        located(
            toml,
            line,
            None,
            f"{what} {reason}: paths in benchmark.toml must lie in the benchmark folder{inside}",
        )
    )


_TABLE = re.compile(r"^\s*\[(\[?)\s*([A-Za-z_\"']+)\s*\]")
_PATH_KEY = re.compile(r"""^\s*(?:path|"path"|'path')\s*=""")


def _path_lines(toml: Path) -> dict[tuple[str, int], int]:
    """Where each table's ``path`` is written in benchmark.toml: ``("keys", 0)`` and
    ``("responses", n)`` (the n-th ``[[responses]]``) to line numbers, for error messages; a path
    written another way (an inline table) has none."""
    try:
        text = toml.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found: dict[tuple[str, int], int] = {}
    table, index = "", -1
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header:
            table = header.group(2).strip("\"'")
            index = index + 1 if header.group(1) and table == "responses" else index
            if not header.group(1):
                table = "keys" if table == "keys" else ""
            continue
        if _PATH_KEY.match(line) and table in ("keys", "responses"):
            found.setdefault((table, index if table == "responses" else 0), number)
    return found


def _source(entry: Any, root: Path, path: Path, links: LinkPolicy) -> ResponseSource:
    """One ``[[responses]]`` table: ``path`` (relative to the benchmark) and optional settings."""
    if not isinstance(entry, dict) or "path" not in entry:
        raise DataError(located(path, None, None, "each [[responses]] needs a 'path'"))
    for name, value in entry.items():
        if name not in _SOURCE_KEYS or not isinstance(value, str):
            expected = ", ".join(sorted(_SOURCE_KEYS))
            raise DataError(
                located(
                    path,
                    None,
                    None,
                    f"[[responses]] {name!r}: expected string values of {expected}",
                )
            )
    if entry.get("format", "auto") not in FORMATS:
        raise DataError(
            located(path, None, None, f"[[responses]] format must be one of {', '.join(FORMATS)}")
        )
    return ResponseSource(**{**entry, "path": root / entry["path"], "confined": links})


def _config_value(data: dict[str, Any], name: str, kind: type, default: Any, path: Path) -> Any:
    value = data.get(name, default)
    if not isinstance(value, kind):
        raise DataError(located(path, None, None, f"{name!r} must be a {kind.__name__}"))
    return value


def parse_item_id(
    item_id: str,
    pattern: re.Pattern[str],
    path: Path,
    line: int | None,
    clock: ItemClock | None = None,
) -> ItemRef:
    """Split an id into domain, image cluster and level with the benchmark's id pattern.

    The pattern runs on ids of at most :data:`MAX_ID_CHARS` characters and, under ``clock``, for
    at most :data:`~.timelimit.ID_SECONDS` of CPU time per id (a pattern such as ``(?:\\w+_?)+``
    backtracks catastrophically on one bad id).
    """
    if len(item_id) > MAX_ID_CHARS:
        raise DataError(
            located(
                path, line, None, f"id longer than {MAX_ID_CHARS:,} characters: {item_id[:40]!r}..."
            )
        )
    clock = clock or _ID_CLOCK
    try:
        clock.start()
        match = pattern.match(item_id)
        clock.stop()
    except TimeLimitExceeded as error:
        raise DataError(
            located(
                path,
                line,
                None,
                f"id_pattern {_short_pattern(pattern)} on id {item_id[:60]!r}: {error}; the"
                " pattern backtracks catastrophically (nested or overlapping repeats): simplify it",
            )
        ) from None
    if match is None:
        raise DataError(
            located(
                path,
                line,
                None,
                f"id {item_id!r} does not match the id pattern {_short_pattern(pattern)}",
            )
        )
    domain, image, level = match.group("domain", "image", "level")
    for name, value in (("domain", domain), ("image", image), ("level", level)):
        if not value:
            raise DataError(
                located(
                    path,
                    line,
                    None,
                    f"id {item_id!r}: the id pattern's group {name!r} matched nothing",
                )
            )
    if not (level.isascii() and level.isdigit()) or len(level) > 7 or int(level) > MAX_LEVEL:
        raise DataError(
            located(
                path,
                line,
                None,
                f"id {item_id!r}: level {level!r} is not an integer from 0 to {MAX_LEVEL:,}",
            )
        )
    return ItemRef(domain, domain + "_" + image, int(level))


def _short_pattern(pattern: re.Pattern[str]) -> str:
    text = pattern.pattern
    return repr(text) if len(text) <= 80 else repr(text[:80]) + "..."


def key_files(root: Path, config: BenchmarkConfig) -> list[Path]:
    """The key files of a benchmark: ``[keys] path``, else ``keys/``, else a CSV tree.

    A CSV tree is the published layout, ``<domain>_dataset_<n>/answer_key.csv`` under
    ``Dataset/`` or under the benchmark directory itself (``--bench path/to/Dataset``).
    """
    if config.keys_path is not None:
        target = root / config.keys_path
        if file_problem(target) is None:
            return _confined([target], config)
        if not exists_at_all(target):
            raise DataError(located(target, None, None, "[keys] path not found"))
        if (problem := folder_problem(target)) is not None:
            raise DataError(located(target, None, None, f"[keys] path {problem}"))
    else:
        target = root / "keys"
        if exists_at_all(target) and (problem := folder_problem(target)) is not None:
            raise DataError(located(target, None, None, problem))
        if not target.is_dir():
            for candidate in (root / "Dataset", root):
                tree = csv_tree_files(candidate) if candidate.is_dir() else []
                if tree:
                    return _confined(tree, config)
            raise DataError(
                located(
                    target,
                    None,
                    None,
                    "no keys: expected keys/*.jsonl, keys/*.jsonl.gz, keys/*.csv or a "
                    "Dataset/<domain>_dataset_<n>/answer_key.csv tree",
                )
            )
    wanted = config.keys_format
    files = [] if wanted == "csv" else jsonl_files(target)
    if wanted != "jsonl":
        files += data_files(target, (".csv",)) + csv_tree_files(target)
    if not files:
        raise DataError(
            located(target, None, None, "no keys: expected *.jsonl, *.jsonl.gz or *.csv files")
        )
    return _confined(files, config)


def _confined(files: list[Path], config: BenchmarkConfig) -> list[Path]:
    """``files`` of the benchmark, each checked to lead (links followed) only where its links
    may (:mod:`.links`): a key file linked to a file of the user's is an error naming the link."""
    if config.links is not None:
        for file in files:
            config.links.check(file, "a key file,")
    return files


def _is_csv(path: Path) -> bool:
    return path.name.endswith(".csv")


def load_keys(root: Path, config: BenchmarkConfig) -> dict[str, KeyItem]:
    """Every key of the benchmark; a duplicate id anywhere in the corpus is an error.

    A JSON Lines corpus that validated before, unchanged since, is read from :mod:`.keycache`
    (with the questions its keys carry; CSV keys are always parsed).
    """
    files = key_files(root, config)
    cacheable = not any(_is_csv(p) for p in files)
    # What the parsed records depend on besides the files; keycache.CACHE_FORMAT covers the rest.
    settings = repr((config.id_pattern.pattern, config.fields))
    content_key: str | None = None
    if cacheable:
        try:
            content_key = keycache.entry_key(files, settings)
        except OSError:  # unreadable: parsing below says so, with the file's name
            content_key = None
    cached = keycache.read(content_key) if content_key is not None else None
    if cached is not None:
        ids, answers, domains, clusters, levels, questions = cached
        return {
            item_id: KeyItem(item_id, ItemRef(domain, cluster, level), answer, question or None)
            for item_id, answer, domain, cluster, level, question in zip(
                ids, answers, domains, clusters, levels, questions, strict=True
            )
        }
    keys = _parse_keys(files, config)
    try:  # a file that changed while it was read is not cached under the key read before
        unchanged = content_key is not None and keycache.entry_key(files, settings) == content_key
    except OSError:
        unchanged = False
    if unchanged:
        keycache.write(
            content_key,
            (
                list(keys),
                [k.answer for k in keys.values()],
                [k.ref.domain for k in keys.values()],
                [k.ref.cluster for k in keys.values()],
                [k.ref.level for k in keys.values()],
                [k.question or "" for k in keys.values()],
            ),
        )
    return keys


def _key_rows(path: Path, names: FieldNames):
    """``(line, id, key, question)`` of one key file, JSON Lines or CSV."""
    if _is_csv(path):
        yield from read_csv_keys(path)
        return
    for line, record in read_jsonl(path):
        item_id = record.get(names.id)
        answer = record.get(names.answer)
        if type(item_id) is not str or type(answer) is not str:  # fast path: both valid
            item_id = require_field(record, names.id, path, line, str)
            answer = require_field(record, names.answer, path, line, str)
        yield line, item_id, answer, _jsonl_question(record, path, line)


def _jsonl_question(record: dict[str, Any], path: Path, line: int) -> str | None:
    """The question a JSON Lines key answers: its ``prompt`` or ``question`` field, taken as the
    CSV layout takes the same columns (``prompt`` first; empty or null: none)."""
    for name in QUESTION_COLUMNS:
        value = record.get(name)
        if value is not None:
            if type(value) is not str:
                require_field(record, name, path, line, str)  # raises, naming the field
            return value or None
    return None


def _parse_keys(files: list[Path], config: BenchmarkConfig) -> dict[str, KeyItem]:
    keys: dict[str, KeyItem] = {}
    seen_at: dict[str, tuple[Path, int]] = {}
    for path in files:
        for line, item_id, answer, question in _key_rows(path, config.fields):
            if item_id in keys:
                first_path, first_line = seen_at[item_id]
                first = first_path.name if first_path.parent == path.parent else str(first_path)
                raise DataError(
                    located(
                        path,
                        line,
                        None,
                        f"duplicate id {item_id!r} (first at {first}:{first_line})",
                    )
                )
            keys[item_id] = KeyItem(
                item_id, parse_item_id(item_id, config.id_pattern, path, line), answer, question
            )
            seen_at[item_id] = (path, line)
    return keys


def default_sources(root: Path, config: BenchmarkConfig) -> tuple[ResponseSource, ...]:
    """``[[responses]]`` of benchmark.toml, else the ``responses/`` folder if there is one."""
    if config.responses:
        return config.responses
    folder = root / "responses"
    if exists_at_all(folder) and (problem := folder_problem(folder)) is not None:
        raise DataError(located(folder, None, None, problem))
    return (ResponseSource(folder, confined=config.links),) if folder.is_dir() else ()


def input_files(root: Path, sources: tuple[ResponseSource, ...] | None = None) -> list[Path]:
    """The files a load of the benchmark at ``root`` would read (``benchmark.toml``, the key
    files, the response files of ``sources`` or of the benchmark's own), listed without reading
    them, so that outputs can be refused onto any of them before any work. What cannot be listed
    is left out: loading reports it. Links are followed wherever they lead (as with
    ``--follow-links``): a file a link of the benchmark leads to is protected even where the load
    will refuse the link."""
    found = [root / "benchmark.toml"]
    try:
        config = load_config(root, follow_links=True)
    except KeyauditError:
        return found
    with contextlib.suppress(KeyauditError, OSError):
        found += key_files(root, config)
    with contextlib.suppress(KeyauditError, OSError):
        for source in sources if sources is not None else default_sources(root, config):
            found += source_files(source)
    return found


def load_responses(
    root: Path,
    config: BenchmarkConfig,
    keys: dict[str, KeyItem],
    sources: tuple[ResponseSource, ...] | None = None,
    epochs: str = "first",
    answer_formats: Iterable[tuple[str, str]] | None = None,
    text_cells: Iterable[tuple[str, int]] | None = None,
) -> tuple[ResponseTable, dict[str, Path], tuple[RunInfo, ...]]:
    """Every stored response of the sources (default: :func:`default_sources`), checked.

    Each sample's id must match the id pattern and have a key, and a log's own target must equal
    that key. keyaudit's own files may hold one model or several, and a model may be split over
    several files of any format, but one (model, id, epoch) may occur only once.
    ``epochs`` is the policy for several samples of one id and model: ``first`` keeps the lowest
    epoch, ``all`` keeps them all. A benchmark without sources has no responses.

    ``answer_formats`` ((label, which) pairs: the answer formats of the rules that will read the
    responses) keeps of each text only its excerpt for them (:mod:`.excerpt`); ``None`` keeps
    every text whole. ``text_cells`` ((domain, level) pairs: the cells of those rules), when given,
    keeps no text at all of a response in another cell (its text is ``""``): the audit reads only
    its stored verdict, computed here with the whole text when the file has none.
    """
    if epochs not in EPOCH_POLICIES:
        raise UsageError(f"--epochs must be one of {', '.join(EPOCH_POLICIES)}, got {epochs!r}")
    if sources is None:
        sources = default_sources(root, config)
    names = config.fields
    files: dict[str, Path] = {}
    # Where each log sample was read, by (model, id, epoch): a second one is a duplicate.
    seen: dict[tuple[str, str, int], str] = {}
    own = _OwnSamples(len(keys))  # keyaudit's own files: one byte per model and key
    table = TableBuilder(keys)
    infos: list[RunInfo] = []
    excerpter = Excerpter.for_formats(answer_formats) if answer_formats is not None else None
    # One budget for the whole load: every source's responses count.
    wanted = None
    if text_cells is not None:
        cells = set(text_cells)
        wanted = frozenset(i for i, k in keys.items() if (k.ref.domain, k.ref.level) in cells)
    budget = ResponseBudget(excerpt=excerpter, wanted=wanted)
    runs_seen: dict[str, tuple[LoggedRun, int]] = {}  # inspect eval id: its run, its info
    lm_tasks: dict[str, str] = {}  # lm-eval samples file: its task
    for source in sources:
        for run in iter_source(source, names, budget):  # one file's samples at a time
            if not run.samples:
                continue
            if run.identity is not None:
                first = runs_seen.get(run.identity)
                if first is not None and _two_forms(first[0].path, run.path):
                    _same_run(run, first[0], root)
                    at = first[1]  # read once: the first file's line says where else it is
                    info = infos[at]
                    note = (("read once, also in", _shown(run.path, root)),)
                    infos[at] = replace(info, details=info.details + note)
                    continue
                runs_seen.setdefault(run.identity, (replace(run, samples=[]), len(infos)))
            if run.format == "lm-eval":
                lm_tasks[str(run.path)] = task_of(run.path) or run.path.name
            model = run.model
            files.setdefault(model, run.path)
            at = table.model_index(model)
            if run.format in ("jsonl", "csv"):  # ids already unique per model within the file
                marks = own.file_of(at, str(run.path))
                mark_here = own.file_mark(at)
                logged = model in own.logged
                for sample in run.samples:
                    key, correct, computed = _checked(sample, config, keys)
                    item = table.item_index(key.id)
                    if marks[item] or (logged and (model, sample.id, 1) in seen):
                        other = seen.get((model, sample.id, 1)) or own.files_of(at, marks[item])
                        raise _duplicate(sample, model, other)
                    marks[item] = mark_here
                    text = budget.kept_text(sample.text, key.id)
                    table.add_indexed(at, item, 1, correct, computed, text)
            else:
                own.logged.add(model)
                marks = own.marks.get(at)
                for sample in run.samples:
                    slot = (model, sample.id, sample.epoch)
                    key, correct, computed = _checked(sample, config, keys)
                    item = table.item_index(key.id)
                    mark = marks[item] if marks is not None and sample.epoch == 1 else 0
                    if slot in seen or mark:
                        other = seen.get(slot) or own.files_of(at, mark)
                        hint = _tasks_hint(run, other, lm_tasks)
                        raise _duplicate(sample, model, other, hint)
                    seen[slot] = sample.where
                    text = budget.kept_text(sample.text, key.id)
                    table.add_indexed(at, item, sample.epoch, correct, computed, text)
            infos.append(
                RunInfo(_shown(run.path, root), run.format, model, len(run.samples), run.details)
            )
    if epochs == "first" and seen:  # logs may hold several epochs; keep the lowest of each item
        return table.table(keep=_lowest_epochs(table)), files, tuple(infos)
    return table.table(), files, tuple(infos)


class _OwnSamples:
    """Which (model, key) slots keyaudit's own files have filled, and from which file.

    Their samples have one epoch, so a slot is one byte per model and key (about 150 KB a model
    for 155,000 keys), not an entry per sample: holding every sample's (model, id) took about
    100 bytes a response. The byte is the file's number among that model's own files (1 to 254;
    255 for any later one), so a duplicate names the earlier file without a second read.
    """

    def __init__(self, n_keys: int) -> None:
        self.n_keys = n_keys
        self.marks: dict[int, bytearray] = {}  # model index: each key's byte
        self.paths: dict[int, list[str]] = {}  # model index: its own files, in read order
        self.logged: set[str] = set()  # models with log samples (checked by (model, id, epoch))

    def file_of(self, model: int, path: str) -> bytearray:
        """The marks of ``model``, with ``path`` recorded as its latest own file."""
        self.paths.setdefault(model, []).append(path)
        marks = self.marks.get(model)
        if marks is None:
            marks = self.marks[model] = bytearray(self.n_keys)
        return marks

    def file_mark(self, model: int) -> int:
        return min(len(self.paths[model]), 255)

    def files_of(self, model: int, mark: int) -> str:
        """The file(s) a mark stands for, for a message."""
        paths = self.paths[model]
        chosen = paths[mark - 1 : mark] if mark < 255 else paths[254:-1]
        return " or ".join(chosen[:3]) + (" or another" if len(chosen) > 3 else "")


def _duplicate(sample, model: str, other: str, hint: str = "") -> DataError:
    """The error for a second sample of one (model, id, epoch)."""
    return DataError(
        located(
            sample.where,
            None,
            None,
            f"duplicate sample: model {model!r}, id {sample.id!r}, epoch {sample.epoch} (also at "
            f"{other})" + hint,
        )
    )


def _lowest_epochs(table: TableBuilder) -> np.ndarray:
    """Which rows hold their (model, id)'s lowest epoch (a boolean mask, in row order)."""
    model = column(table.model).astype(np.int64)
    item = column(table.item).astype(np.int64)
    epoch = column(table.epoch).astype(np.int64)
    group = model * max(len(table.keys), 1) + item
    order = np.lexsort((epoch, group))  # by group, then epoch: each group's lowest first
    grouped = group[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = grouped[1:] != grouped[:-1]
    lowest = np.empty_like(epoch)
    lowest[order] = epoch[order][np.flatnonzero(first)][np.cumsum(first) - 1]
    return epoch == lowest


def _two_forms(first: Path, second: Path) -> bool:
    """Whether two files are one inspect run's two forms, ``.eval`` and ``.json`` (the same file
    twice, or two copies of one form, stay duplicate samples)."""
    return {first.suffix, second.suffix} == {".eval", ".json"}


def _same_run(run: LoggedRun, first: LoggedRun, root: Path) -> None:
    """A second file of one inspect run (``.eval`` and ``.json``) must hold the same samples."""
    if run.fingerprint != first.fingerprint or run.model != first.model:
        raise DataError(
            located(
                run.path,
                None,
                None,
                f"the same inspect run (eval id {run.identity!r}) as {_shown(first.path, root)}, "
                "with other samples: keep one of the two files, or select one with a glob or "
                "format= (see --responses)",
            )
        )


def _tasks_hint(run: LoggedRun, other: str, lm_tasks: dict[str, str]) -> str:
    """For two lm-eval tasks with the same ids: how to read only one."""
    if run.format != "lm-eval":
        return ""
    task = lm_tasks.get(str(run.path), "")
    earlier = next(
        (t for path, t in lm_tasks.items() if other.startswith(path + ":") and t != task), None
    )
    if earlier is None:
        return ""
    return (
        f": lm-eval tasks {earlier!r} and {task!r} hold the same ids; read one of them with "
        f'--responses task={earlier}:PATH (task = "{earlier}" in [[responses]])'
    )


def _shown(path: Path, root: Path) -> str:
    """A file inside the benchmark by its place there (reports do not depend on where the
    benchmark is installed); any other as given."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _checked(
    sample, config: BenchmarkConfig, keys: dict[str, KeyItem]
) -> tuple[KeyItem, bool, bool]:
    """A sample's key, checked (the id has a key, a log's own target
    is that key), and its strict verdict: as stored, else computed (``computed`` true)."""
    where = sample.where
    key = keys.get(sample.id)
    if key is None:
        parse_item_id(sample.id, config.id_pattern, where, None)  # the id pattern's error first
        raise DataError(
            located(where, None, None, f"response id {sample.id!r} has no key in the benchmark")
        )
    target = sample.target
    if target is not None:
        accepted = (target,) if isinstance(target, str) else target
        if key.answer.strip() not in {t.strip() for t in accepted}:
            raise DataError(
                located(
                    where,
                    None,
                    None,
                    f"sample {sample.id!r}: the log's target differs from the benchmark's key for "
                    "this id (the run was scored against another key; fix the key or the log)",
                )
            )
    if sample.correct is None:
        correct, computed = strict_correct(sample.text, key.answer), True
    else:
        correct, computed = sample.correct, False
    # The key's id matched the same id pattern when the keys were read: its place is the
    # response's (a full benchmark has millions of responses: each keeps its key's index).
    return key, correct, computed


def load_benchmark(
    root: str | Path,
    *,
    with_responses: bool = True,
    responses: tuple[ResponseSource, ...] | None = None,
    epochs: str = "first",
    answer_formats: Iterable[tuple[str, str]] | None = None,
    text_cells: Iterable[tuple[str, int]] | None = None,
    follow_links: bool = False,
) -> Benchmark:
    """Load and validate a benchmark directory (never writes to it, nor next to any log).

    Links the benchmark holds lead only inside it or its repository's git-annex or DVC store
    (:mod:`.links`); ``follow_links`` (``--follow-links``) lets them lead anywhere.

    ``responses`` replaces the benchmark's own response sources (``[[responses]]`` or
    ``responses/``); ``epochs`` is the policy for several samples of one id and model;
    ``answer_formats``, when given, keeps of each response only what those answer formats and the
    certainty check read (:func:`load_responses`), and ``text_cells``, when given, keeps no text
    of a response outside those (domain, level) cells.

    The cyclic garbage collector is paused while the ~10^5 records are built: they hold no
    cycles, and its repeated scans of the growing heap would otherwise cost a third of the load.
    """
    root = Path(root)
    problem = folder_problem(root)
    if problem is not None:
        what = "not found" if problem == "does not exist" else problem
        raise DataError(located(root, None, None, f"benchmark directory {what}"))
    config = load_config(root, follow_links)
    collecting = gc.isenabled()
    gc.disable()
    _ID_CLOCK.__enter__()  # every id of the load is matched within its time bound
    try:
        keys = load_keys(root, config)
        if not with_responses:
            return Benchmark(root, config, keys)
        formats = None if answer_formats is None else tuple(answer_formats)
        cells = None if text_cells is None else tuple(sorted(text_cells))
        settings = (responses, epochs, formats, cells, follow_links, os.environ.get(BUDGET_VARIABLE))
        cache_key = response_cache.load_key(root, input_files(root, responses), settings)
        cached = None if cache_key is None else response_cache.read(cache_key, tuple(keys.values()))
        if cached is not None:
            loaded, files, infos = cached
        else:
            loaded, files, infos = load_responses(
                root, config, keys, responses, epochs, formats, cells
            )
            # stored only if no file changed while it was read
            if cache_key is not None and response_cache.load_key(
                root, input_files(root, responses), settings
            ) == cache_key:
                response_cache.write(cache_key, (loaded, files, infos))
        return Benchmark(root, config, keys, loaded, files, epochs, infos)
    finally:
        _ID_CLOCK.__exit__()
        if collecting:
            gc.enable()
