"""Mutation testing of one module against the tests that cover it, on keyaudit's own layout.

    python bench/mutation.py engine/stats/wilson.py
    python bench/mutation.py engine/rule_language/reading/claims.py --sample 120 --seed 28
    python bench/mutation.py engine/load/strict.py --tests tests/test_strict.py
    python bench/mutation.py engine/stats/wilson.py --list        # the mutants, nothing run

Why our own runner: the package is mapped by pyproject's ``package-dir`` (``keyaudit.engine`` is
``engine/``, ``keyaudit.cli`` is ``cli/``...), which mutmut cannot import its mutants under. This
script never moves the code and never writes to the working tree (others edit it):

1. **Snapshot.** Every file git lists in the working tree (tracked and untracked-not-ignored, as they
   are on disk now) is copied to a private temporary folder, and a ``keyaudit`` package is built
   beside it from pyproject's ``package-dir`` (``keyaudit/engine`` -> the copy's ``engine/``...), put
   first on ``PYTHONPATH``; imports of ``keyaudit.*`` in the test run (and in the scoring workers,
   which re-add the parent's import folders) resolve to the copy. The runner checks that they do.
2. **Mutants.** The module's AST is walked and each mutation is one small change: an arithmetic,
   bitwise or augmented-assignment operator swapped (``+``/``-``, ``*``/``/``, ``//``->``/``,
   ``%``->``/``, ``**``->``*``...), a comparison moved to its neighbour (``<``->``<=``,
   ``==``->``!=``, ``in``->``not in``, ``is``->``is not``...), ``and``/``or`` swapped, a ``not`` or
   unary minus dropped, a constant changed (an int ``n``->``n + 1``, a float ``x``->``x + 1``, a
   string ``s``->``"XX" s "XX"``, ``True``/``False`` flipped), a ``return value`` made
   ``return None``, a simple statement inside a function deleted (replaced by ``pass``). Not
   mutated: docstrings, annotations, f-strings, imports, ``__all__``. The mutated module is
   ``ast.unparse``-d (comments dropped, meaning kept); the unmutated module is unparsed the same
   way for the baseline run, which must pass. Mutants whose source equals another's are run once.
3. **Runs.** One mutant at a time: the module's file in the copy is replaced, and
   ``python -m pytest -x -q`` runs the chosen test files there (no bytecode written, so a stale
   ``.pyc`` cannot hide a mutant), at ``nice`` 10, with a timeout per mutant (10 x the unmutated
   run, at least 120 s: a timeout counts as killed, as in mutmut, so it must not be a slow run on
   a busy machine). The copy is deleted at the end.
4. **Score.** killed / (run - equivalent). Equivalent mutants (no test *could* kill them) are
   listed in ``bench/mutation_equivalent.txt`` with a one-line reason each, keyed by module, the
   mutated line's text and the mutation; they are reported, not counted.

A module with 300 mutants or more is sampled (``--sample``, default 100, seeded by ``--seed``).
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT_FILE = ROOT / "bench" / "mutation_equivalent.txt"

#: The tests that cover each module (the fastest first: ``-x`` stops at the first failure). A
#: module not listed gets every test file that names it (its dotted path or its stem).
COVERING: dict[str, list[str]] = {
    "engine/stats/wilson.py": ["tests/test_mutation_gaps_stats.py", "tests/test_review.py"],
    "engine/stats/aggregate.py": [
        "tests/test_mutation_gaps_stats.py", "tests/test_aggregate.py", "tests/test_analytic_se.py",
        "tests/test_bootstrap.py",
    ],
    "engine/stats/baselines.py": [
        "tests/test_mutation_gaps_stats.py", "tests/test_baseline_groups.py",
    ],
    "engine/rule_language/reading/claims.py": [
        "tests/test_mutation_gaps_claims.py", "tests/test_claim_layer.py",
        "tests/test_rule_physical_stability.py",
    ],
    "engine/stats/design.py": ["tests/test_mutation_gaps_design.py", "tests/test_design_stats.py"],
    "engine/stats/extraction_error.py": [
        "tests/test_mutation_gaps_corrected.py", "tests/test_extraction_error.py",
    ],
    "engine/stats/corrected.py": [
        "tests/test_mutation_gaps_corrected.py", "tests/test_extraction_error.py",
    ],
    "engine/rule_language/reading/components.py": [
        "tests/test_mutation_gaps_components.py", "tests/test_components.py",
    ],
    "engine/load/answer_line.py": ["tests/test_mutation_gaps_load.py", "tests/test_strict.py"],
    "engine/load/strict.py": [
        "tests/test_mutation_gaps_load.py", "tests/test_strict.py", "tests/test_metrics.py",
    ],
}

SAMPLE_FROM = 300

_BINOP = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div, ast.Mod: ast.Div, ast.Pow: ast.Mult, ast.LShift: ast.RShift,
    ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd, ast.BitXor: ast.BitAnd,
    ast.MatMult: ast.Mult,
}
_COMPARE = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_BOOLOP = {ast.And: ast.Or, ast.Or: ast.And}
#: Simple statements a mutant may delete (inside a function body only: deleting a module-level
#: definition is an import error, killed by any test).
_DELETABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise, ast.Continue, ast.Break,
              ast.Assert, ast.Delete)


@dataclass
class Mutant:
    index: int  # position of the node in ast.walk order of the parsed module
    variant: str
    line: int
    col: int
    before: str
    after: str
    line_text: str
    source: str = ""
    outcome: str = ""  # killed / survived / timeout / equivalent
    seconds: float = 0.0
    reason: str = ""

    @property
    def key(self) -> str:
        return f"{self.line_text} @{self.col} | {self.before} -> {self.after}"

    def label(self) -> str:
        return f"line {self.line}: `{self.before}` -> `{self.after}`"


@dataclass
class Result:
    module: str
    total: int
    mutants: list[Mutant] = field(default_factory=list)
    baseline_seconds: float = 0.0


# --- generating mutants -----------------------------------------------------------------------


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: docstrings, annotations, f-strings, imports, ``__all__``."""
    skip: set[int] = set()

    def skip_all(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                skip_all(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip_all(node.returns)
            for arg in [*node.args.args, *node.args.posonlyargs, *node.args.kwonlyargs,
                        node.args.vararg, node.args.kwarg]:
                if arg is not None:
                    skip_all(arg.annotation)
        elif isinstance(node, ast.AnnAssign):
            skip_all(node.annotation)
        elif _never_mutated(node):
            skip_all(node)
    return skip


def _never_mutated(node: ast.AST) -> bool:
    """f-strings, imports, ``__all__`` and bare strings in a body (attributes' docstrings)."""
    if isinstance(node, (ast.JoinedStr, ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _in_function(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    while id(node) in parents:
        node = parents[id(node)]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
    return False


def _variants(node: ast.AST, parents: dict[int, ast.AST]) -> list[str]:
    """The mutations that apply to ``node`` (names understood by :func:`_apply`)."""
    out: list[str] = []
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _BINOP:
        out.append("op")
    if isinstance(node, ast.Compare):
        out.extend(f"cmp{i}" for i, op in enumerate(node.ops) if type(op) in _COMPARE)
    if isinstance(node, ast.BoolOp):
        out.append("boolop")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.Invert)):
        out.append("unary")
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or (isinstance(value, (int, float, str)) and value is not ...):
            out.append("const")
    if isinstance(node, ast.Return) and node.value is not None and not (
        isinstance(node.value, ast.Constant) and node.value.value is None
    ):
        out.append("return")
    if isinstance(node, _DELETABLE) and _in_function(node, parents):
        out.append("delete")
    return out


def _apply(tree: ast.Module, index: int, variant: str) -> tuple[ast.AST, ast.AST]:
    """Mutate node ``index`` of ``tree`` in place; return (node before, node after)."""
    nodes = list(ast.walk(tree))
    node = nodes[index]
    before = copy.deepcopy(node)
    if variant == "op":
        node.op = _BINOP[type(node.op)]()
    elif variant.startswith("cmp"):
        i = int(variant[3:])
        node.ops[i] = _COMPARE[type(node.ops[i])]()
    elif variant == "boolop":
        node.op = _BOOLOP[type(node.op)]()
    elif variant == "const":
        value = node.value
        if isinstance(value, bool):
            node.value = not value
        elif isinstance(value, (int, float)):
            node.value = value + 1
        else:
            node.value = f"XX{value}XX"
    elif variant == "unary" or variant == "return" or variant == "delete":
        parent = _parents(tree)[id(node)]
        if variant == "unary":
            replacement: ast.AST = node.operand
        elif variant == "return":
            replacement = ast.Return(value=ast.Constant(value=None))
        else:
            replacement = ast.Pass()
        ast.copy_location(replacement, node)
        _replace_child(parent, node, replacement)
        return before, replacement
    return before, node


def _replace_child(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is old:
                    value[i] = new
                    return
    raise AssertionError("child not found")


def _short(node: ast.AST) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= 70 else text[:67] + "..."


def generate(source: str) -> tuple[str, list[Mutant]]:
    """The unparsed original and every distinct mutant of ``source``."""
    tree = ast.parse(source)
    original = ast.unparse(tree)
    lines = source.splitlines()
    skip = _skipped_nodes(tree)
    parents = _parents(tree)
    seen = {hashlib.sha256(original.encode()).hexdigest()}
    mutants: list[Mutant] = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        for variant in _variants(node, parents):
            fresh = ast.parse(source)
            before, after = _apply(fresh, index, variant)
            try:
                mutated = ast.unparse(ast.fix_missing_locations(fresh))
                compile(mutated, "<mutant>", "exec")
            except (SyntaxError, ValueError):
                continue
            digest = hashlib.sha256(mutated.encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            line = getattr(node, "lineno", 0)
            shown_before = _short(before)
            shown_after = "pass" if variant == "delete" else _short(after)
            if variant.startswith("cmp") or variant in ("op", "boolop"):
                shown_before, shown_after = _short(before), _short(after)
            mutants.append(Mutant(
                index, variant, line, getattr(node, "col_offset", 0), shown_before, shown_after,
                lines[line - 1].strip() if line else "", mutated,
            ))
    return original, mutants


# --- equivalent mutants -----------------------------------------------------------------------


def load_equivalent(path: Path = EQUIVALENT_FILE) -> dict[tuple[str, str], str]:
    """``{(module, mutant key): reason}`` from the list of equivalent mutants.

    Each entry is three lines: ``module: <path>``, ``mutant: <key>`` (as ``--list`` prints it) and
    ``reason: <one line>``; ``#`` lines and blank lines are ignored.
    """
    out: dict[tuple[str, str], str] = {}
    if not path.exists():
        return out
    module = key = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        name, _, value = raw.partition(":")
        value = value.strip()
        if name == "module":
            module = value
        elif name == "mutant":
            key = value
        elif name == "reason" and module and key:
            out[(module, key)] = value
            key = None
    return out


# --- running ----------------------------------------------------------------------------------


def snapshot(workdir: Path, rev: str | None = None) -> tuple[Path, Path]:
    """Copy the working tree (or commit ``rev``) into ``workdir/repo`` and build
    ``workdir/path/keyaudit``."""
    repo, path = workdir / "repo", workdir / "path"
    if rev is not None:
        repo.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(repo)], input=archive, check=True)
        listed = []
    else:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, check=True, capture_output=True,
        ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if not source.is_file():
            continue  # deleted in the working tree
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config["tool"]["setuptools"]["package-dir"]
    package = path / "keyaudit"
    package.mkdir(parents=True)
    if "keyaudit" in mapping:  # the package root is a folder of its own (api/): link its files
        for entry in (repo / mapping["keyaudit"]).iterdir():
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    else:
        (package / "__init__.py").write_text("")
    for dotted, folder in mapping.items():
        top, _, sub = dotted.partition(".")
        assert top == "keyaudit" and "." not in sub, dotted
        if sub:
            (package / sub).symlink_to(repo / folder, target_is_directory=True)
    return repo, path


def _environment(path: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["KEYAUDIT_CACHE_DIR"] = str(cache)
    env.pop("PYTEST_ADDOPTS", None)
    return env


def run_tests(repo: Path, env: dict[str, str], tests: list[str], timeout: float) -> tuple[str, float]:
    """``("passed" | "failed" | "timeout", seconds)`` of one pytest run in the copy."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
               "-W", "ignore::DeprecationWarning", *tests]
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "timeout", time.monotonic() - start
    except BaseException:  # stopped: the test run goes too (it runs in a session of its own)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    return ("passed" if code == 0 else "failed"), time.monotonic() - start


def covering_tests(module: str) -> list[str]:
    if module in COVERING:
        return COVERING[module]
    dotted = module.removesuffix(".py").replace("/", ".")
    stem = Path(module).stem
    found = []
    for test in sorted((ROOT / "tests").glob("test_*.py")):
        text = test.read_text(encoding="utf-8")
        if dotted in text or f"import {stem}" in text or f".{stem} import" in text:
            found.append(str(test.relative_to(ROOT)))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the module's path in the repository, e.g. engine/stats/wilson.py")
    parser.add_argument("--tests", nargs="+", help="test files to run (default: the module's covering tests)")
    parser.add_argument("--sample", type=int, help=f"run N mutants, seeded (default: all; 100 from {SAMPLE_FROM} mutants)")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--timeout", type=float, help="seconds per mutant (default: 10 x the unmutated run, at least 120: the "
                        "machine is shared, and a timeout counts as killed)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--only", nargs="+", type=int, help="run only these mutant numbers (as --list shows)")
    parser.add_argument("--hand", nargs=2, action="append", metavar=("OLD", "NEW"),
                        help="run a hand-written mutant instead: the module's text OLD (found exactly "
                        "once) replaced by NEW; repeatable, one mutant each")
    parser.add_argument("--rev", help="mutate and test the tree of this commit (git archive) instead of "
                        "the working tree as it is on disk (which may hold others' edits in progress)")
    parser.add_argument("--nice", type=int, default=10)
    args = parser.parse_args(argv)

    module = args.module.replace("\\", "/")
    tests = args.tests or covering_tests(module)
    if args.rev:  # one commit for the module, the copy and the report, even if HEAD moves
        args.rev = subprocess.run(["git", "rev-parse", "--verify", f"{args.rev}^{{commit}}"],
                                  cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
        source = subprocess.run(["git", "show", f"{args.rev}:{module}"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
    else:
        source = (ROOT / module).read_text(encoding="utf-8")
    original, mutants = generate(source)
    if args.hand:
        original, mutants = source, [_hand(source, old, new) for old, new in args.hand]
    total = len(mutants)
    chosen = list(enumerate(mutants, start=1))
    sampled = False
    if args.only:
        chosen = [(i, m) for i, m in chosen if i in set(args.only)]
    elif args.sample or total >= SAMPLE_FROM:
        size = min(args.sample or 100, total)
        chosen = sorted(random.Random(args.seed).sample(chosen, size), key=lambda im: im[0])
        sampled = size < total
    if args.list:
        for i, m in chosen:
            print(f"#{i} {m.label()}    [{m.key}]")
        print(f"{len(chosen)} of {total} mutants")
        return 0
    if not tests:
        print(f"no test file covers {module}; pass --tests", file=sys.stderr)
        return 2
    if args.nice:
        os.nice(args.nice)
    equivalent = load_equivalent()

    work = Path(tempfile.mkdtemp(prefix="keyaudit-mutation-"))
    # a run stopped by SIGTERM (or SIGINT, which a background job ignores) still deletes its copy
    signal.signal(signal.SIGTERM, _stop)
    try:
        repo, path = snapshot(work, args.rev)
        env = _environment(path, work / "cache")
        target = repo / module
        check = subprocess.run(
            [sys.executable, "-c",
             "import importlib, sys; print(importlib.import_module(sys.argv[1]).__file__)",
             "keyaudit." + _dotted(module, repo)],
            cwd=repo, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()
        if not Path(check).resolve().is_relative_to(work.resolve()):
            print(f"the copy's module is not imported (got {check})", file=sys.stderr)
            return 2
        target.write_text(original, encoding="utf-8")
        for cached in target.parent.glob(f"__pycache__/{target.stem}.*.pyc"):
            cached.unlink()
        warm_env = dict(env)
        warm_env.pop("PYTHONDONTWRITEBYTECODE")
        run_tests(repo, warm_env, tests, 3600)  # compiles numba kernels and .pyc of other modules
        for cached in target.parent.glob(f"__pycache__/{target.stem}.*.pyc"):
            cached.unlink()
        outcome, baseline = run_tests(repo, env, tests, 3600)
        head = subprocess.run(["git", "rev-parse", "--short", args.rev or "HEAD"], cwd=ROOT,
                              capture_output=True, text=True).stdout.strip()
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        where = f"commit {args.rev} ({head})" if args.rev else f"the working tree at {head}"
        print(f"snapshot: {where} ({module} sha256 {digest}...)")
        print(f"{module}: {total} mutants, running {len(chosen)}; tests: {' '.join(tests)}")
        print(f"baseline (unmutated, unparsed): {outcome} in {baseline:.1f} s")
        if outcome != "passed":
            print("the tests fail on the unmutated module: nothing to measure", file=sys.stderr)
            shown = subprocess.run(
                [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                cwd=repo, env=env, capture_output=True, text=True, timeout=3600,
            )
            print("\n".join((shown.stdout + shown.stderr).splitlines()[-30:]), file=sys.stderr)
            return 2
        timeout = args.timeout or max(120.0, 10 * baseline)
        for done, (i, m) in enumerate(chosen, start=1):
            target.write_text(m.source, encoding="utf-8")
            result, m.seconds = run_tests(repo, env, tests, timeout)
            m.outcome = {"failed": "killed", "passed": "survived", "timeout": "timeout"}[result]
            if m.outcome == "survived" and (module, m.key) in equivalent:
                m.outcome, m.reason = "equivalent", equivalent[(module, m.key)]
            print(f"[{done}/{len(chosen)}] #{i} {m.outcome:10} {m.seconds:5.1f}s  {m.label()}", flush=True)
        target.write_text(original, encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    ran = [m for _, m in chosen]
    killed = sum(m.outcome in ("killed", "timeout") for m in ran)
    timeouts = sum(m.outcome == "timeout" for m in ran)
    equal = [(i, m) for i, m in chosen if m.outcome == "equivalent"]
    survivors = [(i, m) for i, m in chosen if m.outcome == "survived"]
    counted = len(ran) - len(equal)
    score = killed / counted if counted else 1.0
    print()
    print(f"module:     {module}")
    print(f"mutants:    {len(ran)} run of {total}" + (f" (sample, seed {args.seed})" if sampled else ""))
    print(f"killed:     {killed} (of which {timeouts} by timeout)")
    print(f"equivalent: {len(equal)}")
    print(f"survived:   {len(survivors)}")
    print(f"score:      {score:.1%} ({killed}/{counted} non-equivalent mutants killed)")
    for title, rows in (("equivalent", equal), ("survivors", survivors)):
        if rows:
            print(f"\n{title}:")
            for i, m in rows:
                print(f"  #{i} {m.label()}    [{m.key}]" + (f"\n      {m.reason}" if m.reason else ""))
    return 0


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(f"stopped by signal {signum}")


def _hand(source: str, old: str, new: str) -> Mutant:
    """A mutant written by hand: ``old`` (found exactly once in ``source``) replaced by ``new``."""
    if source.count(old) != 1:
        raise SystemExit(f"--hand: {old!r} occurs {source.count(old)} times in the module, not once")
    at = source.index(old)
    line = source.count("\n", 0, at) + 1
    mutated = source.replace(old, new, 1)
    compile(mutated, "<mutant>", "exec")
    return Mutant(-1, "hand", line, 0, old, new, source.splitlines()[line - 1].strip(), mutated)


def _dotted(module: str, repo: Path) -> str:
    """``engine/stats/wilson.py`` -> ``engine.stats.wilson`` under pyproject's package-dir."""
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    for dotted, folder in config["tool"]["setuptools"]["package-dir"].items():
        prefix = folder.rstrip("/") + "/"
        if module.startswith(prefix):
            rest = module[len(prefix):].removesuffix(".py").replace("/", ".")
            return ".".join(part for part in (dotted.partition(".")[2], rest) if part)
    raise SystemExit(f"{module} is in no package of pyproject's package-dir")


if __name__ == "__main__":
    sys.exit(main())
