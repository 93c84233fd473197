"""The audited rule as the scorer, on the example: ``inspect score`` and lm-eval against ``keyaudit score``.

    python bench/adoption.py [--work DIR]        # writes bench/results/adoption.md

Needs ``pip install -e '.[inspect,lm-eval]'`` (the test extra has both). On the embedded
example's physical_stability L5 items that have stored responses (50 images, 10 models: 500
responses), offline, each framework in its own process with its data and caches under the work
folder:

1. **inspect_ai**: one ``.eval`` log per model, written by a mockllm task whose completions are the
   model's stored responses (scored by inspect's ``includes()``, standing for a benchmark's own
   string scorer); then, per log, the real console command ``inspect score LOG --scorer
   keyaudit/rule_scorer -S rule=physical_stability -S version=V --action append --output-file
   NEW``; every re-scored sample read back.
2. **lm-evaluation-harness**: one task YAML with ``process_results: !function`` (the shim beside
   it names the rule and its version), run once per model with a registered mock LM answering
   each document with the model's stored response, ``log_samples`` on.
3. ``keyaudit score physical_stability --cases FILE`` (the console command) on every (key,
   response) pair of both; each sample's verdict, reason, uncertain reasons, output values and
   detail compared with the framework's.
4. ``keyaudit check physical_stability --responses <re-scored logs> --scorer rule_scorer``: with
   the rule's own verdicts as the current score, no verdict flips either way.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "adoption.md"
EXAMPLE = ROOT / "engine" / "examples" / "grip34"
RULE = "physical_stability"
BIN = Path(sys.executable).parent

TASK_YAML = """\
task: grip34_physical_stability
dataset_path: json
dataset_kwargs:
  data_files:
    test: {docs}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}\\nEnd with a line 'ANSWER: <answer>'.\\n"
doc_to_target: "{{{{groundtruth}}}}"
generation_kwargs:
  until: ["<|end|>"]
process_results: !function keyaudit_scoring.process_results
metric_list:
  - {{metric: keyaudit_accept, aggregation: mean, higher_is_better: true}}
  - {{metric: keyaudit_certain, aggregation: mean, higher_is_better: true}}
"""
SHIM = """\
from keyaudit.integrations.lm_eval import process_results_for

