"""Stage 3, aggregate: the statistics of an audit.

Owns per-cell and per-model aggregation (``aggregate``), metrics and baselines, the
domain-stratified image-cluster bootstrap (``bootstrap``, its numba kernel and the plain-Python
reference the kernel is tested against), the analytic standard error and the bootstrap bench.

May import: ``keyaudit.engine.errors``, ``keyaudit.engine.load`` and
``keyaudit.engine.rule_language`` (a baseline scores constant answers with a rule). Never reports
or the orchestration on top.
"""
