"""One inspect_ai process for tests/test_integration_inspect.py (not collected by pytest).

    python inspect_run.py SPEC.json OUT.json

SPEC names a real log to re-score and the samples of a mockllm task. In order, in this one
process (inspect_ai takes seconds to import):

1. ``inspect score LOG --scorer keyaudit/rule_scorer -S rule=… -S version=… --action append
   --output-file …`` through inspect's own console entry point, before anything here imports
   keyaudit's integration: inspect must find the scorer through the package entry point;
2. a mockllm task whose completions are SPEC's responses (one per epoch), scored by
   ``rule_scorer`` with the bundled rule and with a hostile (backtracking) rule;
3. the refusals: an unknown rule, a changed version, a sample with two targets, a bad id pattern;
4. inspect's own ``stderr(cluster=…)`` on the task's reduced scores, for the clustered metric.

OUT receives every sample's target, completion and Score, each log's metrics, and the above.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    spec_file, out_file = Path(sys.argv[1]), Path(sys.argv[2])
    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    out: dict = {}
    out["loaded_before_score"] = "keyaudit.integrations.inspect_ai" in sys.modules
    out["score_exit"] = run_inspect_cli(
        [
            "score",
            spec["log"],
            "--scorer",
            "keyaudit/rule_scorer",
            "-S",
            "rule=physical_stability",
            "-S",
            f"version={spec['version']}",
            "--action",
            "append",
            "--output-file",
            spec["rescored"],
            "--display",
            "none",
        ]
    )
    out["loaded_by_entry_point"] = "keyaudit.integrations.inspect_ai" in sys.modules
    out["eval_log"] = run_task(spec)
    out["refusals"] = refusals()
    out["logs"] = {name: dump(path) for name, path in (("rescored", spec["rescored"]), ("eval", out["eval_log"]))}
    out["inspect_stderr"] = inspect_clustered_stderr(out["eval_log"])
    out_file.write_text(json.dumps(out), encoding="utf-8")


def run_inspect_cli(args: list[str]) -> int:
    """``inspect ARGS`` as the console script runs it (``inspect_ai._cli.main:main``)."""
    from inspect_ai._cli.main import main as inspect_main

    argv = sys.argv
    sys.argv = ["inspect", *args]
    try:
        inspect_main()
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    finally:
        sys.argv = argv
    return 0


def run_task(spec: dict) -> str:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    from keyaudit.integrations.inspect_ai import rule_scorer

    by_input = {f"item {s['id']}": s["responses"] for s in spec["samples"]}
    calls: dict[str, int] = {}

    def output(messages, tools, tool_choice, config):
        prompt = messages[-1].text
        calls[prompt] = calls.get(prompt, 0) + 1
        text = by_input[prompt][calls[prompt] - 1]
        result = ModelOutput.from_content(model="mockllm/replay", content=text)
        # explicit usage: otherwise mockllm counts tokens with tiktoken, which downloads its table
        result.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return result

    samples = [Sample(id=s["id"], input=f"item {s['id']}", target=s["target"]) for s in spec["samples"]]
    task = Task(
        dataset=MemoryDataset(samples, name="keyaudit_mock"),
        solver=generate(),
        scorer=[rule_scorer("physical_stability"), rule_scorer(spec["hostile_rule"])],
    )
    model = get_model("mockllm/replay", custom_outputs=output)
    logs = inspect_eval(
        task,
        model=model,
        epochs=spec["epochs"],
        log_dir=spec["log_dir"],
        display="none",
        max_samples=1,
    )
    assert logs[0].status == "success", logs[0].error
    return logs[0].location


def refusals() -> dict[str, str]:
    from inspect_ai.scorer import Target

    import keyaudit
    from keyaudit.engine.api import DEFAULT_ID_PATTERN
    from keyaudit.integrations.inspect_ai import rule_scorer, score_sample

    found = {}
    attempts = {
        "unknown rule": lambda: rule_scorer("no_such_rule"),
        "changed version": lambda: rule_scorer("physical_stability", version="sha256:0000000000000000"),
        "bad id pattern": lambda: rule_scorer("physical_stability", id_pattern="^(?P<domain>.+)$"),
        "two targets": lambda: score_sample(
            keyaudit.load_rule("physical_stability"),
            {},
            DEFAULT_ID_PATTERN,
            "x\n1",
            Target(["a", "b"]),
            "ANSWER: stable",
        ),
    }
    for name, attempt in attempts.items():
        try:
            attempt()
            found[name] = ""
        except Exception as error:  # noqa: BLE001 - the test reads the message and its type
            found[name] = f"{type(error).__name__}: {error}"
    return found


def dump(path: str) -> dict:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(path)
    samples = []
    for sample in log.samples or []:
        scores = {
            name: {
                "value": s.value,
                "answer": s.answer,
                "explanation": s.explanation,
                "metadata": s.metadata,
            }
            for name, s in (sample.scores or {}).items()
        }
        samples.append(
            {
                "id": sample.id,
                "epoch": sample.epoch,
                "target": sample.target,
                "completion": sample.output.completion,
                "scores": scores,
            }
        )
    metrics = {
        score.name: {name: m.value for name, m in score.metrics.items()}
        for score in (log.results.scores if log.results else [])
    }
    return {"status": log.status, "samples": samples, "metrics": metrics}


def inspect_clustered_stderr(path: str) -> float:
    """inspect's own ``stderr(cluster="image")`` on the bundled rule's per-sample means, each
    sample clustered by its image (or alone when its id names none)."""
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import SampleScore, Score, stderr

    log = read_eval_log(path)
    values: dict = {}
    images: dict = {}
    for sample in log.samples or []:
        score = sample.scores["rule_scorer"]
        values.setdefault(sample.id, []).append(1.0 if score.value == "C" else 0.0)
        images[sample.id] = score.metadata["image"] or f"alone:{sample.id}"
    scores = [
        SampleScore(score=Score(value=sum(v) / len(v)), sample_id=i, sample_metadata={"image": images[i]})
        for i, v in values.items()
    ]
    return stderr(cluster="image")(scores)


if __name__ == "__main__":
    main()
