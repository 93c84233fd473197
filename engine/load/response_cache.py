"""A cache of the loaded responses, kept outside the benchmark directory.

A warm ``check`` of the full-size benchmark spent half its time loading 2.48 M stored responses
that had not changed (issue 38: 18 s of 38). What a successful load produces — the response
table's columns and texts, each model's first file, and how each file was read — is stored in the
private folder ``responses/`` of the cache root (:mod:`.safe_io`: ``$KEYAUDIT_CACHE_DIR``, ``off``
turns it off; nothing is read from a folder another user can write).

An entry is keyed by *content*, as the key corpus cache is (:mod:`.keycache`): a SHA-256 of

* every file the load reads (:func:`~.benchmark.input_files`: ``benchmark.toml``, the key files,
  every response file), each by its name as given, the file it really is (links resolved) and a
  SHA-256 of its bytes — so an edit, a file added or removed, or a link that now leads elsewhere
  is a new key;
* every setting the load takes (the sources named on the command line, the epoch policy, the
  answer formats whose excerpts are kept, the cells that keep text, ``--follow-links``, the memory
  budget) and the benchmark's own path (reports show files by it);
* the loading code itself (a hash of ``engine/load``'s source) and keyaudit's version.

Only a load that validated completely is stored, and only if its files still hash the same after
it; anything odd in an entry (damaged, foreign, another shape) is a miss and the benchmark is
loaded again. Entries are :mod:`marshal` data (plain values; it cannot run code), checksum-sealed,
and checked by shape before use: five columns of one length in the integer types the table uses,
model and item indices in range, every text a string. At most :data:`KEEP` entries of at most
:data:`MAX_ENTRY_BYTES` each are kept, the least recently used removed.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .keycache import content_hash
from .response_table import ResponseTable
from .responses.records import RunInfo
from .safe_io import read_sealed, write_sealed

__all__ = ["Loaded", "load_key", "read", "write"]

FORMAT = "responses-v1"
FOLDER = "responses"
KEEP = 4
MAX_ENTRY_BYTES = 2 << 30
_SUFFIX = ".responses"
#: The integer and boolean types the table's columns may have (:mod:`.response_table`).
_DTYPES = frozenset({"|i1", "<i2", "<i4", "<i8", "|b1", "|u1", "<u2", "<u4"})

#: What a load returns besides the keys: the table, each model's first file, how files were read.
Loaded = tuple[ResponseTable, dict[str, Path], tuple[RunInfo, ...]]


@lru_cache(maxsize=1)
def _code_hash() -> str:
    """keyaudit's version and a hash of the loading code's source."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("keyaudit")
    except PackageNotFoundError:
        release = "unknown"
    digest = hashlib.sha256(release.encode())
    here = Path(__file__).resolve().parent
    for path in sorted(here.rglob("*.py")):
        digest.update(path.relative_to(here).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def load_key(root: Path, files: Sequence[Path], settings: Iterable[object]) -> str | None:
    """The content key of a load of ``files`` with ``settings``; None when a file cannot be read
    (the load reports it)."""
    digest = hashlib.sha256(f"{FORMAT}\0{_code_hash()}\0{sys.version_info[:2]}\0".encode())
    digest.update(os.fsencode(str(Path(root).resolve())) + b"\0")
    for setting in settings:
        digest.update(repr(setting).encode("utf-8", "surrogatepass") + b"\0")
    try:
        for path in files:
            real = os.path.realpath(path)
            digest.update(os.fsencode(str(path)) + b"\0" + os.fsencode(real) + b"\0")
            # a file that is not there (a benchmark without benchmark.toml) is part of the key too
            exists = os.path.exists(real)
            digest.update((content_hash(Path(real)) if exists else "absent").encode() + b"\n")
    except (OSError, ValueError):
        return None
    return digest.hexdigest()


def read(key: str, keys: tuple) -> Loaded | None:
    """The cached load for ``key`` (its table over the benchmark's ``keys``, in order), or None."""
    payload = read_sealed(FOLDER, key[:40] + _SUFFIX, FORMAT, key, MAX_ENTRY_BYTES)
    if payload is None:
        return None
    try:
        return _decode(marshal.loads(payload), keys)
    except Exception:  # noqa: BLE001 - any damage or foreign shape is a miss
        return None


def write(key: str, loaded: Loaded) -> None:
    """Store a load; failures are ignored (the cache is only an optimisation)."""
    try:
        payload = marshal.dumps(_encode(loaded))
    except (ValueError, TypeError):
        return
    if len(payload) + 4096 <= MAX_ENTRY_BYTES:
        write_sealed(FOLDER, key[:40] + _SUFFIX, FORMAT, key, payload, KEEP, _SUFFIX)


def _column(array: np.ndarray) -> tuple[str, bytes]:
    return (array.dtype.str, np.ascontiguousarray(array).tobytes())


def _encode(loaded: Loaded) -> tuple:
    table, files, infos = loaded
    return (
        tuple(table.models),
        tuple(_column(c) for c in (table.model, table.item, table.epoch, table.correct, table.computed)),
        table.texts,
        tuple((model, str(path)) for model, path in files.items()),
        tuple((i.path, i.format, i.model, i.samples, tuple(i.details)) for i in infos),
    )


def _decode(value: Any, keys: tuple) -> Loaded:
    """The load an entry holds; raises on any shape that is not what :func:`_encode` wrote."""
    models, columns, texts, files, infos = value
    if type(models) is not tuple or not all(type(m) is str for m in models):
        raise TypeError("models")
    arrays = []
    for dtype, raw in columns:
        if dtype not in _DTYPES or type(raw) is not bytes:
            raise TypeError("column")
        arrays.append(np.frombuffer(raw, dtype=np.dtype(dtype)).copy())  # writable, as a load's
    model, item, epoch, correct, computed = arrays
    rows = len(model)
    if any(len(a) != rows for a in arrays) or type(texts) is not list or len(texts) != rows:
        raise TypeError("lengths")
    if correct.dtype != np.bool_ or computed.dtype != np.bool_:
        raise TypeError("flags")
    if rows and (
        model.min() < 0 or model.max() >= len(models) or item.min() < 0 or item.max() >= len(keys)
    ):
        raise TypeError("indices")
    if not set(map(type, texts)) <= {str}:
        raise TypeError("texts")
    table = ResponseTable(models, keys, model, item, epoch, correct, computed, texts)
    shown_files = {str(m): Path(p) for m, p in files if type(m) is str and type(p) is str}
    if len(shown_files) != len(files):
        raise TypeError("files")
    runs = tuple(
        RunInfo(str(p), str(f), str(m), int(n), tuple((str(a), str(b)) for a, b in details))
        for p, f, m, n, details in infos
    )
    return table, shown_files, runs
