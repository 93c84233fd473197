"""Write the real framework logs under ``tests/data/logs/`` that keyaudit's readers are tested on.

Not run by the tests and not a keyaudit dependency: the committed files are the test data. To
regenerate them (offline; both frameworks run here with mock models), in a scratch venv:

    pip install inspect-ai==0.3.285 lm-eval==0.4.13
    python tests/data/logs/make_logs.py            # rewrites tests/data/logs/{inspect,lm-eval}/

The tasks are tiny: real GRIP-Benchmark-34 items (physical_stability and gear_train, images
0001-0008, levels 4 and 5) read from ``tests/data/Dataset/*/answer_key.csv`` (the published
layout; prompts as published, keys equal to the embedded example's). The "models" are mocks whose
answers are chosen deterministically per (model, item, epoch) from a few styles: the key verbatim
(strict-correct), a right paraphrase (strict-wrong, a good rule accepts it), and a wrong answer.

What is written, and why each file exists:

* ``inspect/synth-atlas-xl.eval`` — inspect_ai ``.eval`` (ZIP, zstd members), model
  ``mockllm/synth-atlas-xl``, 2 epochs, two scorers (``answer_line``: the strict ANSWER-line match,
  and ``includes``), images as ``attachment://`` references.
* ``inspect/synth-birch-7b.json`` — the same task's L5 items with ``--log-format json``, 1 epoch.
* ``inspect/failed-synth-cedar-pro.eval`` — a run killed mid-way: the ``.eval`` has no
  ``header.json`` (what inspect leaves after a crash).
* ``inspect/error-synth-fjord-flash.eval`` — a run whose model failed on its third call: inspect
  writes a header with ``status: error`` and only the samples it finished.
* ``inspect/mismatch-synth-ember-30b.eval`` — a run whose task carried one stale target (the
  key of another item), for the "log target differs from the benchmark key" error.
* ``lm-eval/synth-dune-mini/samples_grip34_l45_<ts>.jsonl`` and ``results_<ts>.json`` —
  lm-evaluation-harness ``--log_samples`` output of a registered mock ``LM``: ``repeats: 2``, two
  filters (``answer-line``: regex on the ANSWER line then ``take_first``; ``raw``:
  ``take_first``), metric ``exact_match``; the benchmark id is ``doc.question_id``.
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASET = HERE.parent / "Dataset"
DOMAINS = ("physical_stability", "gear_train")
LEVELS = (4, 5)


# ---- the items -------------------------------------------------------------------------------


def items() -> list[dict[str, str]]:
    """The L4/L5 rows of the CSV tree, in id order."""
    rows = []
    for domain in DOMAINS:
        path = DATASET / f"{domain}_dataset_3000" / "answer_key.csv"
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                if int(row["question_id"].rsplit("_q", 1)[1]) in LEVELS:
                    rows.append(row)
    return sorted(rows, key=lambda r: r["question_id"])


def tiny_png(seed: str) -> str:
    """A 1x1 PNG data URI whose colour depends on ``seed`` (one distinct "image" per image id)."""
    r, g, b = hashlib.sha256(seed.encode()).digest()[:3]

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = zlib.compress(bytes([0, r, g, b]))
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", raw)
        + chunk(b"IEND", b"")
    )
    import base64

    return "data:image/png;base64," + base64.b64encode(png).decode()


# ---- the mock answers ------------------------------------------------------------------------


def _pick(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16)


def answer(model: str, item_id: str, key: str, epoch: int) -> str:
    """A full response ending in an ANSWER line: verbatim key, right paraphrase or wrong answer."""
    style = ("verbatim", "paraphrase", "paraphrase", "wrong")[_pick(model, item_id, epoch) % 4]
    reasoning = "Looking at the figure step by step.\n"
    if style == "verbatim":
        return reasoning + f"ANSWER: {key}"
    if item_id.startswith("physical_stability") and item_id.endswith("_q5"):
        status = key.split(";")[0]
        joint = (
            key.split("joint between block ")[1][0] + key.split("and block ")[1][0]
            if status == "unstable"
            else ""
        )
        if style == "paraphrase":
            text = (
                f"Unstable — block {joint[0]}'s centre of mass lies beyond the edge of block {joint[1]}."
                if joint
                else "Stable — every remaining centre of mass is supported."
            )
        else:
            text = "Stable — every remaining centre of mass is supported." if joint else "unstable"
        return reasoning + f"**ANSWER:** {text}"
    if item_id.startswith("gear_train") and item_id.endswith("_q5"):
        speed = key.split(";")[0]
        said = {
            "increase": "It speeds up",
            "decrease": "It slows down",
            "stay the same": "Its speed is unchanged",
        }
        if style == "paraphrase":
            return reasoning + f"ANSWER: {said[speed]}, and it keeps turning the same way."
        other = "decrease" if speed != "decrease" else "increase"
        return reasoning + f"ANSWER: {said[other]}; direction unchanged"
    # L4 items: short keys, mostly restated
    if style == "wrong":
        return reasoning + "ANSWER: I cannot tell from the figure."
    return reasoning + f"ANSWER: {key}"


# ---- inspect_ai ------------------------------------------------------------------------------


def inspect_task(rows: list[dict[str, str]], stale: str | None = None):
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
    from inspect_ai.scorer import Score, Target, accuracy, includes, scorer
    from inspect_ai.solver import generate

    @scorer(metrics=[accuracy()])
    def answer_line():
        """The benchmark's strict scorer: the last ANSWER line equals the key (case, spaces)."""

        async def score(state, target: Target) -> Score:
            import re

            lines = [
                m.group(1)
                for m in re.finditer(
                    r"^[\s*_#>`~-]*answer[*_`]*\s*:[*_`]*[ \t]*(.*?)\s*$",
                    state.output.completion,
                    re.I | re.M,
                )
            ]
            said = " ".join(lines[-1].split()).casefold() if lines else ""
            ok = said == " ".join(target.text.split()).casefold()
            return Score(value="C" if ok else "I", answer=lines[-1] if lines else None)

        return score

    samples = []
    for i, row in enumerate(rows):
        target = row["groundtruth"]
        if stale is not None and i == 1:
            target = stale  # a stale key, as an outdated copy of the dataset would carry
        image = row["image"].removesuffix(".png")
        samples.append(
            Sample(
                id=row["question_id"],
                input=[
                    ChatMessageUser(
                        content=[
                            ContentImage(image=tiny_png(image)),
                            ContentText(
                                text=row["prompt"] + "\nEnd with a line 'ANSWER: <answer>'."
                            ),
                        ]
                    )
                ],
                target=target,
                metadata={"task": row["task"]},
            )
        )
    return Task(
        name="grip34_l45",
        dataset=MemoryDataset(samples, name="grip34_l45"),
        solver=generate(),
        scorer=[answer_line(), includes()],
    )


