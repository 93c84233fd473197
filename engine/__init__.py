"""keyaudit's library: load a benchmark, parse keys and answers, score, aggregate, report.

Data flows one way: ``benchmark`` (load) → ``grammar``/``rule`` (parse) → ``scoring`` (score)
→ ``aggregate``/``bootstrap`` (aggregate) → ``audit``/``report_*`` (report). The CLI only wires
them. The public API below is importable from here; each name is imported on first use, so
``import keyaudit.engine`` stays cheap (numba is only loaded by the bootstrap).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_API = {
    "KeyauditError": "errors",
    "DataError": "errors",
    "RuleError": "errors",
    "UsageError": "errors",
    "load_benchmark": "benchmark",
    "Benchmark": "benchmark",
    "strict_correct": "strict",
    "find_answer_line": "answer_line",
    "load_rule": "rule",
    "Rule": "rule",
    "Scorer": "scoring",
    "Verdict": "scoring",
    "run_examples": "rulecheck",
    "keys_check": "rulecheck",
    "Outcome": "aggregate",
    "summarize": "aggregate",
    "cell_table": "aggregate",
    "bootstrap_difference": "bootstrap",
    "analytic_difference_se": "analytic_se",
    "prove_rules": "audit",
    "run_audit": "audit",
    "cell_structure": "keystructure",
    "induce_templates": "keystructure",
    "flag_cells": "flag",
    "compile_expression": "expr",
    "resolve_rule_path": "locate",
    "example_benchmark_dir": "locate",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
