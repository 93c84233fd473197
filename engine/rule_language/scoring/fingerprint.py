"""What decides a verdict, as one fingerprint: keyaudit's version, the rule language's code,
the bundled grammars and the answer-line finder. Two processes with the same fingerprint give
the same verdict on the same rule files, key and answer: a Dask worker refuses work from a run
with another one, and the proof cache keys its entries by it."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__all__ = ["engine_fingerprint"]


@lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """``<version>/<16 hex digits>`` of this keyaudit (see the module docstring)."""
    from importlib.metadata import PackageNotFoundError, version

    from ..reading.grammar import bundled_grammar_dir

    try:
        release = version("keyaudit")
    except PackageNotFoundError:
        release = "unknown"
    digest = hashlib.sha256(release.encode())
    language = Path(__file__).resolve().parent.parent  # every room of the rule language
    files = sorted(language.rglob("*.py")) + sorted(bundled_grammar_dir().rglob("*.lark"))
    files.append(language.parent / "load" / "answer_line.py")
    grammars = bundled_grammar_dir().resolve()
    for file in files:
        inside = file.is_relative_to(language.parent)
        if inside:
            name = file.relative_to(language.parent).as_posix()
        elif file.resolve().is_relative_to(grammars):
            name = file.resolve().relative_to(grammars).as_posix()  # "kinds/change.lark"
        else:
            name = file.name
        digest.update(name.encode() + b"\0" + file.read_bytes() + b"\0")
    return f"{release}/{digest.hexdigest()[:16]}"
