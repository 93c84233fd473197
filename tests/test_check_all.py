"""`keyaudit check --all`: every bundled rule whose cells the benchmark has, audited together, with
a summary row per ruled cell first (issue 13, the whole-benchmark command)."""

from __future__ import annotations

import json
from pathlib import Path

from keyaudit.engine.load.locate import bundled_rule_names


def test_check_all_audits_every_bundled_rule_with_a_summary(run_cli, tmp_path: Path) -> None:
    out, md = tmp_path / "all.json", tmp_path / "all.md"
    result = run_cli("check", "--all", "--resamples", "200", "--json", str(out), "--markdown", str(md))
    assert result.code == 0, result.err
    data = json.loads(out.read_text())
    assert {r["name"] for r in data["rules"]} == set(bundled_rule_names())
    summary = {(row["domain"], row["level"]): row for row in data["summary"]}
    assert len(summary) == len(data["cells"]) >= 3
    for model_row in data["models"]:
        row = summary[(model_row["domain"], model_row["level"])]
        assert row["n_items"] > 0 and row["n_responses"] >= row["n_items"]
    for (domain, level), row in summary.items():
        models = [m for m in data["models"] if (m["domain"], m["level"]) == (domain, level)]
        assert row["flips_up"] == sum(len(m["flips_up"]) for m in models)
        assert abs(row["mean_after"] - sum(m["structured"] for m in models) / len(models)) < 1e-12
    # one audit: the aggregates apply every rule together
    single = tmp_path / "one.json"
    run_cli("check", "physical_stability", "--resamples", "200", "--json", str(single))
    one = json.loads(single.read_text())
    every = {a["model"]: a["raw_after"] for a in data["aggregates"]}
    assert any(every[a["model"]] != a["raw_after"] for a in one["aggregates"])
    assert "Every ruled cell" in result.out
    assert "## Summary: every ruled cell" in md.read_text()


def test_check_all_with_a_rule_file_keeps_one_rule_per_cell(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "all.json"
    result = run_cli(
        "check", "gear_train", "--all", "--resamples", "100", "--json", str(out)
    )
    assert result.code == 0, result.err
    names = [r["name"] for r in json.loads(out.read_text())["rules"]]
    assert sorted(names) == sorted(set(names)) == sorted(bundled_rule_names())


def test_check_without_rules_or_all_is_a_usage_error(run_cli) -> None:
    result = run_cli("check")
    assert result.code == 2 and "--all" in result.err
