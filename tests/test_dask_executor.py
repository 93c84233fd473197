"""``check --executor dask --scheduler ADDRESS``: the same report as ``--jobs 1`` from a cluster.

The cluster is a ``distributed.LocalCluster`` of two worker processes (one thread each), started
once for the module; the tests that need it skip when dask/distributed are not installed (the
``test`` extra installs them).
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
from conftest import empty_verdict_cache

from keyaudit.engine.errors import RuleError
from keyaudit.engine.load.benchmark import load_benchmark
from keyaudit.engine.load.locate import example_benchmark_dir, resolve_rule_path
from keyaudit.engine.rule_language.rules.rule import load_rule
from keyaudit.engine.rule_language.scoring import batch, dask_executor
from keyaudit.engine.rule_language.scoring.scorer import Scorer

#: every test sends its answers to the cluster: none come from an earlier run's verdict cache
pytestmark = pytest.mark.usefixtures("fresh_verdict_cache")


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    import logging

    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.CRITICAL,
    ) as local, distributed.Client(local, set_as_default=False) as client:
        yield local, client


def _unique_work(rule_name: str, count: int):
    """``count`` stored responses of the rule's cells, each answer line made unique (every one
    parsed: chunks take long enough to kill a worker in the middle of one)."""
    benchmark = load_benchmark(example_benchmark_dir())
    rule = load_rule(resolve_rule_path(rule_name))
    work = [
        (0, benchmark.keys[r.id].answer, f"{r.text.rstrip()} {n}")
        for n, r in enumerate(benchmark.responses)
        if rule.covers(r.ref.domain, r.ref.level)
    ]
    return rule, work[:count]


def test_check_is_byte_identical_on_a_dask_cluster(
    run_cli, cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    address = cluster[0].scheduler_address
    outputs = {}
    for name, extra in (("jobs1", ["--jobs", "1"]), ("dask", ["--executor", "dask", "--scheduler", address])):
        folder = tmp_path / name
        folder.mkdir()
        monkeypatch.chdir(folder)  # the same relative names, so the printed paths agree too
        empty_verdict_cache()  # each run scores its answers itself
        result = run_cli(
            "check", "physical_stability", "gauge_reading_l4", "--resamples", "300",
            "--json", "audit.json", "--markdown", "audit.md", *extra,
        )
        assert result.code == 0, result.err
        assert result.err == ""
        outputs[name] = (
            result.out,
            (folder / "audit.json").read_bytes(),
            (folder / "audit.md").read_bytes(),
        )
    assert outputs["jobs1"] == outputs["dask"]

    def loaded() -> int:
        from keyaudit.engine.rule_language.scoring import dask_executor

        return len(dask_executor._LOADED)

    assert any(cluster[1].run(loaded).values())  # the workers did load the rules and score


def test_a_worker_killed_mid_run_is_retried(cluster) -> None:
    """A worker SIGKILLed while it scores a chunk: Dask runs the chunk again elsewhere (the nanny
    starts a new worker), and every response still gets its own verdict, equal to --jobs 1."""
    local, client = cluster
    rule, work = _unique_work("physical_stability", 480)
    expected = batch.score_many([Scorer(rule)], work, jobs=1)
    killed: list[str] = []

    def kill_one_busy_worker() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for address, keys in client.processing().items():
                if any("score_remote" in str(key) for key in keys):
                    pid = client.run(os.getpid, workers=[address])[address]
                    time.sleep(0.2)  # inside the chunk
                    os.kill(pid, signal.SIGKILL)
                    killed.append(address)
                    return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_one_busy_worker)
    executor = dask_executor.DaskExecutor(local.scheduler_address, client=client)
    killer.start()
    try:
        with batch.remote(executor):
            got = batch.score_many([Scorer(rule)], work, jobs=1)
    finally:
        killer.join()
        executor.close()
    assert killed, "no worker was busy on a chunk"
    assert got == expected
    client.wait_for_workers(2, timeout=60)  # the nanny's new worker, for the next test


def test_a_run_that_keeps_losing_workers_stops_with_one_line_exit_2(
    run_cli, cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When Dask gives up on a chunk (KilledWorker: its workers died more often than the
    scheduler's allowed-failures), check stops with one line, exit 2."""
    import distributed
    from distributed import KilledWorker

    def gather(self, futures, *args, **kwargs):
        raise KilledWorker("score_remote-abc", "tcp://127.0.0.1:1", 3)

    monkeypatch.setattr(distributed.Client, "gather", gather)
    result = run_cli(
        "check", "physical_stability", "--resamples", "100",
        "--executor", "dask", "--scheduler", cluster[0].scheduler_address,
    )
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "allowed-failures" in lines[0], result.err
    assert "Traceback" not in result.err


