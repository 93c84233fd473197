"""The rule's extraction error carried into the figures (issue 23, items 3 and 4).

The draws and the corrected bootstrap are held equal to their references bit for bit, for any
thread count and chunking; the corrected figures are recomputed here independently, with plain
Python from the example's files, a review file and its labels; and the reports' sentences are held
to what was measured (no "cannot move" unless every verdict was adjudicated).
"""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import numba
import numpy as np
import pytest

from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring.scorer import Scorer
from keyaudit.engine.stats import _extraction_reference
from keyaudit.engine.stats._extraction_kernel import corrected_resamples
from keyaudit.engine.stats.aggregate import OutcomeColumns
from keyaudit.engine.stats.bootstrap import bootstrap_clusters, name_key, replicates
from keyaudit.engine.stats.corrected import (
    CorrectionInputs,
    corrected_bootstrap,
    normal_draws,
)
from keyaudit.engine.stats.extraction_error import RuleErrorSample, rate_draws

EXAMPLE = example_benchmark_dir()
PS = "physical_stability"

SAMPLES = (
    RuleErrorSample("one", (40, 25, 3, 0), (2, 0, 3, 0), (300, 200, 5, 7)),
    RuleErrorSample("two", (0, 9, 1, 4), (0, 9, 0, 1), (10, 0, 0, 2)),
)


def test_rate_draws_kernel_equals_the_python_reference() -> None:
    fast = rate_draws(SAMPLES, 300, seed=2**64 - 5)
    slow = rate_draws(SAMPLES, 300, seed=2**64 - 5, engine="python")
    assert np.array_equal(fast, slow)
    assert fast.shape == (300, 3, 4)
    assert (fast[:, 2] == 0).all()  # no rule
    assert (fast[:, 1, 0] == 0).all()  # unmeasured: no labelled wrong answer
    assert abs(fast[:, 1, 1].mean() - 9.5 / 10) < 0.02  # 9 misread in 9: Beta(9.5, 0.5)
    zero = fast[:, 0, 1]  # 0 misread in 25: Jeffreys draws, never a zero-width rate
    assert (zero > 0).all() and 0.01 < zero.mean() < 0.03
    assert abs(fast[:, 0, 0].mean() - 2.5 / 41) < 0.01  # posterior mean (e + 1/2)/(n + 1)


def test_rate_draws_do_not_depend_on_threads_or_rule_order() -> None:
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = rate_draws(SAMPLES, 200, seed=3)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, rate_draws(SAMPLES, 200, seed=3))
    swapped = rate_draws(SAMPLES[::-1], 200, seed=3)
    assert np.array_equal(swapped[:, 0], one[:, 1]) and np.array_equal(swapped[:, 1], one[:, 0])
    assert not np.array_equal(one, rate_draws(SAMPLES, 200, seed=4))


def test_normal_draws_kernel_equals_the_python_reference() -> None:
    keys = [name_key(k) for k in ("a", "b", "c")]
    fast = normal_draws(keys, 11, 500)
    assert np.array_equal(fast, normal_draws(keys, 11, 500, engine="python"))
    assert abs(fast.mean()) < 0.1 and abs(fast.std() - 1) < 0.1


def _random_inputs(rng: np.random.Generator, models: int = 3, domains: int = 4, images: int = 9):
    """Outcomes of ``models`` over ``domains`` x ``images`` at levels 4 and 5, split into the five
    sides at random, with one rule per level."""
    rows = []
    for m in range(models):
        for d in range(domains):
            for i in range(images):
                for level in (4, 5):
                    if rng.random() < 0.1:
                        continue  # some images miss a level
                    side = int(rng.integers(0, 6))  # 0 known wrong, 1 known right, 2..5 kinds
                    rows.append((f"m{m}", f"d{d}", f"d{d}_i{i}", level, side))
    sides = []
    for k in range(5):
        sides.append(
            OutcomeColumns.build(
                (model, domain, image, level, int(side == k + 1), 1)
                for model, domain, image, level, side in rows
            )
        )
    rule_of_cell = {(f"d{d}", level): (0 if level == 5 else 1) for d in range(domains) for level in (4, 5)}
    baselines = {(f"d{d}", level): float(rng.uniform(0.1, 0.6)) for d in range(domains) for level in (4, 5)}
    return CorrectionInputs(tuple(sides), rule_of_cell, SAMPLES, baselines)


