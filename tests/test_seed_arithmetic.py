"""The seed audit's §3→§4 arithmetic, reproduced through :func:`summarize`.

The stored Test-1 responses are not part of this repository, so the before table cannot be
recomputed from data. What *can* be checked is the seed's claim that changing only the
physical_stability L5 cell (strict 0% with baseline 8/50 = 16% → each model's structured accuracy
with baseline 26/50 = 52%) moves Raw L5, Adjusted L5, L5−L4 and Overall macro from the "before" to
the "after" column, given 34 L5 cells, 31 paired domains and 164 cells in the overall macro.

How the synthetic table is built, per model (each model has its own table and baselines, since a
synthetic filler baseline is chosen per model):

* 34 domains: ``physical_stability`` and ``d01``..``d30`` at L4 and L5 (31 paired), ``d31``..``d33``
  at L5 only, and ``d01``..``d33`` at L1-L3 (99 cells): 31*2 + 3 + 99 = 164 cells;
* physical_stability L5 has n = 50 and 0 correct (before); every other ("filler") cell has
  n = 10**7 items, so its accuracy can be set to 7 decimals by choosing the correct count;
* filler values are solved so the before aggregates hit targets: the 30 other paired L5 cells
  share one raw accuracy and one baseline, the 3 unpaired L5 cells carry Raw L5, the L4 cells
  carry L5−L4, and the 99 lower cells carry Overall macro;
* the targets are not the printed before values verbatim but the midpoint of the values that
  round to the printed before value *and* whose after value (target + the exact change implied by
  the cell edit) rounds to the printed after value. An empty window would mean the seed's two
  columns are inconsistent with 34 / 31 / 164 cells: the test would fail.

The test then asserts, for every model, that both columns round to the seed's figures, that each
after value is within 0.01 pp of the seed, and that Raw L5 moves by exactly 1/34 of the change.
"""

from __future__ import annotations

import math

import pytest

from keyaudit.engine.stats.aggregate import CellTable, summarize
from keyaudit.engine.stats.metrics import adjusted_score, strict_baseline

PS = "physical_stability"
N_FILL = 10**7
N_HI, N_PAIRED, N_CELLS = 34, 31, 164
BASE_BEFORE, BASE_AFTER = 8 / 50, 26 / 50
FILL_BASE = 0.25

# model: structured accuracy (§3), then (before, after) in percent for Raw L5, Adjusted L5,
# L5−L4 and Overall macro (§4).
SEED = {
    "Claude Opus 5": (1.00, (55.18, 58.12), (21.81, 25.65), (6.90, 10.74), (41.98, 42.71)),
    "Claude Sonnet 5": (0.52, (38.35, 39.88), (-9.57, -8.96), (-10.47, -9.85), (23.65, 23.77)),
    "DeepSeek V4.1 Flash": (0.52, (34.82, 36.35), (-30.63, -30.02), (-22.90, -22.28), (6.18, 6.30)),
    "Gemini 3.8 Flash": (1.00, (55.00, 57.94), (21.86, 25.70), (-0.19, 3.65), (44.82, 45.54)),
    "GPT-5.6 Luna": (0.52, (34.00, 35.53), (-26.41, -25.79), (-18.98, -18.37), (6.96, 7.07)),
    "GPT-5.6 Sol": (0.60, (40.47, 42.24), (-9.71, -8.56), (-12.74, -11.58), (22.91, 23.13)),
    "Grok 4.6": (0.82, (46.35, 48.76), (3.51, 6.14), (-4.57, -1.94), (28.01, 28.50)),
    "Inkling": (0.50, (32.12, 33.59), (-36.60, -36.12), (-28.65, -28.17), (1.94, 2.03)),
    "Muse Glimmer 30B": (0.58, (33.47, 35.18), (-34.06, -33.04), (-29.12, -28.10), (8.44, 8.64)),
    "Perplexity Sonar Pro": (
        0.52,
        (31.35, 32.88),
        (-29.59, -28.98),
        (-15.99, -15.37),
        (4.15, 4.26),
    ),
}
FIELDS = ("raw_hi", "adjusted_hi", "diff", "overall")


def _changes(structured: float) -> dict[str, float]:
    """Exact change (fraction) of each aggregate when only the physical_stability L5 cell moves."""
    d_adj = adjusted_score(structured, BASE_AFTER) - adjusted_score(0.0, BASE_BEFORE)
    return {
        "raw_hi": structured / N_HI,
        "adjusted_hi": d_adj / N_PAIRED,
        "diff": d_adj / N_PAIRED,
        "overall": d_adj / N_CELLS,
    }


def _target(before_pp: float, after_pp: float, change: float) -> float:
    """Midpoint (fraction) of the before values consistent with both printed columns."""
    low = max(before_pp - 0.005, after_pp - 0.005 - 100 * change)
    high = min(before_pp + 0.005, after_pp + 0.005 - 100 * change)
    assert low < high, f"no before value rounds to {before_pp} with after {after_pp}"
    return (low + high) / 200