def mock_outputs(
    model: str,
    rows: list[dict[str, str]],
    die_after: int | None = None,
    fail_after: int | None = None,
):
    """A mockllm output callable: the item is recognised from its image and prompt."""
    from inspect_ai.model import ModelOutput, ModelUsage

    by_input = {}
    for row in rows:
        by_input[(tiny_png(row["image"].removesuffix(".png")), row["prompt"])] = row
    calls: dict[str, int] = {}
    total = [0]

    def output(messages, tools, tool_choice, config):
        content = messages[-1].content
        image = next(c.image for c in content if c.type == "image")
        text = next(c.text for c in content if c.type == "text").split("\nEnd with")[0]
        row = by_input[(image, text)]
        item_id = row["question_id"]
        calls[item_id] = calls.get(item_id, 0) + 1
        total[0] += 1
        if die_after is not None and total[0] > die_after:
            os._exit(1)  # the process dies mid-run: no header.json is ever written
        if fail_after is not None and total[0] > fail_after:
            raise RuntimeError("mock model failure")  # the run ends with status "error"
        completion = answer(model, item_id, row["groundtruth"], calls[item_id])
        result = ModelOutput.from_content(model=f"mockllm/{model}", content=completion)
        # Explicit usage: otherwise mockllm counts tokens with tiktoken, which downloads its table.
        words = len(text.split())
        result.usage = ModelUsage(
            input_tokens=words,
            output_tokens=len(completion.split()),
            total_tokens=words + len(completion.split()),
        )
        return result

    return output


def run_inspect(
    name: str,
    model: str,
    *,
    epochs: int,
    fmt: str,
    stale: bool = False,
    die_after: int | None = None,
    fail_after: int | None = None,
    level: int | None = None,
) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    rows = [r for r in items() if level is None or r["question_id"].endswith(f"_q{level}")]
    stale_key = rows[0]["groundtruth"] if stale else None
    work = HERE / "inspect" / f".work-{name}"
    shutil.rmtree(work, ignore_errors=True)
    mock = get_model(
        f"mockllm/{model}", custom_outputs=mock_outputs(model, rows, die_after, fail_after)
    )
    inspect_eval(
        inspect_task(rows, stale_key),
        model=mock,
        epochs=epochs,
        log_dir=str(work),
        log_format=fmt,
        max_samples=1,
        log_buffer=4,
        display="none",
    )


