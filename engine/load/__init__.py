"""Stage 1, load: the benchmark and its files, read and validated.

Owns the benchmark model (``benchmark``; its record types, key and response, in ``items``), the
JSON Lines and TOML readers, the published-CSV key reader (``csv_keys``), the response sources
(``responses/``: keyaudit's own files, inspect_ai and lm-evaluation-harness logs), the
labelled-case reader (``casefile``), the validated-key cache, the
answer-line finder, the strict scorer (the benchmark's own exact-match verdict) and locating
bundled files; and the bounds every reader and later stage shares: what a path really is
(``filekind``), whole JSON documents within a size (``jsondoc``), the memory budget of what a run
keeps from its response files (``budget``), CPU-time limits for work whose cost depends on user
patterns (``timelimit``) and keyaudit's private cache folders (``safe_io``); and writing the
files keyaudit produces, whole or not at all (``output_file``).

May import: ``keyaudit.engine.errors`` and the standard library only, plus ``zstandard`` (imported
lazily by ``responses.zipmember``, only to read the zstd members of inspect ``.eval`` logs on
Python < 3.14). Nothing here knows rules, grammars, statistics or reports: a benchmark loads the
same whatever is later done with it.
"""
