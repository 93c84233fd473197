"""Issue 11, points 1 and 7: the parser cache and the key cache trust nothing they did not write.

Parser tables are never unpickled, never read from the shared temp folder, and live in a private
folder (0700) whose entries are owner- and mode-checked, verified and written atomically. Key
cache entries are keyed by the key files' content, verified before use, and any bad entry is a
miss (never exit 3, never different results).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from hostile import inside, opened_files

from keyaudit.engine.load import keycache
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.rule_language.reading import parser_cache
from keyaudit.engine.rule_language.reading.grammar import CompiledGrammar, bundled_grammar_dir

GRAMMAR = bundled_grammar_dir() / "physical_stability_answer.lark"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", str(root))
    return root


def entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".tmp-"))


def valid_entry(entry: Path) -> bool:
    """An entry keyaudit wrote: a header naming the format and the payload's checksum."""
    import hashlib

    header, payload = entry.read_bytes().split(b"\n", 1)
    meta = json.loads(header)
    return meta["format"] == parser_cache.FORMAT and meta["sha256"] == (
        hashlib.sha256(payload).hexdigest()
    )


def compiled_ok() -> None:
    grammar = CompiledGrammar(GRAMMAR)
    assert grammar.parse("unstable, B beyond A").kind == "start"


# ---- point 1: the parser cache


