"""Stage 2, parse and score: the rule language.

Owns everything a TOML rule file and its Lark grammars mean: grammar compilation (``grammar``),
the parse-tree nodes (``ast``), the expression language (``expr_parse`` → ``expr_eval``, with the
generated fast path ``expr_codegen``, wrapped by ``expr``), rule loading (``rule``), scoring one answer (``scoring``), the checks a rule must pass
before it is used (``rulecheck``), key structure (``keystructure``) and new-rule scaffolding
(``scaffold``); the parser cache (``parser_cache``, plain data in a private folder, never a
pickle) and the bounds of an evaluation (``expr_limits``) and of one answer
(``answer_limits``). Named ``rule_language`` so it is never confused with the top-level ``rules/``
folder of TOML rule files.

May import: ``keyaudit.engine.errors`` and ``keyaudit.engine.load``. Never statistics, reports or
the orchestration on top (``audit``, ``flag``).
"""
