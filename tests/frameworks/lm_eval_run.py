"""One lm-evaluation-harness process for tests/test_integration_lm_eval.py (not collected).

    python lm_eval_run.py SPEC.json OUT.json

SPEC names a folder of task YAMLs (with the ``keyaudit_scoring.py`` their ``!function`` lines
import), the tasks to run and each document's response. A registered mock ``LM`` answers each
document with its response; ``simple_evaluate`` runs the tasks with ``log_samples``; OUT receives
every logged sample (document, target, raw and filtered responses, metrics) and the results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    spec_file, out_file = Path(sys.argv[1]), Path(sys.argv[2])
    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model
    from lm_eval.tasks import TaskManager

    responses = spec["responses"]

    @register_model("keyaudit-replay")
    class Replay(LM):
        """Answers each document with the response SPEC gives its ``case``."""

        def generate_until(self, requests, disable_tqdm=False):
            return [responses[str(request.doc["case"])] for request in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    results = simple_evaluate(
        model="keyaudit-replay",
        tasks=spec["tasks"],
        task_manager=TaskManager(include_path=spec["task_dir"]),
        log_samples=True,
    )
    out = {
        "results": results["results"],
        "samples": {
            task: [
                {
                    "doc": s["doc"],
                    "target": s["target"],
                    "resps": s["resps"],
                    "filtered_resps": s["filtered_resps"],
                    "filter": s["filter"],
                    "metrics": {name: s[name] for name in s["metrics"]},
                }
                for s in samples
            ]
            for task, samples in results["samples"].items()
        },
    }
    out_file.write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main()
