"""lm-evaluation-harness scoring with an audited rule: a ``process_results`` and a metric.

lm-eval's ``!function name.attr`` imports ``name.py`` from the task YAML's own folder, so a task
names keyaudit through a small file beside its YAML, for instance ``keyaudit_scoring.py``::

    from keyaudit.integrations.lm_eval import keyaudit_accept, process_results_for
    process_results = process_results_for("physical_stability", key_field="groundtruth")

and then either (the key read from the document field named above)::

    process_results: !function keyaudit_scoring.process_results
    metric_list:
      - {metric: keyaudit_accept, aggregation: mean, higher_is_better: true}
      - {metric: keyaudit_certain, aggregation: mean, higher_is_better: true}

or, with the rule named in the YAML and the key from the task's ``doc_to_target``::

    metric_list:
      - metric: !function keyaudit_scoring.keyaudit_accept
        aggregation: mean
        higher_is_better: true
        rule: physical_stability

Either way each response is scored exactly as ``keyaudit score`` scores (key, response): the
response must be the model's whole generation (lm-eval's default filter, ``take_first``), whose
answer line keyaudit finds itself; a filter that cuts the ``ANSWER:`` label off leaves no answer
line (verdict: answer missing). No lm-eval module is imported here: these are plain functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from keyaudit.engine.api import ScoringRule, load_rule
from keyaudit.engine.errors import DataError, UsageError, printable

__all__ = ["keyaudit_accept", "process_results_for"]

#: The metric names :func:`process_results_for` returns: the verdict (1 accept, 0 reject) and
#: whether it is certain (1: no reason to doubt it; see ``Verdict.uncertain``).
ACCEPT = "keyaudit_accept"
CERTAIN = "keyaudit_certain"


def process_results_for(
    rule: str, *, key_field: str, version: str | None = None
) -> Callable[[dict[str, Any], Sequence[Any]], dict[str, float]]:
    """A ``process_results(doc, results)`` scoring with ``rule`` against ``doc[key_field]``.

    The rule is loaded now, once (with ``version``, a rule whose files changed since it was
    adopted is refused). The function returns ``{"keyaudit_accept": 1.0 or 0.0,
    "keyaudit_certain": 1.0 or 0.0}``; with several responses to one document (``repeats`` and a
    filter that keeps them all) each is scored and both are their means.
    """
    if not isinstance(key_field, str) or not key_field:
        raise UsageError("key_field must name the document field that holds the key")
    scoring = load_rule(rule, version=version)

    def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, float]:
        key = doc.get(key_field) if isinstance(doc, dict) else None
        if not isinstance(key, str):
            raise DataError(
                f"{_document(doc)}: no string field {printable(key_field[:80])!r} (the key)"
            )
        verdicts = [scoring.score(key, response) for response in _responses(results, doc)]
        return {
            ACCEPT: sum(v.accept for v in verdicts) / len(verdicts),
            CERTAIN: sum(v.certain for v in verdicts) / len(verdicts),
        }

    return process_results


def keyaudit_accept(
    references: Sequence[Any] | None = None,
    predictions: Sequence[Any] | None = None,
    *,
    rule: str | None = None,
    version: str | None = None,
    **_: Any,
) -> float:
    """An lm-eval metric: 1.0 when ``rule`` accepts the response (``predictions``) against the
    key (``references``: the task's ``doc_to_target``), else 0.0; the mean over the pairs lm-eval
    passes (one per document). ``rule`` and ``version`` come from the ``metric_list`` entry."""
    if rule is None:
        raise UsageError(
            "keyaudit_accept needs the rule: add 'rule: NAME' (a bundled rule or a rule file's"
            " path) to its metric_list entry"
        )
    if not isinstance(references, Sequence) or not isinstance(predictions, Sequence):
        raise DataError("keyaudit_accept: expected lists of references and predictions")
    if len(references) != len(predictions) or not references:
        raise DataError("keyaudit_accept: expected one reference per prediction")
    scoring = _cached_rule(str(rule), None if version is None else str(version))
    accepted = 0
    for key, response in zip(references, predictions, strict=True):
        if not isinstance(key, str) or not isinstance(response, str):
            raise DataError("keyaudit_accept: the key (doc_to_target) and the response must be strings")
        accepted += scoring.score(key, response).accept
    return accepted / len(references)


@lru_cache(maxsize=32)
def _cached_rule(rule: str, version: str | None) -> ScoringRule:
    """One loaded rule per (rule, version): lm-eval calls a metric once per document."""
    return load_rule(rule, version=version)


def _responses(results: Sequence[Any], doc: Any) -> list[str]:
    """The response texts lm-eval passes for one document: one per request, each a string, or a
    list of strings when the filter kept every repeat."""
    responses: list[str] = []
    for item in results if isinstance(results, (list, tuple)) else ():
        for response in item if isinstance(item, (list, tuple)) else (item,):
            if not isinstance(response, str):
                raise DataError(f"{_document(doc)}: a response is not a string")
            responses.append(response)
    if not responses:
        raise DataError(f"{_document(doc)}: no response to score")
    return responses


def _document(doc: Any) -> str:
    """How an error names a document: its ``id`` or ``question_id`` when it has one."""
    if isinstance(doc, dict):
        for field in ("id", "question_id"):
            value = doc.get(field)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                return f"document {printable(str(value)[:80])}"
    return "a document"
