"""Response sources read as the frameworks wrote them: inspect_ai logs, lm-eval samples, CSV keys.

The logs under tests/data/logs/ were written by the real frameworks (make_logs.py there); these
tests read them through the loader API. The error contract through the console script is in
tests/test_response_cli.py.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from keyaudit.engine.errors import DataError
from keyaudit.engine.load.benchmark import ResponseSource, load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir
from keyaudit.engine.load.responses.sources import detect
from keyaudit.engine.load.responses.zipmember import ZSTD, open_archive, read_member

DATA = Path(__file__).parent / "data"
LOGS = DATA / "logs"
EVAL = LOGS / "inspect" / "synth-atlas-xl.eval"
JSON_LOG = LOGS / "inspect" / "synth-birch-7b.json"
FAILED = LOGS / "inspect" / "failed-synth-cedar-pro.eval"
MISMATCH = LOGS / "inspect" / "mismatch-synth-ember-30b.eval"
LM_DIR = LOGS / "lm-eval" / "synth-dune-mini"
(SAMPLES,) = LM_DIR.glob("samples_*.jsonl")
(RESULTS,) = LM_DIR.glob("results_*.json")
EXAMPLE = example_benchmark_dir()


def _load(*sources: ResponseSource, epochs: str = "first", bench: Path = EXAMPLE):
    return load_benchmark(bench, responses=sources, epochs=epochs)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_eval_members_are_zstd_and_read_back() -> None:
    with open_archive(EVAL) as archive:
        kinds = {info.compress_type for info in archive.infolist()}
        header = json.loads(read_member(archive, "header.json", EVAL))
    assert kinds == {ZSTD}  # what inspect 0.3.285 writes; zipfile alone cannot read it on 3.11
    assert header["eval"]["model"] == "mockllm/synth-atlas-xl"


def test_inspect_eval_with_epochs() -> None:
    first = _load(ResponseSource(EVAL))
    every = _load(ResponseSource(EVAL), epochs="all")
    assert first.models == every.models == ("mockllm/synth-atlas-xl",)
    assert len(first.responses) == 32 and {r.epoch for r in first.responses} == {1}
    assert len(every.responses) == 64 and {r.epoch for r in every.responses} == {1, 2}
    assert first.epochs == "first" and every.epochs == "all" and every.n_epochs == 2
    (info,) = first.sources
    assert info.format == "inspect" and dict(info.details)["scorer"] == "answer_line"
    assert info.samples == 64
    # the verdicts are the answer_line scorer's, read from the samples themselves
    with open_archive(EVAL) as archive:
        member = json.loads(
            read_member(archive, "samples/physical_stability_0001_q5_epoch_2.json", EVAL)
        )
    (r,) = [x for x in every.responses if x.id == "physical_stability_0001_q5" and x.epoch == 2]
    assert r.text == member["output"]["completion"]
    assert r.correct is (member["scores"]["answer_line"]["value"] == "C")
    assert not r.correct_computed


def test_inspect_other_scorer_and_display_name() -> None:
    loaded = _load(ResponseSource(EVAL, scorer="includes", model="Synth Atlas XL"))
    assert loaded.models == ("Synth Atlas XL",)
    details = dict(loaded.sources[0].details)
    assert details["scorer"] == "includes" and details["log model"] == "mockllm/synth-atlas-xl"


def test_inspect_json_log_matches_its_samples() -> None:
    loaded = _load(ResponseSource(JSON_LOG))
    log = json.loads(JSON_LOG.read_text(encoding="utf-8"))
    assert loaded.models == (log["eval"]["model"],)
    assert {r.id for r in loaded.responses} == {s["id"] for s in log["samples"]}
    by_id = {s["id"]: s for s in log["samples"]}
    for r in loaded.responses:
        assert r.text == by_id[r.id]["output"]["completion"]
        assert r.correct is (by_id[r.id]["scores"]["answer_line"]["value"] == "C")


def test_lm_eval_samples_with_repeats_and_filter() -> None:
    loaded = _load(ResponseSource(LM_DIR.parent), epochs="all")
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    assert loaded.models == (results["model_name"],) == ("synth-dune-mini",)
    rows = [r for r in _lines(SAMPLES) if r["filter"] == "answer-line"]
    assert len(loaded.responses) == 2 * len(rows)  # repeats: 2
    by_id = {r["doc"]["question_id"]: r for r in rows}
    for r in loaded.responses:
        row = by_id[r.id]
        assert r.text == row["resps"][0][r.epoch - 1]
        assert r.correct is bool(row["exact_match"])
    details = dict(loaded.sources[0].details)
    assert details == {"filter": "answer-line", "metric": "exact_match", "id": "doc.question_id"}
    raw = _load(ResponseSource(SAMPLES, filter="raw"))
    assert not any(r.correct for r in raw.responses)  # the raw filter compares whole texts


def test_format_detection_from_content(tmp_path: Path) -> None:
    renamed = tmp_path / "run.log"
    renamed.write_bytes(EVAL.read_bytes())
    assert detect(renamed) == "inspect"
    assert detect(JSON_LOG) == "inspect"
    assert detect(SAMPLES) == "lm-eval"
    assert detect(EXAMPLE / "responses" / "synth-atlas-xl.jsonl.gz") == "jsonl"


def test_errors_name_file_and_member(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"failed-synth-cedar-pro\.eval: no header\.json"):
        _load(ResponseSource(FAILED))
    with pytest.raises(
        DataError,
        match=r"mismatch-synth-ember-30b\.eval:samples/gear_train_0001_q5_epoch_1\.json: "
        r"sample 'gear_train_0001_q5': the log's target differs",
    ):
        _load(ResponseSource(MISMATCH))
    with pytest.raises(
        DataError,
        match=r"synth-atlas-xl\.eval:header\.json: unknown scorer 'exact' \(scorers: answer_line, includes\)",
    ):
        _load(ResponseSource(EVAL, scorer="exact"))
    with pytest.raises(
        DataError,
        match=r"unknown filter 'strict-match' \(filters of grip34_l45: answer-line, raw\)",
    ):
        _load(ResponseSource(SAMPLES, filter="strict-match"))
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(EVAL.read_bytes()[: EVAL.stat().st_size // 2])
    with pytest.raises(DataError, match=r"truncated\.eval: not a ZIP archive"):
        _load(ResponseSource(truncated))
    alone = tmp_path / SAMPLES.name
    alone.write_bytes(SAMPLES.read_bytes())
    with pytest.raises(DataError, match=r"no results_.*\.json beside it"):
        _load(ResponseSource(alone))


def test_corrupt_zstd_member(tmp_path: Path) -> None:
    data = bytearray(EVAL.read_bytes())
    with zipfile.ZipFile(EVAL) as archive:
        info = archive.getinfo("header.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 20 : start + 30] = b"\0" * 10
    broken = tmp_path / "broken.eval"
    broken.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"broken\.eval:header\.json: corrupt member"):
        _load(ResponseSource(broken))


def test_csv_key_tree_with_questions() -> None:
    loaded = load_benchmark(DATA / "Dataset", with_responses=False)
    assert len(loaded.keys) == 80
    assert loaded.cells() == [
        (d, lv) for d in ("gear_train", "physical_stability") for lv in range(1, 6)
    ]
    key = loaded.keys["physical_stability_0001_q5"]
    assert key.answer.startswith("unstable; after removing block C")
    assert key.question.startswith("If topmost block C were removed")
    # the same keys as the embedded example, id for id
    example = load_benchmark(EXAMPLE, with_responses=False)
    assert all(example.keys[i].answer == k.answer for i, k in loaded.keys.items())


def test_csv_tree_scored_against_logs() -> None:
    loaded = _load(ResponseSource(EVAL), bench=DATA / "Dataset")
    assert len(loaded.responses) == 32


def test_nothing_written_next_to_the_logs() -> None:
    before = sorted(p.relative_to(LOGS) for p in LOGS.rglob("*"))
    _load(ResponseSource(LOGS / "inspect" / "synth-atlas-xl.eval"), ResponseSource(LM_DIR))
    assert sorted(p.relative_to(LOGS) for p in LOGS.rglob("*")) == before


def test_epochs_all_with_identical_epochs_changes_nothing() -> None:
    """Every item answered twice, identically: averaging per item must give the figures of one
    sample per item (raw, adjusted, differences and their bootstrap CIs to the bit; the analytic
    SE and the design effect up to rounding, since the latter counts items, not samples)."""
    from dataclasses import replace

    from keyaudit.engine.audit import run_audit
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.reports.findings import Settings
    from keyaudit.engine.rule_language.rules.rule import load_rule

    once = _load(ResponseSource(EVAL), bench=DATA / "Dataset")
    twice = replace(
        once,
        responses=once.responses + tuple(replace(r, epoch=2) for r in once.responses),
        epochs="all",
    )
    rules = [load_rule(resolve_rule_path(n)) for n in ("physical_stability", "gear_train")]
    a = run_audit(once, rules, Settings(resamples=300))
    b = run_audit(twice, rules, Settings(resamples=300))
    assert (a.settings.epochs, b.settings.epochs) == ("first", "all")
    for m, n in zip(a.models, b.models, strict=True):
        assert (m.n, m.strict, m.structured) == (n.n, n.strict, n.structured)
        assert n.n_samples == 2 * m.n_samples
    for x, y in zip(a.aggregates, b.aggregates, strict=True):
        assert (x.raw_before, x.raw_after, x.adjusted_after) == (
            y.raw_before,
            y.raw_after,
            y.adjusted_after,
        )
        for d, e in ((x.diff_before, y.diff_before), (x.diff_after, y.diff_after)):
            assert (d.estimate, d.ci_low, d.ci_high, d.verdict) == (
                e.estimate,
                e.ci_low,
                e.ci_high,
                e.verdict,
            )
            assert d.analytic_se == pytest.approx(e.analytic_se, rel=1e-12)
            assert d.design_effect == pytest.approx(e.design_effect, rel=1e-12)


def test_epochs_all_weighs_items_not_samples() -> None:
    """An item with 2 samples (1 right) and one with 1 sample (right): the cell is (0.5 + 1) / 2."""
    from keyaudit.engine.audit import _score_responses
    from keyaudit.engine.stats.aggregate import cell_table

    loaded = _load(ResponseSource(EVAL), bench=DATA / "Dataset", epochs="all")
    ref = loaded.keys["physical_stability_0001_q5"].ref
    from keyaudit.engine.load.benchmark import Response

    rows = [
        Response("physical_stability_0001_q5", "m", ref, "", True, epoch=1),
        Response("physical_stability_0001_q5", "m", ref, "", False, epoch=2),
        Response(
            "physical_stability_0002_q5",
            "m",
            loaded.keys["physical_stability_0002_q5"].ref,
            "",
            True,
        ),
    ]
    (before, _, _, _), _, _ = _score_responses(loaded, rows, {})
    (count,) = cell_table(before).cells.values()
    assert count.raw == 0.75 and (count.correct, count.n) == (3, 4)