def collect_inspect(name: str, suffix: str) -> None:
    work = HERE / "inspect" / f".work-{name}"
    logs = sorted(work.glob(f"*{suffix}"))
    assert len(logs) == 1, logs
    shutil.move(str(logs[0]), HERE / "inspect" / f"{name}{suffix}")
    shutil.rmtree(work)


# ---- lm-evaluation-harness -------------------------------------------------------------------

TASK_YAML = """\
task: grip34_l45
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
  do_sample: true
repeats: 2
filter_list:
  - name: answer-line
    filter:
      - function: regex
        regex_pattern: "ANSWER:\\\\**\\\\s*(.*)"
      - function: take_first
  - name: raw
    filter:
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
"""


def run_lm_eval() -> None:
    import json

    out = HERE / "lm-eval"
    shutil.rmtree(out, ignore_errors=True)
    work = HERE / ".work-lm-eval"
    shutil.rmtree(work, ignore_errors=True)
    (work / "tasks").mkdir(parents=True)
    docs = work / "docs.jsonl"
    docs.write_text("".join(json.dumps(r) + "\n" for r in items()), encoding="utf-8")
    (work / "tasks" / "grip34_l45.yaml").write_text(TASK_YAML.format(docs=docs), encoding="utf-8")
    runner = work / "run.py"
    runner.write_text(LM_RUNNER, encoding="utf-8")
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", PYTHONPATH=str(HERE))
    subprocess.run(
        [sys.executable, str(runner), str(work / "tasks"), str(out)], check=True, env=env
    )
    shutil.rmtree(work)


LM_RUNNER = """\
import sys
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager

from make_logs import answer

MODEL = "synth-dune-mini"


@register_model("synth")
class SynthLM(LM):
    def __init__(self, pretrained=MODEL, **kwargs):
        super().__init__()
        self.name = pretrained
        self.calls = {}

    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for request in requests:
            doc = request.doc
            item = doc["question_id"]
            self.calls[item] = self.calls.get(item, 0) + 1
            out.append(answer(self.name, item, doc["groundtruth"], self.calls[item]))
        return out

    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError


tasks, output = sys.argv[1], sys.argv[2]
tracker = EvaluationTracker(output_path=output)
results = simple_evaluate(
    model="synth",
    model_args="pretrained=" + MODEL,
    tasks=["grip34_l45"],
    task_manager=TaskManager(include_path=tasks),
    log_samples=True,
    evaluation_tracker=tracker,
)
tracker.save_results_aggregated(results=results, samples=results["samples"])
for task_name in results["configs"]:
    tracker.save_results_samples(task_name=task_name, samples=results["samples"][task_name])
"""


def main() -> None:
    for old in (HERE / "inspect").glob("*"):
        if old.is_file():
            old.unlink()
    (HERE / "inspect").mkdir(exist_ok=True)
    run_inspect("synth-atlas-xl", "synth-atlas-xl", epochs=2, fmt="eval")
    collect_inspect("synth-atlas-xl", ".eval")
    run_inspect("synth-birch-7b", "synth-birch-7b", epochs=1, fmt="json", level=5)
    collect_inspect("synth-birch-7b", ".json")
    run_inspect("error-synth-fjord-flash", "synth-fjord-flash", epochs=1, fmt="eval", fail_after=3)
    collect_inspect("error-synth-fjord-flash", ".eval")
    run_inspect("mismatch-synth-ember-30b", "synth-ember-30b", epochs=1, fmt="eval", stale=True)
    collect_inspect("mismatch-synth-ember-30b", ".eval")
    # The crash must not take this script down: run it in a child process.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import make_logs; make_logs.run_inspect('failed-synth-cedar-pro', "
            "'synth-cedar-pro', epochs=1, fmt='eval', die_after=10)",
        ],
        env=dict(os.environ, PYTHONPATH=str(HERE)),
        check=False,
    )
    collect_inspect("failed-synth-cedar-pro", ".eval")
    run_lm_eval()


if __name__ == "__main__":
    main()
