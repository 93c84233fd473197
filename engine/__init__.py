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
    "load_benchmark": "load.benchmark",
    "Benchmark": "load.benchmark",
    "ResponseSource": "load.responses.records",
    "read_source": "load.responses.sources",
    "strict_correct": "load.strict",
    "find_answer_line": "load.answer_line",
    "load_rule": "rule_language.rules.rule",
    "Rule": "rule_language.rules.rule",
    "Scorer": "rule_language.scoring.scorer",
    "Verdict": "rule_language.scoring.scorer",
    "run_examples": "rule_language.authoring.rulecheck",
    "keys_check": "rule_language.authoring.rulecheck",
    "Outcome": "stats.aggregate",
    "summarize": "stats.aggregate",
    "cell_table": "stats.aggregate",
    "bootstrap_difference": "stats.bootstrap",
    "analytic_difference_se": "stats.analytic_se",
    "prove_rules": "audit",
    "run_audit": "audit",
    "cell_structure": "rule_language.authoring.keystructure",
    "induce_templates": "rule_language.authoring.keystructure",
    "flag_cells": "flag",
    "compile_expression": "rule_language.expressions.expression",
    "resolve_rule_path": "load.locate",
    "example_benchmark_dir": "load.locate",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
