"""The audit as JSON: every figure ``keyaudit check`` prints, with stable field names.

Rates are fractions in [0, 1] (differences and their CIs are fractions too, not percentage
points); a figure that does not exist (NaN, e.g. the difference of a model with no paired domain)
is ``null``. The payload has no timestamp and no path that depends on the machine beyond the rule
file as given, and is written with sorted keys, so the same inputs and seed give byte-identical
output. The schema is documented in README ("JSON schema of `check --json`").
"""

from __future__ import annotations

import json
import math
from typing import Any

from .card_text import card_quote, figure_text
from .extraction_text import statements
from .findings import Audit, Bounds, Correction, Difference, Extraction, RuleProof, Span

SCHEMA_VERSION = 4


def _num(value: float | None) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def _difference(d: Difference) -> dict[str, Any]:
    return {
        "estimate": _num(d.estimate),
        "ci_low": _num(d.ci_low),
        "ci_high": _num(d.ci_high),
        "verdict": d.verdict,
        "bootstrap_se": _num(d.bootstrap_se),
        "analytic_se": _num(d.analytic_se),
        "design_effect": _num(d.design_effect),
        "clusters_per_stratum": d.clusters_per_stratum,
        "n_strata": len(d.clusters_per_stratum),
        "n_clusters": sum(d.clusters_per_stratum.values()),
        "n_replicates": d.n_replicates,
    }


def _adjudications(summary: Any) -> dict[str, Any] | None:
    if summary is None:
        return None
    return {
        "source": summary.source,
        "applied": summary.applied,
        "overturned": summary.overturned,
        "uncertain_labelled": summary.uncertain_labelled,
        "uncertain_overturned": summary.uncertain_overturned,
        "sample_n": summary.sample_n,
        "sample_errors": summary.sample_errors,
        "error_rate": _num(summary.error_rate),
        "error_rate_ci": [_num(v) for v in summary.error_rate_ci],
    }


def _span(span: Span | None) -> dict[str, Any] | None:
    if span is None:
        return None
    return {"estimate": _num(span.estimate), "low": _num(span.low), "high": _num(span.high)}


def _correction(c: Correction | None) -> dict[str, Any] | None:
    """A model's figures corrected for the measured extraction error (None without adjudications)."""
    if c is None:
        return None
    return {
        "raw_after": _span(c.raw_after),
        "raw_change": _span(c.raw_change),
        "diff_after": {
            "estimate": _num(c.diff.estimate),
            "ci_low": _num(c.diff.low),
            "ci_high": _num(c.diff.high),
            "verdict": c.diff_verdict,
            "n_replicates": c.n_replicates,
        },
    }


def _extraction(audit: Audit) -> dict[str, Any]:
    """The rule's error on these responses: measured from adjudications, or unmeasured (then each
    rule's validation card is quoted)."""
    x: Extraction | None = audit.extraction
    cards = [{"rule": p.name, "quote": card_quote(p.card)} for p in audit.rules]
    if x is None:
        return {"measured": False, "cards": cards}
    return {
        "measured": True,
        "method": x.method,
        "n_ruled": x.n_ruled,
        "n_unlabelled": x.n_unlabelled,
        "all_adjudicated": x.all_adjudicated,
        "rules": [
            {
                "rule": r.rule,
                "rates": [
                    {
                        "rate": m.name,
                        "labelled": m.labelled,
                        "misread": m.errors,
                        "value": _num(m.rate),
                        "ci": [_num(v) for v in m.interval],
                        "unlabelled_verdicts": m.unlabelled,
                        "measured": m.measured,
                    }
                    for m in r.rates
                ],
                "unmeasured": list(r.unmeasured),
            }
            for r in x.rules
        ],
        "order": list(x.order),
        "could_swap": [
            {"models": [a, b], "difference_ci": [_num(low), _num(high)]}
            for a, b, low, high in x.could_swap
        ],
        "cards": cards,
    }


def _bounds(b: Bounds | None) -> dict[str, Any] | None:
    """A model's figures with its uncertain verdicts all wrong / all right (None: none)."""
    if b is None:
        return None
    return {
        "n_uncertain": b.n_uncertain,
        "raw_after": [_num(v) for v in b.raw],
        "adjusted_after": [_num(v) for v in b.adjusted],
        "overall_after": [_num(v) for v in b.overall],
        "diff_after": [_num(v) for v in b.diff],
        "verdicts": list(b.verdicts),
    }


def _rule(proof: RuleProof) -> dict[str, Any]:
    return {
        "name": proof.name,
        "path": proof.path,
        "description": proof.description,
        "question": proof.question,
        "cells": [{"domain": d, "level": lv} for d, lv in proof.cells],
        "key_grammar": proof.key_grammar,
        "answer_grammar": proof.answer_grammar,
        "key_values": list(proof.key_values),
        "outputs": list(proof.outputs),
        "requirements": [
            {"reason": r.reason, "explain": r.explain, "check": r.check, "when": r.when}
            for r in proof.requirements
        ],
        "examples_passed": proof.examples_passed,
        "keys_passed": proof.keys_passed,
        "card": _card(proof.card),
    }


