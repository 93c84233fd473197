"""Issue 11, points 5, 8 and 11 (data): benchmark files that are not files, bombs, and malformed
data are one-line errors naming the file (and line, and column where there is one), exit 2;
nothing is skipped silently, memory stays bounded, and a FIFO is never opened.
"""

from __future__ import annotations

import gzip
import json
import os
import zipfile
import zlib
from pathlib import Path

import pytest
from hostile import assert_one_line_error, run_keyaudit

KEY = {"id": "dom_0001_q5", "answer": "stable"}
MB = 1024 * 1024


def bench(root: Path, keys: list | None = None) -> Path:
    (root / "keys").mkdir(parents=True)
    rows = keys if keys is not None else [KEY]
    (root / "keys" / "k.jsonl").write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    return root


# ---- point 5: names that are not files


@pytest.mark.parametrize("folder", ["keys", "responses"])
@pytest.mark.parametrize(
    "kind, fragment",
    [
        ("dangling", "dangling symbolic link"),
        ("loop", "symbolic link loop"),
        ("directory", "is a directory"),
        ("device", "character device"),
    ],
)
def test_a_jsonl_name_that_is_not_a_file_is_an_error(
    tmp_path: Path, run_cli, folder: str, kind: str, fragment: str
) -> None:
    root = bench(tmp_path / "b")
    (root / "responses").mkdir(exist_ok=True)
    target = root / folder / "x.jsonl"
    if kind == "dangling":
        target.symlink_to(root / ".git" / "annex" / "objects" / "missing")
    elif kind == "loop":
        target.symlink_to(root / folder / "y.jsonl")
        (root / folder / "y.jsonl").symlink_to(target)
    elif kind == "directory":
        target.mkdir()
    else:
        target.symlink_to("/dev/null")
    result = run_cli("flag", "--bench", str(root))
    line = assert_one_line_error(result.err, result.code, "x.jsonl", fragment)
    if kind == "dangling":
        assert "git annex get" in line and "dvc pull" in line


def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    root = bench(tmp_path / "b")
    os.mkfifo(root / "keys" / "z.jsonl")  # opening it for reading would block forever
    run = run_keyaudit("flag", "--bench", str(root), timeout=60)
    assert_one_line_error(run.err, run.code, "z.jsonl", "FIFO")


@pytest.mark.parametrize("kind", ["dangling", "directory"])
def test_a_benchmark_toml_that_is_not_a_file_is_an_error(
    tmp_path: Path, run_cli, kind: str
) -> None:
    root = bench(tmp_path / "b")
    if kind == "dangling":
        (root / "benchmark.toml").symlink_to(root / "nowhere.toml")
    else:
        (root / "benchmark.toml").mkdir()
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(
        result.err, result.code, "benchmark.toml", "dangling" if kind == "dangling" else "directory"
    )


@pytest.mark.parametrize("folder", ["keys", "responses"])
def test_a_dangling_data_folder_is_an_error(tmp_path: Path, run_cli, folder: str) -> None:
    root = bench(tmp_path / "b")
    if folder == "keys":
        (root / "keys" / "k.jsonl").rename(tmp_path / "k.jsonl")
        (root / "keys").rmdir()
    (root / folder).symlink_to(tmp_path / "not-fetched")
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, folder, "dangling symbolic link")


def test_a_dangling_key_csv_is_an_error(tmp_path: Path, run_cli) -> None:
    root = tmp_path / "b"
    (root / "Dataset" / "dom_dataset_1").mkdir(parents=True)
    (root / "Dataset" / "dom_dataset_1" / "answer_key.csv").symlink_to(tmp_path / "missing.csv")
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "answer_key.csv", "dangling symbolic link")


# ---- point 8: bombs


def gzip_bomb(path: Path, megabytes: int, newline: bool = False) -> None:
    """``megabytes`` MB of 'x' in one line, as concatenated gzip members of 1 MB each."""
    member = gzip.compress(b"x" * MB, compresslevel=9)
    with path.open("wb") as out:
        out.write(gzip.compress(b'{"id": "dom_0001_q5", "answer": "'))
        for _ in range(megabytes):
            out.write(member)
        out.write(gzip.compress(b'"}' + (b"\n" if newline else b"")))


def test_a_gzip_bomb_is_stopped_at_the_line_limit(tmp_path: Path) -> None:
    root = tmp_path / "b"
    (root / "keys").mkdir(parents=True)
    bomb = root / "keys" / "k.jsonl.gz"
    gzip_bomb(bomb, 400)  # 0.6 MB on disk, one 400 MB line
    assert bomb.stat().st_size < 2 * MB
    baseline = run_keyaudit("flag", "--bench", str(bench(tmp_path / "small")))
    run = run_keyaudit("flag", "--bench", str(root))
    assert_one_line_error(run.err, run.code, "k.jsonl.gz:1:", "line longer than 16,777,216 bytes")
    # unbounded it was 4x the line (bytes, text, JSON): here a 16 MiB buffer over the baseline
    assert run.peak_mb < baseline.peak_mb + 120, (run.peak_mb, baseline.peak_mb)


