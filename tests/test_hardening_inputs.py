"""Issue 37, inputs: an inspect epoch past 64 bits, an adjudications file read streaming and
bounded, ``--responses`` globs that meet links to themselves, ``--responses ''``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import assert_one_line_error

HEADER = {"status": "success", "eval": {"model": "m", "scorers": [{"name": "s"}]}}


def bench(root: Path, n: int = 2) -> Path:
    """A benchmark with keys dom_0001_q5 ... of status 'stable'."""
    (root / "keys").mkdir(parents=True)
    (root / "keys" / "k.jsonl").write_text(
        "".join(
            json.dumps({"id": f"dom_{i:04d}_q5", "answer": "stable"}) + "\n"
            for i in range(1, n + 1)
        ),
        encoding="utf-8",
    )
    return root


def sample(i: int, epoch: object = 1) -> dict:
    return {
        "id": f"dom_{i:04d}_q5",
        "epoch": epoch,
        "output": {"completion": "ANSWER: stable"},
        "scores": {"s": {"value": "C"}},
    }


# ---- inspect epochs


@pytest.mark.parametrize("epoch", [2**64, 2**63, -(2**64), 0])
def test_an_epoch_beyond_64_bits_is_a_one_line_error(tmp_path: Path, run_cli, epoch: int) -> None:
    """An epoch of 2**64 ended in OverflowError (exit 3) when the epoch column widened."""
    log = tmp_path / "run.json"
    log.write_text(json.dumps({**HEADER, "samples": [sample(1), sample(2, epoch)]}), encoding="utf-8")
    for epochs in ("first", "all"):
        result = run_cli(
            "flag", "--bench", str(bench(tmp_path / f"b-{epochs}")), "--responses", str(log),
            "--epochs", epochs,
        )
        assert_one_line_error(result.err, result.code, "run.json:", "invalid 'epoch'")


def test_the_largest_epoch_is_read(tmp_path: Path, run_cli) -> None:
    log = tmp_path / "run.json"
    log.write_text(json.dumps({**HEADER, "samples": [sample(1), sample(2, 2**63 - 1)]}), encoding="utf-8")
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(log), "--epochs", "all")
    assert result.code == 0, result.err


# ---- adjudications


def test_an_adjudications_file_is_read_a_row_at_a_time(tmp_path: Path) -> None:
    """2.4 M unlabelled rows ran out of memory: every row was held before any was looked at.
    Here 3,000 unlabelled rows with 100,000-character notes (a 300 MB file, gzipped to a few
    hundred KB) cost no more memory than a file of one."""
    import gzip

    from hostile import run_keyaudit, status_rule

    root = bench(tmp_path / "b", 4)
    (root / "responses").mkdir()
    (root / "responses" / "m.jsonl").write_text(
        "".join(
            json.dumps({"id": f"dom_{i:04d}_q5", "model": "m", "response": "ANSWER: stable"}) + "\n"
            for i in range(1, 5)
        ),
        encoding="utf-8",
    )
    rule = tmp_path / "rule" / "rule.toml"
    rule.parent.mkdir()
    (rule.parent / "k.lark").write_text("start: status\nstatus: STATUS\nSTATUS: /stable|unstable/\n")
    (rule.parent / "a.lark").write_text(
        "start: _item*\n_item: status | WORD\nstatus: STATUS\nSTATUS.3: /stable|unstable/\n"
        "WORD: /\\S+/\n%ignore /\\s+/\n"
    )
    rule.write_text(status_rule(), encoding="utf-8")

    def adjudications(name: str, rows: int) -> Path:
        row = json.dumps({"id": "dom_0001_q5", "model": "m", "key": "stable", "accept": None,
                          "note": "x" * 100_000}) + "\n"
        path = tmp_path / name
        with gzip.open(path, "wt", encoding="utf-8") as stream:
            for _ in range(rows):
                stream.write(row)
        return path

    peaks = []
    for name, rows in (("one.jsonl.gz", 1), ("many.jsonl.gz", 3_000)):
        run = run_keyaudit(
            "check", str(rule), "--bench", str(root), "--resamples", "20", "--adjudications",
            str(adjudications(name, rows)), env={"KEYAUDIT_CACHE_DIR": "off"},
        )
        assert run.code == 0, run.err
        peaks.append(run.peak_mb)
    assert peaks[1] < peaks[0] + 100, peaks  # held whole: about 300 MB more


def test_labelled_rows_are_bounded(tmp_path: Path, monkeypatch) -> None:
    from keyaudit.engine.errors import DataError
    from keyaudit.engine.load import adjudications

    path = tmp_path / "a.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"dom_{i:04d}_q5", "model": "m", "key": "stable", "accept": True}) + "\n"
            for i in range(1, 6)
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(adjudications, "MAX_LABELLED_ROWS", 3)
    with pytest.raises(DataError, match=r"a\.jsonl:4: more labelled rows than keyaudit keeps"):
        adjudications.read_adjudications(path)


# ---- --responses globs and empty paths


def test_a_recursive_glob_does_not_follow_links_to_folders(tmp_path: Path, monkeypatch) -> None:
    """'logs/**' on a folder holding links to itself: Python's glob followed them, 2^40 paths.
    Each listing is counted here, and the count stopped well before that: the real tree has
    four folders."""
    import os

    from keyaudit.engine.load.responses.records import ResponseSource
    from keyaudit.engine.load.responses.sources import glob_matches

    logs = tmp_path / "logs"
    (logs / "run" / "deep").mkdir(parents=True)
    for folder in (logs, logs / "run", logs / "run" / "deep"):
        (folder / "m.jsonl").write_text("{}\n", encoding="utf-8")
    for name in ("loop", "again", "more"):
        (logs / name).symlink_to(logs)
        (logs / "run" / name).symlink_to(logs)
    listed = 0
    real_scandir = os.scandir

    def counting(path="."):
        nonlocal listed
        listed += 1
        if listed > 1000:
            raise AssertionError("the glob lists folders without end")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    for pattern, expected in (
        ("logs/**/*.jsonl", {"logs/m.jsonl", "logs/run/m.jsonl", "logs/run/deep/m.jsonl"}),
        ("logs/**/m.jsonl", {"logs/m.jsonl", "logs/run/m.jsonl", "logs/run/deep/m.jsonl"}),
        ("logs/*/m.jsonl", {"logs/run/m.jsonl", "logs/loop/m.jsonl", "logs/again/m.jsonl", "logs/more/m.jsonl"}),
    ):
        found = glob_matches(ResponseSource(tmp_path / pattern, glob=True))
        assert {str(p.relative_to(tmp_path)) for p in found} == expected, pattern
    assert listed < 100


def test_an_empty_responses_path_is_a_usage_error(tmp_path: Path, run_cli, monkeypatch) -> None:
    """--responses '' read the whole current folder tree (Path('') is '.')."""
    root = bench(tmp_path / "b")
    monkeypatch.chdir(tmp_path)
    for value in ("", "format=jsonl: ", "  "):
        result = run_cli("flag", "--bench", str(root), "--responses", value)
        assert_one_line_error(result.err, result.code, "--responses")
    result = run_cli("flag", "--bench", str(root), "--responses", ".")
    assert "names no file or folder" not in result.err  # '.' is said on purpose


def test_the_order_of_responses_options_changes_no_byte(tmp_path: Path, run_cli) -> None:
    """--responses a --responses b and --responses b --responses a gave the models, the models
    found and the worked examples in different orders."""
    from hostile import status_rule

    root = bench(tmp_path / "b", 4)
    rule = tmp_path / "rule" / "rule.toml"
    rule.parent.mkdir()
    (rule.parent / "k.lark").write_text("start: status\nstatus: STATUS\nSTATUS: /stable|unstable/\n")
    (rule.parent / "a.lark").write_text(
        "start: _item*\n_item: status | WORD\nstatus: STATUS\nSTATUS.3: /stable|unstable/\n"
        "WORD: /\\S+/\n%ignore /\\s+/\n"
    )
    rule.write_text(status_rule(), encoding="utf-8")
    files = []
    for n, model in enumerate(("zeta", "alpha", "mid")):
        path = tmp_path / f"{model}.jsonl"
        path.write_text(
            "".join(
                json.dumps({"id": f"dom_{i:04d}_q5", "model": model,
                            "response": f"ANSWER: {'stable' if (i + n) % 2 else 'unstable'}"}) + "\n"
                for i in range(1, 5)
            ),
            encoding="utf-8",
        )
        files.append(str(path))
    written = []
    # a first run proves the rule into the proof cache; the terminal says so only that once
    orders = (files, files, files[::-1], files[1:] + files[:1])
    for order in orders:
        target, markdown = tmp_path / "out.json", tmp_path / "out.md"  # the same names each time
        args = [a for f in order for a in ("--responses", f)]
        result = run_cli(
            "check", str(rule), "--bench", str(root), *args, "--resamples", "20",
            "--json", str(target), "--markdown", str(markdown),
        )
        assert result.code == 0, result.err
        written.append((target.read_bytes(), markdown.read_bytes(), result.out))
    assert written[1] == written[2] == written[3]
    assert written[0][:2] == written[1][:2]  # the files are the same from the first run on
