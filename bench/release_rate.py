"""Child of ``bench/scoring.py --release-rev``: time whichever keyaudit is importable.

    python bench/release_rate.py INPUTS.json

Reads ``{rule: {"stored": [[key, response], ...], "unique": [...]}}`` and prints
``{rule: {"stored": rate, "unique": rate}}`` (responses/s, best of 5 passes, a fresh scorer per
pass) as JSON; a release whose verdicts carry certainty (which the early releases did not judge)
also gives ``"unique_without_certainty"``, the same work as those releases. It imports the scorer from the package layout of either release: the stage rooms
(``engine.rule_language``, ``engine.load``) or the flat ``engine`` package before them, so the
same script times the current checkout and an earlier release installed elsewhere.
"""

from __future__ import annotations

import inspect
import json
import sys
import time

try:
    from keyaudit.engine.load.locate import resolve_rule_path
    from keyaudit.engine.rule_language.rules.rule import load_rule
    from keyaudit.engine.rule_language.scoring.scorer import Scorer
except ImportError:  # a release before the stage rooms
    from keyaudit.engine.locate import resolve_rule_path  # type: ignore[no-redef]
    from keyaudit.engine.rule import load_rule  # type: ignore[no-redef]
    from keyaudit.engine.scoring import Scorer  # type: ignore[no-redef]

PASSES = 5


def rate(rule: object, items: list[list[str]], **options: bool) -> float:
    def run() -> None:
        scorer = Scorer(rule)
        for key, response in items:
            scorer.score(key, response, **options)

    run()  # warm: parser built, caches loaded
    best = 0.0
    for _ in range(PASSES):
        started = time.perf_counter()
        run()
        best = max(best, len(items) / (time.perf_counter() - started))
    return best


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as stream:
        inputs = json.load(stream)
    rates = {}
    for name, sets in inputs.items():
        rule = load_rule(resolve_rule_path(name))
        rates[name] = {which: rate(rule, items) for which, items in sets.items()}
        if "certainty" in inspect.signature(Scorer.score).parameters:
            rates[name]["unique_without_certainty"] = rate(rule, sets["unique"], certainty=False)
    print(json.dumps(rates))


if __name__ == "__main__":
    main()
