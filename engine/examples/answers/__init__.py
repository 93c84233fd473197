"""Per-cell answer writers for the synthetic example: one module per ruled cell.

A module named ``<domain>_l<level>.py`` in this package defines

    def answer(rng: random.Random, key: str, knows: bool, profile: Profile) -> tuple[str, bool]

returning the answer-line text a synthetic model writes for ``key`` and whether a good rule should
accept it (``intended``; never written to the benchmark). ``knows`` is the model's knowledge draw
for the item; ``profile`` carries its habits (``p_hedge``, ``p_drop_clause``, ...). Writers draw
only from ``rng`` so every response is a function of the seed.

Why a package of modules rather than one big file: each cell's wording is its own job, and a new
ruled cell adds its writer without editing any shared code (the generator finds it by name).
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from collections.abc import Callable
from typing import Any

Writer = Callable[[random.Random, str, bool, Any], tuple[str, bool]]


def _discover() -> dict[tuple[str, int], Writer]:
    found: dict[tuple[str, int], Writer] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        domain, sep, level = info.name.rpartition("_l")
        if not sep or not level.isdigit():
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found[(domain, int(level))] = module.answer
    return found


#: (domain, level) -> writer, for every module of this package.
WRITERS: dict[tuple[str, int], Writer] = _discover()