def _card_set(e: Any, status: Any) -> dict[str, Any]:
    return {
        "set": e.set,
        "rows": e.rows,
        "written_by": e.written_by,
        "tuning": e.tuning,
        "cases": e.cases,
        "agree": e.agree,
        "agreement": _num(e.agreement),
        "agreement_ci": [_num(v) for v in e.interval],
        "date": e.date,
        "version": e.version,
        "source": e.source,
        "changed_since": e.version not in ("unknown", status.version_now),
        "note": e.note,
    }


def _card(status: Any) -> dict[str, Any] | None:
    """A rule's validation card: its headline (the lowest figure among its independent sets,
    None when it has none), the sentence the reports print for it, and every set's own figure
    with who wrote it and whether the rule was tuned on it. No pooled figure: it would be the
    largest sets' style."""
    if status is None:
        return None
    head, low = status.headline, status.lowest
    return {
        "path": status.path,
        "exists": status.exists,
        "format": status.format,
        "state": status.state,
        "version_now": status.version_now,
        "independent": head is not None,
        "headline": None if head is None else _card_set(head, status),
        "lowest": None if low is None else _card_set(low, status),
        "statement": figure_text(status),
        "sets": [_card_set(e, status) for e in status.entries],
    }


def _examples(proof: RuleProof) -> list[dict[str, Any]]:
    return [
        {
            "rule": proof.name,
            "note": e.note,
            "line": e.line,
            "key": e.key,
            "response": e.response,
            "expect_accept": e.expect_accept,
            "expect_reason": e.expect_reason,
            "accept": e.accept,
            "reason": e.reason,
            "extracted": e.values,
            "target": t,
            "passed": e.passed,
            "mismatches": list(e.mismatches),
        }
        for e, t in zip(proof.examples, proof.example_targets, strict=True)
    ]


def _keys_checks(proof: RuleProof) -> list[dict[str, Any]]:
    return [
        {
            "rule": proof.name,
            "domain": k.domain,
            "level": k.level,
            "n_keys": k.n_keys,
            "distinct": k.distinct,
            "pairs_checked": k.pairs_checked,
            "pairs_accepted": k.pairs_accepted,
            "exhaustive": k.exhaustive,
            "passed": k.passed,
            "unparsed": [{"key": key, "error": error} for key, error in k.unparsed],
            "failures": [
                {"key": f.key, "answer": f.answer, "problem": f.problem, "reason": f.reason}
                for f in k.failures
            ],
        }
        for k in proof.keys_checks
    ]


def proofs_to_json(proofs: tuple[RuleProof, ...]) -> dict[str, Any]:
    """The rule part alone (what exists when a rule fails its examples or keys check)."""
    return {
        "rules": [_rule(p) for p in proofs],
        "examples": [e for p in proofs for e in _examples(p)],
        "keys_check": [k for p in proofs for k in _keys_checks(p)],
    }


