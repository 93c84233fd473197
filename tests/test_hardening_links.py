"""Issue 37, links out of the benchmark: a downloaded benchmark cannot make keyaudit read (and
print: answer lines appear verbatim in reports) a file of the user's through a symbolic link.

A file link in ``responses/`` or ``keys/``, or either folder itself a link, leading outside the
benchmark folder is a one-line error naming the link; links inside the benchmark, into the
enclosing repository's git-annex objects or DVC cache, or anywhere with ``--follow-links`` are
read. A source named on the command line (``--responses``) stays the user's choice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile import assert_one_line_error

SECRET = "ANSWER: stable (the user's private notes)"


def keys_file(path: Path, n: int = 2) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps({"id": f"dom_{i:04d}_q5", "answer": "stable"}) + "\n" for i in range(1, n + 1)),
        encoding="utf-8",
    )
    return path


def responses_file(path: Path, n: int = 2, model: str = "m", text: str = SECRET) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"id": f"dom_{i:04d}_q5", "model": model, "response": text}) + "\n"
            for i in range(1, n + 1)
        ),
        encoding="utf-8",
    )
    return path


def benchmark(root: Path) -> Path:
    keys_file(root / "keys" / "k.jsonl")
    responses_file(root / "responses" / "n.jsonl", model="n", text="ANSWER: stable")
    return root


# ---- refused


@pytest.mark.parametrize(
    "planted, named",
    [
        ("response file", "responses/m.jsonl"),
        ("key file", "keys/k.jsonl"),
        ("responses folder", "responses"),
        ("keys folder", "keys"),
        ("response sub-folder", "responses/run"),
    ],
)
def test_a_link_out_of_the_benchmark_is_refused_naming_it(
    tmp_path: Path, run_cli, planted: str, named: str
) -> None:
    root = tmp_path / "bench"
    elsewhere = tmp_path / "home"
    if planted == "response file":
        benchmark(root)
        (root / "responses" / "m.jsonl").symlink_to(responses_file(elsewhere / "notes.jsonl"))
    elif planted == "key file":
        benchmark(root)
        (root / "keys" / "k.jsonl").unlink()
        (root / "keys" / "k.jsonl").symlink_to(keys_file(elsewhere / "k.jsonl"))
    elif planted == "responses folder":
        keys_file(root / "keys" / "k.jsonl")
        responses_file(elsewhere / "notes.jsonl")
        (root / "responses").symlink_to(elsewhere)
    elif planted == "keys folder":
        responses_file(root / "responses" / "n.jsonl", text="ANSWER: stable")
        keys_file(elsewhere / "k.jsonl")
        (root / "keys").symlink_to(elsewhere)
    else:
        benchmark(root)
        responses_file(elsewhere / "notes.jsonl")
        (root / "responses" / "run").symlink_to(elsewhere)
    commands = [("flag",), ("check", "physical_stability")]
    if planted.startswith("key"):  # keys reads no response
        commands.append(("keys",))
    for command in commands:
        result = run_cli(*command, "--bench", str(root))
        line = assert_one_line_error(
            result.err, result.code, f"{root / named}:", "outside the benchmark folder", "--follow-links"
        )
        assert "private notes" not in result.out + line
    # the user's explicit word: read, wherever the link leads
    result = run_cli("flag", "--bench", str(root), "--follow-links")
    assert result.code == 0, result.err


def test_a_benchmark_toml_path_through_a_link_out_is_refused_unless_followed(
    tmp_path: Path, run_cli
) -> None:
    root = benchmark(tmp_path / "bench")
    (root / "logs").symlink_to(responses_file(tmp_path / "home" / "notes.jsonl").parent)
    (root / "benchmark.toml").write_text('[[responses]]\npath = "logs"\n', encoding="utf-8")
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "benchmark.toml:2:", "--follow-links")
    assert run_cli("flag", "--bench", str(root), "--follow-links").code == 0


# ---- read


def test_links_inside_the_benchmark_are_read(tmp_path: Path, run_cli) -> None:
    root = benchmark(tmp_path / "bench")
    real = responses_file(root / "store" / "m.jsonl")
    (root / "responses" / "m.jsonl").symlink_to(real)
    (root / "keys" / "k.jsonl").rename(root / "store" / "k.jsonl")
    (root / "keys" / "k.jsonl").symlink_to(Path("..") / "store" / "k.jsonl")
    result = run_cli("flag", "--bench", str(root))
    assert result.code == 0, result.err


def annexed(repo: Path, name: str, write) -> Path:
    """A file as git-annex stores it: the content under .git/annex/objects, found by its key."""
    key = f"SHA256E-s100--{name}"
    return write(repo / ".git" / "annex" / "objects" / "Xx" / "Yy" / key / key)


@pytest.mark.parametrize("store", ["git-annex", "git-annex worktree", "dvc"])
def test_links_into_the_repository_store_are_read(tmp_path: Path, run_cli, store: str) -> None:
    repo = tmp_path / "repo"
    root = benchmark(repo / "data" / "bench")
    if store == "dvc":
        (repo / ".git").mkdir()
        content = responses_file(repo / ".dvc" / "cache" / "files" / "md5" / "ab" / "cdef0123")
        keys = keys_file(repo / ".dvc" / "cache" / "files" / "md5" / "cd" / "ef456789")
    else:
        main = repo if store == "git-annex" else tmp_path / "main"
        content = annexed(main, "m.jsonl", responses_file)
        keys = annexed(main, "k.jsonl", keys_file)
        if store == "git-annex worktree":  # .git is a file: gitdir, whose commondir is main's
            gitdir = main / ".git" / "worktrees" / "repo"
            gitdir.mkdir(parents=True)
            (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
            (repo / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    (root / "responses" / "m.jsonl").symlink_to(content)
    (root / "keys" / "k.jsonl").unlink()
    (root / "keys" / "k.jsonl").symlink_to(keys)
    result = run_cli("flag", "--bench", str(root))
    assert result.code == 0, result.err
    # a benchmark.toml path to an annexed file is read too (it was refused as leading out)
    (root / "benchmark.toml").write_text('[keys]\npath = "keys/k.jsonl"\n', encoding="utf-8")
    result = run_cli("flag", "--bench", str(root))
    assert result.code == 0, result.err


def test_a_store_of_another_repository_is_not_one_of_the_benchmarks(
    tmp_path: Path, run_cli
) -> None:
    """Only the repository the benchmark lies in: another repository's annex is outside."""
    root = benchmark(tmp_path / "repo" / "bench")
    (tmp_path / "repo" / ".git").mkdir()
    other = annexed(tmp_path / "other", "m.jsonl", responses_file)
    (root / "responses" / "m.jsonl").symlink_to(other)
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "responses/m.jsonl:", "outside the benchmark")


def test_a_responses_source_named_on_the_command_line_is_followed(
    tmp_path: Path, run_cli
) -> None:
    root = benchmark(tmp_path / "bench")
    (root / "responses" / "m.jsonl").symlink_to(responses_file(tmp_path / "home" / "notes.jsonl"))
    result = run_cli("flag", "--bench", str(root), "--responses", str(root / "responses"))
    assert result.code == 0, result.err
