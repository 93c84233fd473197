"""An answer written as a flat JSON object, read as the labelled fields it is.

Models asked for structured output put a JSON object on the answer line:
``{"landmark": "C", "distance": 255}``, ``{"changes": "no", "exit": "bottom, position 7"}``.
Its quotes and braces are no wording any grammar reads, and its keys are labels
(``lowest_failing_joint``), so once for every rule such a line is rewritten as the fields it holds,
``landmark: C; distance: 255``, which the claim layer reads as labelled clauses. Only a flat object
is rewritten (every value a string, number, boolean or null; at most :data:`MAX_FIELDS` of them);
anything else — nested, a list, not JSON at all — is left as it is.
"""

from __future__ import annotations

import json

__all__ = ["read_json_object"]

#: A longer object is data, not an answer: left as it is.
MAX_FIELDS = 12


def read_json_object(text: str) -> str:
    """``text`` as ``key: value; ...`` when it is a flat JSON object (see the module docstring)."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")) or inner.count("{") != 1:
        return text
    try:
        value = json.loads(inner)
    except (ValueError, RecursionError):
        return text
    if type(value) is not dict or not 0 < len(value) <= MAX_FIELDS:
        return text
    fields = []
    for key, item in value.items():
        if item is None:
            continue
        if type(item) is bool:
            item = "yes" if item else "no"
        elif type(item) not in (str, int, float):
            return text
        fields.append(f"{key.replace('_', ' ').strip()}: {item}")
    return "; ".join(fields) if fields else text
