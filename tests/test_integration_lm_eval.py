"""The lm-evaluation-harness integration (issue 36, points 3, 4 and 5), with the real framework.

One lm-eval process (``tests/frameworks/lm_eval_run.py``) runs three tasks from YAML with a
registered mock LM, offline: ``process_results: !function`` with the bundled rule, ``metric:
!function keyaudit_accept`` with the rule named in the YAML, and a backtracking rule. Each
logged sample's metrics are compared here with ``keyaudit score`` on the same (key, response).
The plain functions are tested in-process too: they import nothing of lm-eval.
"""

from __future__ import annotations

import json
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
    rows,
    samples,
)

import keyaudit
from keyaudit.integrations.lm_eval import keyaudit_accept, process_results_for

RUNNER = ROOT / "tests" / "frameworks" / "lm_eval_run.py"
KEY = rows()[0]["groundtruth"]

TASK = """\
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {docs}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}\\nEnd with a line 'ANSWER: <answer>'.\\n"
doc_to_target: "{{{{groundtruth}}}}"
generation_kwargs:
  until: ["<|never|>"]
"""
PROCESS = """\
process_results: !function keyaudit_scoring.{function}
metric_list:
  - {{metric: keyaudit_accept, aggregation: mean, higher_is_better: true}}
  - {{metric: keyaudit_certain, aggregation: mean, higher_is_better: true}}
"""
METRIC = """\
metric_list:
  - metric: !function keyaudit_scoring.keyaudit_accept
    aggregation: mean
    higher_is_better: true
    rule: physical_stability
    version: "{version}"
"""
SHIM = """\
from keyaudit.integrations.lm_eval import keyaudit_accept, process_results_for

process_results = process_results_for("physical_stability", key_field="groundtruth", version="{version}")
hostile_results = process_results_for({hostile!r}, key_field="groundtruth")
"""


def write_tasks(folder: Path, version: str, hostile: Path) -> tuple[Path, dict[str, str]]:
    """The task folder (three YAMLs and the shim beside them) and each document's response."""
    tasks = folder / "tasks"
    tasks.mkdir(parents=True)
    docs, responses = [], {}
    prompts = {r["question_id"]: r["prompt"] for r in rows()}
    for sample in samples():
        for response in sample["responses"]:
            case = len(docs)
            docs.append(
                {
                    "question_id": sample["id"],
                    "groundtruth": sample["target"],
                    "prompt": prompts.get(sample["id"], "Is the stack stable?"),
                    "case": case,
                }
            )
            responses[str(case)] = response
    data = folder / "docs.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    head = {name: TASK.format(name=name, docs=data) for name in ("ka_process", "ka_metric", "ka_hostile")}
    (tasks / "ka_process.yaml").write_text(head["ka_process"] + PROCESS.format(function="process_results"), encoding="utf-8")
    (tasks / "ka_metric.yaml").write_text(head["ka_metric"] + METRIC.format(version=version), encoding="utf-8")
    (tasks / "ka_hostile.yaml").write_text(head["ka_hostile"] + PROCESS.format(function="hostile_results"), encoding="utf-8")
    (tasks / "keyaudit_scoring.py").write_text(SHIM.format(version=version, hostile=str(hostile)), encoding="utf-8")
    return tasks, responses