process_results = process_results_for("physical_stability", key_field="groundtruth", version="{version}")
"""
PROMPT = "After removing the top block, is the stack stable? If not, at which joint does it fail?"


def example_items() -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The L5 keys of physical_stability with stored responses, and each model's responses."""
    keys = {}
    with gzip.open(EXAMPLE / "keys" / f"{RULE}.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["id"].endswith("_q5"):
                keys[row["id"]] = row["answer"]
    by_model: dict[str, dict[str, str]] = {}
    for path in sorted((EXAMPLE / "responses").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if row["id"] in keys:
                    by_model.setdefault(path.name.removesuffix(".jsonl.gz"), {})[row["id"]] = row["response"]
    used = {i for responses in by_model.values() for i in responses}
    return {i: k for i, k in sorted(keys.items()) if i in used}, by_model


# ---- steps run in their own processes -----------------------------------------------------------


def step_inspect_logs(work: Path) -> None:
    """One .eval per model: a mockllm task replaying the model's stored responses."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    keys, by_model = example_items()
    for model, responses in by_model.items():

        def output(messages, tools, tool_choice, config, responses=responses, model=model):
            text = responses[messages[-1].text.removeprefix("item ")]
            result = ModelOutput.from_content(model=f"mockllm/{model}", content=text)
            result.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return result

        samples = [Sample(id=i, input=f"item {i}", target=keys[i]) for i in sorted(responses)]
        task = Task(
            name="grip34_physical_stability",
            dataset=MemoryDataset(samples),
            solver=generate(),
            scorer=includes(),
        )
        mock = get_model(f"mockllm/{model}", custom_outputs=output)
        logs = inspect_eval(task, model=mock, log_dir=str(work / "inspect" / model), display="none")
        assert logs[0].status == "success"


def step_inspect_read(work: Path) -> None:
    """Every re-scored sample's target, completion and keyaudit Score, as JSON."""
    from inspect_ai.log import read_eval_log

    rows, metrics = [], {}
    for path in sorted((work / "rescored").glob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            score = sample.scores["rule_scorer"]
            rows.append(
                {
                    "model": path.stem,
                    "id": sample.id,
                    "key": sample.target,
                    "response": sample.output.completion,
                    "accept": score.value == "C",
                    "reason": "" if score.explanation == "accepted" else score.explanation,
                    "uncertain": score.metadata["uncertain"],
                    "values": score.metadata["values"],
                    "detail": score.metadata.get("detail", ""),
                    "includes": sample.scores["includes"].value == "C",
                }
            )
        scores = {s.name: s for s in log.results.scores}["rule_scorer"]
        metrics[path.stem] = {m: v.value for m, v in scores.metrics.items()}
    (work / "inspect-samples.json").write_text(json.dumps({"rows": rows, "metrics": metrics}), encoding="utf-8")


def step_lm_eval(work: Path) -> None:
    """The task YAML once per model, with a mock LM replaying the model's stored responses."""
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model
    from lm_eval.tasks import TaskManager

    _, by_model = example_items()

    @register_model("replay")
    class Replay(LM):
        def __init__(self, pretrained: str = "", **kwargs) -> None:
            super().__init__()
            self.responses = by_model[pretrained]

        def generate_until(self, requests, disable_tqdm=False):
            return [self.responses[r.doc["question_id"]] for r in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    rows, results = [], {}
    manager = TaskManager(include_path=str(work / "tasks"))
    for model in by_model:
        run = simple_evaluate(
            model="replay",
            model_args=f"pretrained={model}",
            tasks=["grip34_physical_stability"],
            task_manager=manager,
            log_samples=True,
        )
        results[model] = run["results"]["grip34_physical_stability"]
        for sample in run["samples"]["grip34_physical_stability"]:
            rows.append(
                {
                    "model": model,
                    "id": sample["doc"]["question_id"],
                    "key": sample["doc"]["groundtruth"],
                    "response": sample["resps"][0][0],
                    "accept": sample["keyaudit_accept"] == 1.0,
                    "certain": sample["keyaudit_certain"] == 1.0,
                }
            )
    (work / "lm-eval-samples.json").write_text(json.dumps({"rows": rows, "results": results}), encoding="utf-8")


STEPS = {"inspect-logs": step_inspect_logs, "inspect-read": step_inspect_read, "lm-eval": step_lm_eval}


# ---- the run -------------------------------------------------------------------------------------


def run(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])}...: exit {done.returncode}\n{done.stderr[-3000:]}")
    return time.monotonic() - started, done.stdout


def keyaudit_score(rows: list[dict], work: Path, env: dict[str, str], name: str) -> tuple[list[dict], float]:
    cases = work / f"{name}-cases.jsonl"
    with cases.open("w", encoding="utf-8") as handle:
        for n, row in enumerate(rows):
            handle.write(json.dumps({"id": n, "key": row["key"], "response": row["response"]}) + "\n")
    seconds, out = run([str(BIN / "keyaudit"), "score", RULE, "--cases", str(cases)], env, work)
    return [json.loads(line) for line in out.splitlines()], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--step", choices=sorted(STEPS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        STEPS[args.step](args.work)
        return
    work = (args.work or Path(tempfile.mkdtemp(prefix="keyaudit-adoption-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1")
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "HF_HOME"):
        env[name] = str(work / name.lower())
    import keyaudit

    version = keyaudit.load_rule(RULE).version
    keys, by_model = example_items()
    me = [sys.executable, str(Path(__file__).resolve())]
    times = {}

    times["inspect eval (10 mockllm logs)"], _ = run([*me, "--step", "inspect-logs", "--work", str(work)], env, work)
    (work / "rescored").mkdir(exist_ok=True)
    score_seconds = []
    for model in by_model:
        log = next((work / "inspect" / model).glob("*.eval"))
        command = [
            str(BIN / "inspect"), "score", str(log), "--scorer", "keyaudit/rule_scorer",
            "-S", f"rule={RULE}", "-S", f"version={version}", "--action", "append",
            "--output-file", str(work / "rescored" / f"{model}.eval"), "--display", "none",
        ]  # fmt: skip
        seconds, _ = run(command, env, work)
        score_seconds.append(seconds)
    times["inspect score (per log, mean)"] = sum(score_seconds) / len(score_seconds)
    run([*me, "--step", "inspect-read", "--work", str(work)], env, work)
    logged = json.loads((work / "inspect-samples.json").read_text(encoding="utf-8"))
    inspect_rows = logged["rows"]

    (work / "tasks").mkdir(exist_ok=True)
    docs = work / "physical_stability_l5.jsonl"
    docs.write_text(
        "".join(json.dumps({"question_id": i, "prompt": PROMPT, "groundtruth": k}) + "\n" for i, k in keys.items()),
        encoding="utf-8",
    )
    (work / "tasks" / "grip34_physical_stability.yaml").write_text(TASK_YAML.format(docs=docs), encoding="utf-8")
    (work / "tasks" / "keyaudit_scoring.py").write_text(SHIM.format(version=version), encoding="utf-8")
    times["lm-eval (10 runs, one process)"], _ = run([*me, "--step", "lm-eval", "--work", str(work)], env, work)
    lm = json.loads((work / "lm-eval-samples.json").read_text(encoding="utf-8"))

    inspect_lines, times["keyaudit score (inspect pairs)"] = keyaudit_score(inspect_rows, work, env, "inspect")
    lm_lines, times["keyaudit score (lm-eval pairs)"] = keyaudit_score(lm["rows"], work, env, "lm-eval")

    outputs = keyaudit.load_rule(RULE).outputs
    table = {model: {"inspect": [0, 0], "lm-eval": [0, 0], "accepted": 0, "strict": 0} for model in by_model}
    disagreements = []
    for row, line in zip(inspect_rows, inspect_lines, strict=True):
        same = (
            row["accept"] == line["accept"]
            and row["reason"] == line["reason"]
            and row["uncertain"] == line["uncertain"]
            and row["values"] == {name: line[name] for name in outputs}
            and row["detail"] == line.get("detail", "")
        )
        entry = table[row["model"]]
        entry["inspect"][0] += same
        entry["inspect"][1] += 1
        entry["accepted"] += line["accept"]
        entry["strict"] += row["includes"]
        if not same:
            disagreements.append(("inspect", row["model"], row["id"]))
    for row, line in zip(lm["rows"], lm_lines, strict=True):
        same = row["accept"] == line["accept"] and row["certain"] == (not line["uncertain"])
        table[row["model"]]["lm-eval"][0] += same
        table[row["model"]]["lm-eval"][1] += 1
        if not same:
            disagreements.append(("lm-eval", row["model"], row["id"]))

    seconds, out = run(
        [str(BIN / "keyaudit"), "check", RULE, "--responses", str(work / "rescored"), "--scorer", "rule_scorer",
         "--resamples", "1000", "--json", "-"],
        env, work,
    )  # fmt: skip
    times["keyaudit check --responses (re-scored logs)"] = seconds
    audit = json.loads(out)
    flips = {m["model"]: (len(m["flips_up"]), len(m["flips_down"])) for m in audit["models"]}
    write_results(version, keys, table, disagreements, flips, logged["metrics"], lm["results"], times)


def write_results(version, keys, table, disagreements, flips, metrics, lm_results, times) -> None:
    n_inspect = sum(e["inspect"][1] for e in table.values())
    n_lm = sum(e["lm-eval"][1] for e in table.values())
    agree_inspect = sum(e["inspect"][0] for e in table.values())
    agree_lm = sum(e["lm-eval"][0] for e in table.values())
    lines = [
        "# The audited rule as the scorer, on the example (bench/adoption.py)",
        "",
        f"physical_stability (version `{version}`) on the embedded example's {len(keys)} L5 items with",
        f"stored responses, {len(table)} models: {n_inspect} responses. Python {platform.python_version()},",
        f"{platform.machine()}, run {time.strftime('%Y-%m-%d')}; `python bench/adoption.py` rewrites this file.",
        "",
        f"- `inspect score`: **{agree_inspect} of {n_inspect}** samples ({agree_inspect / n_inspect:.0%}) have the verdict, reason,",
        "  uncertain reasons, output values and detail `keyaudit score` gives on the same (target, completion).",
        f"- lm-eval `process_results`: **{agree_lm} of {n_lm}** documents ({agree_lm / n_lm:.0%}) have `keyaudit score`'s",
        "  verdict (`keyaudit_accept`) and certainty (`keyaudit_certain`).",
        f"- `keyaudit check --responses <re-scored logs> --scorer rule_scorer`: flips wrong → right / right → wrong"
        f" {sum(f[0] for f in flips.values())} / {sum(f[1] for f in flips.values())}.",
        "",
        "| model | inspect agree | lm-eval agree | rule accepts | strict accepts (includes()) | inspect accuracy ± clustered_stderr | lm-eval keyaudit_accept ± stderr | check flips |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for model, e in table.items():
        up, down = flips.get(f"mockllm/{model}", ("?", "?"))
        lines.append(
            f"| {model} | {e['inspect'][0]}/{e['inspect'][1]} | {e['lm-eval'][0]}/{e['lm-eval'][1]} |"
            f" {e['accepted']}/{e['inspect'][1]} | {e['strict']}/{e['inspect'][1]} |"
            f" {metrics[model]['accuracy']:.2f} ± {metrics[model]['clustered_stderr']:.3f} |"
            f" {lm_results[model]['keyaudit_accept,none']:.2f} ± {lm_results[model]['keyaudit_accept_stderr,none']:.3f} |"
            f" {up} / {down} |"
        )
    lines += ["", "Disagreements: " + (", ".join(f"{f} {m} {i}" for f, m, i in disagreements) or "none") + ".", ""]
    lines += ["Wall times on the shared machine:", "", "| step | seconds |", "|---|---|"]
    lines += [f"| {name} | {seconds:.1f} |" for name, seconds in times.items()]
    lines += [
        "",
        "The commands a user types (the run above used exactly these, with the example's logs and a",
        "mock model in place of a real one):",
        "",
        "```bash",
        "pip install 'keyaudit[inspect]'",
        f"inspect score logs/run.eval --scorer keyaudit/rule_scorer -S rule={RULE} \\",
        f"    -S version={version} --action append --output-file logs/run-keyaudit.eval",
        "pip install 'keyaudit[lm-eval]'",
        "lm_eval --model hf --model_args pretrained=MODEL --tasks grip34_physical_stability \\",
        "    --include_path tasks --log_samples --output_path results",
        "```",
        "",
        "with `tasks/grip34_physical_stability.yaml` and `tasks/keyaudit_scoring.py` as in",
        "docs/adopting.md. The example's stored strict verdicts are 0 of 50 for every model too: no",
        "response repeats its key verbatim.",
        "",
    ]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
