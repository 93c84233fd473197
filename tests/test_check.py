"""``keyaudit check`` and its engine (:mod:`keyaudit.engine.audit`), end to end.

Figures are cross-checked against independent computations that read the benchmark files with
gzip + json only and score with :class:`Scorer` directly, never through the audit. Most runs use
few resamples and a small benchmark cut from the example (physical_stability L4/L5, plus a renamed
twin domain for the multi-rule case), so the whole file stays fast.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keyaudit.cli.app import app
from keyaudit.engine.audit import Settings, prove_rules, run_audit
from keyaudit.engine.errors import UsageError
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.reports.json_report import audit_to_json, dumps
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer
from keyaudit.engine.stats.baselines import rule_baseline

EXAMPLE = example_benchmark_dir()
RULE = resolve_rule_path("physical_stability")
RUNNER = CliRunner()
WIDTH = {"COLUMNS": "200"}
PS = "physical_stability"
MISSING = "Synth Missing 1B"
COMPUTED = "Synth Juniper 70B"


def _read(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )


def _level(item_id: str) -> int:
    return int(item_id.rsplit("_q", 1)[1])


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """physical_stability L4/L5 of the example plus ``ps_twin`` (same data, renamed ids).

    The roster has one model without responses, and one model's files have no ``correct``
    field (keyaudit computes it).
    """
    root = tmp_path_factory.mktemp("small") / "bench"
    keys = [k for k in _read(EXAMPLE / "keys" / f"{PS}.jsonl.gz") if _level(k["id"]) in (4, 5)]
    twin = [{**k, "id": k["id"].replace(PS, "ps_twin")} for k in keys]
    _write(root / "keys" / f"{PS}.jsonl", keys)
    _write(root / "keys" / "ps_twin.jsonl", twin)
    models = []
    for path in sorted((EXAMPLE / "responses").glob("*.jsonl.gz")):
        rows = [
            r for r in _read(path) if r["id"].startswith(PS + "_") and _level(r["id"]) in (4, 5)
        ]
        rows += [{**r, "id": r["id"].replace(PS, "ps_twin")} for r in rows]
        if rows[0]["model"] == COMPUTED:
            rows = [{k: v for k, v in r.items() if k != "correct"} for r in rows]
        models.append(rows[0]["model"])
        _write(root / "responses" / path.name.replace(".gz", ""), rows)
    roster = ", ".join(json.dumps(m) for m in [*models, MISSING])
    (root / "benchmark.toml").write_text(f'name = "small"\nroster = [{roster}]\n', encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def twin_rule(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The physical_stability rule, renamed and pointed at the ``ps_twin`` domain."""
    text = RULE.read_text(encoding="utf-8")
    text = text.replace('name = "physical_stability"', 'name = "ps_twin"', 1)
    text = text.replace('cells = [{ domain = "physical_stability"', 'cells = [{ domain = "ps_twin"')
    path = tmp_path_factory.mktemp("rules") / "ps_twin.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One CLI run on the bundled example: terminal output, JSON and Markdown."""
    out = tmp_path_factory.mktemp("example")
    result = RUNNER.invoke(
        app,
        [
            "check",
            str(RULE),
            "--resamples",
            "200",
            "--json",
            str(out / "audit.json"),
            "--markdown",
            str(out / "audit.md"),
        ],
        env=WIDTH,
    )
    assert result.exit_code == 0, result.output
    return {
        "output": result.output,
        "json": json.loads((out / "audit.json").read_text(encoding="utf-8")),
        "markdown": (out / "audit.md").read_text(encoding="utf-8"),
    }


def _independent_counts(bench: Path, rule_path: Path, domain: str, level: int) -> dict:
    """Per model: (n, strict correct, rule-accepted) read straight from the files."""
    scorer = Scorer(load_rule(rule_path))
    keys = {}
    for path in sorted((bench / "keys").iterdir()):
        keys.update({k["id"]: k["answer"] for k in _read(path)})
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for path in sorted((bench / "responses").iterdir()):
        for r in _read(path):
            if r["id"].startswith(domain + "_") and _level(r["id"]) == level:
                row = counts[r["model"]]
                row[0] += 1
                row[1] += bool(r["correct"])
                row[2] += scorer.score(keys[r["id"]], r["response"]).accept
    return dict(counts)


