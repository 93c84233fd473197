"""keyaudit's scorers for the frameworks benchmarks already run, each an optional extra.

``inspect_ai``
    The inspect_ai scorer ``keyaudit/rule_scorer`` (``pip install 'keyaudit[inspect]'``),
    registered through inspect_ai's ``inspect_ai`` entry point so that ``inspect score LOG
    --scorer keyaudit/rule_scorer -S rule=NAME`` finds it.
``lm_eval``
    ``process_results`` and a metric for lm-evaluation-harness task YAMLs
    (``pip install 'keyaudit[lm-eval]'``).

Each module wraps the Python API (:mod:`keyaudit.engine.api`), so its verdicts are ``keyaudit
score``'s. Neither framework is imported by ``import keyaudit`` or by the command line: only
importing one of these modules (inspect_ai does it itself, through the entry point) loads it.
May import: ``keyaudit.engine.api``, ``keyaudit.engine.errors`` and
``keyaudit.engine.stats.analytic_se``; never the command line. See docs/adopting.md.
"""
