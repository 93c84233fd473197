"""What the framework tests score and how they compare it with ``keyaudit score``.

The items are the physical_stability L5 rows of ``tests/data/Dataset`` (real GRIP-34 keys); each
gets three responses (the key verbatim, a right paraphrase, a wrong answer), and three more items
carry hostile responses: a 200,000-character answer line, a megabyte of reasoning, control and
escape characters, 50,000 nested brackets, 50,000 answer lines, an empty completion, and the one
answer a backtracking rule cannot finish (its scorer gives ``rule error`` at the time limit).
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "tests" / "data" / "Dataset" / "physical_stability_dataset_3000" / "answer_key.csv"
#: The answer a backtracking grammar (``(a|aa)+b``) cannot finish within the time limit.
SLOW_ANSWER = "ANSWER: stable " + "a" * 60
BACKTRACKING = (
    "start: _item*\n_item: status | bad | WORD\nstatus: STATUS\nbad: BAD\n"
    "STATUS.3: /stable|unstable/\nBAD.2: /(a|aa)+b/\nWORD: /\\S+/\n%ignore /\\s+/\n"
)
KEY_GRAMMAR = "start: status REST?\nstatus: STATUS\nSTATUS: /stable|unstable/\nREST: /;.*/\n"


def rows() -> list[dict[str, str]]:
    """The L5 rows of physical_stability in the CSV tree, in id order."""
    with DATASET.open(encoding="utf-8", newline="") as handle:
        found = [r for r in csv.DictReader(handle) if r["question_id"].endswith("_q5")]
    return sorted(found, key=lambda r: r["question_id"])


def styled(key: str) -> list[str]:
    """The key verbatim, a right paraphrase, a wrong answer: each a full response."""
    status = key.split(";")[0]
    if status == "unstable":
        upper, lower = key.split("joint between block ")[1][0], key.split("and block ")[1][0]
        right = f"Unstable — block {upper}'s centre of mass lies beyond the edge of block {lower}."
        wrong = "Stable — every remaining centre of mass is supported."
    else:
        right = "Stable: every centre of mass stays over its support."
        wrong = f"Unstable; the joint between block {chr(66)} and block A fails."
    return [
        f"Looking at the figure.\nANSWER: {key}",
        f"Step by step.\n**ANSWER:** {right}",
        f"ANSWER: {wrong}",
    ]


def samples() -> list[dict]:
    """``{id, target, responses}`` for every item; three responses each (one per epoch)."""
    items = rows()
    out = [{"id": r["question_id"], "target": r["groundtruth"], "responses": styled(r["groundtruth"])} for r in items]
    key = items[0]["groundtruth"]
    out += [
        {
            "id": "physical_stability_0901_q5",
            "target": key,
            "responses": [
                "ANSWER: " + "unstable B over A " * 12_000,
                "reasoning line\n" * 70_000 + "ANSWER: Unstable — B slides off A.",
                "ANSWER: unstable\x00 B\x1b[2J over\u2028 A",
            ],
        },
        {
            "id": "physical_stability_0902_q5",
            "target": key,
            "responses": [
                "ANSWER: " + "(" * 50_000 + "unstable",
                "ANSWER: x\n" * 50_000 + "ANSWER: Unstable — B slides off A.",
                "",
            ],
        },
        {"id": "no image in this id", "target": key, "responses": [SLOW_ANSWER, "ANSWER: unstable", "ANSWER: stable"]},
    ]
    return out


def backtracking_rule(folder: Path) -> Path:
    """A rule whose answer grammar backtracks catastrophically on :data:`SLOW_ANSWER`."""
    from hostile import status_rule

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "k.lark").write_text(KEY_GRAMMAR, encoding="utf-8")
    (folder / "a.lark").write_text(BACKTRACKING, encoding="utf-8")
    (folder / "rule.toml").write_text(status_rule(name="backtracking"), encoding="utf-8")
    return folder / "rule.toml"


def keyaudit_score(run_cli, folder: Path, rule: str, pairs: list[tuple[str, str]]) -> list[dict]:
    """``keyaudit score RULE --cases FILE`` on the pairs: one printed record per pair."""
    folder.mkdir(parents=True, exist_ok=True)
    cases = folder / "cases.jsonl"
    with cases.open("w", encoding="utf-8") as handle:
        for n, (key, response) in enumerate(pairs):
            handle.write(json.dumps({"id": n, "key": key, "response": response}) + "\n")
    result = run_cli("score", rule, "--cases", str(cases))
    assert result.code == 0, result.err
    printed = [json.loads(line) for line in result.out.splitlines()]
    assert [p["id"] for p in printed] == list(range(len(pairs)))
    shutil.rmtree(folder)
    return printed


def framework_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a framework's process: its data and caches in ``tmp_path``, offline."""
    import os

    env = dict(os.environ)
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "HF_HOME"):
        env[name] = str(tmp_path / name.lower())
    env.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env
