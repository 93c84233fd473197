"""The loaded responses are cached (issue 38, item 2: half a warm full-size check was the load):
keyed by every input file's content and real path, every load setting and the loading code; a
changed file, link or setting is loaded again; a damaged entry is a miss; a file that changes
while it is read is not stored; ``off`` turns it off."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from keyaudit.engine.load import benchmark as benchmark_module
from keyaudit.engine.load import response_cache
from keyaudit.engine.load.benchmark import load_benchmark


@pytest.fixture
def cache(private_cache: Path) -> Path:
    return private_cache


def _bench(root: Path, answer: str = "stable") -> Path:
    """A benchmark of 12 keys and two models' responses."""
    (root / "keys").mkdir(parents=True)
    (root / "responses").mkdir()
    ids = [f"dom_{i:04d}_q{level}" for level in (4, 5) for i in range(1, 7)]
    keys = [{"id": i, "answer": "stable" if n % 2 else "unstable"} for n, i in enumerate(ids)]
    (root / "keys" / "k.jsonl").write_text("".join(json.dumps(k) + "\n" for k in keys), "utf-8")
    for model in ("m1", "m2"):
        rows = [
            {"id": k["id"], "model": model, "response": f"ANSWER: {answer} {n}", "correct": n % 3 == 0}
            for n, k in enumerate(keys)
        ]
        (root / "responses" / f"{model}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), "utf-8"
        )
    return root


def _state(bench) -> tuple:
    t = bench.responses
    return (
        t.models, [c.tolist() for c in (t.model, t.item, t.epoch, t.correct, t.computed)],
        [c.dtype.str for c in (t.model, t.item, t.epoch, t.correct, t.computed)],
        list(t.texts), {m: str(p) for m, p in bench.response_files.items()}, bench.sources,
    )


def _refuse(*args, **kwargs):
    raise AssertionError("loaded responses the cache holds")


def test_a_second_load_comes_from_the_cache_and_is_the_same(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _bench(tmp_path / "b")
    first = _state(load_benchmark(root))
    assert len(list((cache / response_cache.FOLDER).iterdir())) == 1
    monkeypatch.setattr(benchmark_module, "load_responses", _refuse)
    second = load_benchmark(root)
    assert _state(second) == first
    second.responses.item[0] = second.responses.item[0]  # the columns are writable, as a load's
    assert isinstance(second.responses.model, np.ndarray)


def test_a_changed_file_or_setting_is_loaded_again(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _bench(tmp_path / "b")
    load_benchmark(root)
    calls = []
    real = benchmark_module.load_responses
    monkeypatch.setattr(
        benchmark_module, "load_responses", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    path = root / "responses" / "m1.jsonl"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("stable 0", "stabel 0"), encoding="utf-8")  # same size
    changed = load_benchmark(root)
    assert calls == [1] and "ANSWER: stabel 0" in changed.responses.texts
    load_benchmark(root, epochs="all")  # another setting
    load_benchmark(root, text_cells=[("dom", 5)])
    assert calls == [1, 1, 1]
    load_benchmark(root)  # the edited file, cached now
    assert calls == [1, 1, 1]


def test_a_link_that_leads_elsewhere_is_another_key(tmp_path: Path) -> None:
    root = _bench(tmp_path / "b")
    other = _bench(tmp_path / "other")
    files = [root / "responses" / "m1.jsonl"]
    before = response_cache.load_key(root, files, ())
    files[0].unlink()
    files[0].symlink_to(other / "responses" / "m1.jsonl")  # the same bytes, another file
    assert response_cache.load_key(root, files, ()) != before
    assert response_cache.load_key(root, files, ()) != response_cache.load_key(root, files, ("all",))


def test_a_damaged_entry_is_a_miss(cache: Path, tmp_path: Path) -> None:
    root = _bench(tmp_path / "b")
    first = _state(load_benchmark(root))
    (entry,) = (cache / response_cache.FOLDER).iterdir()
    entry.write_bytes(entry.read_bytes()[:-7] + b"0000000")
    assert _state(load_benchmark(root)) == first


def test_an_entry_of_another_shape_is_a_miss(tmp_path: Path) -> None:
    keys = tuple(range(3))
    good = ((("m",), (("|i1", b"\x00"), ("|i1", b"\x02"), ("|i1", b"\x01"), ("|b1", b"\x01"),
                      ("|b1", b"\x00")), ["t"], (("m", "/x"),), ()))
    assert response_cache._decode(good, keys)[0].texts == ["t"]
    for bad in (
        (("m",), good[1], [1], good[3], good[4]),  # a text that is not a string
        (("m",), (good[1][0], ("|i1", b"\x05"), *good[1][2:]), ["t"], good[3], good[4]),  # item 5 of 3
        (("m",), (("<f8", b"\x00" * 8), *good[1][1:]), ["t"], good[3], good[4]),  # a float column
        (("m",), good[1], ["t", "u"], good[3], good[4]),  # lengths differ
    ):
        with pytest.raises((TypeError, ValueError)):
            response_cache._decode(bad, keys)


def test_a_file_changed_while_it_is_read_is_not_stored(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _bench(tmp_path / "b")
    real = benchmark_module.load_responses

    def changing(*args, **kwargs):
        loaded = real(*args, **kwargs)
        path = root / "responses" / "m2.jsonl"
        path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        return loaded

    monkeypatch.setattr(benchmark_module, "load_responses", changing)
    load_benchmark(root)
    assert not list((cache / response_cache.FOLDER).iterdir())


def test_off_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", "off")
    root = _bench(tmp_path / "b")
    first = _state(load_benchmark(root))
    assert _state(load_benchmark(root)) == first
    assert not (tmp_path / "cache").exists()
