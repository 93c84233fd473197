"""Writing a file keyaudit produces (a report, a plot, a review file, a validation card): whole or
not at all, and never through a link someone planted.

``Path.write_text`` truncated the target first and wrote after, so a full disk left a truncated
report under the real name and the previous one was lost, and a failed write surfaced as an
internal error. It also followed whatever link stood at the name: a downloaded rule folder with
``cards/NAME.card.toml.tmp`` linked to ``~/.bashrc`` made ``test-rule --card`` overwrite the
user's file. Here:

* the text goes to a fresh temporary file beside the target, created with ``O_CREAT | O_EXCL |
  O_NOFOLLOW`` under a random name (nothing planted can be opened in its place), written in full
  and flushed to disk, then renamed over the target: a reader sees the old file or the new one;
* a target that is a symbolic link is replaced by the file, never written through (the link's
  own target is left as it was); one that exists keeps its permission bits;
* a target that is not a regular file — ``/dev/stdout``, ``/dev/null``, a FIFO, or a link to
  one — is a stream the user named: it is written directly, since it cannot be renamed over;
* any failure (no space, a file-size limit, no permission, a device that refuses) is one line,
  :class:`~keyaudit.engine.errors.OutputError`, naming the file and saying the previous file is
  kept; the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from ..errors import OutputError, printable

__all__ = ["write_output"]


def write_output(target: str | Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, byte for byte: no newline translation) to ``target``."""
    path = Path(target)
    payload = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    try:
        existing = os.stat(path)  # links followed: what a write would reach
    except FileNotFoundError:
        existing = None
    except OSError as error:
        raise _failed(path, error, None) from None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        if stat.S_ISDIR(existing.st_mode):
            raise OutputError(f"{printable(str(path))}: is a directory, expected a file")
        _write_stream(path, payload)
        return
    try:
        kept = os.lstat(path)
    except FileNotFoundError:
        kept = None
    except OSError as error:
        raise _failed(path, error, None) from None
    mode = stat.S_IMODE(kept.st_mode) if kept is not None and stat.S_ISREG(kept.st_mode) else None
    temporary, fd = _create_temporary(path, kept)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise _failed(path, error, kept) from None


def _create_temporary(path: Path, kept: os.stat_result | None) -> tuple[Path, int]:
    """A new, empty file beside ``path`` that nobody else named, open for writing: a random
    name, created exclusively and not through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    stem = path.name[:40]
    for _ in range(16):
        temporary = path.with_name(f".{stem}.{secrets.token_hex(6)}.tmp")
        try:
            return temporary, os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as error:
            raise _failed(path, error, kept) from None
    raise OutputError(f"{printable(str(path))}: cannot write: no free temporary name beside it")


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view[: 1 << 20])
        view = view[written:]


def _write_stream(path: Path, payload: bytes) -> None:
    """A device or FIFO the user named (``/dev/stdout``): written as it is, failures one line."""
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            _write_all(fd, payload)
        finally:
            os.close(fd)
    except OSError as error:
        raise _failed(path, error, None) from None


def _failed(path: Path, error: OSError, kept: os.stat_result | None) -> OutputError:
    reason = error.strerror or type(error).__name__
    tail = "; the previous file is kept" if kept is not None else ""
    return OutputError(f"{printable(str(path))}: cannot write: {reason}{tail}")
