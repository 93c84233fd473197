"""The inspect_ai scorer (issue 36, points 2, 4 and 5), with the real framework, offline.

One inspect_ai process (``tests/frameworks/inspect_run.py``: inspect takes seconds to start)
re-scores a real ``.eval`` log with ``inspect score --scorer keyaudit/rule_scorer`` into a new
file, found through the package entry point, and runs a mockllm task scored by ``rule_scorer``
with the bundled rule and with a backtracking one. Here, each sample's Score is compared with
``keyaudit score`` on the same (target, completion): value, answer, explanation and metadata.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest
from frameworks.cases import (
    ROOT,
    SLOW_ANSWER,
    backtracking_rule,
    framework_env,
    keyaudit_score,
    samples,
)

import keyaudit
from keyaudit.engine.stats.analytic_se import clustered_mean_se

pytestmark = pytest.mark.skipif(
    find_spec("inspect_ai") is None, reason="inspect_ai is not installed: pip install 'keyaudit[inspect]'"
)
RUNNER = ROOT / "tests" / "frameworks" / "inspect_run.py"
REAL_LOG = ROOT / "tests" / "data" / "logs" / "inspect" / "synth-atlas-xl.eval"
EPOCHS = 3


def agree(run_cli, folder: Path, logged: list[dict], scorer: str, rule: str) -> int:
    """Every sample's Score from ``scorer`` equals ``keyaudit score RULE`` on its (target,
    completion), field for field; returns how many samples were compared."""
    api = keyaudit.load_rule(rule)
    pairs = [(s["target"], s["completion"]) for s in logged]
    printed = keyaudit_score(run_cli, folder, rule, pairs)
    for sample, line, (key, response) in zip(logged, printed, pairs, strict=True):
        score = sample["scores"][scorer]
        where = f"{sample['id']} epoch {sample['epoch']}"
        assert score["value"] == ("C" if line["accept"] else "I"), where
        assert score["explanation"] == (line["reason"] or "accepted"), where
        meta = score["metadata"]
        assert meta["uncertain"] == line["uncertain"], where
        assert meta["values"] == {name: line[name] for name in api.outputs}, where
        assert meta.get("detail", "") == line.get("detail", ""), where
        assert (meta["rule"], meta["rule_version"]) == (api.name, api.version), where
        assert meta["card"] == api.card().summary(), where
        assert meta["image"] == keyaudit.image_of(sample["id"]), where
        assert score["answer"] == api.score(key, response).answer, where
    return len(logged)


def test_inspect_scores_samples_exactly_as_keyaudit_score(run_cli, tmp_path: Path) -> None:
    version = keyaudit.load_rule("physical_stability").version
    hostile = backtracking_rule(tmp_path / "hostile")
    log = tmp_path / "logged" / REAL_LOG.name  # a copy: the test data is never at risk
    log.parent.mkdir()
    shutil.copy(REAL_LOG, log)
    spec = {
        "log": str(log),
        "rescored": str(tmp_path / "rescored.eval"),
        "version": version,
        "samples": samples(),
        "epochs": EPOCHS,
        "hostile_rule": str(hostile),
        "log_dir": str(tmp_path / "logs"),
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    original = hashlib.sha256(log.read_bytes()).hexdigest()
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(tmp_path / "spec.json"), str(tmp_path / "out.json")],
        cwd=tmp_path,
        env=framework_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))

    # inspect score: found through the entry point, a new file, the original untouched
    assert out["score_exit"] == 0
    assert not out["loaded_before_score"] and out["loaded_by_entry_point"]
    assert hashlib.sha256(log.read_bytes()).hexdigest() == original
    assert sorted(p.name for p in log.parent.iterdir()) == [REAL_LOG.name]
    rescored = out["logs"]["rescored"]
    assert rescored["status"] == "success" and len(rescored["samples"]) == 64  # 32 items x 2 epochs
    assert all({"answer_line", "includes", "rule_scorer"} <= set(s["scores"]) for s in rescored["samples"])
    assert agree(run_cli, tmp_path / "a", rescored["samples"], "rule_scorer", "physical_stability") == 64
    accepted = [s for s in rescored["samples"] if s["scores"]["rule_scorer"]["value"] == "C"]
    assert accepted and all(s["id"].startswith("physical_stability") for s in accepted)

    # the mockllm task: the bundled rule and the backtracking rule, every epoch
    task = out["logs"]["eval"]
    assert len(task["samples"]) == len(spec["samples"]) * EPOCHS
    assert agree(run_cli, tmp_path / "b", task["samples"], "rule_scorer", "physical_stability") == 33
    assert agree(run_cli, tmp_path / "c", task["samples"], "rule_scorer1", str(hostile)) == 33
    slow = [s for s in task["samples"] if s["completion"] == SLOW_ANSWER]
    assert len(slow) == 1
    hostile_score = slow[0]["scores"]["rule_scorer1"]
    assert hostile_score["explanation"] == "rule error"
    assert "took longer than the limit of 2 s of CPU time" in hostile_score["metadata"]["detail"]
    huge = next(s for s in task["samples"] if s["completion"].startswith("ANSWER: unstable B over A"))
    assert len(huge["scores"]["rule_scorer"]["answer"]) <= 4000  # cut as check cuts it

    # metrics: accuracy, and the standard error clustered by image
    metrics = task["metrics"]["rule_scorer"]
    per_sample: dict[str, list[float]] = {}
    for s in task["samples"]:
        per_sample.setdefault(s["id"], []).append(s["scores"]["rule_scorer"]["value"] == "C")
    means = [sum(v) / len(v) for v in per_sample.values()]
    clusters = [keyaudit.image_of(i) or ("alone", i) for i in per_sample]
    assert metrics["accuracy"] == pytest.approx(sum(means) / len(means))
    assert metrics["clustered_stderr"] == pytest.approx(clustered_mean_se(means, clusters))
    assert metrics["clustered_stderr"] == pytest.approx(out["inspect_stderr"])  # inspect's own
    assert 0 < metrics["accuracy"] < 1 and metrics["clustered_stderr"] > 0

    # refusals: one line each, before any sample is scored
    refused = out["refusals"]
    assert refused["unknown rule"].startswith("UsageError: 'no_such_rule': no such rule file")
    assert refused["changed version"].startswith("RuleError: rules/physical_stability.toml: the rule's files are version")
    assert refused["bad id pattern"] == "UsageError: id_pattern lacks the named group(s) image, level"
    assert refused["two targets"] == (
        "DataError: sample x\\n1: the target holds 2 strings; a keyaudit rule scores against one key"
    )
    assert all("\n" not in message for message in refused.values())
