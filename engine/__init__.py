"""keyaudit's library: load a benchmark, parse keys and answers, score, aggregate, report.

Data flows one way: ``benchmark`` (load) → ``grammar``/``rule`` (parse) → ``scoring`` (score)
→ ``aggregate``/``bootstrap`` (aggregate) → ``report`` (report). The CLI only wires them.
"""
