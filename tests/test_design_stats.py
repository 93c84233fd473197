"""Before → after statistics for any design (issue 24, item 1), checked against an independent,
plain-Python computation on a made-up one-level benchmark (three models, two domains)."""

from __future__ import annotations

import math
import random

import pytest

from keyaudit.engine.stats.design import ItemOutcome, _draws, before_after

MODELS = ("alpha", "beta", "gamma")
DOMAINS = ("equilibrium", "stoich")


def _benchmark(seed: int = 3) -> list[ItemOutcome]:
    """Strict scoring rejects most right answers of gamma and beta (sentence keys); after the
    rule, gamma leads. Some images have two items."""
    rng = random.Random(seed)
    p_before = {"alpha": 0.6, "beta": 0.35, "gamma": 0.2}
    p_after = {"alpha": 0.62, "beta": 0.7, "gamma": 0.85}
    items = []
    for domain in DOMAINS:
        for image in range(14):
            for _item in range(1 + image % 2):
                for model in MODELS:
                    before = rng.random() < p_before[model]
                    after = before or rng.random() < (p_after[model] - p_before[model]) / (1 - p_before[model])
                    items.append(ItemOutcome(model, domain, 1, f"{domain}-{image}", 1, int(before), int(after)))
    return items


BASE_BEFORE = {(d, 1): 0.1 for d in DOMAINS}
BASE_AFTER = {(d, 1): 0.25 for d in DOMAINS}


def _adjusted(raw: float, base: float) -> float:
    return raw - base if base == 1 else (raw - base) / (1 - base)


def _tau_b(x: list[float], y: list[float]) -> float:
    s = nx = ny = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            a = (x[i] > x[j]) - (x[i] < x[j])
            b = (y[i] > y[j]) - (y[i] < y[j])
            s += a * b
            nx += a != 0
            ny += b != 0
    return s / math.sqrt(nx * ny)


def _replicate(items, weights):
    """Per model: (overall before, overall after) for one draw (weights[domain][image] = count)."""
    out = {}
    for model in MODELS:
        adj_b, adj_a = [], []
        for domain in DOMAINS:
            own = [i for i in items if i.model == model and i.domain == domain]
            w = [weights[domain][i.image] for i in own]
            units = sum(wi * i.n for wi, i in zip(w, own, strict=True))
            if units == 0:
                continue
            adj_b.append(_adjusted(sum(wi * i.before for wi, i in zip(w, own, strict=True)) / units, BASE_BEFORE[(domain, 1)]))
            adj_a.append(_adjusted(sum(wi * i.after for wi, i in zip(w, own, strict=True)) / units, BASE_AFTER[(domain, 1)]))
        out[model] = (float(sum(adj_b) / len(adj_b)), float(sum(adj_a) / len(adj_a)))
    return out


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    position = q * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def test_estimates_match_a_plain_computation() -> None:
    items = _benchmark()
    stats = before_after(items, BASE_BEFORE, BASE_AFTER, resamples=50, seed=1)
    full = {d: {f"{d}-{i}": 1 for i in range(14)} for d in DOMAINS}
    expected = _replicate(items, full)
    for j, model in enumerate(stats.models):
        assert stats.overall_before[j] == pytest.approx(expected[model][0], abs=1e-12)
        assert stats.overall_after[j] == pytest.approx(expected[model][1], abs=1e-12)
    for cell in stats.cells:
        own = [i for i in items if (i.model, i.domain) == (cell.model, cell.domain)]
        assert cell.before == pytest.approx(sum(i.before for i in own) / len(own))
        assert cell.after == pytest.approx(sum(i.after for i in own) / len(own))
        assert cell.clusters == 14
    scores_b = [expected[m][0] for m in MODELS]
    scores_a = [expected[m][1] for m in MODELS]
    assert stats.kendall_tau.estimate == pytest.approx(_tau_b(scores_b, scores_a))
    assert stats.rank_before == (1, 2, 3) and stats.rank_after[2] == 1  # gamma leads after


def test_intervals_match_a_plain_bootstrap_over_the_same_draws() -> None:
    items = _benchmark()
    resamples = 200
    stats = before_after(items, BASE_BEFORE, BASE_AFTER, resamples=resamples, seed=7)
    draws = {d: _draws(7, d, 14, resamples) for d in DOMAINS}
    names = {d: sorted(f"{d}-{i}" for i in range(14)) for d in DOMAINS}  # the draw's image order
    replicates = [
        _replicate(items, {d: {name: draws[d][r, k] for k, name in enumerate(names[d])} for d in DOMAINS})
        for r in range(resamples)
    ]
    for j, model in enumerate(stats.models):
        changes = [rep[model][1] - rep[model][0] for rep in replicates]
        assert stats.overall_change[j].low == pytest.approx(_percentile(changes, 0.025), abs=1e-9)
        assert stats.overall_change[j].high == pytest.approx(_percentile(changes, 0.975), abs=1e-9)
    taus = [_tau_b([rep[m][0] for m in MODELS], [rep[m][1] for m in MODELS]) for rep in replicates]
    assert stats.kendall_tau.low == pytest.approx(_percentile(taus, 0.025), abs=1e-9)
    # every pair whose order flips, and whether the new order is significant
    full = _replicate(items, {d: {f"{d}-{i}": 1 for i in range(14)} for d in DOMAINS})
    flipped = {
        (a, b) for a in MODELS for b in MODELS
        if full[a][1] > full[b][1] and full[a][0] < full[b][0]
    }
    assert {(f.ahead, f.behind) for f in stats.flips} == flipped and flipped
    for flip in stats.flips:
        gaps = [rep[flip.ahead][1] - rep[flip.behind][1] for rep in replicates]
        assert flip.significant == (_percentile(gaps, 0.025) > 0)


