"""The Markdown report: the seed's sections, aligned tables, no empty section, exact figures."""

from __future__ import annotations

import re

import pytest

from keyaudit.engine.audit import Settings, run_audit
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.reports.markdown_report import render_markdown, table
from keyaudit.engine.rule_language.rules.rule import load_rule

SECTIONS = (
    "# Sentence-valued answer-key scoring audit",
    "## Scope limitation",
    "## 1. Structure of the 3,000 keys",
    "## 2. Proposed scoring rule—not applied",
    "### Application to 20 real stored responses",
    "## 3. Counterfactual `physical_stability` L5 accuracy",
    "## 4. Effect on aggregates",
    "## 5. Other sentence-valued or multi-clause keys",
)


@pytest.fixture(scope="module")
def report() -> str:
    benchmark = load_benchmark(example_benchmark_dir())
    rule = load_rule(resolve_rule_path("physical_stability"))
    return render_markdown(run_audit(benchmark, [rule], Settings(resamples=100)))


def _tables(text: str) -> list[list[str]]:
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def test_sections_in_order(report: str) -> None:
    positions = [report.index(heading + "\n") for heading in SECTIONS]
    assert positions == sorted(positions)
    assert "offline, counterfactual analysis" in report
    assert "**not** been applied" in report


def test_no_empty_section(report: str) -> None:
    chunks = re.split(r"^#{1,3} .*$", report, flags=re.M)[1:]
    assert all(chunk.strip() for chunk in chunks)


def test_tables_are_aligned(report: str) -> None:
    tables = _tables(report)
    assert len(tables) >= 5
    for rows in tables:
        assert len({len(row) for row in rows}) == 1, rows[0]
        pipes = {tuple(m.start() for m in re.finditer(r"\|", row)) for row in rows}
        assert len(pipes) == 1, rows[0]
        assert re.fullmatch(r"\|( :?-+:? \|)+", rows[1])


def test_figures(report: str) -> None:
    assert "**26/50 = 52.00%** (strict: 8/50 = 16.00%)" in report
    assert "26 `stable` and 24 `unstable` keys" in report
    assert "**9 distinct complete strings**" in report
    assert "**10 models**, not 16" in report
    assert "Synth Pine Chat" in report
    assert "No L4-to-L5 significance verdict changes" in report
    assert "`physical_stability_3000_q5`" in report
    assert "| Synth Atlas XL    |  50 |          0.00% |         **100.00%** |" in report


def test_table_helper() -> None:
    text = table(["a", "bb"], [["x", "1"], ["long", "22"]], "lr")
    assert text.splitlines() == [
        "| a    |  bb |",
        "| ---- | --: |",
        "| x    |   1 |",
        "| long |  22 |",
    ]
