"""The embedded example benchmark: real GRIP-Benchmark-34 keys, synthetic responses.

Files are read with the stdlib only (gzip + json + tomllib), not with keyaudit's loader, so these
tests pin the on-disk format independently of it.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from keyaudit.engine.examples import generate
from keyaudit.engine.load.answer_line import find_answer_line
from keyaudit.engine.load.strict import strict_correct

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

BENCH = Path(generate.__file__).resolve().parent / "grip34"

DOMAIN_ROWS = {
    "physical_stability": 15_000,
    "compass_bearing": 15_000,
    "gauge_reading": 15_000,
    "gear_train": 15_000,
    "fbd": 15_000,
    "laser_mirror": 15_000,
    "optical_illusion": 15_000,
    "projectile_motion": 5_000,
    "surface_topology": 15_000,
    "clock_reading": 15_000,
    "angle_estimation": 15_000,
}

_STABLE = "stable; after removing block {}, every cumulative center of mass remains within its supporting base"
_UNSTABLE = (
    "unstable; after removing block {}, the cumulative center of mass at the joint between "
    "block {} and block {} lies outside its supporting base"
)
#: The seed audit's §1 "ten verbatim examples".
SEED_EXAMPLES = {
    "physical_stability_0001_q5": _UNSTABLE.format("C", "B", "A"),
    "physical_stability_0002_q5": _STABLE.format("B"),
    "physical_stability_0004_q5": _STABLE.format("C"),
    "physical_stability_0005_q5": _UNSTABLE.format("E", "B", "A"),
    "physical_stability_0007_q5": _UNSTABLE.format("D", "C", "B"),
    "physical_stability_0009_q5": _UNSTABLE.format("D", "B", "A"),
    "physical_stability_0012_q5": _STABLE.format("E"),
    "physical_stability_0016_q5": _STABLE.format("D"),
    "physical_stability_0019_q5": _UNSTABLE.format("E", "D", "C"),
    "physical_stability_3000_q5": _STABLE.format("C"),
}


def read_jsonl_gz(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@lru_cache(maxsize=1)
def manifest() -> dict:
    return tomllib.loads((BENCH / "benchmark.toml").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def keys() -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted((BENCH / "keys").glob("*.jsonl.gz")):
        for row in read_jsonl_gz(path):
            assert set(row) == {"id", "answer"}
            out[row["id"]] = row["answer"]
    return out


@lru_cache(maxsize=1)
def responses() -> dict[str, list[dict]]:
    return {
        path.name.removesuffix(".jsonl.gz"): read_jsonl_gz(path)
        for path in sorted((BENCH / "responses").glob("*.jsonl.gz"))
    }


def ps_l5() -> dict[str, str]:
    return {
        i: k for i, k in keys().items() if i.startswith("physical_stability_") and i.endswith("_q5")
    }


# ------------------------------------------------------------------------- manifest


def test_manifest_has_exactly_the_documented_keys():
    assert set(manifest()) == {"name", "id_pattern", "roster", "description", "source"}
    assert manifest()["name"] == "GRIP-Benchmark-34 (keyaudit example)"
    assert manifest()["id_pattern"] == r"^(?P<domain>.+)_(?P<image>\d+)_q(?P<level>\d+)$"


def test_roster_has_16_names_and_10_present_models():
    roster = manifest()["roster"]
    assert len(roster) == len(set(roster)) == 16
    present = {rows[0]["model"] for rows in responses().values()}
    assert len(present) == 10
    assert present <= set(roster)
    assert all(name.startswith("Synth ") for name in roster)


def test_license_and_readme_name_the_source():
    licence = (BENCH / "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in licence
    assert "bilaljawaid980/Geomatric-Reasoning-Benchmark-Dataset" in licence
    assert "1c28b5ddd30715ab896278484a612f48e9ee41eb" in licence
    assert "python -m keyaudit.engine.examples.generate" in (BENCH / "README.md").read_text()


# ----------------------------------------------------------------------------- keys


def test_keys_total_and_per_domain_counts():
    counts = Counter(re.match(manifest()["id_pattern"], i)["domain"] for i in keys())
    assert dict(counts) == DOMAIN_ROWS
    # 10 domains x 3,000 images + projectile_motion's 1,000, five levels each. (The task brief
    # said 165,000 = 11 x 15,000; the per-domain table and the source files give 155,000.)
    assert sum(counts.values()) == 155_000


def test_every_image_has_five_levels():
    pattern = re.compile(manifest()["id_pattern"])
    levels = Counter(pattern.match(i)["level"] for i in keys())
    assert levels == {str(lv): 31_000 for lv in range(1, 6)}


def test_physical_stability_l5_structure():
    values = list(ps_l5().values())
    assert len(values) == 3_000
    assert sum(v.startswith("stable;") for v in values) == 1_500
    assert sum(v.startswith("unstable;") for v in values) == 1_500
    assert len(set(values)) == 9


@pytest.mark.parametrize("item_id", sorted(SEED_EXAMPLES))
def test_seed_examples_verbatim(item_id):
    assert keys()[item_id] == SEED_EXAMPLES[item_id]


def test_sentence_cells_keep_their_templates():
    by_cell: dict[str, set[str]] = {"gear_train": set(), "gauge_reading": set()}
    for i, k in keys().items():
        for domain, seen in by_cell.items():
            if i.startswith(domain + "_") and i.endswith("_q5"):
                seen.add(k)
    assert by_cell["gear_train"] == {
        "increase; direction unchanged",
        "decrease; direction unchanged",
        "stay the same; direction unchanged",
    }
    assert all(re.fullmatch(r"(yes|no); new value -?[\d.]+", k) for k in by_cell["gauge_reading"])


# ------------------------------------------------------------------------ responses


def test_response_rows_have_the_documented_fields_and_order():
    for slug, rows in responses().items():
        assert [r["id"] for r in rows] == sorted(r["id"] for r in rows), slug
        for row in rows[:50]:
            assert list(row) == ["id", "model", "response", "correct"]
            assert isinstance(row["correct"], bool)


def test_every_response_id_has_a_key_and_models_share_one_item_set():
    item_sets = {slug: [r["id"] for r in rows] for slug, rows in responses().items()}
    first = next(iter(item_sets.values()))
    assert len(first) == len(set(first)) == 11 * 50 * 5
    assert all(ids == first for ids in item_sets.values())
    assert set(first) <= set(keys())
    pattern = re.compile(manifest()["id_pattern"])
    cells = Counter((pattern.match(i)["domain"], pattern.match(i)["level"]) for i in first)
    assert set(cells.values()) == {50} and len(cells) == 55


def test_one_model_per_file_and_slug_matches_name():
    for slug, rows in responses().items():
        names = {r["model"] for r in rows}
        assert len(names) == 1
        assert slug == "-".join(names.pop().lower().split())


def test_correct_is_the_strict_scorer():
    k = keys()
    for rows in responses().values():
        for row in rows:
            assert row["correct"] == strict_correct(row["response"], k[row["id"]]), row["id"]


def test_physical_stability_sample_matches_the_audited_run():
    ids = {r["id"] for r in next(iter(responses().values()))}
    l5 = [k for i, k in ps_l5().items() if i in ids]
    assert len(l5) == 50
    assert "physical_stability_0015_q5" in ids and "physical_stability_0136_q5" in ids
    assert sum(k.startswith("stable;") for k in l5) == 26
    assert max(Counter(l5).values()) == 8


def test_strict_scores_sentence_cell_zero_but_models_are_not_silent():
    """As in the audit: nobody matches the physical_stability L5 sentence verbatim."""
    for rows in responses().values():
        cell = [r for r in rows if r["id"].startswith("physical_stability_") and "_q5" in r["id"]]
        assert not any(r["correct"] for r in cell)
        statuses = Counter()
        for r in cell:
            line = find_answer_line(r["response"])
            if line is not None:
                statuses[line.text.lstrip("*").split()[0].strip(",.:;*").lower()] += 1
        assert statuses["stable"] + statuses["unstable"] >= 40


def test_formatting_variety_is_present():
    all_rows = [r for rows in responses().values() for r in rows]
    missing = sum(find_answer_line(r["response"]) is None for r in all_rows)
    assert 0.003 * len(all_rows) < missing < 0.03 * len(all_rows)
    two = sum(len(re.findall(r"(?im)^[\s*#>]*answer[*\s]*:", r["response"])) >= 2 for r in all_rows)
    assert two > 50
    assert any("**ANSWER:**" in r["response"] for r in all_rows)
    assert any("’" in r["response"] for r in all_rows)


def test_models_differ():
    scores = {slug: sum(r["correct"] for r in rows) for slug, rows in responses().items()}
    assert max(scores.values()) > 2 * min(scores.values())


# --------------------------------------------------------------------- determinism


def test_regeneration_is_byte_identical(tmp_path):
    """The decompressed bytes are compared: gzip output may differ between zlib builds."""
    generate.write_benchmark(tmp_path, seed=generate.DEFAULT_SEED, keys_dir=BENCH / "keys")
    assert (tmp_path / "benchmark.toml").read_bytes() == (BENCH / "benchmark.toml").read_bytes()
    shipped = sorted(p.name for p in (BENCH / "responses").glob("*.jsonl.gz"))
    fresh = sorted(p.name for p in (tmp_path / "responses").glob("*.jsonl.gz"))
    assert fresh == shipped and len(shipped) == 10
    for name in shipped:
        fresh_bytes = gzip.decompress((tmp_path / "responses" / name).read_bytes())
        assert fresh_bytes == gzip.decompress((BENCH / "responses" / name).read_bytes()), name


def test_another_seed_gives_other_responses(tmp_path):
    generate.write_benchmark(tmp_path, seed=35, keys_dir=BENCH / "keys")
    name = sorted(p.name for p in (BENCH / "responses").glob("*.jsonl.gz"))[0]
    assert (tmp_path / "responses" / name).read_bytes() != (BENCH / "responses" / name).read_bytes()
