"""No import circle anywhere in the package: every module's imports form a graph without cycles.

The layering test checks that stages import one way; within a stage (or within the CLI) two
modules could still import each other, often from inside a function so that Python does not
notice (``cli/app.py`` ↔ ``cli/check.py`` through ``report_error``; ``load/benchmark.py`` ↔
``load/response_table.py`` through the record types, issue 34 item 7). A circle means neither
module can be read, tested or moved without the other. Every import counts here: at the top, in
a function, under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The package's folders and the dotted names setuptools maps them to.
PACKAGES = {"api": "keyaudit", "engine": "keyaudit.engine", "cli": "keyaudit.cli"}


def module_of(path: Path) -> str:
    folder, *rest = path.relative_to(ROOT).with_suffix("").parts
    parts = [p for p in rest if p != "__init__"]
    return ".".join([PACKAGES[folder], *parts])


def modules() -> dict[str, Path]:
    """Every module of the package: its dotted name and its file."""
    found = {}
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found[module_of(path)] = path
    return found


def imports_of(name: str, path: Path, source: str, known: set[str]) -> set[str]:
    """The package's modules that ``source`` (the module ``name`` at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from x import y``: y is the module x.y when there is one, else a name in x
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                for alias in node.names
            ]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so a deep graph cannot exhaust the recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def graph_of(sources: dict[str, tuple[Path, str]]) -> dict[str, set[str]]:
    known = set(sources)
    return {name: imports_of(name, path, text, known) for name, (path, text) in sources.items()}


def test_the_package_has_no_import_circle() -> None:
    sources = {name: (path, path.read_text(encoding="utf-8")) for name, path in modules().items()}
    graph = graph_of(sources)
    assert len(graph) > 100  # the whole package was read
    found = circles(graph)
    assert found == [], "import circles (each module imports, at any depth, another of its group): " + "; ".join(
        " ↔ ".join(group) for group in found
    )


def test_the_scanner_sees_a_circle_through_a_function_body_and_type_checking() -> None:
    """The check itself works: the two circles issue 34 found would be caught."""
    root = ROOT / "cli"
    sources = {
        "keyaudit.cli.app": (root / "app.py", "from .check import check\n"),
        "keyaudit.cli.check": (root / "check.py", "def f():\n    from .app import report_error\n"),
        "keyaudit.cli.keys": (root / "keys.py", "from . import common\n"),
        "keyaudit.cli.common": (root / "common.py", "import os\n"),
        "keyaudit.engine.load.benchmark": (
            ROOT / "engine" / "load" / "benchmark.py",
            "from .response_table import ResponseTable\n",
        ),
        "keyaudit.engine.load.response_table": (
            ROOT / "engine" / "load" / "response_table.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from .benchmark import KeyItem\n",
        ),
    }
    assert circles(graph_of(sources)) == [
        ["keyaudit.cli.app", "keyaudit.cli.check"],
        ["keyaudit.engine.load.benchmark", "keyaudit.engine.load.response_table"],
    ]
    graph = graph_of(sources)
    assert graph["keyaudit.cli.keys"] == {"keyaudit.cli.common"}  # `from . import x` is module x
