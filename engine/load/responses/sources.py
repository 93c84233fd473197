"""Read a response source: a file or a folder of them, each file's format named or detected.

Detection looks at the content, not only the name:

* a ZIP archive (``PK`` magic; inspect writes ``.eval``) → ``inspect``;
* a ``.json`` object with ``eval`` → an inspect ``--log-format json`` log; with ``results`` and
  ``configs`` → an lm-eval results file, read together with its samples file, not on its own;
* a ``.jsonl``/``.jsonl.gz`` whose first line has ``doc_id``, ``doc`` and ``resps`` → an lm-eval
  samples file; any other → keyaudit's own ``jsonl``;
* a ``.csv`` → keyaudit's own columns (``id,model,response,correct``).

A source may select (see :class:`~.records.ResponseSource`): a glob pattern, the files of one
format (detected), the samples files of one lm-eval task; a selection that matches nothing is an
error naming it.

In a folder, files are found recursively in path order, symbolic links to folders followed (each
real folder once: a loop is an error); hidden files and folders, inspect's listing files
(``logs.json``, ``eval-set.json``) and files with other endings are not read.
"""

from __future__ import annotations

import glob as glob_module
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from ...errors import DataError, located
from ..budget import ResponseBudget
from ..filekind import exists_at_all, file_problem, folder_problem
from ..jsondoc import parse_document, read_document_bytes
from ..jsonl import read_jsonl
from ..links import LinkPolicy
from .inspect_log import is_zip, read_inspect
from .jsonl_responses import read_csv_responses, read_jsonl_responses
from .lmeval_log import SAMPLES_NAME, looks_like_samples, read_lm_eval, results_path
from .records import FORMATS, FieldNames, LoggedRun, ResponseSource

READ_SUFFIXES = (".eval", ".json", ".jsonl", ".jsonl.gz", ".csv")
LISTING_FILES = {"logs.json", "eval-set.json", "listing.json"}
#: What a result of detection may be besides a format: a companion file read with another.
COMPANION = "lm-eval results"


def read_source(
    source: ResponseSource, names: FieldNames, budget: ResponseBudget | None = None
) -> list[LoggedRun]:
    """Every run in ``source`` (one per file read; keyaudit's own files one per model they
    hold), in path order. What they keep is charged to
    ``budget`` (the run's, shared by all its sources; default: a fresh one)."""
    return list(iter_source(source, names, budget))


def iter_source(
    source: ResponseSource, names: FieldNames, budget: ResponseBudget | None = None
) -> Iterator[LoggedRun]:
    """:func:`read_source` one run at a time: a file is read when the previous one's runs have
    been taken, so a loader that keeps only what it needs of each run never holds every file's
    samples at once (2.48 M samples as read took about 700 MB). A file's error is raised when
    that file is reached."""
    budget = budget if budget is not None else ResponseBudget()
    if source.format not in FORMATS:
        raise DataError(
            located(
                source.path,
                None,
                None,
                f"unknown response format {source.format!r} (one of {', '.join(FORMATS)})",
            )
        )
    if source.glob:
        found = 0
        for match in glob_matches(source):
            if match.is_file():
                runs = _read_files([match], source, names, budget)
            else:
                runs = _read_folder(match, source, names, budget, required=False)
            for run in runs:
                found += 1
                yield run
        if not found:
            raise DataError(
                located(source.path, None, None, f"no response files{_selection(source)}")
            )
        return
    path = source.path
    problem = file_problem(path, "a response file")
    if problem is not None and exists_at_all(path) and folder_problem(path) is not None:
        raise DataError(located(path, None, None, problem))
    if path.is_file():
        fmt = source.format if source.format != "auto" else detect(path, budget)
        if fmt == COMPANION:
            raise DataError(
                located(
                    path,
                    None,
                    None,
                    "an lm-eval results file: point at its samples_<task>_<ts>.jsonl or the folder",
                )
            )
        if source.task is not None and (fmt != "lm-eval" or task_of(path) != source.task):
            raise DataError(
                located(path, None, None, f"not an lm-eval samples file{_selection(source)}")
            )
        yield from _reader(fmt)(path, source, names, budget)
        return
    if not path.is_dir():
        raise DataError(located(path, None, None, "no such file or folder of responses"))
    yield from _read_folder(path, source, names, budget)