# ---- the bundled example ---------------------------------------------------------------------


def test_example_json_schema(example_run: dict) -> None:
    data = example_run["json"]
    assert data["passed"] is True
    for field in (
        "cells",
        "models",
        "aggregates",
        "missing_models",
        "settings",
        "examples",
        "keys_check",
        "key_structure",
        "worked_examples",
        "rules",
        "flagged",
    ):
        assert field in data, field
    assert data["settings"] == {
        "levels": [4, 5],
        "resamples": 200,
        "seed": 0,
        "confidence": 0.95,
        "engine": "numba",
        "epochs": "first",
    }
    (cell,) = data["cells"]
    assert {"domain", "level", "n_keys", "baseline_before", "baseline_after"} <= set(cell)
    assert (cell["domain"], cell["level"], cell["n_keys"]) == (PS, 5, 3000)
    for m in data["models"]:
        assert {
            "model",
            "domain",
            "level",
            "n",
            "strict",
            "structured",
            "flips_up",
            "flips_down",
        } <= set(m)
        assert 0 <= m["strict"] <= 1 and 0 <= m["structured"] <= 1
    diff_fields = {
        "estimate",
        "ci_low",
        "ci_high",
        "verdict",
        "bootstrap_se",
        "analytic_se",
        "design_effect",
    }
    for a in data["aggregates"]:
        for name in (
            "raw_before",
            "raw_after",
            "adjusted_before",
            "adjusted_after",
            "overall_before",
            "overall_after",
        ):
            assert isinstance(a[name], float), name
        for name in ("diff_before", "diff_after"):
            assert diff_fields <= set(a[name])
            assert a[name]["ci_low"] <= a[name]["estimate"] <= a[name]["ci_high"]
    assert len(data["missing_models"]) == 6
    assert all(e["passed"] for e in data["examples"])
    assert data["keys_check"][0]["passed"] is True


def test_example_baselines_match_the_seed(example_run: dict) -> None:
    (cell,) = example_run["json"]["cells"]
    assert cell["baseline_before"] == 8 / 50 and cell["baseline_before_correct"] == 8
    assert cell["baseline_after"] == 26 / 50 and cell["baseline_after_correct"] == 26
    assert cell["status_counts"] == {"stable": 26, "unstable": 24}
    assert cell["best_constant_values"]["status"] == "stable"


def test_rule_baseline_by_hand() -> None:
    """Every stable key string, as a constant answer, is accepted on exactly the stable items."""
    scorer = Scorer(load_rule(RULE))
    keys = [
        "stable; after removing block E, every cumulative center of mass remains within its supporting base"
    ] * 3 + [
        "unstable; after removing block C, the cumulative center of mass at the joint between block B and block A lies outside its supporting base"
    ] * 2
    base = rule_baseline(scorer, keys)
    assert (base.correct, base.n, base.accuracy) == (3, 5, 0.6)
    assert base.best_answer.startswith("stable;")


def test_example_model_table_matches_an_independent_recount(example_run: dict) -> None:
    expected = _independent_counts(EXAMPLE, RULE, PS, 5)
    rows = {m["model"]: m for m in example_run["json"]["models"]}
    assert set(rows) == set(expected)
    for model, (n, strict, accepted) in expected.items():
        row = rows[model]
        assert row["n"] == n
        assert row["strict"] == strict / n
        assert row["structured"] == accepted / n
        assert len(row["flips_up"]) - len(row["flips_down"]) == accepted - strict


def test_example_raw_hi_by_hand(example_run: dict) -> None:
    """Raw L5 of one model: mean over its L5 cells of correct / n, from the files."""
    model_file = EXAMPLE / "responses" / "synth-atlas-xl.jsonl.gz"
    rule_counts = _independent_counts(EXAMPLE, RULE, PS, 5)["Synth Atlas XL"]
    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in _read(model_file):
        if _level(r["id"]) == 5:
            domain = r["id"].rsplit("_", 2)[0]
            cells[domain][0] += bool(r["correct"])
            cells[domain][1] += 1
    before = math.fsum(c / n for c, n in cells.values()) / len(cells)
    cells[PS][0] = rule_counts[2]
    after = math.fsum(c / n for c, n in cells.values()) / len(cells)
    (agg,) = [a for a in example_run["json"]["aggregates"] if a["model"] == "Synth Atlas XL"]
    assert agg["raw_before"] == pytest.approx(before, abs=1e-12)
    assert agg["raw_after"] == pytest.approx(after, abs=1e-12)


