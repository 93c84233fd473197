"""numba's compiled kernels are cached in keyaudit's private cache folder only (issue 34, item 1;
issue 37, high: numba's cache).

With ``@njit(cache=True)`` numba wrote its files inside the installed package (which broke the
README's second command after its first) or into ``$NUMBA_CACHE_DIR``, whose index it unpickles:
a shared ``/tmp`` folder let another user run code in keyaudit. Each test runs a kernel in a fresh
process, as a user's run does, because numba decides where to cache when a kernel module loads.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import keyaudit.engine.stats as stats_package
from keyaudit.engine.load import safe_io

RUN_KERNEL = """
import numpy as np
from keyaudit.engine.stats._extraction_kernel import rate_draws_kernel
n = np.array([[3, 2, 0, 1]], dtype=np.int64)
e = np.array([[1, 0, 0, 1]], dtype=np.int64)
out = rate_draws_kernel(n, e, np.array([7], dtype=np.uint64), np.arange(4, dtype=np.uint64),
                        np.uint64(5), 4)
print(out.shape)
"""

#: numba's own answer to "where would NUMBA_CACHE_DIR put this kernel's index?", asked of numba.
NUMBA_INDEX_PATH = """
from numba.core.caching import FunctionCache
from keyaudit.engine.stats._extraction_kernel import rate_draws_kernel
print(FunctionCache(rate_draws_kernel.py_func)._cache_file._index_path)
"""


class _Planted:
    """A pickle that, when loaded, creates the file its path names: proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KEYAUDIT_"))}
    return subprocess.run(
        [sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True,
        timeout=300, check=False,
    )


def numba_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))


def test_kernels_cache_in_the_private_folder_and_never_in_the_package(tmp_path: Path) -> None:
    package = Path(stats_package.__file__).parent
    before = numba_files(package)
    result = run(RUN_KERNEL, {"KEYAUDIT_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    assert numba_files(package) == before  # numba's in-tree locator would write __pycache__/ here
    cached = numba_files(tmp_path / "cache" / "numba-kernels")
    assert {p.suffix for p in cached} == {".nbi", ".nbc"}
    folder = tmp_path / "cache" / "numba-kernels"
    assert folder.stat().st_mode & 0o777 == 0o700
    # and the second run reads them: same output, no new files
    again = run(RUN_KERNEL, {"KEYAUDIT_CACHE_DIR": str(tmp_path / "cache")})
    assert again.stdout == result.stdout
    assert numba_files(folder) == cached


def test_a_planted_index_in_a_shared_numba_cache_dir_is_never_loaded(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # the common NUMBA_CACHE_DIR=/tmp/numba setting
    where = run(NUMBA_INDEX_PATH, {"NUMBA_CACHE_DIR": str(shared), "KEYAUDIT_CACHE_DIR": "off"})
    assert where.returncode == 0, where.stderr
    index = Path(where.stdout.strip())
    assert shared in index.parents
    index.parent.mkdir(parents=True, exist_ok=True)
    marker = tmp_path / "code-ran"
    index.write_bytes(pickle.dumps(_Planted(marker)))
    for cache in ("off", str(tmp_path / "cache")):
        result = run(RUN_KERNEL, {"NUMBA_CACHE_DIR": str(shared), "KEYAUDIT_CACHE_DIR": cache})
        assert result.returncode == 0, result.stderr
        assert not marker.exists()
    assert numba_files(shared) == [index]  # nothing of ours was written there either


def test_caching_off_compiles_in_memory_and_writes_nothing(tmp_path: Path) -> None:
    package = Path(stats_package.__file__).parent
    before = numba_files(package)
    result = run(RUN_KERNEL, {"KEYAUDIT_CACHE_DIR": "off"})
    assert result.returncode == 0, result.stderr
    assert numba_files(package) == before


@pytest.mark.skipif(not safe_io.supported(), reason="private caches need POSIX")
def test_a_cache_root_others_can_swap_is_not_used_for_kernels(tmp_path: Path) -> None:
    open_parent = tmp_path / "open"
    open_parent.mkdir()
    open_parent.chmod(0o777)  # writable by all and not sticky: anyone can rename our folder away
    result = run(
        "from keyaudit.engine.stats._kernel_cache import kernel_cache_dir; print(kernel_cache_dir())",
        {"KEYAUDIT_CACHE_DIR": str(open_parent / "cache")},
    )
    assert result.stdout.strip() == "None", result.stderr
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    result = run(
        "from keyaudit.engine.stats._kernel_cache import kernel_cache_dir; print(kernel_cache_dir())",
        {"KEYAUDIT_CACHE_DIR": str(sticky / "cache")},
    )
    assert result.stdout.strip() == str(sticky / "cache" / "numba-kernels"), result.stderr


def test_relative_cache_folders_are_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", ".")
    assert safe_io.cache_root() is None
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", "keys/cache")
    assert safe_io.cache_root() is None
    monkeypatch.delenv("KEYAUDIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert safe_io.cache_root() == Path.home() / ".cache" / "keyaudit"
    monkeypatch.setenv("XDG_CACHE_HOME", "/abs/cache")
    assert safe_io.cache_root() == Path("/abs/cache/keyaudit")
