"""What a path named by a benchmark, a rule or the command line really is, said in one line.

Reading skips nothing silently: a ``*.jsonl`` that is a directory, a FIFO, a device, a dangling
symbolic link (common with git-annex or DVC data that has not been fetched) or a link loop is an
error naming the path, not a file quietly left out of the corpus. A FIFO is never opened (that
would block).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

DANGLING_HINT = (
    "its target does not exist (data managed by git-annex or DVC that has not been fetched? "
    "run `git annex get` or `dvc pull`)"
)


def kind_name(mode: int) -> str:
    """``"a directory"``, ``"a FIFO (named pipe)"``, ... for a non-regular file's mode."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def file_problem(path: Path, expected: str = "a file") -> str | None:
    """Why ``path`` is not a readable regular file, as a phrase; ``None`` when it is one."""
    try:
        info = os.stat(path)
    except ValueError:
        return "the path contains a NUL character"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if error.errno == errno.ENOENT and os.path.islink(path):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return f"is a dangling symbolic link to {target!r}: {DANGLING_HINT}"
        if error.errno == errno.ENOENT:
            return "does not exist"
        if error.errno == errno.ENAMETOOLONG:
            return "has a name too long for the file system"
        return f"cannot be read: {error.strerror or error}"
    if not stat.S_ISREG(info.st_mode):
        return f"is {kind_name(info.st_mode)}, expected {expected}"
    return None


def folder_problem(path: Path) -> str | None:
    """Why ``path`` is not a directory, as a phrase; ``None`` when it is one."""
    try:
        info = os.stat(path)
    except ValueError:
        return "the path contains a NUL character"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if error.errno == errno.ENOENT and os.path.islink(path):
            return f"is a dangling symbolic link: {DANGLING_HINT}"
        if error.errno == errno.ENOENT:
            return "does not exist"
        return f"cannot be read: {error.strerror or error}"
    if not stat.S_ISDIR(info.st_mode):
        return (
            "is a file, expected a directory"
            if stat.S_ISREG(info.st_mode)
            else (f"is {kind_name(info.st_mode)}, expected a directory")
        )
    return None


def exists_at_all(path: Path) -> bool:
    """True when anything is at ``path``, even a dangling link (``Path.exists`` says no then)."""
    try:
        return os.path.lexists(path)
    except ValueError:
        return False