def glob_matches(source: ResponseSource) -> list[Path]:
    """The files and folders a glob source matches, sorted (hidden names are not matched by
    ``*``; ``**`` matches any depth of real folders, never entering a symbolic link to a folder);
    none is an error naming the pattern."""
    pattern = str(source.path)
    found = sorted(Path(p) for p in set(_glob(pattern)))
    found = [p for p in found if p.is_dir() or p.name.endswith(READ_SUFFIXES)]
    if not found:
        raise DataError(located(pattern, None, None, "the glob matches no response file or folder"))
    return found


def _glob(pattern: str) -> Iterator[str]:
    """:func:`glob.glob` with ``recursive=True``, except that ``**`` descends only into real
    folders, as :meth:`pathlib.Path.glob` does: Python's glob follows links there, so a folder
    holding links to itself (``logs/loop -> .``) made ``'logs/**'`` walk 2^40 paths. A link to a
    folder is still matched by ``**``, and reading it follows it once (:func:`_files`)."""
    parts = pattern.split(os.sep)
    if "**" not in parts:
        yield from glob_module.glob(pattern)
        return
    at = parts.index("**")
    head, rest = os.sep.join(parts[:at]), os.sep.join(parts[at + 1 :])
    starts = glob_module.glob(head) if head else [os.curdir]
    if head == "" and pattern.startswith(os.sep):
        starts = [os.sep]
    for start in starts:
        if not os.path.isdir(start):
            continue
        for folder, subfolders, files in os.walk(start):  # links to folders are not entered
            subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
            if not rest:  # '**' last: every folder and file below
                yield folder
                yield from (os.path.join(folder, name) for name in files if not name.startswith("."))
                yield from (
                    os.path.join(folder, name)
                    for name in subfolders
                    if os.path.islink(os.path.join(folder, name))
                )
            else:
                yield from _glob(os.path.join(glob_module.escape(folder), rest))


def task_of(path: Path) -> str | None:
    """The lm-eval task of a samples file ``samples_<task>_<ts>.jsonl`` (``None``: another name)."""
    match = SAMPLES_NAME.match(path.name)
    return match.group("task") if match else None


def _selection(source: ResponseSource) -> str:
    """`` of format 'x' and task 'y' (the selection)`` for messages; empty without one."""
    parts = []
    if source.format != "auto":
        parts.append(f"format {source.format!r}")
    if source.task is not None:
        parts.append(f"lm-eval task {source.task!r}")
    return f" of {' and '.join(parts)} (the selection)" if parts else ""


def _selected(file: Path, fmt: str, source: ResponseSource) -> bool:
    """Whether a file found in a folder or by a glob, detected as ``fmt``, is read."""
    if fmt == COMPANION or (fmt == "lm-eval" and file.name.startswith("results_")):
        return False
    if source.format != "auto" and (fmt != source.format or not _suffix_fits(file, fmt)):
        return False
    return source.task is None or (fmt == "lm-eval" and task_of(file) == source.task)


def _read_files(
    files: list[Path], source: ResponseSource, names: FieldNames, budget: ResponseBudget
) -> Iterator[LoggedRun]:
    for file in files:
        if source.format != "auto" and not _suffix_fits(file, source.format):
            continue  # not detected: an inspect .json is parsed whole to detect it
        if source.task is not None and task_of(file) != source.task:
            continue
        fmt = detect(file, budget)
        if _selected(file, fmt, source):
            yield from _reader(fmt)(file, source, names, budget)


def _read_folder(
    path: Path,
    source: ResponseSource,
    names: FieldNames,
    budget: ResponseBudget,
    required: bool = True,
) -> Iterator[LoggedRun]:
    found = 0
    for run in _read_files(_files(path, source.confined), source, names, budget):
        found += 1
        yield run
    if not found and required:
        raise DataError(
            located(path, None, None, f"no response files{_selection(source)} in this folder")
        )


def source_files(source: ResponseSource) -> list[Path]:
    """The files reading ``source`` would open (a file, with an lm-eval samples file's results
    file; or a folder's files), listed without reading them; ``[]`` where it cannot be listed
    (reading it says why)."""
    path = source.path
    try:
        if source.glob:
            found: list[Path] = []
            for match in glob_matches(source):
                found += source_files(replace(source, path=match, glob=False))
            return found
        if path.is_file():
            files = [path]
            if path.name.startswith("samples_") and path.name.endswith(".jsonl"):
                files.append(results_path(path))
            return files
        return _files(path, source.confined) if path.is_dir() else []
    except (DataError, OSError, ValueError):
        return []


