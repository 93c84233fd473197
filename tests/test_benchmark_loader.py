"""Loader errors: one line naming file:line, exit code 2, nothing skipped silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keyaudit.engine.errors import DataError
from keyaudit.engine.load.benchmark import load_benchmark

KEY_S = "stable; after removing block E, every cumulative center of mass remains within its supporting base"


def write_jsonl(path: Path, rows: list[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    write_jsonl(
        tmp_path / "keys" / "physical_stability.jsonl",
        [
            {"id": "physical_stability_0001_q5", "answer": KEY_S},
            {"id": "physical_stability_0001_q4", "answer": "stable"},
            {"id": "physical_stability_0002_q5", "answer": KEY_S},
        ],
    )
    write_jsonl(
        tmp_path / "responses" / "m1.jsonl",
        [
            {
                "id": "physical_stability_0001_q5",
                "model": "M1",
                "response": "ANSWER: stable",
                "correct": False,
            },
            {
                "id": "physical_stability_0001_q4",
                "model": "M1",
                "response": "x\nANSWER: Stable",
                "correct": True,
            },
        ],
    )
    return tmp_path


def test_loads_a_valid_benchmark(bench: Path) -> None:
    loaded = load_benchmark(bench)
    assert len(loaded.keys) == 3
    assert loaded.models == ("M1",)
    ref = loaded.keys["physical_stability_0001_q5"].ref
    assert (ref.domain, ref.cluster, ref.level) == (
        "physical_stability",
        "physical_stability_0001",
        5,
    )
    assert [r.correct for r in loaded.responses] == [False, True]
    assert loaded.computed_models == ()


def test_missing_correct_is_computed_by_the_strict_scorer_and_said(bench: Path) -> None:
    write_jsonl(
        bench / "responses" / "m1.jsonl",
        [{"id": "physical_stability_0001_q4", "model": "M1", "response": "ANSWER:  STABLE "}],
    )
    loaded = load_benchmark(bench)
    assert loaded.responses[0].correct is True
    assert loaded.computed_models == ("M1",)


def test_keys_only_benchmark_loads(bench: Path) -> None:
    import shutil

    shutil.rmtree(bench / "responses")
    loaded = load_benchmark(bench)
    assert loaded.responses == () and loaded.models == ()


def test_roster_reports_missing_models(bench: Path) -> None:
    (bench / "benchmark.toml").write_text(
        'name = "t"\nroster = ["M1", "M2", "M3"]\n', encoding="utf-8"
    )
    assert load_benchmark(bench).missing_models == ("M2", "M3")


def test_custom_field_names_and_id_pattern(tmp_path: Path) -> None:
    (tmp_path / "benchmark.toml").write_text(
        'id_pattern = \'^(?P<domain>[a-z]+)-(?P<image>\\d+)-(?P<level>\\d)$\'\n[fields]\nid = "qid"\nanswer = "gt"\n',
        encoding="utf-8",
    )
    write_jsonl(tmp_path / "keys" / "k.jsonl", [{"qid": "gear-7-5", "gt": "x"}])
    key = load_benchmark(tmp_path).keys["gear-7-5"]
    assert (key.ref.domain, key.ref.cluster, key.ref.level, key.answer) == (
        "gear",
        "gear_7",
        5,
        "x",
    )


CASES = [
    (
        "keys",
        ['{"id": "physical_stability_0003_q5", "answer": '],
        "physical_stability.jsonl:4:",
        "malformed JSON",
    ),
    (
        "keys",
        [{"id": "physical_stability_0003_q5"}],
        "physical_stability.jsonl:4:",
        "missing field 'answer'",
    ),
    (
        "keys",
        [{"id": "physical_stability_0001_q5", "answer": "x"}],
        "physical_stability.jsonl:4:",
        "duplicate id",
    ),
    (
        "keys",
        [{"id": "badid", "answer": "x"}],
        "physical_stability.jsonl:4:",
        "does not match the id pattern",
    ),
    ("keys", [{"id": 7, "answer": "x"}], "physical_stability.jsonl:4:", "field 'id' must be a str"),
    (
        "responses",
        [{"id": "physical_stability_0009_q5", "model": "M1", "response": "r", "correct": True}],
        "m1.jsonl:3:",
        "has no key",
    ),
    (
        "responses",
        [{"id": "physical_stability_0001_q5", "model": "M1", "response": "r", "correct": True}],
        "m1.jsonl:3:",
        "duplicate id 'physical_stability_0001_q5' for model 'M1' (also at line 1)",
    ),
    (
        "responses",
        [{"id": "physical_stability_0002_q5", "model": "M1", "correct": True}],
        "m1.jsonl:3:",
        "missing field 'response'",
    ),
    (
        "responses",
        [{"id": "physical_stability_0002_q5", "model": "M1", "response": "r", "correct": "yes"}],
        "m1.jsonl:3:",
        "'correct' must be a bool",
    ),
    ("responses", ["[1, 2]"], "m1.jsonl:3:", "expected a JSON object"),
]


@pytest.mark.parametrize(("folder", "extra", "where", "what"), CASES)
def test_loader_errors_name_file_and_line(
    bench: Path, run_cli, folder: str, extra: list, where: str, what: str
) -> None:
    path = bench / folder / ("physical_stability.jsonl" if folder == "keys" else "m1.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    write_jsonl(path, [*lines, *extra])
    with pytest.raises(DataError) as raised:
        load_benchmark(bench)
    message = str(raised.value)
    assert where in message and what in message
    assert "\n" not in message
    result = run_cli("check", "physical_stability", "--bench", str(bench))
    assert result.code == 2
    assert result.err.count("\n") == 1 and where in result.err and what in result.err
    assert "Traceback" not in result.err


def _row(item: int, level: int, model: str, correct: bool | None = None) -> dict:
    row = {
        "id": f"physical_stability_000{item}_q{level}",
        "model": model,
        "response": f"{model} says\nANSWER: stable",
    }
    if correct is not None:
        row["correct"] = correct
    return row


MIXED = [
    _row(1, 5, "M1", False),
    _row(1, 5, "M2", True),
    _row(1, 4, "M3"),
    _row(1, 4, "M1", True),
    _row(2, 5, "M2", False),
    _row(1, 4, "M2"),
]


def _loaded(bench: Path) -> list[tuple[str, str, str, bool, bool, int]]:
    loaded = load_benchmark(bench)
    return sorted(
        (r.model, r.id, r.text, r.correct, r.correct_computed, r.epoch) for r in loaded.responses
    )


def test_one_jsonl_file_of_several_models_reads_as_one_file_per_model(bench: Path) -> None:
    """The ``model`` field of each line says whose answer it is: one file of three models,
    interleaved, loads the same responses as three files of one model each, each model a run
    of its own in order of first appearance (the old loader refused the second model)."""
    (bench / "responses" / "m1.jsonl").unlink()
    for model in ("M1", "M2", "M3"):
        write_jsonl(
            bench / "responses" / f"{model}.jsonl", [r for r in MIXED if r["model"] == model]
        )
    split = _loaded(bench)
    for model in ("M1", "M2", "M3"):
        (bench / "responses" / f"{model}.jsonl").unlink()
    write_jsonl(bench / "responses" / "all.jsonl", MIXED)
    loaded = load_benchmark(bench)
    assert _loaded(bench) == split and len(split) == 6
    assert loaded.models == ("M1", "M2", "M3")
    assert [(s.path, s.model, s.samples) for s in loaded.sources] == [
        ("responses/all.jsonl", "M1", 2),
        ("responses/all.jsonl", "M2", 3),
        ("responses/all.jsonl", "M3", 1),
    ]
    assert loaded.computed_models == ("M2", "M3")


def test_one_csv_file_of_several_models_reads_as_they_are(bench: Path) -> None:
    import csv

    (bench / "responses" / "m1.jsonl").unlink()
    with open(bench / "responses" / "all.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model", "response", "correct"])
        for r in MIXED:
            writer.writerow([r["id"], r["model"], r["response"], r.get("correct", "")])
    csv_rows = _loaded(bench)
    (bench / "responses" / "all.csv").unlink()
    write_jsonl(bench / "responses" / "all.jsonl", MIXED)
    assert csv_rows == _loaded(bench)
    assert load_benchmark(bench).models == ("M1", "M2", "M3")


def test_a_model_split_over_several_files_is_read_whole(bench: Path) -> None:
    """Files split by some other key (here by level), each holding every model: valid."""
    (bench / "responses" / "m1.jsonl").unlink()
    write_jsonl(bench / "responses" / "l4.jsonl", [r for r in MIXED if r["id"].endswith("q4")])
    write_jsonl(bench / "responses" / "l5.jsonl", [r for r in MIXED if r["id"].endswith("q5")])
    split = _loaded(bench)
    (bench / "responses" / "l4.jsonl").unlink()
    (bench / "responses" / "l5.jsonl").unlink()
    write_jsonl(bench / "responses" / "all.jsonl", MIXED)
    assert split == _loaded(bench)


def test_duplicate_model_id_epoch_stays_an_error(bench: Path) -> None:
    (bench / "responses" / "m1.jsonl").unlink()
    write_jsonl(bench / "responses" / "all.jsonl", [*MIXED, _row(1, 5, "M2", False)])
    with pytest.raises(DataError) as raised:
        load_benchmark(bench)
    message = str(raised.value)
    assert "all.jsonl:7:" in message
    assert "duplicate id 'physical_stability_0001_q5' for model 'M2' (also at line 2)" in message
    # across files: the second file's line, and the file that held it first
    write_jsonl(bench / "responses" / "all.jsonl", MIXED)
    write_jsonl(bench / "responses" / "more.jsonl", [_row(2, 5, "M1"), _row(1, 4, "M3")])
    with pytest.raises(DataError) as raised:
        load_benchmark(bench)
    message = str(raised.value)
    assert "more.jsonl:2:" in message and "\n" not in message
    assert "duplicate sample: model 'M3', id 'physical_stability_0001_q4', epoch 1" in message
    assert f"(also at {bench / 'responses' / 'all.jsonl'})" in message


def test_a_display_name_for_a_file_of_several_models_is_an_error(bench: Path) -> None:
    """``model = ...`` of a source renames a file's one model; several would merge into one."""
    from keyaudit.engine.load.responses.records import ResponseSource

    (bench / "responses" / "m1.jsonl").unlink()
    write_jsonl(bench / "responses" / "all.jsonl", MIXED)
    source = ResponseSource(bench / "responses" / "all.jsonl", model="Renamed")
    with pytest.raises(DataError) as raised:
        load_benchmark(bench, responses=(source,))
    message = str(raised.value)
    assert "all.jsonl:2:" in message and "several models" in message
    write_jsonl(bench / "responses" / "all.jsonl", [r for r in MIXED if r["model"] == "M2"])
    assert load_benchmark(bench, responses=(source,)).models == ("Renamed",)


