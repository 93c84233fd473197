"""Find bundled things: rule files by name and the embedded example benchmark.

A rule argument is a path (``rules/physical_stability.toml``) or the name of a bundled rule
(``physical_stability``), so the same command works from the repository and from anywhere after
``pip install``. Everything is found through ``importlib.resources``, so a wheel works without
the checkout.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import UsageError, printable
from .filekind import exists_at_all, file_problem

RULES_PACKAGE = "keyaudit.rules"
GRAMMARS_PACKAGE = "keyaudit.grammars"
EXAMPLES_PACKAGE = "keyaudit.engine.examples"


def bundled_rules_dir() -> Path:
    return Path(str(resources.files(RULES_PACKAGE)))


def bundled_grammars_dir() -> Path:
    return Path(str(resources.files(GRAMMARS_PACKAGE)))


def bundled_rule_names() -> list[str]:
    """Names of the rules shipped with keyaudit, sorted."""
    return sorted(p.stem for p in bundled_rules_dir().glob("*.toml"))


def resolve_rule_path(argument: str) -> Path:
    """A rule file path for ``argument``: an existing path, or a bundled rule's name."""
    path = Path(argument)
    bare = path.suffix != ".toml" and "/" not in argument and "\0" not in argument
    bundled = bundled_rules_dir() / f"{argument}.toml" if bare else None
    if bundled is not None and bundled.is_file() and exists_at_all(path):
        raise UsageError(
            f"{printable(argument)!r} is both a bundled rule and a file in the current folder,"
            f" which would shadow it; write ./{printable(argument)} for the file, or run from"
            " another folder for the bundled rule"
        )
    problem = file_problem(path, "a rule file")
    if problem is None:
        return path
    if problem != "does not exist" and exists_at_all(path):
        raise UsageError(f"{argument}: rule file {problem}")
    if bundled is not None and bundled.is_file():
        return bundled
    names = ", ".join(bundled_rule_names()) or "none"
    raise UsageError(
        f"{argument!r}: no such rule file, and not a bundled rule name (bundled: {names})"
    )


def example_benchmark_dir() -> Path:
    """The embedded example benchmark (GRIP-Benchmark-34 keys, synthetic responses)."""
    return Path(str(resources.files(EXAMPLES_PACKAGE))) / "grip34"


def display_path(path: Path) -> str:
    """How reports name a rule file: ``rules/<name>.toml`` for a bundled rule, else as given.

    A bundled rule's absolute path depends on where keyaudit is installed; reports that must be
    byte-identical across machines name it by its place in the package instead.
    """
    try:
        resolved = path.resolve()
        if resolved.parent == bundled_rules_dir().resolve():
            return f"rules/{resolved.name}"
    except OSError:
        pass
    return str(path)
