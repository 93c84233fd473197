"""The strict scorer that sentence-valued benchmarks use today: the "before" of every table.

It takes the response's answer line, normalises case and whitespace, and compares it with the key
string exactly. Nothing else is forgiven: a trailing full stop, markdown emphasis or a paraphrase
makes the answer wrong. That is the behaviour keyaudit audits, so it is reproduced, not improved.
"""

from __future__ import annotations

from .answer_line import find_answer_line


def normalise_strict(text: str) -> str:
    """Case-fold and collapse every run of whitespace to one space, trimming the ends."""
    return " ".join(text.split()).casefold()


def strict_correct(response: str, key: str, label: str = "ANSWER:") -> bool:
    """True when the response's last answer line equals ``key`` up to case and whitespace."""
    line = find_answer_line(response, label)
    if line is None:
        return False
    return normalise_strict(line.text) == normalise_strict(key)