def test_bad_benchmark_toml(bench: Path, run_cli) -> None:
    (bench / "benchmark.toml").write_text("nam = 'x'\n", encoding="utf-8")
    result = run_cli("check", "physical_stability", "--bench", str(bench))
    assert result.code == 2 and "unknown key 'nam'" in result.err
    (bench / "benchmark.toml").write_text("name = 'x\n", encoding="utf-8")
    result = run_cli("check", "physical_stability", "--bench", str(bench))
    assert result.code == 2 and "benchmark.toml:1:" in result.err and "TOML error" in result.err
    (bench / "benchmark.toml").write_text(
        "id_pattern = '^(?P<domain>.+)_(?P<level>\\d+)$'\n", encoding="utf-8"
    )
    result = run_cli("check", "physical_stability", "--bench", str(bench))
    assert result.code == 2 and "lacks the named group(s) image" in result.err


def test_missing_directory_and_empty_keys(tmp_path: Path, run_cli) -> None:
    result = run_cli("check", "physical_stability", "--bench", str(tmp_path / "nope"))
    assert result.code == 2 and "benchmark directory not found" in result.err
    result = run_cli("check", "physical_stability", "--bench", str(tmp_path))
    assert result.code == 2 and "no keys" in result.err


def test_key_cache_gives_the_same_corpus_and_follows_changes(
    bench: Path, tmp_path_factory, monkeypatch
) -> None:
    cache = tmp_path_factory.mktemp("cache-test")
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", str(cache))
    first = load_benchmark(bench, with_responses=False).keys
    assert len(list((cache / "keys").glob("*.keys"))) == 1
    second = load_benchmark(bench, with_responses=False).keys
    assert second == first and list(second) == list(first)
    path = bench / "keys" / "physical_stability.jsonl"
    write_jsonl(
        path,
        [
            *path.read_text(encoding="utf-8").splitlines(),
            {"id": "physical_stability_0009_q5", "answer": "new"},
        ],
    )
    third = load_benchmark(bench, with_responses=False).keys
    assert third["physical_stability_0009_q5"].answer == "new"
    # A file that became malformed is reported again, never served from the cache.
    write_jsonl(path, [*path.read_text(encoding="utf-8").splitlines(), "{oops"])
    with pytest.raises(DataError, match="malformed JSON"):
        load_benchmark(bench, with_responses=False)


def test_key_cache_can_be_turned_off(bench: Path, tmp_path_factory, monkeypatch) -> None:
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", "off")
    assert len(load_benchmark(bench, with_responses=False).keys) == 3
