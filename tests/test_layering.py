"""The engine's stages import one way: errors → load → rule_language → stats → reports → audit/flag.

Each module's imports (relative and absolute, at any depth, including those inside functions) are
read from its source with ``ast`` and mapped to the stage they land in; an import that runs back up
the pipeline fails here, naming the file, line and both stages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
#: Lower ranks may be imported by higher ones, never the other way round.
RANK = {
    "errors": 0,
    "profiling": 0,
    "load": 1,
    "rule_language": 2,
    "stats": 3,
    "reports": 4,
    "audit": 5,
    "flag": 5,
    "review": 5,
    "proof_cache": 5,
    "verdict_cache": 4,
    "api": 5,
    "examples": 6,
    "cli": 7,
}


def stage_of(module: str) -> str | None:
    """The stage of a dotted module path inside ``keyaudit`` (None for the package roots)."""
    parts = module.split(".")
    if parts[:2] == ["keyaudit", "cli"]:
        return "cli"
    if parts[:2] != ["keyaudit", "engine"] or len(parts) < 3:
        return None
    return parts[2]


def module_name(path: Path) -> str:
    relative = path.relative_to(ENGINE).with_suffix("")
    parts = [p for p in relative.parts if p != "__init__"]
    return ".".join(["keyaudit", "engine", *parts])


def imports_of(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """Every module an import statement in ``path`` names, resolved to an absolute dotted path."""
    source = path.read_text(encoding="utf-8") if source is None else source
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None:  # from . import x: each name is a module
                found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, target))
    return found


SOURCES = sorted(p for p in ENGINE.rglob("*.py") if p.name != "__init__.py" or p.parent != ENGINE)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ENGINE)))
def test_imports_run_down_the_pipeline(path: Path) -> None:
    own_stage = stage_of(module_name(path))
    assert own_stage in RANK, f"{path}: module outside every stage; add its stage to RANK"
    for line, target in imports_of(path):
        stage = stage_of(target)
        if stage is None or stage == own_stage:
            continue
        assert stage in RANK, f"{path}:{line}: imports {target}, which is in no stage"
        assert RANK[stage] <= RANK[own_stage], (
            f"{path}:{line}: {own_stage} imports {target} ({stage}), which runs back up the pipeline"
        )


def test_the_check_catches_an_upward_import() -> None:
    """The scanner itself works: relative imports resolve, and an upward one is visible."""
    assert any(stage_of(t) == "errors" for _, t in imports_of(ENGINE / "load" / "benchmark.py"))
    probe = ENGINE / "load" / "probe.py"  # never written: the source is given
    source = "def f():\n    from ..rule_language.rules.rule import Rule\n    from . import jsonl\n"
    targets = [t for _, t in imports_of(probe, source)]
    assert targets == ["keyaudit.engine.rule_language.rules.rule", "keyaudit.engine.load.jsonl"]
    assert RANK[stage_of(targets[0])] > RANK["load"]


def test_every_stage_says_what_it_owns_and_may_import() -> None:
    for stage in ("load", "rule_language", "stats", "reports"):
        doc = ast.get_docstring(ast.parse((ENGINE / stage / "__init__.py").read_text()))
        assert doc and "May import" in doc, stage


#: The rule language's rooms (``engine/rule_language/<room>/``): lower ranks may be imported by
#: higher ones, never the other way round (issue 22, item 7).
ROOM_RANK = {"reading": 0, "expressions": 1, "rules": 2, "scoring": 3, "authoring": 4}
LANGUAGE = ENGINE / "rule_language"


def room_of(module: str) -> str | None:
    """The room of a dotted module path inside the rule language (None outside it or at its root)."""
    parts = module.split(".")
    if parts[:3] != ["keyaudit", "engine", "rule_language"] or len(parts) < 4:
        return None
    return parts[3]


ROOM_SOURCES = sorted(p for p in LANGUAGE.rglob("*.py") if p.parent != LANGUAGE)


def test_every_module_of_the_rule_language_is_in_a_room() -> None:
    loose = sorted(p.name for p in LANGUAGE.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"modules outside every room of {LANGUAGE}: {loose}"
    rooms = sorted(p.parent.name for p in ROOM_SOURCES if p.name == "__init__.py")
    assert rooms == sorted(ROOM_RANK), rooms


@pytest.mark.parametrize("path", ROOM_SOURCES, ids=lambda p: str(p.relative_to(LANGUAGE)))
def test_rooms_import_one_way(path: Path) -> None:
    own_room = room_of(module_name(path))
    assert own_room in ROOM_RANK, f"{path}: in no room; add the room to ROOM_RANK"
    for line, target in imports_of(path):
        if target == "keyaudit.engine.rule_language":
            raise AssertionError(f"{path}:{line}: imports the rule language's root ({target}), not a room")
        room = room_of(target)
        if room is None or room == own_room:
            continue
        assert room in ROOM_RANK, f"{path}:{line}: imports {target}, which is in no room"
        assert ROOM_RANK[room] < ROOM_RANK[own_room], (
            f"{path}:{line}: room {own_room} imports {target} (room {room}), which sits above it"
        )


def test_the_room_check_catches_an_upward_import() -> None:
    """A reading module that imported scoring would be caught (the scanner sees function bodies)."""
    probe = LANGUAGE / "reading" / "probe.py"  # never written: the source is given
    source = "def f():\n    from ..scoring.scorer import Scorer\n    from .ast import Node\n"
    targets = [t for _, t in imports_of(probe, source)]
    assert targets == ["keyaudit.engine.rule_language.scoring.scorer", "keyaudit.engine.rule_language.reading.ast"]
    assert ROOM_RANK[room_of(targets[0])] > ROOM_RANK["reading"]


#: What the package root (``api/``, the public names) and the framework integrations
#: (``integrations/``) may import from keyaudit: the API, errors, and the one statistic the
#: inspect_ai metric computes; never the command line or the engine's stages directly.
ABOVE_ENGINE = {
    ROOT / "api": {"keyaudit.engine.api", "keyaudit.engine.errors"},
    ROOT / "integrations": {
        "keyaudit.engine.api",
        "keyaudit.engine.errors",
        "keyaudit.engine.stats.analytic_se",
    },
}


@pytest.mark.parametrize("folder", sorted(ABOVE_ENGINE), ids=lambda p: p.name)
def test_the_api_and_the_integrations_import_only_the_api(folder: Path) -> None:
    allowed = ABOVE_ENGINE[folder]
    sources = sorted(folder.glob("*.py"))
    assert sources, folder
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path}:{node.lineno}: a relative import"
                names = [node.module or ""]
            for name in names:
                if name.split(".")[0] == "keyaudit":
                    assert name in allowed, f"{path}:{node.lineno}: imports {name}"