def test_example_terminal_output(example_run: dict) -> None:
    out = example_run["output"]
    for text in (
        "All 37 examples pass",
        "Keys check passes",
        "Key structure: physical_stability L5",
        "9 distinct complete strings",
        "physical_stability_3000_q5",
        "10 models found of 16",
        "Synth Pine Chat",
        "8/50 = 16.00% → 26/50 = 52.00%",
        "ANSWER: Unstable: the B-A interface",
        "Effect on aggregates",
        "No L4-to-L5 significance verdict changes",
    ):
        assert text in out, text


def test_example_worked_examples(example_run: dict) -> None:
    worked = example_run["json"]["worked_examples"]
    assert len(worked) == 20
    assert {w["id"] for w in worked} == {f"{PS}_0015_q5", f"{PS}_0136_q5"}
    for w in worked:
        assert w["answer_line"] is None or "answer" in w["answer_line"].lower()
        assert (w["reason"] == "") == w["accept"]
        assert w["status"] == w["target"]["status"]


# ---- API on the small benchmark ------------------------------------------------------------------


def _audit(bench: Path, rules: list[Path], **settings):
    benchmark = load_benchmark(bench)
    loaded = [load_rule(p) for p in rules]
    return run_audit(benchmark, loaded, Settings(**{"resamples": 100, **settings}))


def test_missing_and_computed_models(small_bench: Path) -> None:
    audit = _audit(small_bench, [RULE])
    assert audit.scope.missing_models == (MISSING,)
    assert audit.scope.computed_models == (COMPUTED,)
    assert MISSING not in {m.model for m in audit.models}
    assert MISSING not in {a.model for a in audit.aggregates}
    result = RUNNER.invoke(
        app, ["check", str(RULE), "--bench", str(small_bench), "--resamples", "50"], env=WIDTH
    )
    assert result.exit_code == 0, result.output
    assert MISSING in result.output and "not filled in" in result.output
    assert "computed by keyaudit" in result.output and COMPUTED in result.output


def test_multiple_rules_change_together(small_bench: Path, twin_rule: Path) -> None:
    one = _audit(small_bench, [RULE])
    both = _audit(small_bench, [RULE, twin_rule])
    assert [c.domain for c in both.cells] == [PS, "ps_twin"]
    for a1, a2 in zip(one.aggregates, both.aggregates, strict=True):
        # two L5 cells, the twin a copy: one rule moves Raw/Adjusted L5 by half of what both do
        assert a2.raw_after - a2.raw_before == pytest.approx(
            2 * (a1.raw_after - a1.raw_before), abs=1e-12
        )
        assert a2.adjusted_after - a2.adjusted_before == pytest.approx(
            2 * (a1.adjusted_after - a1.adjusted_before), abs=1e-12
        )
        assert a2.raw_after > a1.raw_after
    twin_rows = [m for m in both.models if m.domain == "ps_twin"]
    ps_rows = [m for m in both.models if m.domain == PS]
    assert [(m.strict, m.structured) for m in twin_rows] == [
        (m.strict, m.structured) for m in ps_rows
    ]


def test_two_rules_on_one_cell_are_refused(small_bench: Path) -> None:
    benchmark = load_benchmark(small_bench)
    rule = load_rule(RULE)
    # a second rule of another name on the same cell (the same rule twice is refused by name)
    twin = dataclasses.replace(rule, name="physical_stability_twin")
    with pytest.raises(UsageError, match="covered by two rules"):
        prove_rules(benchmark, [rule, twin])