def test_the_same_inputs_and_seed_give_the_same_figures_in_any_model_order() -> None:
    items = _benchmark()
    one = before_after(items, BASE_BEFORE, BASE_AFTER, resamples=100, seed=5)
    two = before_after(list(reversed(items)), BASE_BEFORE, BASE_AFTER, resamples=100, seed=5)
    assert one == two
    other = before_after(items, BASE_BEFORE, BASE_AFTER, resamples=100, seed=6)
    assert other.overall_change != one.overall_change


def test_a_one_level_benchmark_end_to_end(tmp_path, run_cli) -> None:
    """A made-up benchmark with one level (not GRIP): the report says nothing of L4/L5 and gives
    the before → after figures, which match a plain recomputation from the stored verdicts."""
    import json
    import shutil

    from keyaudit.engine.load.locate import resolve_rule_path

    bench = tmp_path / "bench"
    (bench / "keys").mkdir(parents=True)
    (bench / "responses").mkdir()
    (bench / "benchmark.toml").write_text(
        'name = "one level"\nid_pattern = \'^(?P<domain>.+)_(?P<image>\\d+)_q(?P<level>\\d+)$\'\n'
        'roster = ["M1", "M2"]\n[keys]\npath = "keys/gear_train.jsonl"\n',
        encoding="utf-8",
    )
    keys = ["decrease; direction unchanged", "increase; direction unchanged", "stay the same; direction unchanged"]
    rng = random.Random(4)
    lines, strict, ruled = [], {"M1": [], "M2": []}, {"M1": [], "M2": []}
    for i in range(30):
        key = keys[i % 3]
        lines.append(json.dumps({"id": f"gear_train_{i:04d}_q5", "answer": key}))
    (bench / "keys" / "gear_train.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for model, p in (("M1", 0.8), ("M2", 0.5)):
        rows = []
        for i in range(30):
            key = keys[i % 3]
            speed = key.split(";")[0] if rng.random() < p else "increase" if key[0] != "i" else "decrease"
            text = f"Reasoning.\nANSWER: D's speed will {speed}; its direction stays the same"
            verbatim = rng.random() < 0.2
            if verbatim:
                text = f"Reasoning.\nANSWER: {key}"
            right = verbatim or speed == key.split(";")[0]
            strict[model].append(verbatim)
            ruled[model].append(right)
            rows.append(json.dumps({"id": f"gear_train_{i:04d}_q5", "model": model, "response": text, "correct": verbatim}))
        (bench / "responses" / f"{model}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    rule_dir = tmp_path / "rule"
    shutil.copytree(resolve_rule_path("gear_train").parent, rule_dir)
    for grammar in (resolve_rule_path("gear_train").parent.parent / "grammars").glob("*.lark"):
        shutil.copy(grammar, rule_dir / grammar.name)
    report = tmp_path / "audit.json"
    markdown = tmp_path / "audit.md"
    result = run_cli(
        "check", str(rule_dir / "gear_train.toml"), "--bench", str(bench), "--resamples", "300",
        "--json", str(report), "--markdown", str(markdown), "--plot", str(tmp_path / "plot.svg"),
    )
    assert result.code == 0, result.err
    plot = (tmp_path / "plot.svg").read_text(encoding="utf-8")
    assert "before and after" in plot and "L4" not in plot and "Warning" not in result.err
    text = markdown.read_text(encoding="utf-8")
    assert "L4" not in text and "L5−" not in text and "This benchmark has one level (L5)" in text
    assert "L4" not in result.out
    data = json.loads(report.read_text(encoding="utf-8"))["before_after"]
    for cell in data["cells"]:
        model = cell["model"]
        assert cell["before"] == pytest.approx(sum(strict[model]) / 30)
        assert cell["after"] == pytest.approx(sum(ruled[model]) / 30)
        assert cell["change"]["low"] <= cell["change"]["estimate"] <= cell["change"]["high"]
    board = {row["model"]: row for row in data["leaderboard"]}
    order_after = sorted(board, key=lambda m: -sum(ruled[m]))
    assert [board[m]["rank_after"] for m in order_after] == [1, 2]


def test_levels_takes_one_level(tmp_path, run_cli) -> None:
    """`--levels 5` (issue 24: it was refused): before -> after only, no difference of levels,
    and no made-up lower level is shown."""
    markdown = tmp_path / "one.md"
    result = run_cli("check", "physical_stability", "--levels", "5", "--resamples", "100", "--markdown", str(markdown))
    assert result.code == 0, result.err
    text = markdown.read_text(encoding="utf-8")
    assert "One level was chosen (`--levels 5`)" in text and "One level was chosen" in result.out
    assert "L-1" not in text and "L-1" not in result.out and "L5−L4" not in text
    assert "Before → after: every ruled cell and the leaderboard" in text
    bad = run_cli("check", "physical_stability", "--levels", "3,4,5")
    assert bad.code == 2 and "one level or two" in bad.err


def test_cell_codes_count_or_sort_to_the_same_cells():
    """Cells found by counting the codes' few values equal those a sort finds, on both paths."""
    import numpy as np

    from keyaudit.engine.stats import aggregate
    from keyaudit.engine.stats.aggregate import OutcomeColumns

    rng = np.random.default_rng(11)
    size = 5000
    cols = OutcomeColumns(
        tuple("abcdefg"), ("d0", "d1", "d2"), tuple(f"i{k}" for k in range(50)),
        rng.integers(0, 7, size).astype(np.int32), rng.integers(0, 3, size).astype(np.int32),
        rng.integers(0, 50, size).astype(np.int32), rng.choice([2, 4, 5], size).astype(np.int32),
        np.ones(size, dtype=np.int32), rng.integers(0, 2, size).astype(np.int32),
    )
    levels, level_at = np.unique(cols.level, return_inverse=True)
    code = (cols.model.astype(np.int64) * 3 + cols.domain) * len(levels) + level_at
    expected_codes, expected_at = np.unique(code, return_inverse=True)
    cells, cell_at = aggregate.cells_of(cols)
    assert cells == [
        (cols.models[c // 9], cols.domains[c // 3 % 3], int(levels[c % 3])) for c in expected_codes
    ]
    np.testing.assert_array_equal(cell_at, expected_at.reshape(-1))
    missing = code[code != code[0]]  # some cells reached by no outcome
    for codes, at in (aggregate._sorted_cells(code), aggregate._counted_cells(code, 7 * 3 * 3)):
        np.testing.assert_array_equal(codes, expected_codes)
        np.testing.assert_array_equal(at, expected_at.reshape(-1))
    codes, at = aggregate._counted_cells(missing, 7 * 3 * 3)
    np.testing.assert_array_equal(codes[at], missing)


def _scored(before: dict[str, int], after: dict[str, int], n: int = 10) -> list[ItemOutcome]:
    """One cell of ``n`` images; each model right on its first ``before[m]`` / ``after[m]``."""
    return [
        ItemOutcome(m, "d", 1, f"d-{i}", 1, int(i < before[m]), int(i < after[m]))
        for m in before
        for i in range(n)
    ]


def _sentences(items) -> tuple[str, list[str], list[tuple[str, str, str]]]:
    from types import SimpleNamespace

    from keyaudit.engine.reports.design_text import flip_sentences, tau_sentence

    stats = before_after(items, {("d", 1): 0.0}, {("d", 1): 0.0}, resamples=200, seed=1)
    audit = SimpleNamespace(design=stats)
    return tau_sentence(audit), flip_sentences(audit), [(f.ahead, f.behind, f.change) for f in stats.flips]


def test_ties_are_named_as_ties_and_a_broken_tie_is_a_change_of_order() -> None:
    """Issue 34, item 4: a tie before the rule that becomes an order is a change of order (the
    old flips needed a strict order on both sides), an order that becomes a tie is one too, and
    τ-b says how many pairs were tied (it counted them silently)."""
    tau, flips, pairs = _sentences(_scored({"a": 3, "b": 3, "c": 5}, {"a": 6, "b": 4, "c": 6}))
    assert pairs == [("a", "b", "tie broken"), ("c", "a", "now tied")]
    assert "with ties (1 of the 3 pairs tied before and 1 of the 3 pairs tied after" in tau
    assert any(s.startswith("a, tied with b before, now leads it by +20.00 pp") for s in flips)
    assert "c, ahead of a before, is tied with it after the rules." in flips


def test_all_tied_on_one_side_is_said_so_not_fewer_than_two_models() -> None:
    tau, flips, pairs = _sentences(_scored({"a": 0, "b": 0, "c": 0}, {"a": 7, "b": 5, "c": 2}))
    assert tau.startswith("All 3 models are tied before the rules (overall 0.00%)")
    assert "after them the order is a 70.00%, b 50.00%, c 20.00%" in tau
    assert sorted(pairs) == [("a", "b", "tie broken"), ("a", "c", "tie broken"), ("b", "c", "tie broken")]
    tau, flips, pairs = _sentences(_scored({"a": 4, "b": 4}, {"a": 4, "b": 4}))
    assert tau.startswith("All 2 models are tied both before and after the rules") and pairs == []
    assert flips == ["No pair of models changes order between strict scoring and the rules."]
    tau, _, _ = _sentences(_scored({"a": 4}, {"a": 5}))
    assert "fewer than two models" in tau
