"""``keyaudit score RULE --cases FILE``: score ad hoc answers, one JSON line out per line in."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated

import typer

from keyaudit.engine.api import load_rule
from keyaudit.engine.load.casefile import read_cases


def score(
    rule: Annotated[str, typer.Argument(help="Rule file path or bundled rule name.")],
    cases: Annotated[
        str,
        typer.Option(
            "--cases", help="JSONL file of {key, response, id?} objects; '-' reads stdin."
        ),
    ],
) -> None:
    """Score each case's response against its key; print one JSON object per case, in order.

    Output fields: id, accept, the rule's output values (physical_stability: status, joint), reason,
    uncertain (why the verdict may be a misreading; empty when certain), and detail when there is
    one (a rule error's message, why an output is null). The Python API gives the same object
    without id: keyaudit.load_rule(RULE).score(key, response).record().
    """
    scoring = load_rule(rule)
    source = sys.stdin if cases == "-" else Path(cases)
    out = sys.stdout
    for case in read_cases(source):
        record = {"id": _finite(case.id), **scoring.score(case.key, case.response).record()}
        out.write(_json_line(record) + "\n")


def _finite(value: object) -> object:
    """An id as given, except a number JSON cannot hold (``NaN``, ``Infinity``): null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _json_line(record: dict) -> str:
    """The record as one line of valid JSON; an id that cannot be written as JSON (``NaN`` inside
    it, nesting too deep to write back) becomes null, and ``detail`` says so."""
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (ValueError, RecursionError):
        note = "the case's id cannot be written back as JSON: shown as null"
        detail = record.get("detail")
        record.update(id=None, detail=f"{detail}; {note}" if detail else note)
        return json.dumps(record, ensure_ascii=False, allow_nan=False)
