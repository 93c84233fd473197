"""Write the review queue as a file a person labels: JSON Lines or CSV, by the file's extension.

Columns (CSV) and fields (JSONL), in order: ``id``, ``model``, ``epoch``, ``key``, ``answer_line``,
``extracted`` (what the rule read, as JSON), ``verdict`` (``accept`` or ``reject: reason``),
``uncertain`` (why the verdict is doubtful; empty for a sampled certain verdict), ``selected``
(``uncertain`` or ``sample``), ``draw`` (on a ``sample`` row: the seed, sample size, ruled cells
and the size and SHA-256 of the population of certain verdicts it was drawn from, so ``check``
can verify the sample; a JSON object, its text in a CSV), then the two columns to fill:
``accept`` (``true``/``false``) and ``note``.

CSV cells are spreadsheet-safe (OWASP's advice on CSV injection): a cell that begins with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return — after any run of single quotes — gets one more
``'`` in front, so a spreadsheet shows it as text instead of running it as a formula. Reading the
file back (:func:`~keyaudit.engine.load.adjudications.unescape_cell`, used by
``check --adjudications``) removes exactly that quote: the round trip is lossless, and a cell such
as ``'quoted`` is left alone both ways.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from ..load.adjudications import escape_cell

COLUMNS = (
    "id", "model", "epoch", "key", "answer_line", "extracted", "verdict", "uncertain",
    "selected", "draw", "accept", "note",
)


def _record(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "model": row.model,
        "epoch": row.epoch,
        "key": row.key,
        "answer_line": row.answer_line,
        "extracted": row.extracted,
        "verdict": row.verdict,
        "uncertain": list(row.uncertain),
        "selected": row.selected,
        "draw": row.draw.to_json() if row.draw is not None else None,
        "accept": None,
        "note": "",
    }


def review_jsonl(rows: Sequence[Any]) -> str:
    return "".join(json.dumps(_record(r), ensure_ascii=False) + "\n" for r in rows)


def review_csv(rows: Sequence[Any]) -> str:
    buffer = io.StringIO()
    # Records end in CRLF (RFC 4180): the csv module quotes a field holding any character of the
    # line terminator, so with CRLF a carriage return inside a key or answer is quoted too (with a
    # bare "\n" it was written unquoted and split the record when read back).
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for r in rows:
        record = _record(r)
        record["extracted"] = json.dumps(record["extracted"], ensure_ascii=False)
        record["uncertain"] = "; ".join(record["uncertain"])
        record["draw"] = r.draw.text() if r.draw is not None else ""
        record["accept"] = ""
        writer.writerow(
            [escape_cell(str(record[c])) if record[c] is not None else "" for c in COLUMNS]
        )
    return buffer.getvalue()