def test_an_eval_member_declaring_a_huge_size_is_not_inflated(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "run.eval"
    log.parent.mkdir()
    header = {
        "status": "success",
        "eval": {"model": "m", "scorers": [{"name": "s"}]},
    }
    with zipfile.ZipFile(log, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("header.json", json.dumps(header))
        with archive.open("samples/1_epoch_1.json", "w", force_zip64=True) as member:
            chunk = b" " * MB
            for _ in range(300):
                member.write(chunk)
    root = bench(tmp_path / "b")
    run = run_keyaudit("flag", "--bench", str(root), "--responses", str(log))
    assert_one_line_error(run.err, run.code, "samples/1_epoch_1.json", "at most 268,435,456")
    assert run.peak_mb < 400


# ---- point 11: malformed data, one line with its place


@pytest.mark.parametrize(
    "line, fragment, where",
    [
        (
            '{"id": "dom_0001_q5", "answer": ' + "[" * 100_000 + "]" * 100_000 + "}",
            "nested too deeply",
            "k.jsonl:2:",
        ),
        ('{"id": "dom_0001_q5", "answer": ' + "1" * 5000 + "}", "4300 digits", "k.jsonl:2:"),
        (b'{"id": "dom_0001_q5", "answer": "\xff"}', "not UTF-8 text (byte 0xff)", "k.jsonl:2:34:"),
        ('{"id": "dom_0001_q5", "answer": "\\udc80"}', "lone surrogate", "k.jsonl:2:"),
        ('{"id": "dom_0001_q5", "answer": [1, 2]}', "must be a str", "k.jsonl:2:"),
    ],
)
def test_malformed_key_lines(tmp_path: Path, run_cli, line, fragment: str, where: str) -> None:
    root = bench(tmp_path / "b", [{"id": "dom_0000_q5", "answer": "a"}])
    with (root / "keys" / "k.jsonl").open("ab") as out:
        out.write((line.encode() if isinstance(line, str) else line) + b"\n")
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, where, fragment)


@pytest.mark.parametrize(
    "toml, fragment",
    [
        ("name = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        (
            "name = 'x'\nid_pattern = '^(?P<domain>a{99999999999})(?P<image>)(?P<level>)'\n",
            "repetition",
        ),
        (
            "id_pattern = '^(?P<domain>.+)_(?P<image>\\d+)_q(?P<level>\\d*)$'\n",
            "'level' matched nothing",
        ),
        (
            "id_pattern = '^(?P<domain>.+)_(?P<image>\\d+)(?:_q(?P<level>\\d+))?$'\n",
            "'level' matched nothing",
        ),
        (b"name = '\xff'\n", "not UTF-8 text"),
    ],
)
def test_malformed_benchmark_toml(tmp_path: Path, run_cli, toml, fragment: str) -> None:
    item = (
        "dom_0001"
        if b"?:_q" in (toml.encode() if isinstance(toml, str) else toml)
        else "dom_0001_q"
    )
    root = bench(tmp_path / "b", [{"id": item, "answer": "a"}])
    data = toml.encode() if isinstance(toml, str) else toml
    (root / "benchmark.toml").write_bytes(data)
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, fragment)


def test_a_rule_toml_nested_thousands_deep(tmp_path: Path, run_cli) -> None:
    rule = tmp_path / "rule.toml"
    rule.write_text("x = " + "{a=" * 5000 + "1" + "}" * 5000 + "\n", encoding="utf-8")
    result = run_cli("score", str(rule), "--cases", "-", stdin="")
    assert_one_line_error(result.err, result.code, "rule.toml", "nested too deeply")


def test_a_newline_in_a_file_name_does_not_split_the_error_line(tmp_path: Path, run_cli) -> None:
    root = bench(tmp_path / "b")
    bad = root / "keys" / "evil\nname\x1b[31m.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    result = run_cli("flag", "--bench", str(root))
    line = assert_one_line_error(result.err, result.code, "evil\\nname\\x1b[31m.jsonl:1:2:")
    assert "\x1b" not in line


def test_invalid_utf8_in_a_csv_names_its_line(tmp_path: Path, run_cli) -> None:
    root = tmp_path / "b"
    (root / "keys").mkdir(parents=True)
    (root / "keys" / "k.csv").write_bytes(b"id,answer\ndom_0001_q5,stable\ndom_0002_q5,\xff\n")
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "k.csv:", "not UTF-8")


def test_a_corrupt_gzip_is_a_one_line_error(tmp_path: Path, run_cli) -> None:
    root = tmp_path / "b"
    (root / "keys").mkdir(parents=True)
    data = gzip.compress(b'{"id": "dom_0001_q5", "answer": "a"}\n' * 1000)
    (root / "keys" / "k.jsonl.gz").write_bytes(data[:40] + bytes(len(data) - 40))
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "k.jsonl.gz")
    assert zlib  # the reader names zlib's and gzip's errors alike