def test_levels_are_parameters(small_bench: Path) -> None:
    from keyaudit.engine.reports.markdown_report import render_markdown

    audit = _audit(small_bench, [RULE], levels=(5, 4))
    text = render_markdown(audit)
    assert "Raw L4 before" in text and "Adjusted L4−L5" in text and "L5-to-L4" in text
    # with lo=5, hi=4 the difference is the negative of the (4, 5) one
    default = _audit(small_bench, [RULE])
    for a, b in zip(audit.aggregates, default.aggregates, strict=True):
        assert a.diff_after.estimate == pytest.approx(-b.diff_after.estimate, abs=1e-12)


def test_json_is_deterministic_across_runs_and_threads(small_bench: Path) -> None:
    import numba

    first = dumps(audit_to_json(_audit(small_bench, [RULE], resamples=300, seed=7)))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        second = dumps(audit_to_json(_audit(small_bench, [RULE], resamples=300, seed=7)))
    finally:
        numba.set_num_threads(threads)
    assert first == second
    other_seed = dumps(audit_to_json(_audit(small_bench, [RULE], resamples=300, seed=8)))
    assert other_seed != first


def test_cli_outputs_are_byte_identical(small_bench: Path, twin_rule: Path, tmp_path: Path) -> None:
    outputs = []
    for run in ("a", "b"):
        args = [
            "check",
            str(RULE),
            str(twin_rule),
            "--bench",
            str(small_bench),
            "--resamples",
            "100",
        ]
        args += ["--json", str(tmp_path / f"{run}.json"), "--markdown", str(tmp_path / f"{run}.md")]
        result = RUNNER.invoke(app, args, env=WIDTH)
        assert result.exit_code == 0, result.output
        outputs.append(
            ((tmp_path / f"{run}.json").read_bytes(), (tmp_path / f"{run}.md").read_bytes())
        )
    assert outputs[0] == outputs[1]
    data = json.loads(outputs[0][0])
    assert [c["domain"] for c in data["cells"]] == [PS, "ps_twin"]
    assert [r["name"] for r in data["rules"]] == [PS, "ps_twin"]


def test_json_to_stdout_is_pure_json(small_bench: Path) -> None:
    result = RUNNER.invoke(
        app,
        ["check", str(RULE), "--bench", str(small_bench), "--resamples", "50", "--json", "-"],
        env=WIDTH,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["missing_models"] == [MISSING]


# ---- failures --------------------------------------------------------------------------------


def test_failing_example_stops_with_exit_1(small_bench: Path, tmp_path: Path) -> None:
    text = RULE.read_text(encoding="utf-8")
    bad = text.replace(
        'answer = "unstable (C-B joint)"\nreason = "joint reversed"',
        'answer = "unstable (C-B joint)"',
    )
    assert bad != text
    path = tmp_path / "bad.toml"
    path.write_text(bad, encoding="utf-8")
    result = RUNNER.invoke(
        app,
        ["check", str(path), "--bench", str(small_bench), "--json", str(tmp_path / "a.json")],
        env=WIDTH,
    )
    assert result.exit_code == 1
    assert "FAIL" in result.output
    assert "verdict: expected accept, got reject" in result.output
    assert "Effect on aggregates" not in result.output
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert data["passed"] is False
    assert [e["passed"] for e in data["examples"]].count(False) == 1


def test_failing_keys_check_lists_the_keys(small_bench: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    for sub in ("responses",):
        (bench / sub).mkdir(parents=True)
        for f in (small_bench / sub).iterdir():
            (bench / sub / f.name).write_bytes(f.read_bytes())
    (bench / "benchmark.toml").write_bytes((small_bench / "benchmark.toml").read_bytes())
    (bench / "keys").mkdir()
    (bench / "keys" / "ps_twin.jsonl").write_bytes(
        (small_bench / "keys" / "ps_twin.jsonl").read_bytes()
    )
    keys = _read(small_bench / "keys" / f"{PS}.jsonl")
    odd = f"{PS}_2999_q5"
    keys = [{**k, "answer": "wobbly; nobody knows"} if k["id"] == odd else k for k in keys]
    _write(bench / "keys" / f"{PS}.jsonl", keys)
    result = RUNNER.invoke(app, ["check", str(RULE), "--bench", str(bench)], env=WIDTH)
    assert result.exit_code == 1, result.output
    assert "Keys check fails" in result.output
    assert "wobbly; nobody knows" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--levels", "4,5,6"], "--levels"),
        (["--levels", "4,4"], "--levels"),
        (["--confidence", "1.5"], "--confidence"),
        (["--engine", "gpu"], "--engine"),
        (["--plot", "x.pdf"], ".png or .svg"),
    ],
)
def test_bad_options_exit_2(args: list[str], message: str, small_bench: Path) -> None:
    result = RUNNER.invoke(app, ["check", str(RULE), "--bench", str(small_bench), *args], env=WIDTH)
    assert result.exit_code == 2
    assert message in result.output