@pytest.mark.parametrize("seed", [0, 1, 2**63 + 7])
def test_corrected_kernel_equals_the_numpy_reference(seed: int) -> None:
    inputs = _random_inputs(np.random.default_rng(seed % 1000))
    rates = rate_draws(SAMPLES, 257, seed)
    fast = corrected_bootstrap(inputs, (4, 5), rates, 257, seed, 0.95, "numba", chunk_size=100)
    slow = corrected_bootstrap(inputs, (4, 5), rates, 257, seed, 0.95, "reference", chunk_size=257)
    assert fast == slow
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert corrected_bootstrap(inputs, (4, 5), rates, 257, seed, 0.95, chunk_size=7) == fast
    finally:
        numba.set_num_threads(before)


def test_with_no_measured_error_the_corrected_bootstrap_is_the_plain_one() -> None:
    """Rates of 0: every replicate equals the uncorrected bootstrap's, bit for bit (the clusters
    are drawn with the very same hashes)."""
    rng = np.random.default_rng(5)
    inputs = _random_inputs(rng)
    empty = (RuleErrorSample("one", (0,) * 4, (0,) * 4, (1,) * 4),
             RuleErrorSample("two", (0,) * 4, (0,) * 4, (1,) * 4))
    inputs = CorrectionInputs(inputs.sides, inputs.rule_of_cell, empty, inputs.baselines)
    # after = known right + every accept
    known, ca, _, ua, _ = inputs.sides
    after = known.with_correct(known.correct + ca.correct + ua.correct)
    from keyaudit.engine.stats.aggregate import cluster_counts

    clusters = cluster_counts(after, (4, 5))
    plain = replicates(clusters, inputs.baselines, 300, seed=9)
    rates = rate_draws(empty, 300, 9)
    assert not rates.any()
    from keyaudit.engine.stats.corrected import _parts

    layout, parts, rule_lo, rule_hi, base_lo, base_hi = _parts(inputs, (4, 5))
    args = (parts, layout.offsets, layout.active, base_lo, base_hi, rule_lo, rule_hi, rates,
            np.array([name_key(m) for m in layout.models], dtype=np.uint64),
            np.array([name_key(d) for d in layout.domains], dtype=np.uint64), np.uint64(9))
    assert np.array_equal(corrected_resamples(*args, 0, 300), plain, equal_nan=True)
    estimates = bootstrap_clusters(clusters, inputs.baselines, 300, seed=9)
    corrected = corrected_bootstrap(inputs, (4, 5), rates, 300, 9, 0.95)
    for model, e in estimates.items():
        c = corrected[model]
        assert (c.ci_low, c.ci_high, c.verdict) == (e.ci_low, e.ci_high, e.verdict)
        assert c.estimate == pytest.approx(e.estimate, abs=1e-15)


def test_rogan_gladen_branches() -> None:
    rg = _extraction_reference.rogan_gladen
    a, r = np.array([40, 0, 5, 10, 10]), np.array([10, 0, 45, 0, 10])
    fa, fr = np.array([0.1, 0.1, 0.2, 0.0, 0.6]), np.array([0.05, 0.05, 0.05, 0.0, 0.5])
    out = rg(a, r, fa, fr)
    assert out[0] == pytest.approx((40 - 0.1 * 50) / 0.85)
    assert out[1] == 0.0  # nothing to correct
    assert out[2] == 0.0  # below zero: none right
    assert out[3] == 10.0  # no error: the verdicts as they are
    assert out[4] == 10.0  # fa + fr >= 1: a rule that tells nothing keeps its verdicts


# ---- end to end on the example, recomputed by hand ------------------------------------------------