def test_a_chunk_short_of_verdicts_is_an_error() -> None:
    """A chunk that comes back with fewer outcomes than items never leaves a verdict missing."""

    class Short:
        def size(self) -> int:
            return 2

        def run(self, scorers, phase, chunks):
            return [[("x", False)] * (len(chunk) - 1) for chunk in chunks]

    rule, work = _unique_work("physical_stability", 200)
    with pytest.raises(batch.WorkerError) as raised, batch.remote(Short()):
        batch.score_many([Scorer(rule)], work, jobs=1)
    assert "results for" in str(raised.value)


def test_workers_load_rules_from_shipped_texts(tmp_path: Path) -> None:
    """A rule in its own folder (grammars beside it) travels as texts: the worker loads it from a
    private temporary folder it removes, and scores as the rule itself does."""
    folder = tmp_path / "my-rules"
    shutil.copytree(resolve_rule_path("physical_stability").parent, folder)
    for grammar in resolve_rule_path("physical_stability").parent.parent.glob("grammars/*.lark"):
        shutil.copy(grammar, folder)
    rule = load_rule(folder / "physical_stability.toml")
    bundle = dask_executor.rule_bundle([rule])
    names = [name for name, _ in bundle["rules"][0][3]]
    assert "physical_stability_answer.lark" in names
    _, work = _unique_work("physical_stability", 50)
    items = [(0, key, text.splitlines()[-1].removeprefix("ANSWER: ")) for _, key, text in work]
    digest = dask_executor.bundle_digest(bundle) + "-test"
    status, outcomes, _peak = dask_executor.score_remote(bundle, digest, [0], "judge", items)
    assert status == "ok"
    scorer = Scorer(rule)
    here = [scorer.score_line(key, line, certainty=False) for _, key, line in items]
    assert [value for value, _ in outcomes] == [(v.accept, v.reason) for v in here]
    dask_executor._drop(digest)


def test_a_worker_with_another_keyaudit_refuses() -> None:
    rule = load_rule(resolve_rule_path("physical_stability"))
    bundle = dict(dask_executor.rule_bundle([rule]), fingerprint="0.0.1/0000")
    answer = dask_executor.score_remote(bundle, "other", [0], "judge", [(0, "k", "x")])
    assert answer[0] == "error" and "same keyaudit" in answer[2]


def test_a_rule_that_fails_on_the_worker_names_its_own_file(tmp_path: Path) -> None:
    rule = load_rule(resolve_rule_path("physical_stability"))
    bundle = dask_executor.rule_bundle([rule])
    name, origin, _text, grammars = bundle["rules"][0]
    bundle["rules"] = [(name, origin, "[rule\n", grammars)]
    kind, message = dask_executor.score_remote(bundle, "broken", [0], "judge", [(0, "k", "x")])[1:]
    with pytest.raises(RuleError):
        raise batch._error(kind, message)
    assert origin in message and "keyaudit-rules-" not in message


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--executor", "dask"], "--scheduler"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--executor dask"),
        (["--executor", "spark"], "--executor"),
    ],
)
def test_executor_options_are_checked(run_cli, args: list[str], words: str) -> None:
    result = run_cli("check", "physical_stability", "--resamples", "100", *args)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.err


def test_without_dask_installed_the_option_says_which_extra(
    run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises
    result = run_cli(
        "check", "physical_stability", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"
    )
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "keyaudit[dask]" in lines[0], result.err


def test_an_unreachable_scheduler_is_one_line(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setattr(dask_executor, "CONNECT_SECONDS", 1)
    result = run_cli(
        "check", "physical_stability", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"
    )
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "tcp://127.0.0.1:9" in lines[0], result.err


def test_when_dask_gives_up_on_a_chunk_the_run_stops_with_one_line() -> None:
    """A real KilledWorker: a cluster that allows no failure, a worker SIGKILLed mid-chunk."""
    import dask
    import distributed

    rule, work = _unique_work("physical_stability", 480)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=50,
    ) as local, distributed.Client(local, set_as_default=False) as client:
        killed: list[str] = []

        def kill_one_busy_worker() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not killed:
                for address, keys in client.processing().items():
                    if any("score_remote" in str(key) for key in keys):
                        pid = client.run(os.getpid, workers=[address])[address]
                        time.sleep(0.2)
                        os.kill(pid, signal.SIGKILL)
                        killed.append(address)
                        return
                time.sleep(0.02)

        killer = threading.Thread(target=kill_one_busy_worker)
        executor = dask_executor.DaskExecutor(local.scheduler_address, client=client)
        killer.start()
        try:
            with pytest.raises(batch.WorkerError) as raised, batch.remote(executor):
                batch.score_many([Scorer(rule)], work, jobs=1)
        finally:
            killer.join()
            executor.close()
    assert killed
    assert "\n" not in str(raised.value) and "allowed-failures" in str(raised.value)
