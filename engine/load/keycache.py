"""A cache of the validated key corpus, kept outside the benchmark directory.

Parsing a large key corpus (155,000 lines on the example) dominates a warm ``keyaudit check``.
The result of a successful load — ids, answers, domains, clusters, levels, questions — is stored in the
private folder ``keys/`` of the cache root (:mod:`.safe_io`: ``$KEYAUDIT_CACHE_DIR``, else
``$XDG_CACHE_HOME/keyaudit``, else ``~/.cache/keyaudit``; ``off`` turns it off).

An entry is keyed by *content*: a SHA-256 of every key file's bytes, the id pattern, the field
names and :data:`CACHE_FORMAT` (bumped whenever what a load produces changes). Editing a key file
in any way — even to the same size with its modification time restored (``touch -r``,
``cp -p``, ``tar x``) — gives a new key. An entry carries that key and a SHA-256 of its payload;
both are checked, and the payload's shape is validated, before anything is used. Anything odd
(a damaged, truncated, edited, foreign or oversized entry) is a miss: the corpus is parsed again.

Only a load that validated completely is cached, and only if the files still hash the same after
it (a file changed during the load is not cached). Entries are written atomically; temporary files
of killed writes and all but the :data:`KEEP` most recently used entries are removed on each
write. It never writes inside a benchmark directory.

Why :mod:`marshal`: it is fast and builds only plain values (it cannot run code). The entry comes
from a folder only this user can write, its checksum is verified first, and the loaded value must
be six lists of strings and ints of equal length.
"""

from __future__ import annotations

import hashlib
import marshal
from pathlib import Path

from .safe_io import PrivateDir, seal, unseal

#: Bump when the cached layout or the meaning of a key record changes (how ids are split into
#: domain, cluster and level, or what is kept of a key).
CACHE_FORMAT = "keys-v3"
#: Entries kept (most recently used first); older ones are removed when a new one is written.
KEEP = 8
#: Largest entry read (bytes).
MAX_ENTRY_BYTES = 1 << 30
FOLDER = "keys"
_SUFFIX = ".keys"

#: ids, answers, domains, clusters, levels, questions (``""``: none).
Columns = tuple[list[str], list[str], list[str], list[str], list[int], list[str]]


def content_hash(path: Path) -> str:
    """SHA-256 of the file's bytes (compressed bytes for ``.gz``)."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def entry_key(files: list[Path], settings: str) -> str:
    """The content key: format, settings, and each file's name and content hash, in order."""
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    digest.update(b"\0" + settings.encode("utf-8", "surrogatepass"))
    for path in files:
        digest.update(f"\0{path.name}\0{content_hash(path)}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _entry_name(key: str) -> str:
    return key[:40] + _SUFFIX


def _is_entry(name: str) -> bool:
    return name.endswith(_SUFFIX)


def read(key: str) -> Columns | None:
    """The cached columns for this content key, or ``None`` (a miss)."""
    folder = PrivateDir.open(FOLDER)
    if folder is None:
        return None
    with folder:
        data = folder.read(_entry_name(key), MAX_ENTRY_BYTES)
        if data is None:
            return None
        columns = decode(data, key)
        if columns is not None:
            folder.touch(_entry_name(key))
        return columns


def write(key: str, columns: Columns) -> None:
    """Store the columns under ``key``; failures are ignored (the cache is only an optimisation)."""
    folder = PrivateDir.open(FOLDER)
    if folder is None:
        return
    with folder:
        try:
            data = encode(key, columns)
        except (ValueError, TypeError):
            return
        folder.write(_entry_name(key), data)
        folder.prune(_is_entry, KEEP)


def encode(key: str, columns: Columns) -> bytes:
    """An entry: one JSON header line (format, key, payload checksum, rows), then the payload."""
    return seal(CACHE_FORMAT, key, marshal.dumps(columns), rows=len(columns[0]))


def decode(data: bytes, key: str) -> Columns | None:
    """The columns of a verified entry for ``key``, or ``None`` for anything else."""
    sealed = unseal(data, CACHE_FORMAT, key)
    if sealed is None:
        return None
    header, payload = sealed
    try:
        columns = marshal.loads(payload)
    except Exception:  # noqa: BLE001 - any damage at all is a miss
        return None
    return columns if _valid(columns, header.get("rows")) else None


def _valid(columns: object, rows: object) -> bool:
    if not (isinstance(columns, tuple) and len(columns) == 6 and type(rows) is int):
        return False
    if not all(type(column) is list and len(column) == rows for column in columns):
        return False
    *texts, levels, questions = columns
    text_types = set().union(*(map(type, column) for column in (*texts, questions)))
    return text_types <= {str} and set(map(type, levels)) <= {int}
