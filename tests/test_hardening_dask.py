"""Issue 37, Dask: a cluster is not trusted to be what it says, nor its workers to be honest.

A port that accepts and never answers hung past the connect limit; an address that is not Dask
made distributed allocate exabytes (MemoryError, exit 3); a worker returning malformed tuples
ended in ValueError (exit 3); a task ending in RecursionError hung the run until killed; a
worker returning flipped verdicts of the right shape was believed; and a rule whose grammars
lie in its own folder failed on an honest cluster (FileNotFoundError in a scoring worker).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from pathlib import Path

import pytest
from hostile import assert_one_line_error, status_rule

from keyaudit.engine.errors import UsageError
from keyaudit.engine.rule_language.scoring import dask_executor

distributed = pytest.importorskip("distributed")

KEY_GRAMMAR = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"
ANSWER_GRAMMAR = (
    "start: _item*\n_item: status | WORD\nstatus: STATUS\nSTATUS.3: /stable|unstable/\n"
    "WORD: /\\S+/\n%ignore /\\s+/\n"
)

#: every test sends its answers to the cluster: none come from an earlier run's verdict cache
pytestmark = pytest.mark.usefixtures("fresh_verdict_cache")


@pytest.fixture(scope="module")
def cluster():
    import logging

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the dishonest tasks below
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=logging.CRITICAL,
    ) as local:
        yield local.scheduler_address


@pytest.fixture(scope="module")
def own_rule(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A rule whose grammars lie in its own folder, and a small benchmark of its cell."""
    root = tmp_path_factory.mktemp("dask-rule")
    rule = root / "rule"
    rule.mkdir()
    (rule / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    (rule / "a.lark").write_text(ANSWER_GRAMMAR, encoding="utf-8")
    (rule / "rule.toml").write_text(status_rule(), encoding="utf-8")
    bench = root / "bench"
    (bench / "keys").mkdir(parents=True)
    (bench / "responses").mkdir()
    ids = [f"dom_{i:04d}_q{level}" for level in (4, 5) for i in range(1, 41)]
    keys = [{"id": i, "answer": "stable" if n % 2 else "unstable; x"} for n, i in enumerate(ids)]
    (bench / "keys" / "k.jsonl").write_text("".join(json.dumps(k) + "\n" for k in keys), "utf-8")
    rows = [
        {"id": k["id"], "model": f"m{j}", "response": f"ANSWER: {('stable', 'unstable')[(n + j) % 2]} {n}"}
        for j in range(3)
        for n, k in enumerate(keys)
    ]
    (bench / "responses" / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return rule / "rule.toml", bench


def check_args(own_rule, address: str) -> list[str]:
    rule, bench = own_rule
    return ["check", str(rule), "--bench", str(bench), "--resamples", "20",
            "--executor", "dask", "--scheduler", address]


def finishes(work, seconds: float = 120):
    """``work()``'s result or error, or a failure if it is still running after ``seconds`` (the
    old code hung for ever here: a guard, not a measurement)."""
    found: dict = {}

    def run() -> None:
        try:
            found["value"] = work()
        except BaseException as error:  # noqa: BLE001
            found["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "hung"
    return found


# ---- reaching a scheduler


def listening(mode: str) -> tuple[socket.socket, int, list]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            held.append(connection)
            if mode == "banner":
                connection.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1], held


@pytest.mark.parametrize(
    "mode, words", [("silent", "no Dask scheduler answered"), ("banner", "not a Dask scheduler")]
)
def test_a_scheduler_that_is_not_one_is_a_one_line_error(monkeypatch, mode: str, words: str) -> None:
    monkeypatch.setattr(dask_executor, "CONNECT_SECONDS", 1)
    server, port, held = listening(mode)
    try:
        found = finishes(lambda: dask_executor.DaskExecutor(f"tcp://127.0.0.1:{port}"), 60)
    finally:
        server.close()
        for connection in held:
            connection.close()
    error = found.get("error")
    assert isinstance(error, UsageError), found
    assert words in str(error) and f"127.0.0.1:{port}" in str(error)


# ---- dishonest workers


def malformed(bundle, digest, start, phase, items):
    return ("ok", [("x", 1)] * len(items), 0)


def flipped(bundle, digest, start, phase, items):
    from keyaudit.engine.rule_language.scoring import dask_executor as real

    status, outcomes, peak = real.score_remote(bundle, digest, start, phase, items)
    if phase == "line":
        outcomes = [((not v[0], *v[1:]), slow) for v, slow in outcomes]
    elif phase == "judge":
        outcomes = [((not v[0], v[1]), slow) for v, slow in outcomes]
    return status, outcomes, peak


def recursing(bundle, digest, start, phase, items):
    def deeper(n: int) -> int:
        return deeper(n + 1) + 1

    return deeper(0)


@pytest.mark.parametrize(
    "task, words",
    [
        (malformed, "an answer keyaudit's workers never send"),
        (flipped, "differs from this machine's"),
        (recursing, "its error never reached this process"),
    ],
)
def test_a_dishonest_worker_stops_the_run_with_one_line(
    run_cli, cluster, own_rule, monkeypatch, task, words: str
) -> None:
    monkeypatch.setattr(dask_executor, "score_remote", task)
    monkeypatch.setattr(dask_executor, "POLL_SECONDS", 0.5)
    found = finishes(lambda: run_cli(*check_args(own_rule, cluster)))
    result = found["value"]
    assert_one_line_error(result.err, result.code, words)


# ---- an honest cluster


def test_a_rule_with_its_own_grammars_is_scored_on_a_cluster(
    run_cli, cluster, own_rule, tmp_path: Path
) -> None:
    """The worker removed the shipped grammars after loading the rule, and the scorer reads its
    answer grammar's wording when it first judges certainty: FileNotFoundError."""
    outputs = []
    for extra in (["--jobs", "1"], check_args(own_rule, cluster)[6:]):
        target = tmp_path / f"{len(outputs)}.json"
        args = [*check_args(own_rule, cluster)[:6], *extra, "--json", str(target)]
        result = run_cli(*args)
        assert result.code == 0, result.err
        outputs.append(target.read_bytes())
    assert outputs[0] == outputs[1]