def test_parser_tables_live_in_a_private_folder_never_in_the_temp_folder(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    # A planted Lark pickle cache for every name Lark could use: none may ever be opened.
    for name in (".lark_cache_root_x_3_11.tmp", ".lark_cache_x.tmp"):
        (shared / name).write_bytes(b"cos\nsystem\n(S'touch pwned'\ntR.")
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    with opened_files() as opened:
        compiled_ok()
        compiled_ok()
    assert not [p for p in opened if inside(p, shared)], opened
    assert sorted(p.name for p in shared.iterdir())[0].startswith(".lark_cache")
    assert len(list(shared.iterdir())) == 2  # nothing written there either
    folder = cache / "parsers"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    [entry] = entries(folder)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    header, payload = entry.read_bytes().split(b"\n", 1)
    assert json.loads(header)["format"] == parser_cache.FORMAT
    assert b"\x80" not in payload[:2]  # JSON data, not a pickle
    json.loads(payload)


def test_no_module_unpickles_anything() -> None:
    engine = Path(parser_cache.__file__).resolve().parent.parent
    for path in engine.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import pickle" not in text and "pickle.load" not in text, path


@pytest.mark.parametrize("damage", ["payload", "header", "truncate", "empty", "garbage"])
def test_a_damaged_parser_entry_is_a_miss(cache: Path, damage: str) -> None:
    compiled_ok()
    [entry] = entries(cache / "parsers")
    data = entry.read_bytes()
    header, payload = data.split(b"\n", 1)
    damaged = {
        "payload": header + b"\n" + payload.replace(b'"start"', b'"begin"', 1),
        "header": header.replace(b'"format"', b'"formal"') + b"\n" + payload,
        "truncate": data[: len(data) // 2],
        "empty": b"",
        "garbage": os.urandom(4096),
    }[damage]
    entry.write_bytes(damaged)
    compiled_ok()
    assert valid_entry(entry)  # rebuilt and rewritten


def test_a_forged_entry_with_a_valid_checksum_cannot_run_code(cache: Path) -> None:
    compiled_ok()
    [entry] = entries(cache / "parsers")
    header, _ = entry.read_bytes().split(b"\n", 1)
    forged = json.dumps(["D", "__reduce__", ["L", "os.system", "touch pwned"]]).encode()
    meta = json.loads(header)
    import hashlib

    meta["sha256"] = hashlib.sha256(forged).hexdigest()
    entry.write_bytes(json.dumps(meta).encode() + b"\n" + forged)
    compiled_ok()  # the forged tables are not Lark's: a miss, rebuilt
    assert not (Path.cwd() / "pwned").exists()


def test_entries_that_others_could_write_or_links_are_not_read(cache: Path, tmp_path: Path) -> None:
    compiled_ok()
    [entry] = entries(cache / "parsers")
    good = entry.read_bytes()
    # Group/other-writable entry: someone else may have written it. Not read; replaced.
    entry.write_bytes(b"{}\n{}")
    entry.chmod(0o666)
    compiled_ok()
    assert valid_entry(entry) and stat.S_IMODE(entry.stat().st_mode) == 0o600
    # A link in place of the entry is not followed, and the write replaces the link itself.
    outside = tmp_path / "outside.json"
    outside.write_bytes(good)
    entry.unlink()
    entry.symlink_to(outside)
    with opened_files() as opened:
        compiled_ok()
    assert not [p for p in opened if inside(p, outside)]
    assert not entry.is_symlink() and valid_entry(entry) and outside.read_bytes() == good


def test_a_cache_folder_others_can_write_is_not_used(cache: Path, tmp_path: Path) -> None:
    folder = cache / "parsers"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    compiled_ok()
    assert list(folder.iterdir()) == []
    folder.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    folder.symlink_to(elsewhere)  # a link in place of the folder: not followed
    compiled_ok()
    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_an_entry_owned_by_another_user_is_not_read(cache: Path) -> None:
    compiled_ok()
    [entry] = entries(cache / "parsers")
    entry.write_bytes(b"planted")
    os.chown(entry, 65534, 65534)
    compiled_ok()
    assert valid_entry(entry) and entry.stat().st_uid == os.geteuid()


def test_parser_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYAUDIT_CACHE_DIR", "off")
    monkeypatch.chdir(tmp_path)
    compiled_ok()
    assert list(tmp_path.iterdir()) == []


def test_an_import_changed_after_caching_rebuilds(cache: Path, tmp_path: Path) -> None:
    rule_dir = tmp_path / "rule"
    rule_dir.mkdir()
    (rule_dir / "g.lark").write_text("start: WORD\n%import .parts.WORD\n", encoding="utf-8")
    (rule_dir / "parts.lark").write_text("WORD: /[a-z]+/\n", encoding="utf-8")
    assert CompiledGrammar(rule_dir / "g.lark").parse("abc").kind == "start"
    (rule_dir / "parts.lark").write_text("WORD: /[0-9]+/\n", encoding="utf-8")
    assert CompiledGrammar(rule_dir / "g.lark").parse("123").kind == "start"


# ---- point 7: the key cache


def small_bench(root: Path) -> Path:
    (root / "keys").mkdir(parents=True)
    rows = [
        {"id": f"dom_{i:04d}_q5", "answer": f"stable; after removing block {c}"}
        for i, c in enumerate("BCDE")
    ]
    (root / "keys" / "dom.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    return root


def key_entries(cache: Path) -> list[Path]:
    return entries(cache / "keys")


def test_a_same_size_edit_with_restored_mtime_is_noticed(cache: Path, tmp_path: Path) -> None:
    bench = small_bench(tmp_path / "b")
    path = bench / "keys" / "dom.jsonl"
    assert load_benchmark(bench).keys["dom_0000_q5"].answer.endswith("block B")
    info = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("block B", "block X"), encoding="utf-8")  # same size
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # touch -r / cp -p / tar x
    assert path.stat().st_size == info.st_size and path.stat().st_mtime_ns == info.st_mtime_ns
    assert load_benchmark(bench).keys["dom_0000_q5"].answer.endswith("block X")


@pytest.mark.parametrize(
    "damage",
    ["flip-payload", "edit-answer-keep-checksum", "truncate", "garbage", "wrong-shape", "empty"],
)
def test_a_bad_key_cache_entry_is_a_miss(cache: Path, tmp_path: Path, damage: str) -> None:
    bench = small_bench(tmp_path / "b")
    expected = load_benchmark(bench).keys
    [entry] = key_entries(cache)
    data = entry.read_bytes()
    header, payload = data.split(b"\n", 1)
    if damage == "flip-payload":
        new = header + b"\n" + payload.replace(b"block B", b"block Z")
    elif damage == "edit-answer-keep-checksum":
        import hashlib
        import marshal

        columns = marshal.loads(payload)
        columns[1][0] = "forged"
        forged = marshal.dumps(columns)
        meta = json.loads(header)
        meta["sha256"] = hashlib.sha256(forged).hexdigest()
        meta["key"] = "0" * 64  # an entry for other content
        new = json.dumps(meta).encode() + b"\n" + forged
    elif damage == "truncate":
        new = data[:-7]
    elif damage == "garbage":
        new = os.urandom(len(data))
    elif damage == "wrong-shape":
        import hashlib
        import marshal

        bad = marshal.dumps(([1], [2], [3], [4], ["x"]))
        meta = json.loads(header)
        meta.update(sha256=hashlib.sha256(bad).hexdigest(), rows=1)
        new = json.dumps(meta).encode() + b"\n" + bad
    else:
        new = b""
    entry.write_bytes(new)
    assert load_benchmark(bench).keys == expected
    assert entry.read_bytes() == data  # rewritten from the files


def test_key_cache_write_is_atomic_and_killed_writes_are_cleaned(
    cache: Path, tmp_path: Path
) -> None:
    bench = small_bench(tmp_path / "b")
    load_benchmark(bench)
    folder = cache / "keys"
    stale = folder / ".tmp-deadbeef"
    stale.write_bytes(b"half an entry")
    old = os.stat(stale).st_mtime - 3600
    os.utime(stale, (old, old))
    fresh = folder / ".tmp-inprogress"
    fresh.write_bytes(b"another process writing now")
    (bench / "keys" / "dom.jsonl").write_text(
        json.dumps({"id": "dom_0001_q5", "answer": "x"}) + "\n", encoding="utf-8"
    )
    load_benchmark(bench)  # a new entry: the write prunes
    assert not stale.exists() and fresh.exists()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in key_entries(cache))


def test_key_cache_keeps_a_bounded_number_of_entries(cache: Path, tmp_path: Path) -> None:
    bench = small_bench(tmp_path / "b")
    path = bench / "keys" / "dom.jsonl"
    for n in range(keycache.KEEP + 3):
        path.write_text(json.dumps({"id": f"dom_{n:04d}_q5", "answer": "x"}) + "\n")
        load_benchmark(bench)
    assert len(key_entries(cache)) == keycache.KEEP


def test_key_cache_reads_and_writes_only_its_folder_and_the_benchmark(
    cache: Path, tmp_path: Path
) -> None:
    bench = small_bench(tmp_path / "b")
    with opened_files() as opened:
        load_benchmark(bench)
        load_benchmark(bench)
    absolute = [p for p in opened if os.path.isabs(p)]
    outside = [
        p
        for p in absolute
        if not inside(p, bench, cache) and not inside(p, Path(sys.prefix), Path(sys.base_prefix))
    ]
    assert outside == [], outside
