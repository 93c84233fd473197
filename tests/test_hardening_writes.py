"""Issue 37, what keyaudit writes: validation cards never through a planted link nor into the
installed package, and every output file whole or not at all, with a one-line error when it
cannot be written.
"""

from __future__ import annotations

import json
import os
import resource
import struct
from pathlib import Path

import pytest
from hostile import assert_one_line_error, run_keyaudit, status_rule

from keyaudit.engine.load.locate import resolve_rule_path
from keyaudit.engine.stats.validation_card import card_path, read_card

KEY_GRAMMAR = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"
ANSWER_GRAMMAR = (
    "start: _item*\n_item: status | WORD\nstatus: STATUS\nSTATUS.3: /stable|unstable/\n"
    "WORD: /\\S+/\n%ignore /\\s+/\n"
)


def rule_folder(folder: Path) -> Path:
    """A downloaded rule: its .toml and grammars in ``folder``; returns the rule file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    (folder / "a.lark").write_text(ANSWER_GRAMMAR, encoding="utf-8")
    (folder / "rule.toml").write_text(status_rule(), encoding="utf-8")
    return folder / "rule.toml"


def cases_file(path: Path) -> Path:
    rows = [
        {"key": "stable", "response": "ANSWER: stable", "accept": True},
        {"key": "unstable", "response": "ANSWER: stable", "accept": False},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the user's (``~/.bashrc`` in the attack)."""
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_text("alias ls='ls --color'\n", encoding="utf-8")
    return path


# ---- test-rule --card

DECLARE = ("--written-by", "independent", "--before-tuning")


@pytest.mark.parametrize("planted", ["temporary", "card"])
def test_the_card_is_never_written_through_a_planted_link(
    tmp_path: Path, run_cli, victim: Path, planted: str
) -> None:
    """``cards/NAME.card.toml.tmp`` linked to the user's file made the card overwrite it (the
    old code wrote the temporary by name, following the link); the card's own name as a link
    is replaced, never written through."""
    rule = rule_folder(tmp_path / "rule")
    (rule.parent / "cards").mkdir()
    name = card_path(rule).name + (".tmp" if planted == "temporary" else "")
    link = rule.parent / "cards" / name
    link.symlink_to(victim)
    if planted == "card":  # a card the loader can read, so the write is what is tested
        victim.write_text('format = 2\nrule = "t"\n', encoding="utf-8")
    before = victim.read_bytes()
    result = run_cli("test-rule", str(rule), "--cases", str(cases_file(tmp_path / "c.jsonl")), "--card", *DECLARE)
    assert result.code == 0, result.err
    assert victim.read_bytes() == before
    card = card_path(rule)
    assert card.is_file() and not card.is_symlink()
    assert read_card(card)[0] == "t"


def test_a_cards_folder_linked_out_of_the_rule_folder_is_refused(
    tmp_path: Path, run_cli
) -> None:
    rule = rule_folder(tmp_path / "rule")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (rule.parent / "cards").symlink_to(elsewhere)
    result = run_cli("test-rule", str(rule), "--cases", str(cases_file(tmp_path / "c.jsonl")), "--card", *DECLARE)
    assert_one_line_error(result.err, result.code, "--card", "outside the rule's folder")
    assert list(elsewhere.iterdir()) == []
    assert result.out == ""  # refused before the measurement


def test_a_cards_folder_linked_inside_the_rule_folder_is_used(tmp_path: Path, run_cli) -> None:
    rule = rule_folder(tmp_path / "rule")
    (rule.parent / "kept").mkdir()
    (rule.parent / "cards").symlink_to(rule.parent / "kept")
    result = run_cli("test-rule", str(rule), "--cases", str(cases_file(tmp_path / "c.jsonl")), "--card", *DECLARE)
    assert result.code == 0, result.err
    assert (rule.parent / "kept" / card_path(rule).name).is_file()


def test_the_card_of_a_bundled_rule_is_never_rewritten(tmp_path: Path, run_cli) -> None:
    bundled = resolve_rule_path("physical_stability")
    card = card_path(bundled)
    before = card.read_bytes()
    try:
        result = run_cli(
            "test-rule", "physical_stability", "--cases", str(cases_file(tmp_path / "c.jsonl")),
            "--card", *DECLARE,
        )
        line = assert_one_line_error(result.err, result.code, "--card", "bundled rule")
        assert "copy" in line
    finally:
        if card.read_bytes() != before:  # the old code rewrote the installed package's card
            card.write_bytes(before)
            pytest.fail("test-rule --card rewrote the bundled rule's card")


@pytest.mark.parametrize("option", ["--json", "--markdown"])
def test_an_output_onto_the_rules_own_card_is_refused(
    tmp_path: Path, run_cli, option: str
) -> None:
    """The card is an input of the run (check prints it): --json onto it overwrote it."""
    rule = rule_folder(tmp_path / "rule")
    cases = cases_file(tmp_path / "c.jsonl")
    assert run_cli("test-rule", str(rule), "--cases", str(cases), "--card", *DECLARE).code == 0
    card = card_path(rule)
    before = card.read_bytes()
    result = run_cli("check", str(rule), option, str(card))
    assert_one_line_error(result.err, result.code, option, "keyaudit only reads")
    assert card.read_bytes() == before


# ---- every output file whole or not at all