def test_plot_without_matplotlib_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, small_bench: Path, tmp_path: Path
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = RUNNER.invoke(
        app,
        ["check", str(RULE), "--bench", str(small_bench), "--plot", str(tmp_path / "f.png")],
        env=WIDTH,
    )
    assert result.exit_code == 2
    assert "pip install 'keyaudit[plot]'" in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1
    assert not (tmp_path / "f.png").exists()


def test_plot_svg(small_bench: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from keyaudit.engine.reports.plot import forest_plot

    audit = _audit(small_bench, [RULE])
    first = forest_plot(audit, tmp_path / "a.svg").read_bytes()
    second = forest_plot(audit, tmp_path / "b.svg").read_bytes()
    assert first.startswith(b"<?xml") and b"Synth Atlas XL" in first
    assert first == second


def test_help_does_not_import_numba() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from keyaudit.cli.app import app\n"
        "CliRunner().invoke(app, ['--help'])\n"
        "CliRunner().invoke(app, ['check', '--help'])\n"
        "assert 'numba' not in sys.modules, 'numba imported'\n"
        "assert 'keyaudit.engine.audit' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_console_script_exit_codes(run_cli, small_bench: Path, tmp_path: Path) -> None:
    """Through ``main`` (the installed ``keyaudit``), not only CliRunner: 1 for a failing rule, 2
    for a usage error."""
    text = RULE.read_text(encoding="utf-8").replace(
        'answer = "unstable"\nreason = "joint missing"', 'answer = "unstable"', 1
    )
    assert text != RULE.read_text(encoding="utf-8")
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    assert run_cli("check", str(path), "--bench", str(small_bench)).code == 1
    bad = run_cli("check", str(RULE), "--bench", str(small_bench), "--levels", "x")
    assert bad.code == 2 and bad.err.startswith("keyaudit: error: --levels")


def test_check_prints_the_corpus_overview(run_cli) -> None:
    result = run_cli("check", "physical_stability", "--resamples", "50")
    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    assert (
        "155,000 keys in 11 domains (levels L1, L2, L3, L4, L5); 27,500 stored responses." in text
    )
    assert "10 models found of 16 in the roster" in text


def test_all_bundled_rules_at_once_on_the_example(run_cli, tmp_path: Path) -> None:
    """Issue #6: check with every bundled rule shows their combined effect on the aggregates."""
    import json

    from keyaudit.engine.load.locate import bundled_rule_names

    names = bundled_rule_names()
    out = tmp_path / "all.json"
    result = run_cli("check", *names, "--resamples", "200", "--json", str(out))
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.rule_language.rules.rule import load_rule

    cells = {(c.domain, c.level) for n in names for c in load_rule(resolve_rule_path(n)).cells}
    assert sorted((c["domain"], c["level"]) for c in data["cells"]) == sorted(cells)
    single = tmp_path / "one.json"
    assert (
        run_cli("check", "physical_stability", "--resamples", "200", "--json", str(single)).code
        == 0
    )
    one = {a["model"]: a for a in json.loads(single.read_text(encoding="utf-8"))["aggregates"]}
    for agg in data["aggregates"]:
        # every ruled L5 cell adds its own change: raw L5 moves by the sum of the cells' changes / n
        cells = [m for m in data["models"] if m["model"] == agg["model"] and m["level"] == 5]
        n_hi = agg["n_hi_cells"]
        expected = sum(m["structured"] - m["strict"] for m in cells) / n_hi
        assert agg["raw_after"] - agg["raw_before"] == pytest.approx(expected, abs=1e-12)
        assert agg["raw_before"] == pytest.approx(one[agg["model"]]["raw_before"], abs=1e-12)