def audit_to_json(audit: Audit) -> dict[str, Any]:
    """The full audit as a JSON-ready dict (README documents every field)."""
    s = audit.settings
    scope = audit.scope
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": scope.benchmark,
        "settings": {
            "levels": list(s.levels),
            "resamples": s.resamples,
            "seed": s.seed,
            "confidence": s.confidence,
            "engine": s.engine,
            "epochs": s.epochs,
        },
        "max_samples": scope.max_samples,
        "sources": [info.as_json() for info in scope.sources],
        "n_keys": scope.n_keys,
        "n_responses": scope.n_responses,
        "domains": list(scope.domains),
        "levels": list(scope.levels),
        "models_found": list(scope.models_found),
        "roster": list(scope.roster),
        "missing_models": list(scope.missing_models),
        "computed_models": list(scope.computed_models),
        **proofs_to_json(audit.rules),
        "key_structure": [c.as_json() for c in audit.key_structure],
        "cells": [
            {
                "rule": c.rule,
                "domain": c.domain,
                "level": c.level,
                "n_keys": c.n_keys,
                "n_evaluated": c.n_evaluated,
                "status_counts": dict(c.status_counts),
                "status_field": c.status_field,
                "baseline_before": c.baseline_before,
                "baseline_before_correct": c.baseline_before_correct,
                "baseline_after": c.baseline_after,
                "baseline_after_correct": c.baseline_after_correct,
                "best_constant": c.best_constant,
                "best_constant_values": c.best_constant_values,
            }
            for c in audit.cells
        ],
        "models": [
            {
                "model": m.model,
                "domain": m.domain,
                "level": m.level,
                "n": m.n,
                "strict_correct": m.strict_correct,
                "structured_correct": m.structured_correct,
                "strict": m.strict,
                "structured": m.structured,
                "flips_up": list(m.flips_up),
                "flips_down": list(m.flips_down),
                "reasons": dict(m.reasons),
                "n_samples": m.n_samples,
                "n_uncertain": len(m.uncertain),
                "structured_bounds": list(m.structured_bounds),
                "uncertain": [{"id": i, "why": list(why)} for i, why in m.uncertain],
                "corrected": _span(m.corrected),
            }
            for m in audit.models
        ],
        "worked_examples": [
            {
                "model": w.model,
                "domain": w.domain,
                "level": w.level,
                "id": w.id,
                "status": w.status,
                "target": w.target,
                "answer_line": w.answer_line,
                "extracted": w.extracted,
                "accept": w.accept,
                "reason": w.reason,
                "question": w.question,
                "epoch": w.epoch,
            }
            for w in audit.worked_examples
        ],
        "aggregates": [
            {
                "model": a.model,
                "raw_before": _num(a.raw_before),
                "raw_after": _num(a.raw_after),
                "adjusted_before": _num(a.adjusted_before),
                "adjusted_after": _num(a.adjusted_after),
                "overall_before": _num(a.overall_before),
                "overall_after": _num(a.overall_after),
                "diff_before": _difference(a.diff_before),
                "diff_after": _difference(a.diff_after),
                "verdict_changed": a.verdict_changed,
                "bounds": _bounds(a.bounds),
                "verdict_could_change": a.verdict_could_change,
                "correction": _correction(a.correction),
                "verdict_could_change_by_error": a.verdict_could_change_by_error,
                "n_hi_cells": a.n_hi_cells,
                "n_paired": a.n_paired,
                "n_cells": a.n_cells,
            }
            for a in audit.aggregates
        ],
        "verdict_changes": [a.model for a in audit.verdict_changes],
        "n_uncertain": audit.n_uncertain,
        "summary": [
            {
                "rule": c.rule,
                "domain": c.domain,
                "level": c.level,
                "n_keys": c.n_keys,
                "n_items": c.n_items,
                "n_responses": c.n_responses,
                "baseline_before": c.baseline_before,
                "baseline_after": c.baseline_after,
                "mean_before": _num(c.mean_before),
                "mean_after": _num(c.mean_after),
                "flips_up": c.flips_up,
                "flips_down": c.flips_down,
                "n_uncertain": c.n_uncertain,
            }
            for c in audit.cell_summaries
        ],
        "adjudications": _adjudications(audit.adjudications),
        "verdicts_that_could_change": [a.model for a in audit.verdicts_that_could_change],
        "verdicts_that_could_change_by_error": [
            a.model for a in audit.verdicts_that_could_change_by_error
        ],
        "extraction_error": _extraction(audit),
        "statements": {"verdict_changes": verdict_sentence(audit), **statements(audit)},
        "flagged": [row.as_json() for row in audit.flagged],
        "before_after": _design(audit),
    }


def _interval(i: Any) -> dict[str, Any] | None:
    if i is None:
        return None
    return {"estimate": _num(i.estimate), "low": _num(i.low), "high": _num(i.high)}


def _design(audit: Audit) -> dict[str, Any] | None:
    """Before → after for any design (README, "Statistics": before → after and the leaderboard).
    ``cells`` lists the ruled cells only (elsewhere before and after are the same verdicts)."""
    d = audit.design
    if d is None:
        return None
    ruled = {(c.domain, c.level) for c in audit.cells}
    return {
        "resamples": d.resamples,
        "confidence": d.confidence,
        "cells": [
            {
                "model": c.model, "domain": c.domain, "level": c.level, "clusters": c.clusters,
                "before": _num(c.before), "after": _num(c.after), "change": _interval(c.change),
            }
            for c in d.cells
            if (c.domain, c.level) in ruled
        ],
        "leaderboard": [
            {
                "model": model,
                "overall_before": _num(d.overall_before[j]),
                "overall_after": _num(d.overall_after[j]),
                "change": _interval(d.overall_change[j]),
                "rank_before": d.rank_before[j],
                "rank_after": d.rank_after[j],
            }
            for j, model in enumerate(d.models)
        ],
        "kendall_tau": _interval(d.kendall_tau),
        "flips": [
            {
                "ahead": f.ahead, "behind": f.behind, "change": f.change, "gap": _interval(f.gap),
                "significant": f.significant,
            }
            for f in d.flips
        ],
    }


def verdict_sentence(audit: Audit) -> str:
    from .markdown_report import verdict_sentence as sentence

    return sentence(audit)


def dumps(payload: dict[str, Any]) -> str:
    """Canonical text: sorted keys, two-space indent, UTF-8 kept, trailing newline, no NaN."""
    return json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
