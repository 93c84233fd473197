"""Stage 4, report: what an audit found, rendered.

Owns the audit's result records (``findings``), the JSON and Markdown reports, the plot, the HTML
pages (``html_report`` with ``forest_svg`` and ``verdict_data``; ``review_page``; what they share
in ``markup``), how one answer is read in words (``explain_text``) and the shared number
formatting. Reports only render records they are handed; they never run an audit.

May import: ``keyaudit.engine.errors`` and the stages below it (``load``, ``rule_language``,
``stats``). Never the orchestration on top (``audit``, ``flag``) nor the CLI.
"""
