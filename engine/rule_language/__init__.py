"""Stage 2, parse and score: the rule language, in five rooms whose imports run one way.

Everything a TOML rule file and its Lark grammars mean lives here, split by concern so that a
reader finds one job per room and a change in one room cannot reach down into another:

``reading``
    Answer and key text into trees and claims: grammar compilation (``grammar``, with the word
    dispatch lexer ``word_dispatch``/``first_words`` and the LALR driver ``fast_lalr``), the
    parser cache (plain data in a private folder, never a pickle), the phrase lexicons
    (``phrases``), the parse-tree nodes (``ast``), the general claim layer (``claims``, ``asides``),
    the typed answer components (``components``) and the certainty signals read off a parse.
``expressions``
    The rule expression language: ``parse`` → ``evaluate`` (closures), the generated fast path
    ``codegen``, the function table ``functions``, values and operators ``values``, and the bounds
    of one evaluation ``limits``; ``expression`` wraps them.
``rules``
    A rule file loaded and validated into a :class:`~.rules.rule.Rule` (``rule``).
``scoring``
    One answer scored against one key (``scorer``), the bounds of one answer (``answer_limits``),
    the second reading behind certainty (``second_reading``), batches over a process pool
    (``batch``) or a Dask cluster (``dask_executor``), and the fingerprint of what decides a verdict.
``authoring``
    What authors run on a rule: the checks before use (``rulecheck``), key structure
    (``keystructure``), ``new-rule`` scaffolding (``scaffold``), agreement with labelled cases
    (``agreement``) and grammar notes (``grammar_notes``).

Rooms import only rooms below them: reading → expressions → rules → scoring → authoring
(``tests/test_layering.py`` holds this). Named ``rule_language`` so it is never confused with the
top-level ``rules/`` folder of TOML rule files.

May import: ``keyaudit.engine.errors`` and ``keyaudit.engine.load``. Never statistics, reports or
the orchestration on top (``audit``, ``flag``).
"""