def _files(folder: Path, confined: LinkPolicy | None = None) -> list[Path]:
    """The response files under ``folder``, sorted by path. A name that would be read but is not
    a readable regular file (a dangling link, a directory, a FIFO...) is an error, never skipped.

    Symbolic links to folders are followed, each real folder read once: a link back to a folder
    being read (a loop) or to one read already is an error naming it, never skipped. With
    ``confined`` (when the benchmark names the source) the folder itself, every link to a folder
    and every link to a file must lead where the policy allows (inside the benchmark, its
    repository's git-annex or DVC store), or the link is an error naming it."""
    found: list[Path] = []
    seen: dict[tuple[int, int], Path] = {}
    if confined is not None:
        confined.check(folder)
    pending = [folder]
    while pending:
        directory = pending.pop()
        try:
            info = os.stat(directory)
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            reason = error.strerror or str(error)
            raise DataError(
                located(directory, None, None, f"cannot list folder: {reason}")
            ) from None
        first = seen.setdefault((info.st_dev, info.st_ino), directory)
        if first != directory:
            raise DataError(
                located(
                    directory,
                    None,
                    None,
                    f"the same folder as {first}, through a symbolic link: a loop, or a second "
                    "way to the same files, which would be read twice",
                )
            )
        children = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = directory / entry.name
            if entry.name.endswith(READ_SUFFIXES):
                if entry.name in LISTING_FILES:
                    continue
                problem = file_problem(path, "a response file")
                if problem is not None:
                    raise DataError(located(path, None, None, problem))
                if confined is not None and entry.is_symlink():
                    confined.check(path)
                found.append(path)
            elif _is_folder(entry):
                if confined is not None and entry.is_symlink():
                    confined.check(path, "a folder of responses,")
                children.append(path)
        pending.extend(reversed(children))
    return sorted(found)


def _is_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # links followed
    except OSError:
        return False


def _suffix_fits(file: Path, fmt: str) -> bool:
    name = file.name
    return {
        "inspect": name.endswith((".eval", ".json")),
        "lm-eval": name.endswith(".jsonl") and name.startswith("samples_"),
        "jsonl": name.endswith((".jsonl", ".jsonl.gz")),
        "csv": name.endswith(".csv"),
    }[fmt]


def detect(path: Path, budget: ResponseBudget | None = None) -> str:
    """The format of one file, from its content (see the module docstring)."""
    if path.name.endswith(".eval") or is_zip(path):
        return "inspect"
    name = path.name
    if name.endswith(".csv"):
        return "csv"
    if name.endswith(".json"):
        return _detect_json(path, budget)
    if name.endswith((".jsonl", ".jsonl.gz")):
        first = _first_line(path)
        return "lm-eval" if first is not None and looks_like_samples(first) else "jsonl"
    raise DataError(
        located(
            path,
            None,
            None,
            "unrecognised response file (expected .eval, .json, .jsonl[.gz] or .csv)",
        )
    )


def _detect_json(path: Path, budget: ResponseBudget | None) -> str:
    value = parse_document(read_document_bytes(path, budget), path, budget)
    if isinstance(value, dict) and "eval" in value:
        return "inspect"
    if isinstance(value, dict) and "results" in value and "configs" in value:
        return COMPANION
    raise DataError(
        located(path, None, None, "not an inspect log (no 'eval') nor an lm-eval results file")
    )


def _first_line(path: Path) -> dict | None:
    """The first object of a JSON Lines file, read within the line limit; ``None`` if there is
    none or it is malformed (the jsonl reader then reports it with its line number)."""
    try:
        for _, value in read_jsonl(path):
            return value
    except DataError:
        return None
    return None


def _reader(
    fmt: str,
) -> Callable[[Path, ResponseSource, FieldNames, ResponseBudget], list[LoggedRun]]:
    """The reader of one format: a file's runs (a log is one model's; keyaudit's own files hold
    one run per model they name)."""
    if fmt == "inspect":
        return lambda path, source, _names, budget: [read_inspect(path, source, budget)]
    if fmt == "lm-eval":
        return lambda path, source, _names, budget: [read_lm_eval(path, source, budget)]
    if fmt == "csv":
        return read_csv_responses
    return read_jsonl_responses