def _tables(structured: float, targets: dict[str, float]):
    """Before/after (CellTable, baselines) hitting ``targets`` (see the module docstring)."""
    raw5, adj5_mean, diff, overall = (targets[f] for f in FIELDS)
    adj_ps = adjusted_score(0.0, BASE_BEFORE)
    r5 = (N_HI * raw5 - 3 * raw5) / (N_HI - 4)  # 30 paired L5 fillers; 3 unpaired carry raw5
    a5 = (N_PAIRED * adj5_mean - adj_ps) / (N_PAIRED - 1)
    b5 = (r5 - a5) / (1 - a5)
    a4 = adj5_mean - diff
    a_unpaired = adjusted_score(raw5, FILL_BASE)
    a_low = (N_CELLS * overall - N_PAIRED * adj5_mean - N_PAIRED * a4 - 3 * a_unpaired) / 99
    raws = {
        "L5": r5,
        "L4": FILL_BASE + (1 - FILL_BASE) * a4,
        "low": FILL_BASE + (1 - FILL_BASE) * a_low,
    }
    assert 0 <= b5 < 1 and all(0 <= r <= 1 for r in (*raws.values(), raw5))

    def fill(x: float) -> tuple[int, int]:
        return round(x * N_FILL), N_FILL

    counts, base = {}, {}
    for i in range(1, 34):
        d = f"d{i:02d}"
        for level in (1, 2, 3):
            counts[("m", d, level)] = fill(raws["low"])
            base[(d, level)] = FILL_BASE
        if i <= 30:
            counts[("m", d, 4)], base[(d, 4)] = fill(raws["L4"]), FILL_BASE
            counts[("m", d, 5)], base[(d, 5)] = fill(r5), b5
        else:
            counts[("m", d, 5)], base[(d, 5)] = fill(raw5), FILL_BASE
    counts[("m", PS, 4)], base[(PS, 4)] = fill(raws["L4"]), FILL_BASE
    before = dict(counts)
    before[("m", PS, 5)] = (0, 50)
    after = dict(counts)
    after[("m", PS, 5)] = (round(structured * 50), 50)
    return (
        (CellTable.from_counts(before), {**base, (PS, 5): BASE_BEFORE}),
        (CellTable.from_counts(after), {**base, (PS, 5): BASE_AFTER}),
    )


@pytest.mark.parametrize("model", sorted(SEED))
def test_seed_before_after(model: str) -> None:
    structured, *columns = SEED[model]
    changes = _changes(structured)
    targets = {
        f: _target(before, after, changes[f])
        for f, (before, after) in zip(FIELDS, columns, strict=True)
    }
    (t_before, b_before), (t_after, b_after) = _tables(structured, targets)
    s_before = summarize(t_before, b_before)["m"]
    s_after = summarize(t_after, b_after)["m"]
    assert (s_before.n_hi_cells, s_before.n_paired, s_before.n_cells) == (N_HI, N_PAIRED, N_CELLS)
    assert (
        s_after.n_hi_cells == N_HI and s_after.n_paired == N_PAIRED and s_after.n_cells == N_CELLS
    )
    for f, (before, after) in zip(FIELDS, columns, strict=True):
        got_before, got_after = 100 * getattr(s_before, f), 100 * getattr(s_after, f)
        assert round(got_before, 2) == pytest.approx(before), (f, got_before)
        assert round(got_after, 2) == pytest.approx(after), (f, got_after)
        assert abs(got_after - after) <= 0.01, (f, got_after)
    assert s_after.raw_hi - s_before.raw_hi == pytest.approx(structured / N_HI, abs=1e-12)


def test_seed_physical_stability_baselines() -> None:
    """The edited cell's two baselines: 16% for the exact strings, 52% for the leading status.

    The seed gives 26 stable / 24 unstable keys and a strict baseline of 8/50; the split of the
    keys over block letters below is illustrative (the most frequent full string occurs 8 times).
    """
    stable = "stable; after removing block {}, every cumulative center of mass remains within its supporting base"
    unstable = (
        "unstable; after removing block {}, the cumulative center of mass at the joint between "
        "block {} and block {} lies outside its supporting base"
    )
    keys = [stable.format(b) for b in "B" * 8 + "C" * 6 + "D" * 6 + "E" * 6]
    keys += [unstable.format(*t) for t in ["CBA"] * 8 + ["DCB"] * 8 + ["EDC"] * 8]
    keys = [k.upper() if i % 3 else k for i, k in enumerate(keys)]  # case must not matter
    assert strict_baseline(keys) == 8 / 50
    assert strict_baseline([k.split(";")[0] for k in keys]) == 26 / 50
    assert math.isclose(adjusted_score(0.0, BASE_BEFORE), -0.16 / 0.84)
    assert math.isclose(adjusted_score(1.0, BASE_AFTER), 1.0)