def _read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A review file of physical_stability with 80 sampled certain verdicts, every row labelled:
    the rule's verdict, except rows 0, 5, 17, 40 and 61, whose label contradicts it."""
    from typer.testing import CliRunner

    from keyaudit.cli.app import app

    folder = tmp_path_factory.mktemp("adjudications")
    queue = folder / "queue.jsonl"
    result = CliRunner().invoke(app, ["review", PS, "--out", str(queue), "--sample", "80"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in queue.read_text().splitlines()]
    for index, row in enumerate(rows):
        said = row["verdict"] == "accept"
        row["accept"] = (not said) if index in (0, 5, 17, 40, 61) else said
    path = folder / "labelled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def report(labelled: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from typer.testing import CliRunner

    from keyaudit.cli.app import app

    out = tmp_path_factory.mktemp("report")
    result = CliRunner().invoke(
        app,
        ["check", PS, "--resamples", "400", "--adjudications", str(labelled),
         "--json", str(out / "a.json"), "--markdown", str(out / "a.md")],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    return {
        "terminal": result.output,
        "json": json.loads((out / "a.json").read_text()),
        "markdown": (out / "a.md").read_text(),
    }


def _by_hand(labelled: Path) -> dict[str, float]:
    """Each model's corrected physical_stability L5 accuracy, from the files and the labels only:
    misreading rates from the labelled rows as observed, e/n, Rogan–Gladen on
    the unlabelled certain and uncertain verdicts, the labels as the truth."""
    scorer = Scorer(load_rule(resolve_rule_path(PS)))
    keys = {k["id"]: k["answer"] for k in _read(EXAMPLE / "keys" / f"{PS}.jsonl.gz")}
    labels = {}
    for line in labelled.read_text().splitlines():
        row = json.loads(line)
        labels[(row["model"], row["id"])] = row
    responses = []
    for path in sorted((EXAMPLE / "responses").glob("*.jsonl.gz")):
        for r in _read(path):
            if r["id"].startswith(PS + "_") and r["id"].endswith("_q5"):
                verdict = scorer.score(keys[r["id"]], r["response"])
                responses.append((r["model"], r["id"], verdict.accept, bool(verdict.uncertain)))
    # rates: [certain, uncertain] x (false accept among wrong, false reject among right)
    n = {(u, k): 0 for u in (0, 1) for k in (0, 1)}
    e = dict(n)
    for model, ident, accept, uncertain in responses:
        row = labels.get((model, ident))
        if row is None or (not uncertain and row["selected"] != "sample"):
            continue
        truth = row["accept"]
        n[(uncertain, truth)] += 1
        e[(uncertain, truth)] += accept != truth
    rate = {key: e[key] / n[key] if n[key] else 0.0 for key in n}
    per_model: dict[str, list] = {}
    for model, ident, accept, uncertain in responses:
        cell = per_model.setdefault(model, [0, 0, 0, 0, 0, 0])  # total, known, A, R, Au, Ru
        cell[0] += 1
        row = labels.get((model, ident))
        if row is not None:
            cell[1] += row["accept"]
        else:
            cell[2 + 2 * uncertain + (not accept)] += 1

    def rogan_gladen(a: int, r: int, fa: float, fr: float) -> float:
        if a + r == 0:
            return 0.0
        return min(max((a - fa * (a + r)) / (1 - fa - fr), 0.0), a + r)

    return {
        model: (known + rogan_gladen(a, r, rate[(0, False)], rate[(0, True)])
                + rogan_gladen(au, ru, rate[(1, False)], rate[(1, True)])) / total
        for model, (total, known, a, r, au, ru) in per_model.items()
    }


def test_corrected_figures_match_an_independent_recomputation(labelled: Path, report: dict) -> None:
    data = report["json"]
    expected = _by_hand(labelled)
    cells = {m["model"]: m for m in data["models"]}
    assert set(cells) == set(expected)
    for model, accuracy in expected.items():
        corrected = cells[model]["corrected"]
        assert corrected["estimate"] == pytest.approx(accuracy, abs=1e-12), model
        assert corrected["low"] <= corrected["estimate"] <= corrected["high"]
    (cell,) = data["cells"]
    base = cell["baseline_after"]
    for a in data["aggregates"]:
        # only physical_stability L5 changes: its share of the means moves the figures
        change = expected[a["model"]] - cells[a["model"]]["structured"]
        c = a["correction"]
        assert c["raw_after"]["estimate"] == pytest.approx(
            a["raw_after"] + change / a["n_hi_cells"], abs=1e-12
        )
        assert c["raw_change"]["estimate"] == pytest.approx(
            c["raw_after"]["estimate"] - a["raw_before"], abs=1e-12
        )
        assert c["diff_after"]["estimate"] == pytest.approx(
            a["diff_after"]["estimate"] + change / (1 - base) / a["n_paired"], abs=1e-12
        )
        assert c["diff_after"]["ci_low"] <= c["diff_after"]["ci_high"]


def test_rates_are_reported_with_their_intervals(labelled: Path, report: dict) -> None:
    x = report["json"]["extraction_error"]
    assert x["measured"] is True
    (rule,) = x["rules"]
    rates = {r["rate"]: r for r in rule["rates"]}
    fa, fr = rates["certain false accept"], rates["certain false reject"]
    assert fa["labelled"] + fr["labelled"] == 80  # the random sample
    low, high = fa["ci"]
    assert low <= fa["value"] <= high
    n_rows = len(labelled.read_text().splitlines())
    assert x["n_ruled"] == 500 and x["n_unlabelled"] == 500 - n_rows
    for text in (report["terminal"], report["markdown"]):
        assert "false-accept rate (truly wrong answers it accepts)" in text


def test_terminal_json_and_markdown_say_the_same(report: dict) -> None:
    statements = report["json"]["statements"]
    terminal = " ".join(report["terminal"].split())
    markdown = " ".join(report["markdown"].split())
    for sentence in statements["closing"]:
        flat = " ".join(sentence.split())
        assert flat in markdown, sentence
        assert flat.replace("`", "") in terminal, sentence
    assert statements["verdict_changes"] in report["markdown"]
    assert report["json"]["schema_version"] == 4


CANNOT_MOVE = re.compile(r"cannot move|can ?not change|cannot change", re.IGNORECASE)


def test_no_report_says_the_figures_cannot_move_unless_all_adjudicated(report: dict, run_cli, tmp_path: Path) -> None:
    for text in (report["terminal"], report["markdown"], json.dumps(report["json"])):
        assert not CANNOT_MOVE.search(text)
    plain = run_cli("check", PS, "--resamples", "100", "--json", str(tmp_path / "p.json"),
                    "--markdown", str(tmp_path / "p.md"))
    assert plain.code == 0
    for text in (plain.out, (tmp_path / "p.md").read_text(), (tmp_path / "p.json").read_text()):
        assert not CANNOT_MOVE.search(text)
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["extraction_error"]["measured"] is False
    (card,) = data["extraction_error"]["cards"]
    assert "validation card claims" in card["quote"]
    assert "unmeasured on these responses" in plain.out and "validation card claims" in plain.out
    assert "unmeasured on these responses" in (tmp_path / "p.md").read_text()
    # issue 39: the card's lowest independent figure, naming its set, and unmeasured until
    # adjudicated, in every report
    head = data["rules"][0]["card"]["headline"]
    named = f"on the {head['rows']} rows of {head['set']} ({head['agree']}/{head['cases']},"
    until = "unmeasured on these responses until a random sample of the rule's verdicts is adjudicated"
    markdown = " ".join((tmp_path / "p.md").read_text().split())
    for text in (" ".join(plain.out.split()), markdown, card["quote"] + " " + " ".join(data["statements"]["extraction"])):
        assert named in text and until in text, text[:200]


def test_every_verdict_adjudicated_is_the_one_case_that_cannot_move(run_cli, tmp_path: Path) -> None:
    """A review of every verdict (all uncertain ones, and a 'sample' as large as the population),
    all labelled: nothing is left to misread."""
    queue = tmp_path / "q.jsonl"
    assert run_cli("review", PS, "--out", str(queue), "--sample", "100000").code == 0
    rows = [json.loads(line) for line in queue.read_text().splitlines()]
    assert len(rows) == 500
    for row in rows:
        row["accept"] = row["verdict"] == "accept"
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "a.json"
    result = run_cli("check", PS, "--resamples", "100", "--adjudications", str(path), "--json", str(out))
    assert result.code == 0, result.err
    data = json.loads(out.read_text())
    assert data["extraction_error"]["all_adjudicated"] is True
    assert "cannot move by extraction" in data["statements"]["uncertainty"]
    assert "cannot move by extraction" in result.flat
    for a in data["aggregates"]:  # nothing unlabelled: the corrected figures are the figures
        assert a["correction"]["raw_after"]["estimate"] == pytest.approx(a["raw_after"], abs=1e-12)
        assert a["correction"]["raw_after"]["low"] == a["correction"]["raw_after"]["high"]


def test_a_verdict_or_order_that_could_change_is_named(labelled: Path, tmp_path: Path) -> None:
    """Sentences built from an audit whose corrected verdict differs, and whose models could swap."""
    from dataclasses import replace

    from keyaudit.engine.audit import Settings, run_audit
    from keyaudit.engine.load.adjudications import read_adjudications
    from keyaudit.engine.load.benchmark import load_benchmark
    from keyaudit.engine.reports.extraction_text import error_verdict_sentence, order_sentence
    from keyaudit.engine.reports.findings import Span

    audit = run_audit(
        load_benchmark(EXAMPLE), [load_rule(resolve_rule_path(PS))], Settings(resamples=100),
        adjudications=read_adjudications(labelled),
    )
    first = audit.aggregates[0]
    changed = replace(
        first,
        correction=replace(first.correction, diff=Span(0.01, -0.005, 0.03),
                           diff_verdict="indistinguishable from zero"),
    )
    swapped = replace(
        audit,
        aggregates=(changed, *audit.aggregates[1:]),
        extraction=replace(audit.extraction, could_swap=(("A", "B", -0.01, 0.02),)),
    )
    sentence = error_verdict_sentence(swapped)
    assert first.model in sentence and "could change within the measured extraction error" in sentence
    assert "indistinguishable from zero with it" in sentence
    assert "A and B (difference -1.00 pp to +2.00 pp)" in order_sentence(swapped)
    assert math.isfinite(first.correction.diff.estimate)


def test_same_inputs_and_seed_give_byte_identical_reports_for_any_thread_count(
    labelled: Path, run_cli, tmp_path: Path
) -> None:
    outputs = []
    before = numba.get_num_threads()
    for threads in (1, before):
        numba.set_num_threads(threads)
        try:
            out = tmp_path / f"t{threads}"
            result = run_cli(
                "check", PS, "--resamples", "300", "--adjudications", str(labelled),
                "--json", str(out) + ".json", "--markdown", str(out) + ".md",
            )
        finally:
            numba.set_num_threads(before)
        assert result.code == 0, result.err
        outputs.append((Path(str(out) + ".json").read_bytes(), Path(str(out) + ".md").read_bytes()))
    assert outputs[0] == outputs[1]


def test_unmeasured_rates_are_said_and_never_read_as_no_error(run_cli, tmp_path: Path) -> None:
    """Only the uncertain verdicts labelled (no random sample): the certain verdicts' rates are
    unmeasured, and no sentence lets "no verdict changes" stand without saying so."""
    queue = tmp_path / "q.jsonl"
    assert run_cli("review", PS, "--out", str(queue), "--sample", "0").code == 0
    rows = [json.loads(line) for line in queue.read_text().splitlines()]
    for row in rows:
        row["accept"] = row["verdict"] == "accept"
    path = tmp_path / "uncertain.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "a.json"
    result = run_cli("check", PS, "--resamples", "100", "--adjudications", str(path), "--json", str(out))
    assert result.code == 0, result.err
    data = json.loads(out.read_text())
    (rule,) = data["extraction_error"]["rules"]
    assert rule["unmeasured"] == ["certain false accept", "certain false reject"]
    for key in ("verdicts_by_error", "order"):
        assert "unmeasured for physical_stability" in data["statements"][key]
    assert "unmeasured (no labelled answer of that kind)" in result.out
