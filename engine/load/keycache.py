"""A cache of the validated key corpus, kept outside the benchmark directory.

Parsing a large key corpus (155,000 lines on the example) dominates a warm ``keyaudit check``.
The result of a successful load — ids, answers, domains, clusters, levels — is stored with
:mod:`marshal` in the user's cache folder (``$KEYAUDIT_CACHE_DIR``, else
``$XDG_CACHE_HOME/keyaudit``, else ``~/.cache/keyaudit``), keyed by everything the load depends
on: each key file's absolute path, size and modification time, the id pattern, the field names
and :data:`CACHE_FORMAT` (bumped whenever what a load produces changes). Any change to a key file makes a new entry; a stale one is never read.

Only a load that validated completely is cached, so a malformed file is reported on every run.
The cache is an optimisation: a missing, unreadable or unwritable cache silently falls back to
parsing (``KEYAUDIT_CACHE_DIR=off`` turns it off). It never writes inside a benchmark directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import tempfile
from pathlib import Path

#: Bump when the cached layout or the meaning of a key record changes (how ids are split into
#: domain, cluster and level, or what is kept of a key).
CACHE_FORMAT = "keys-v1"

Columns = tuple[list[str], list[str], list[str], list[str], list[int]]


def cache_dir() -> Path | None:
    """Where cache entries live, or ``None`` when caching is off."""
    configured = os.environ.get("KEYAUDIT_CACHE_DIR")
    if configured is not None:
        return None if configured.lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "keyaudit"


def entry_name(files: list[Path], settings: str) -> str:
    """A name that changes whenever a key file, the id pattern or the field names change."""
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    digest.update(settings.encode())
    for path in files:
        stat = path.stat()
        digest.update(f"\0{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:32] + ".marshal"


def read(files: list[Path], settings: str) -> Columns | None:
    """The cached columns for these files and settings, or ``None``."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = marshal.loads((folder / entry_name(files, settings)).read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(data, tuple) and len(data) == 5):
        return None
    return data


def write(files: list[Path], settings: str, columns: Columns) -> None:
    """Store the columns atomically; failures are ignored (the cache is only an optimisation)."""
    folder = cache_dir()
    if folder is None:
        return
    with contextlib.suppress(OSError, ValueError):
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / entry_name(files, settings)
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as stream:
                marshal.dump(columns, stream)
            os.replace(temporary, target)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
