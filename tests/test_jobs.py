"""``--jobs``: scoring in worker processes gives the same report, byte for byte, as in-process.

``KEYAUDIT_PARALLEL_MIN=0`` makes the workers start even on the embedded example (which is below
the threshold where they pay), so these tests run the real worker path.
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
from pathlib import Path

import pytest

from keyaudit.engine.errors import RuleError
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring import batch
from keyaudit.engine.rule_language.scoring.scorer import Scorer


@pytest.fixture
def workers_always(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEYAUDIT_PARALLEL_MIN", "0")


def test_check_all_is_byte_identical_for_any_jobs(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers_always: None
) -> None:
    outputs = {}
    for jobs in ("1", "2"):
        folder = tmp_path / f"jobs{jobs}"
        folder.mkdir()
        monkeypatch.chdir(folder)  # the same relative names, so the printed paths agree too
        result = run_cli(
            "check", "--all", "--resamples", "300", "--jobs", jobs,
            "--json", "audit.json", "--markdown", "audit.md",
        )
        assert result.code == 0, result.err
        assert result.err == ""
        outputs[jobs] = (
            result.out,
            (folder / "audit.json").read_bytes(),
            (folder / "audit.md").read_bytes(),
        )
    assert outputs["1"][0] == outputs["2"][0]  # terminal
    assert outputs["1"][1] == outputs["2"][1]  # --json
    assert outputs["1"][2] == outputs["2"][2]  # --markdown


def test_json_to_stdout_is_identical_too(run_cli, workers_always: None) -> None:
    one = run_cli("check", "physical_stability", "--resamples", "200", "--jobs", "1", "--json", "-")
    two = run_cli("check", "physical_stability", "--resamples", "200", "--jobs", "2", "--json", "-")
    assert one.code == two.code == 0
    assert one.out == two.out and one.err == two.err


def _ruled_work():
    """Every stored physical_stability response as (scorer index, key, text)."""
    benchmark = load_benchmark(example_benchmark_dir())
    rule = load_rule(resolve_rule_path("physical_stability"))
    work = [
        (0, benchmark.keys[r.id].answer, r.text)
        for r in benchmark.responses
        if rule.covers(r.ref.domain, r.ref.level)
    ]
    return rule, work


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_response_gets_its_own_verdict_after_deduplication(
    jobs: int, workers_always: None
) -> None:
    """Duplicates are scored once and mapped back: every response's verdict equals the one
    Scorer.score gives that response alone (a verdict mapped to the wrong response would differ:
    the responses have different keys, answers, reasons and answer texts)."""
    rule, work = _ruled_work()
    rng = random.Random(7)
    # Exact copies and copies that differ only in what cleaning removes (same cleaned line,
    # another raw answer text), shuffled among the originals.
    extra = [work[i] for i in rng.sample(range(len(work)), 150)]
    extra += [(i, key, text.replace("ANSWER: ", "ANSWER: **") + "**") for i, key, text in extra[:60]]
    work = work + extra
    rng.shuffle(work)
    stats: dict = {}
    got = batch.score_many([Scorer(rule)], work, jobs=jobs, stats=stats)
    alone = Scorer(rule)
    expected = [alone.score(key, text) for _, key, text in work]
    assert got == expected
    assert stats["line_items"] < len(work)  # something was deduplicated
    assert stats["workers"] == (2 if jobs == 2 else 0)
    assert len({(v.accept, v.reason) for v in got}) > 3  # the verdicts do differ
    if jobs == 2:  # workers' verdicts share their equal parts (one object per distinct value)
        for part in ("reason", "values", "uncertain"):
            objects = {id(getattr(v, part)) for v in got.distinct}
            assert len(objects) == len({repr(getattr(v, part)) for v in got.distinct})
    # kept as codes: each distinct verdict once, columns read per response
    assert len(got.distinct) < len(work)
    assert got.column(lambda v: v.accept).tolist() == [v.accept for v in expected]
    assert got.column(lambda v: bool(v.uncertain)).tolist() == [bool(v.uncertain) for v in expected]
    codes = list(got.codes)
    one, twin = next((a, b) for a in range(len(got)) for b in range(a) if codes[a] == codes[b])
    changed = dataclasses.replace(got[one], accept=not got[one].accept, reason="adjudicated")
    got[one] = changed
    assert got[one] == changed and got[twin] == expected[twin]  # one changed, not its twin


def test_a_worker_error_is_the_parent_error(tmp_path: Path, workers_always: None) -> None:
    """A rule file that no longer loads in a worker raises the same one-line RuleError here."""
    folder = tmp_path / "rules"
    shutil.copytree(resolve_rule_path("physical_stability").parent, folder)
    path = folder / "physical_stability.toml"
    rule = load_rule(path)
    path.write_text("[rule\nname = 1\n", encoding="utf-8")  # changed after the parent loaded it
    _, work = _ruled_work()
    with pytest.raises(RuleError) as raised:
        batch.score_many([Scorer(rule)], work, jobs=2)
    assert "physical_stability.toml" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_worker_error_through_the_cli_is_one_line_exit_2(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers_always: None
) -> None:
    import keyaudit.engine.audit as audit

    folder = tmp_path / "rules"
    shutil.copytree(resolve_rule_path("physical_stability").parent, folder)
    path = folder / "physical_stability.toml"
    prove = audit.prove_rules

    def prove_then_break(*args, **kwargs):
        proofs = prove(*args, **kwargs)
        path.write_text("[rule\n", encoding="utf-8")  # the workers load it after this
        return proofs

    monkeypatch.setattr(audit, "prove_rules", prove_then_break)
    result = run_cli("check", str(path), "--resamples", "100", "--jobs", "2")
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("keyaudit: error: "), result.err
    assert "physical_stability.toml" in lines[0] and "Traceback" not in result.err


@pytest.mark.parametrize("executable", ["false", "missing"])
def test_a_worker_that_dies_is_a_one_line_error(
    executable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers_always: None
) -> None:
    """A worker that exits at once (or cannot start) is a WorkerError, never a hang or a trace."""
    rule, work = _ruled_work()
    program = shutil.which("false") if executable == "false" else str(tmp_path / "no-python")
    monkeypatch.setattr(batch.sys, "executable", program)
    with pytest.raises(batch.WorkerError) as raised:
        batch.score_many([Scorer(rule)], work, jobs=2)
    assert "--jobs 1" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("value", ["0", "-1"])
def test_jobs_below_one_is_a_usage_error(run_cli, value: str) -> None:
    result = run_cli("check", "physical_stability", "--jobs", value)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "--jobs" in lines[0], result.err


def test_review_is_identical_for_any_jobs(run_cli, tmp_path: Path, workers_always: None) -> None:
    files = []
    for jobs in ("1", "2"):
        out = tmp_path / f"review{jobs}.jsonl"
        result = run_cli("review", "physical_stability", "--out", str(out), "--jobs", jobs)
        assert result.code == 0, result.err
        files.append(out.read_bytes())
    assert files[0] == files[1]


def test_default_jobs_is_the_usable_cores() -> None:
    assert batch.default_jobs() >= 1


def test_the_keys_check_is_the_same_judged_in_workers(workers_always: None) -> None:
    """The keys check plans its pairs, then judges them: in this process or in workers, every
    pair gets the same (accept, reason), and a judge that accepts everything (or nothing) fails
    exactly the pairs it should."""
    from keyaudit.engine.rule_language.authoring.rulecheck import keys_check, plan_keys_check

    benchmark = load_benchmark(example_benchmark_dir())
    rules = [load_rule(resolve_rule_path(n)) for n in ("gauge_reading_l4", "laser_mirror")]
    scorers = [Scorer(rule) for rule in rules]
    items = []
    for index, (rule, scorer) in enumerate(zip(rules, scorers, strict=True)):
        cell = rule.cells[0]
        keys = [k.answer for k in benchmark.keys_in_cell(cell.domain, cell.level)]
        plan = plan_keys_check(scorer, keys)
        items += [(index, key, line) for key, line in plan.pairs]
        everything = plan_keys_check(scorer, keys).finish([(True, "")] * len(plan.pairs))
        assert len(everything.failures) == everything.pairs_checked + 1 > 1
        assert "accepts every answer" in everything.failures[-1].problem  # the nonsense probe
        nothing = plan_keys_check(scorer, keys).finish([(False, "r")] * len(plan.pairs))
        assert len(nothing.failures) == everything.distinct - len(everything.unparsed)
        assert keys_check(scorer, keys).passed
    verdicts = [scorers[i].score_line(key, line, certainty=False) for i, key, line in items]
    here = [(v.accept, v.reason) for v in verdicts]
    assert batch.judge_many([Scorer(rule) for rule in rules], items, jobs=2) == here
    assert any(accept for accept, _ in here) and not all(accept for accept, _ in here)


def test_workers_never_import_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers_always: None
) -> None:
    """A ``lark.py`` or ``keyaudit/`` package in the folder the user stands in (a downloaded
    benchmark) is never imported by a scoring worker (issue 26, item 1)."""
    marker = tmp_path / "ran"
    folder = tmp_path / "downloaded-benchmark"
    (folder / "keyaudit").mkdir(parents=True)
    trap = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\nraise SystemExit(7)\n"
    # What the workers import, and what multiprocessing's own children (a spawned worker, the
    # resource tracker) import before any keyaudit code runs.
    for package in ("multiprocessing", "concurrent"):
        (folder / package).mkdir()
    for name in ("lark.py", "numpy.py", "keyaudit/__init__.py", "multiprocessing/__init__.py",
                 "concurrent/__init__.py", "pickle.py"):
        (folder / name).write_text(trap, encoding="utf-8")
    rule, work = _ruled_work()
    expected = batch.score_many([Scorer(rule)], work[:300], jobs=1)
    # The parent's own modules are imported already when it scores (the CLI imports them before
    # any chdir could matter); this test is about what the workers import.
    import concurrent.futures.process  # noqa: F401
    import multiprocessing.spawn  # noqa: F401
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))  # even where the parent itself has it on sys.path
    got = batch.score_many([Scorer(rule)], work[:300], jobs=2)
    assert not marker.exists(), marker.read_text()
    assert got == expected
    assert str(folder) not in batch.launcher_script()
    assert "-I" in batch.launcher_script().split()


def test_a_worker_ends_when_its_parent_dies(tmp_path: Path) -> None:
    """After SIGTERM/SIGKILL of keyaudit, a worker busy on a chunk does not go on as an orphan."""
    import subprocess
    import sys
    import time

    child = (
        "import time\n"
        "from keyaudit.engine.rule_language.scoring.batch import _exit_with_parent\n"
        "_exit_with_parent(0.05)\n"
        "time.sleep(60)\n"
    )
    parent = (
        "import subprocess, sys\n"
        f"p = subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        "print(p.pid, flush=True)\n"
        "import time; time.sleep(1.0)\n"  # the child's watch has started; now the parent dies
    )
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60)
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    pytest.fail("the worker outlived its parent by 10 s")


@pytest.mark.parametrize("value", ["²", "٣", "1e3", "-5", " 7"])
def test_an_odd_parallel_minimum_falls_back_to_the_default(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A non-ASCII digit ('²'.isdigit() is true, int('²') raises) is not a crash (issue 26)."""
    monkeypatch.setenv("KEYAUDIT_PARALLEL_MIN", value)
    assert batch.parallel_threshold() == batch.PARALLEL_MIN_ITEMS


