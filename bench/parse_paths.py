"""The parse stage alone, compiled parser paths against the lean driver, one process (issue 38 item 3b).

    pip install lark-cython        # optional: without it its column says so
    python bench/parse_paths.py [RULE ...]

On each rule's cleaned answer lines, every line made unique (``bench/scoring.py``'s inputs): the
engine's parse (``CompiledGrammar.parse``: the lean LALR driver of ``reading/fast_lalr.py`` with the
word-dispatching lexer, Lark with error recovery for the few lines it hands back, keyaudit ``Node``
trees), the lean driver alone on the lines it parses, plain Lark (same grammar, contextual lexer,
Lark's own trees, no recovery) and Lark with lark-cython's plugins (the Lark author's Cython LALR
parser and lexer; its own ``Token`` type, which is not a ``str``, and Lark's trees). Passes
alternating, best of 5, lines per CPU second. Writes ``bench/results/parse_paths.md``.
"""

from __future__ import annotations

import contextlib
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lark import Lark

sys.path.insert(0, str(Path(__file__).parent))

from scoring import best_rate, cases, made_unique  # noqa: E402

from keyaudit.engine.load.answer_line import find_answer_line  # noqa: E402
from keyaudit.engine.load.benchmark import Benchmark, load_benchmark  # noqa: E402
from keyaudit.engine.load.locate import bundled_rule_names, example_benchmark_dir, resolve_rule_path  # noqa: E402
from keyaudit.engine.rule_language.reading.grammar import _import_loader, read_grammar_text  # noqa: E402
from keyaudit.engine.rule_language.rules.rule import load_rule  # noqa: E402
from keyaudit.engine.rule_language.scoring.scorer import clean_answer  # noqa: E402

try:
    import lark_cython
except ImportError:  # optional: its column then says so
    lark_cython = None

RESULTS = Path(__file__).parent / "results" / "parse_paths.md"


def cleaned_lines(benchmark: Benchmark, name: str) -> tuple[Any, list[str]]:
    """The rule and its cleaned answer lines, every one unique."""
    rule = load_rule(resolve_rule_path(name))
    fmt = rule.answer_format
    texts = []
    for _, response in made_unique(cases(benchmark, rule)):
        line = find_answer_line(response, fmt.label, fmt.which)
        text = clean_answer(line.text, fmt) if line is not None else ""
        if text:
            texts.append(text)
    return rule, texts


def lark_pass(parser: Lark, texts: list[str]) -> Callable[[], None]:
    def run() -> None:
        for text in texts:
            with contextlib.suppress(Exception):  # no recovery: a failing line still costs
                parser.parse(text)

    return run


def lean_pass(grammar: Any, texts: list[str]) -> Callable[[], None]:
    """The lean driver alone, as ``CompiledGrammar.parse`` drives it (no hook)."""

    def run() -> None:
        for text in texts:
            grammar._source = text
            try:
                grammar._fast.parse(text)
            finally:
                grammar._converted.clear()

    return run


def engine_pass(grammar: Any, texts: list[str]) -> Callable[[], None]:
    def run() -> None:
        for text in texts:
            with contextlib.suppress(Exception):
                grammar.parse(text)

    return run


def row(benchmark: Benchmark, name: str) -> str:
    rule, texts = cleaned_lines(benchmark, name)
    grammar = rule.answer_grammar
    path = grammar.path
    options = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": False,
               "import_paths": [_import_loader(path.parent)]}
    source = read_grammar_text(path)
    plain = Lark(source, **options)
    cython = Lark(source, **options, _plugins=lark_cython.plugins) if lark_cython else None
    parsed = []
    for text in texts:
        with contextlib.suppress(Exception):
            lean_pass(grammar, [text])()
            parsed.append(text)
    runs = [engine_pass(grammar, texts), lean_pass(grammar, parsed), lark_pass(plain, texts)]
    counts = [len(texts), len(parsed), len(texts)]
    if cython is not None:
        runs.append(lark_pass(cython, texts))
        counts.append(len(texts))
    for run in runs:
        run()  # warm
    best = [0.0] * len(runs)
    for _ in range(5):
        for n, run in enumerate(runs):
            best[n] = max(best[n], best_rate(run, counts[n], 1))
    compiled = f"{best[3]:,.0f} | {best[3] / best[0]:.2f}" if cython is not None else "— | —"
    return (
        f"| {name} | {len(texts):,} | {best[0]:,.0f} | {best[1]:,.0f} ({len(parsed) / len(texts):.0%}) "
        f"| {best[2]:,.0f} | {compiled} |"
    )


def main() -> None:
    benchmark = load_benchmark(example_benchmark_dir())
    lines = [
        "# Parse paths: the lean driver against compiled and plain Lark",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, Python "
        f"{platform.python_version()}, lark-cython {getattr(lark_cython, '__version__', 'not installed')}; "
        "`python bench/parse_paths.py`: every answer line unique, one process, passes alternating, "
        "best of 5, lines per CPU second.",
        "",
        "| rule | lines | engine parse /s | lean driver alone /s (share it parses) | Lark /s "
        "| lark-cython /s | lark-cython ÷ engine |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for name in sys.argv[1:] or bundled_rule_names():
        lines.append(row(benchmark, name))
        print(lines[-1], flush=True)
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