def small_benchmark(root: Path) -> Path:
    (root / "keys").mkdir(parents=True)
    (root / "responses").mkdir()
    ids = [f"dom_{i:04d}_q{level}" for level in (4, 5) for i in range(1, 7)]
    keys = [{"id": i, "answer": "stable" if n % 2 else "unstable"} for n, i in enumerate(ids)]
    (root / "keys" / "k.jsonl").write_text("".join(json.dumps(k) + "\n" for k in keys), "utf-8")
    rows = [
        {"id": k["id"], "model": "m", "response": f"ANSWER: {k['answer']}", "correct": n % 3 == 0}
        for n, k in enumerate(keys)
    ]
    (root / "responses" / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return root


def run_limited(
    *args: str, file_size: int | None = None, cwd: Path | None = None, env: dict | None = None
):
    """``keyaudit ARGS`` in a child whose files may grow to ``file_size`` bytes at most
    (RLIMIT_FSIZE: a write past it fails with EFBIG, as Python ignores SIGXFSZ)."""
    import subprocess
    import sys

    from hostile import ENTRY

    def limit() -> None:
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    env = {**os.environ, "KEYAUDIT_CACHE_DIR": "off", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, *args], capture_output=True, preexec_fn=limit, env=env,
        cwd=cwd, timeout=300,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["flag", "check"])
def test_an_output_onto_dev_full_is_a_one_line_error(tmp_path: Path, command: str) -> None:
    """``--json /dev/full`` ended in exit 3, an internal error."""
    bench = small_benchmark(tmp_path / "b")
    args = ["flag"] if command == "flag" else ["check", str(rule_folder(tmp_path / "rule")), "--resamples", "20"]
    run = run_keyaudit(*args, "--bench", str(bench), "--json", "/dev/full", env={"KEYAUDIT_CACHE_DIR": "off"})
    assert_one_line_error(run.err, run.code, "/dev/full", "cannot write", "No space left")


@pytest.mark.parametrize("option", ["--json", "--markdown", "--plot"])
def test_a_write_cut_short_keeps_the_previous_report(tmp_path: Path, option: str) -> None:
    """A write that fails half-way (here a file-size limit; a full disk the same): the old code
    left a truncated report under the real name, the previous one lost, and exit 3.

    matplotlib gets a config folder of its own with no font cache in it, as on a new machine: it
    builds the cache, cannot save it under the same limit and logged two warnings, so the error was
    not one line (seen first in CI-like runs on a fresh machine)."""
    bench = small_benchmark(tmp_path / "b")
    rule = rule_folder(tmp_path / "rule")
    target = tmp_path / ("out" + {"--json": ".json", "--markdown": ".md", "--plot": ".png"}[option])
    previous = b"the previous report\n"
    target.write_bytes(previous)
    mpl_home = tmp_path.parent / (tmp_path.name + "-mpl")
    mpl_home.mkdir()
    code, out, err = run_limited(
        "check", str(rule), "--bench", str(bench), "--resamples", "20", option, str(target),
        file_size=len(previous) + 100, env={"MPLCONFIGDIR": str(mpl_home)},
    )
    assert_one_line_error(err, code, str(target), "cannot write", "the previous file is kept")
    assert target.read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", target.name, "rule"]  # no temporary


def test_an_output_that_is_a_link_is_replaced_not_written_through(
    tmp_path: Path, run_cli, victim: Path
) -> None:
    bench = small_benchmark(tmp_path / "b")
    target = tmp_path / "out.json"
    target.symlink_to(victim)
    before = victim.read_bytes()
    result = run_cli("flag", "--bench", str(bench), "--json", str(target))
    assert result.code == 0, result.err
    assert victim.read_bytes() == before
    assert not target.is_symlink() and json.loads(target.read_text(encoding="utf-8")) == []


def test_an_output_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path, run_cli) -> None:
    bench = small_benchmark(tmp_path / "b")
    target = tmp_path / "out.json"
    target.write_text("{}", encoding="utf-8")
    target.chmod(0o640)
    assert run_cli("flag", "--bench", str(bench), "--json", str(target)).code == 0
    assert target.stat().st_mode & 0o777 == 0o640


def test_an_output_to_a_stream_the_user_named_is_written_directly(tmp_path: Path) -> None:
    bench = small_benchmark(tmp_path / "b")
    run = run_keyaudit("flag", "--bench", str(bench), "--json", "/dev/stdout")
    assert run.code == 0, run.err
    assert "[]\n" in run.out  # flag's JSON: no key of this benchmark is flagged


def test_a_matplotlibrc_in_the_current_folder_is_not_read(tmp_path: Path) -> None:
    """A downloaded benchmark folder's matplotlibrc: savefig.dpi 20000 ran out of memory,
    text.usetex failed without LaTeX (exit 3), a bad line printed warnings."""
    pytest.importorskip("matplotlib")
    bench = small_benchmark(tmp_path / "b")
    rule = rule_folder(tmp_path / "rule")
    (bench / "matplotlibrc").write_text(
        "savefig.dpi : 20000\ntext.usetex : True\nbogus.key : 1\nfigure.dpi : abc\n",
        encoding="utf-8",
    )
    code, out, err = run_limited(
        "check", str(rule), "--bench", ".", "--resamples", "20", "--plot", str(tmp_path / "f.png"),
        cwd=bench,
    )
    assert code == 0, err
    assert err == ""  # no warning about the file's bad lines: it was never read
    width, height = struct.unpack(">II", (tmp_path / "f.png").read_bytes()[16:24])
    assert width <= 1600 and height <= 1600, (width, height)