def test_a_sigkilled_run_leaves_no_launcher_folder(tmp_path: Path) -> None:
    """keyaudit SIGKILLed while its --jobs workers score: the launcher folder
    (keyaudit-workers-*) stayed in TMPDIR for ever. The workers now remove it as they end."""
    import signal
    import subprocess
    import sys
    import time

    from hostile import ENTRY

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary), "KEYAUDIT_PARALLEL_MIN": "0",
           "KEYAUDIT_CACHE_DIR": "off"}
    run = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "check", "--all", "--jobs", "2", "--resamples", "100"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(temporary.glob("keyaudit-workers-*/stderr")):
            time.sleep(0.05)
        assert list(temporary.glob("keyaudit-workers-*")), "the workers never started"
        time.sleep(0.5)  # the workers are running
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and list(temporary.glob("keyaudit-workers-*")):
        time.sleep(0.05)
    assert list(temporary.glob("keyaudit-workers-*")) == []


def test_launcher_folders_of_dead_runs_are_removed(tmp_path: Path) -> None:
    """Every process of a run killed at once: the next pool removes the folders of pools whose
    process is gone, and only those (its own user's real folders, its own names)."""
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    gone = tmp_path / f"keyaudit-workers-{dead}-abc123"
    alive = tmp_path / f"keyaudit-workers-{os.getpid()}-abc123"
    other = tmp_path / "keyaudit-workers-notes"
    target = tmp_path / "kept"
    for folder in (gone, alive, other, target):
        folder.mkdir()
        (folder / "python").write_text("#!/bin/sh\n", encoding="utf-8")
    link = tmp_path / f"keyaudit-workers-{dead}-link"
    link.symlink_to(target)
    batch.remove_dead_pool_folders(str(tmp_path))
    assert not gone.exists()
    assert alive.exists() and other.exists() and link.is_symlink() and (target / "python").exists()
