"""keyaudit's private cache folders: created 0700, opened once, every entry read and written
through the folder's descriptor, never through a path another user could redirect.

Each cache lives in its own sub-folder of the *cache root* (:func:`cache_root`): ``keys/`` (the
validated key corpus, :mod:`.keycache`), ``responses/`` (the loaded responses,
:mod:`.response_cache`), ``parsers/`` (built LALR tables,
:mod:`keyaudit.engine.rule_language.reading.parser_cache`), ``phrases/`` (compiled phrase lexicons,
:mod:`keyaudit.engine.rule_language.reading.phrases`), ``proofs/``
(:mod:`keyaudit.engine.proof_cache`), ``verdicts/`` (:mod:`keyaudit.engine.verdict_cache`) and
``numba-kernels/`` (compiled bootstrap kernels,
:mod:`keyaudit.engine.stats._kernel_cache`, the one cache another library reads by path). All are
optimisations: any doubt about a folder or an entry makes it a miss, never an error.

The rules, and why:

* A folder is used only if, opened with ``O_NOFOLLOW``, it is a directory owned by the current
  user that neither group nor others can write. It is created ``0700``. Everything after that
  goes through its file descriptor (``dir_fd``), so renaming or replacing the folder's path
  afterwards (another user's trick in a shared parent such as ``/tmp``) cannot redirect a read
  or a write.
* An entry is read only if, opened with ``O_NOFOLLOW``, it is a regular file owned by the current
  user that neither group nor others can write, and no larger than the caller's limit.
* An entry is written to a fresh temporary file (``O_EXCL``, ``0600``) in the same folder and
  renamed over the old one, so a reader sees the old entry or the new one, never half of one;
  a write killed half-way leaves a temporary file that :meth:`PrivateDir.prune` removes later.
* Caching needs POSIX (``O_NOFOLLOW``, ``dir_fd``); elsewhere it is off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
import time
from collections.abc import Callable
from pathlib import Path

#: ``KEYAUDIT_CACHE_DIR`` values that turn every cache off.
OFF_VALUES = ("", "off", "0", "none")
#: A temporary file older than this (seconds) belongs to a write that was killed.
STALE_TEMPORARY = 600.0
_TEMPORARY_PREFIX = ".tmp-"


def cache_root() -> Path | None:
    """The cache root (``$KEYAUDIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/keyaudit``, else
    ``~/.cache/keyaudit``), or ``None`` when caching is off: ``KEYAUDIT_CACHE_DIR`` set to an
    :data:`OFF_VALUES` value or to a relative path (which would put the cache in whatever folder
    keyaudit is run from, a downloaded benchmark's included)."""
    configured = os.environ.get("KEYAUDIT_CACHE_DIR")
    if configured is not None:
        if configured.strip().lower() in OFF_VALUES or not os.path.isabs(configured):
            return None  # a relative folder would follow the current one (a benchmark's own)
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid and ignored
        base = str(Path.home() / ".cache")
    return Path(base) / "keyaudit"


def supported() -> bool:
    """Whether this platform has what safe caching needs."""
    return (
        os.name == "posix"
        and hasattr(os, "O_NOFOLLOW")
        and hasattr(os, "O_DIRECTORY")
        and os.open in os.supports_dir_fd
        and hasattr(os, "geteuid")
    )


def _private(info: os.stat_result) -> bool:
    """Owned by us, and nobody else may write it."""
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class PrivateDir:
    """One cache sub-folder, held open by descriptor. Use :meth:`open`; close when done."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    @classmethod
    def open(cls, name: str) -> PrivateDir | None:
        """The private folder ``<cache root>/<name>``, created if missing; ``None`` if caching is
        off, unsupported, or the folder is not safe to use."""
        root = cache_root()
        if root is None or not supported():
            return None
        path = root / name
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                path.mkdir(mode=0o700)
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except (OSError, ValueError):
            return None
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode) and _private(info):
                return cls(fd, path)
        except OSError:
            pass
        os.close(fd)
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def __enter__(self) -> PrivateDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, entry: str, max_bytes: int) -> bytes | None:
        """The bytes of ``entry`` if it is a private regular file of at most ``max_bytes``."""
        try:
            fd = os.open(
                entry,
                os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                dir_fd=self.fd,
            )
        except (OSError, ValueError):
            return None
        try:
            info = os.fstat(fd)
            if not (stat.S_ISREG(info.st_mode) and _private(info)) or info.st_size > max_bytes:
                return None
            chunks = []
            remaining = info.st_size + 1  # one byte more shows a file that grew meanwhile
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            data = b"".join(chunks)
            return data if len(data) <= max_bytes else None
        except OSError:
            return None
        finally:
            os.close(fd)

    def write(self, entry: str, data: bytes) -> bool:
        """Replace ``entry`` by ``data`` atomically; ``False`` if that failed (nothing is left)."""
        temporary = f"{_TEMPORARY_PREFIX}{secrets.token_hex(8)}"
        try:
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=self.fd,
            )
        except (OSError, ValueError):
            return False
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
            os.replace(temporary, entry, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            return True
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=self.fd)
            return False

    def prune(self, is_entry: Callable[[str], bool], keep: int) -> None:
        """Remove temporary files of killed writes, and all but the ``keep`` newest entries."""
        now = time.time()
        entries: list[tuple[float, str]] = []
        try:
            names = os.listdir(self.fd)
        except OSError:
            return
        for name in names:
            try:
                info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            except OSError:
                continue
            if name.startswith(_TEMPORARY_PREFIX):
                if now - info.st_mtime > STALE_TEMPORARY:
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=self.fd)
            elif is_entry(name) and stat.S_ISREG(info.st_mode):
                entries.append((info.st_mtime, name))
        entries.sort(reverse=True)
        for _, name in entries[keep:]:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=self.fd)

    def touch(self, entry: str) -> None:
        """Mark ``entry`` as recently used (pruning keeps the newest)."""
        with contextlib.suppress(OSError, NotImplementedError):
            os.utime(entry, dir_fd=self.fd, follow_symlinks=False)


def seal(format: str, key: str, payload: bytes, **extra: object) -> bytes:
    """A cache entry: one JSON header line (format, key, the payload's SHA-256, ``extra``), then
    the payload. :func:`unseal` gives the payload back only if all of these still match."""
    header = {"format": format, "key": key, "sha256": hashlib.sha256(payload).hexdigest(), **extra}
    return json.dumps(header, sort_keys=True).encode() + b"\n" + payload


def unseal(data: bytes, format: str, key: str) -> tuple[dict, bytes] | None:
    """The header and payload of an entry :func:`seal` wrote for ``format`` and ``key``, or None
    when the entry is damaged, foreign, of another format or for another key."""
    try:
        newline = data.index(b"\n")
        header = json.loads(data[:newline])
    except (ValueError, RecursionError):
        return None
    payload = data[newline + 1 :]
    if not (
        isinstance(header, dict)
        and header.get("format") == format
        and header.get("key") == key
        and header.get("sha256") == hashlib.sha256(payload).hexdigest()
    ):
        return None
    return header, payload


def read_sealed(folder: str, entry: str, format: str, key: str, max_bytes: int) -> bytes | None:
    """The payload of ``entry`` in the private folder ``folder`` if it is sealed for ``format``
    and ``key`` (:func:`unseal`), marked as recently used; None for any miss."""
    private = PrivateDir.open(folder)
    if private is None:
        return None
    with private:
        data = private.read(entry, max_bytes)
        sealed = None if data is None else unseal(data, format, key)
        if sealed is None:
            return None
        private.touch(entry)
        return sealed[1]


def write_sealed(
    folder: str, entry: str, format: str, key: str, payload: bytes, keep: int, suffix: str
) -> None:
    """Store ``payload`` sealed for ``format`` and ``key`` as ``entry`` of the private folder
    ``folder``, keeping the ``keep`` newest entries ending in ``suffix``; failures are ignored
    (a cache is only an optimisation)."""
    private = PrivateDir.open(folder)
    if private is None:
        return
    with private:
        private.write(entry, seal(format, key, payload))
        private.prune(lambda name: name.endswith(suffix), keep)
