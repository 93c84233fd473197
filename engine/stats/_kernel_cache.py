"""numba's compiled-kernel cache, kept in keyaudit's private cache folder and nowhere else.

Why not ``@njit(cache=True)``: numba then writes its index and object files beside the source
(``site-packages/keyaudit/engine/stats/__pycache__/``) or into ``$NUMBA_CACHE_DIR``. The first is
a file inside the installed package that pip never recorded, so a later ``pip install -e .`` leaves
a ``keyaudit/`` folder behind that shadows the editable install as a namespace package. The second
is worse: numba *unpickles* its index file, and ``NUMBA_CACHE_DIR`` is commonly a shared,
world-writable ``/tmp/...`` folder, so an index planted there by another user runs code in
keyaudit's process.

So the kernels are jitted without numba's cache (:func:`njit` here, not numba's), and one with
``cache=True`` gets a cache whose only locator is ``<cache root>/numba-kernels/``: a folder that
:class:`~keyaudit.engine.load.safe_io.PrivateDir` accepts (ours, ``0700``, nobody else may write
it) and whose every ancestor is ours or root's and writable by nobody else unless sticky, so no
other user can swap the path numba opens. ``$NUMBA_CACHE_DIR`` and ``$NUMBA_CACHE_LOCATOR_CLASSES``
are never consulted for keyaudit's kernels. With caching off (``KEYAUDIT_CACHE_DIR=off``) or no
such folder, the kernels compile in memory on each run: slower, never less safe.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba.core import caching

from keyaudit.engine.load.safe_io import PrivateDir, supported

#: The cache root's sub-folder that holds numba's index (``.nbi``) and object (``.nbc``) files.
FOLDER = "numba-kernels"


def _ancestors_trusted(path: Path) -> bool:
    """Every folder from ``path`` up to ``/`` is owned by us or root and writable by nobody else,
    unless it is sticky (``/tmp``): then nobody else can rename what we own inside it."""
    current = path
    while True:
        try:
            info = os.lstat(current)
        except OSError:
            return False
        if stat.S_ISLNK(info.st_mode):
            current = Path(os.path.realpath(current))
            continue
        if info.st_uid not in (0, os.geteuid()):
            return False
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
            return False
        if current.parent == current:
            return True
        current = current.parent


@functools.lru_cache(maxsize=1)
def kernel_cache_dir() -> str | None:
    """The absolute path numba may cache keyaudit's kernels in, or ``None`` (compile in memory).

    Decided once per process: every kernel of one run caches in the same place or nowhere."""
    if not supported():
        return None
    folder = PrivateDir.open(FOLDER)
    if folder is None:
        return None
    folder.close()
    path = Path(os.path.abspath(folder.path))
    return str(path) if _ancestors_trusted(path) else None


class _PrivateLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba's cache locator for :func:`kernel_cache_dir`: one sub-folder per source folder."""

    def __init__(self, py_func: Callable, py_file: str, root: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(root, self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self) -> str:
        return self._cache_path

    def ensure_cache_path(self) -> None:
        os.makedirs(self._cache_path, mode=0o700, exist_ok=True)


class _PrivateImpl(caching.CompileResultCacheImpl):
    """numba's compile-result cache, with :class:`_PrivateLocator` as its one locator.

    ``CacheImpl.__init__`` would consult ``$NUMBA_CACHE_LOCATOR_CLASSES`` and numba's default
    locators (``$NUMBA_CACHE_DIR``, the source tree); this one never does."""

    def __init__(self, py_func: Callable) -> None:
        root = kernel_cache_dir()
        if root is None:  # guarded by private_cache; kept so a misuse cannot fall back silently
            raise RuntimeError("keyaudit's kernel cache folder is not available")
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _PrivateLocator(py_func, inspect.getfile(py_func), root)
        self._locator.ensure_cache_path()
        module = os.path.splitext(os.path.basename(inspect.getfile(py_func)))[0]
        fullname = f"{module}.{py_func.__qualname__}"
        self._filename_base = self.get_filename_base(fullname, getattr(sys, "abiflags", ""))


class _PrivateFunctionCache(caching.FunctionCache):
    _impl_class = _PrivateImpl


def private_cache(dispatcher: Any) -> Any:
    """Give a numba dispatcher keyaudit's private cache, if there is one; return it."""
    if kernel_cache_dir() is not None:
        # a folder that could not be made: compile in memory, as with caching off
        with contextlib.suppress(OSError):
            dispatcher._cache = _PrivateFunctionCache(dispatcher.py_func)
    return dispatcher


def njit(*, cache: bool = False, **options: Any) -> Callable[[Callable], Any]:
    """``numba.njit`` for keyaudit's kernels: ``cache=True`` means keyaudit's private cache only."""

    def decorate(function: Callable) -> Any:
        dispatcher = numba.njit(**options)(function)
        # with NUMBA_DISABLE_JIT=1 numba hands back the plain function: nothing to cache
        return private_cache(dispatcher) if cache and hasattr(dispatcher, "py_func") else dispatcher

    return decorate