@pytest.mark.skipif(
    find_spec("lm_eval") is None, reason="lm-eval is not installed: pip install 'keyaudit[lm-eval]'"
)
def test_lm_eval_scores_documents_exactly_as_keyaudit_score(run_cli, tmp_path: Path) -> None:
    version = keyaudit.load_rule("physical_stability").version
    hostile = backtracking_rule(tmp_path / "hostile")
    tasks, responses = write_tasks(tmp_path, version, hostile)
    spec = {"task_dir": str(tasks), "tasks": ["ka_process", "ka_metric", "ka_hostile"], "responses": responses}
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
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
    rules = {"ka_process": "physical_stability", "ka_metric": "physical_stability", "ka_hostile": str(hostile)}
    for task, rule in rules.items():
        logged = out["samples"][task]
        assert len(logged) == len(responses) == 33, task
        pairs = [(s["doc"]["groundtruth"], s["resps"][0][0]) for s in logged]
        assert [r for _, r in pairs] == [responses[str(s["doc"]["case"])] for s in logged]
        assert all(s["filtered_resps"] == [s["resps"][0][0]] and s["target"] == s["doc"]["groundtruth"] for s in logged)
        printed = keyaudit_score(run_cli, tmp_path / task, rule, pairs)
        for sample, line in zip(logged, printed, strict=True):
            where = f"{task} case {sample['doc']['case']}"
            assert sample["metrics"]["keyaudit_accept"] == float(line["accept"]), where
            if task != "ka_metric":
                assert sample["metrics"]["keyaudit_certain"] == float(not line["uncertain"]), where
        accepted = [line["accept"] for line in printed]
        assert out["results"][task]["keyaudit_accept,none"] == pytest.approx(sum(accepted) / len(accepted))
        if task != "ka_hostile":
            assert 0 < sum(accepted) < len(accepted)
    slow = [s for s in out["samples"]["ka_hostile"] if s["resps"][0][0] == SLOW_ANSWER]
    assert len(slow) == 1 and slow[0]["metrics"]["keyaudit_accept"] == 0.0
    verdict = keyaudit_score(run_cli, tmp_path / "slow", str(hostile), [(KEY, SLOW_ANSWER)])[0]
    assert verdict["reason"] == "rule error" and "took longer than the limit" in verdict["detail"]


# ---- the plain functions, in this process (lm-eval is never imported by them)


def test_process_results_reads_the_key_from_the_named_field() -> None:
    process = process_results_for("physical_stability", key_field="groundtruth")
    rule = keyaudit.load_rule("physical_stability")
    right = "Thinking.\nANSWER: Unstable — B slides off A."
    assert process({"groundtruth": KEY}, [right]) == {
        "keyaudit_accept": float(rule.score(KEY, right).accept),
        "keyaudit_certain": 1.0,
    }
    assert process({"groundtruth": KEY}, [[right, "ANSWER: stable"]]) == {  # every repeat kept
        "keyaudit_accept": 0.5,
        "keyaudit_certain": 1.0,
    }
    hedged = process({"groundtruth": KEY}, ["ANSWER: unstable, maybe B over A or C over B"])
    assert hedged == {"keyaudit_accept": 0.0, "keyaudit_certain": 0.0}


def test_process_results_refuses_what_it_cannot_score_naming_the_document() -> None:
    process = process_results_for("physical_stability", key_field="groundtruth")
    with pytest.raises(keyaudit.DataError, match="^document q\\\\n7: no string field 'groundtruth'"):
        process({"question_id": "q\n7"}, ["ANSWER: stable"])
    with pytest.raises(keyaudit.DataError, match="a response is not a string"):
        process({"groundtruth": KEY}, [3])
    with pytest.raises(keyaudit.DataError, match="no response to score"):
        process({"groundtruth": KEY}, [])
    with pytest.raises(keyaudit.UsageError, match="key_field"):
        process_results_for("physical_stability", key_field="")
    with pytest.raises(keyaudit.RuleError, match="not the adopted version"):
        process_results_for("physical_stability", key_field="k", version="sha256:0000000000000000")


def test_the_metric_scores_predictions_against_references_with_the_named_rule() -> None:
    right, wrong = "ANSWER: Unstable — B slides off A.", "ANSWER: stable"
    assert keyaudit_accept([KEY], [right], rule="physical_stability") == 1.0
    assert keyaudit_accept([KEY, KEY], [right, wrong], rule="physical_stability") == 0.5
    version = keyaudit.load_rule("physical_stability").version
    assert keyaudit_accept([KEY], [wrong], rule="physical_stability", version=version) == 0.0
    with pytest.raises(keyaudit.UsageError, match="add 'rule: NAME'"):
        keyaudit_accept([KEY], [right])
    with pytest.raises(keyaudit.DataError, match="one reference per prediction"):
        keyaudit_accept([KEY], [right, wrong], rule="physical_stability")
    with pytest.raises(keyaudit.DataError, match="must be strings"):
        keyaudit_accept([KEY], [None], rule="physical_stability")
