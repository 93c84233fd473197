"""What the reports say about the rule's own error on these responses: the sentences terminal,
Markdown and JSON share word for word (JSON: ``statements``), so the three cannot disagree.

Honesty rules kept here, in one place:

* no sentence says the figures "cannot move" by extraction unless every rule verdict was
  adjudicated by a person (the certainty signals miss misreadings they have not met);
* without adjudications the error on these responses is *unmeasured* until adjudicated, and
  each rule's validation card is quoted for what it is: its lowest figure on a set written
  independently of the rule, naming the set (agreement on other wording), or that it has none;
* with them, a significance verdict whose interval changes once the measured error is in it, and
  a model order the interval of a difference does not settle, are named.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..stats.extraction_error import RATES
from .card_text import card_quote
from .design_text import one_level
from .findings import Audit, MisreadingRate, RuleErrorRates, Span
from .formatting import Show, as_is, pct, pp


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _levels(audit: Audit) -> str:
    lo, hi = audit.settings.levels
    return f"L{hi}−L{lo}"


def _conf(audit: Audit) -> str:
    return f"{100 * audit.settings.confidence:g}%"


def rate_text(r: MisreadingRate, audit: Audit) -> str:
    """``2 of 39 = 5.13% (Wilson 95% 1.42%–16.89%)``, or why there is no rate."""
    if not r.measured:
        return "unmeasured (no labelled answer of that kind)"
    low, high = r.interval
    return f"{r.errors} of {r.labelled} = {pct(r.rate)} (Wilson {_conf(audit)} {pct(low)}–{pct(high)})"


def _rule_sentence(rule: RuleErrorRates, audit: Audit, show: Show) -> str:
    fa, fr = rule.rate(RATES[0]), rule.rate(RATES[1])
    text = (
        f"{show(rule.rule)} on these responses, from the adjudicated random sample of its certain"
        f" verdicts: false-accept rate (truly wrong answers it accepts) {rate_text(fa, audit)};"
        f" false-reject rate (truly right answers it rejects) {rate_text(fr, audit)}."
    )
    uncertain = [rule.rate(RATES[2]), rule.rate(RATES[3])]
    if any(r.measured or r.unlabelled for r in uncertain):
        text += (
            f" Its uncertain verdicts, from their labels: false-accept {rate_text(uncertain[0], audit)};"
            f" false-reject {rate_text(uncertain[1], audit)}."
        )
    if rule.unmeasured:
        text += (
            f" Unmeasured: {_join(rule.unmeasured)} — the verdicts they would correct are taken at"
            " the rule's word."
        )
    return text


def extraction_sentences(audit: Audit, show: Show = as_is) -> list[str]:
    """The rule's error on these responses: measured (rates per rule, how it enters the figures)
    or unmeasured (and each rule's card quoted)."""
    x = audit.extraction
    if x is None:
        quotes = [card_quote(p.card, show) for p in audit.rules]
        rules = [show(p.name) for p in audit.rules]
        return [
            "Extraction error: unmeasured on these responses until a random sample of the rule's"
            " verdicts is adjudicated (labelled through `keyaudit review` and given to"
            " `--adjudications`, which measures it and carries it into the figures); the intervals"
            " above carry sampling error only, not the rule's misreadings. The nearest evidence,"
            " on other wording than these responses: "
            + "; ".join(f"{name}: {quote}" for name, quote in zip(rules, quotes, strict=True))
            + "."
        ]
    lines = [_rule_sentence(rule, audit, show) for rule in x.rules]
    difference = (
        "" if one_level(audit)
        else f"{_levels(audit)} by the image-cluster bootstrap redrawing every rate in each replicate, "
    )
    lines.append(
        f"{x.n_ruled - x.n_unlabelled:,} of {x.n_ruled:,} rule verdicts are labelled (a label is"
        " the truth); the corrected figures re-estimate, per cell, how many of the unlabelled ones"
        " are truly right from the rule's misreading rates (Rogan–Gladen; with none misread in the"
        " sample, a figure stays as it is and only its interval widens), and their intervals carry"
        f" the rates' uncertainty: {difference}accuracies and their before→after change by the"
        " rates' draws alone (the stored responses are not resampled)."
    )
    return lines


def uncertainty_sentence(audit: Audit, show: Show = as_is) -> str:
    """How many verdicts are uncertain and whether any L5−L4 verdict could change within their
    bounds — never that the figures cannot move, unless every verdict was adjudicated."""
    n = audit.n_uncertain
    x = audit.extraction
    measured = "measured below" if x is not None else "unmeasured on these responses"
    if n == 0:
        if x is not None and x.all_adjudicated:
            return (
                "Every rule verdict was adjudicated by a person: the figures after the rule cannot"
                " move by extraction."
            )
        return (
            f"No {'unlabelled ' if x is not None else ''}rule verdict is marked uncertain, but the"
            " certainty signals do not catch every"
            " misreading: the figures after the rule can still move by extraction error"
            f" ({measured})."
        )
    could = audit.verdicts_that_could_change
    head = (
        f"{n:,} rule verdict{'' if n == 1 else 's'} {'is' if n == 1 else 'are'} uncertain (the"
        " rule may have misread the answer; `keyaudit review` lists them with why)."
    )
    tail = (
        f" Misreadings the signals do not mark are the extraction error ({measured})."
    )
    if one_level(audit):
        return (
            head
            + " Each model's accuracy with every one of them wrong … right is its 'Could be' range."
            + tail
        )
    if not could:
        return (
            head
            + f" No {_levels(audit)} verdict could change if every one of them were wrong or right."
            + tail
        )
    names = _join([show(a.model) for a in could])
    return head + f" The {_levels(audit)} verdict could change within those bounds for {names}." + tail


def _unmeasured_note(audit: Audit, show: Show) -> str:
    """When some rate that would correct unlabelled verdicts is unmeasured: what the sentence
    cannot say."""
    x = audit.extraction
    missing = [f"{show(r.rule)} ({_join(r.unmeasured)})" for r in x.rules if r.unmeasured] if x else []
    if not missing:
        return ""
    return (
        " That holds for the measured rates only: unmeasured for "
        + _join(missing)
        + ", whose verdicts are taken at the rule's word, so their error could still change it."
    )


def error_verdict_sentence(audit: Audit, show: Show = as_is) -> str | None:
    """Whether a significance verdict could change within the measured extraction error
    (``None`` with one level: there is no such verdict)."""
    if one_level(audit):
        return None
    levels = _levels(audit)
    if audit.extraction is None:
        return (
            f"Whether an {levels} verdict could change by extraction error is not known: the error"
            " is unmeasured on these responses."
        )
    could = audit.verdicts_that_could_change_by_error
    if not could:
        return (
            f"No {levels} verdict changes when the measured extraction error is in its interval."
            + _unmeasured_note(audit, show)
        )
    listed = _join(
        [
            f"{show(a.model)} ({a.diff_after.verdict} without it; {a.correction.diff_verdict}"
            f" with it, {pp(a.correction.diff.low)} to {pp(a.correction.diff.high)})"
            for a in could
        ]
    )
    return (
        f"The {levels} verdict could change within the measured extraction error for {listed}."
        + _unmeasured_note(audit, show)
    )


def order_sentence(audit: Audit, show: Show = as_is) -> str:
    """The model order by corrected Raw L(hi), and which adjacent models could swap."""
    x = audit.extraction
    hi = audit.settings.hi
    # with one level its accuracy is the model's mean over the level's cells: no "Raw L5"
    what = f"mean accuracy over its L{hi} cells" if one_level(audit) else f"Raw L{hi}"
    if x is None:
        return (
            f"Whether the model order by {what} after the rule could change by extraction error"
            " is not known: the error is unmeasured on these responses."
        )
    raw = {a.model: a.correction.raw_after.estimate for a in audit.aggregates if a.correction}
    order = ", ".join(f"{show(m)} {pct(raw[m])}" for m in x.order if m in raw)
    if not x.could_swap:
        return (
            f"Model order by {what} after the rule, corrected: {order}. No adjacent pair could"
            " swap within the measured extraction error." + _unmeasured_note(audit, show)
        )
    pairs = _join(
        [
            f"{show(a)} and {show(b)} (difference {pp(low)} to {pp(high)})"
            for a, b, low, high in x.could_swap
        ]
    )
    return (
        f"Model order by {what} after the rule, corrected: {order}. Within the measured"
        f" extraction error these could swap: {pairs}." + _unmeasured_note(audit, show)
    )


def adjudication_sentence(summary, show: Show = as_is) -> str:
    """What the labels of ``--adjudications`` did, and the rule's error rate where it was sure."""
    n = summary.applied
    text = (
        f"Adjudications from {show(str(summary.source))}: {n:,} verdict{'' if n == 1 else 's'} labelled by a"
        f" person, {summary.overturned} overturned the rule ({summary.uncertain_overturned} of the"
        f" {summary.uncertain_labelled} uncertain ones)."
    )
    if summary.sample_n:
        lo, hi = summary.error_rate_ci
        text += (
            f" Among the rule's certain verdicts, the random sample found {summary.sample_errors}"
            f" error(s) in {summary.sample_n}: {pct(summary.error_rate)} (Wilson 95%:"
            f" {pct(lo)}–{pct(hi)})."
        )
    else:
        text += " No randomly sampled certain verdict was labelled, so no error rate is estimated."
    return text


def _span(span) -> str:
    return f"{pct(span.estimate)} ({pct(span.low)}–{pct(span.high)})"


def _change(span) -> str:
    return f"{pp(span.estimate)} ({pp(span.low)} to {pp(span.high)})"


def correction_table(audit: Audit, show: Show = as_is) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the corrected figures per model (only with adjudications); with one
    level, per model and ruled cell: its accuracy after, corrected, and the change corrected."""
    if one_level(audit):
        return _cell_correction_table(audit, show)
    lo, hi = audit.settings.levels
    conf = _conf(audit)
    header = [
        "Model",
        f"Raw L{hi} after",
        f"corrected ({conf})",
        "before→after, corrected",
        f"L{hi}−L{lo} after ({conf} CI)",
        f"corrected ({conf} CI)",
        "verdict with the error",
    ]
    rows = []
    for a in audit.aggregates:
        c = a.correction
        if c is None:
            continue
        d = a.diff_after
        plain = "—" if d.estimate != d.estimate else f"{pp(d.estimate)} ({pp(d.ci_low)} to {pp(d.ci_high)})"
        corrected = "—" if c.diff.estimate != c.diff.estimate else _change(c.diff)
        verdict = c.diff_verdict + (" (changes)" if a.verdict_could_change_by_error else "")
        rows.append(
            [show(a.model), pct(a.raw_after), _span(c.raw_after), _change(c.raw_change), plain, corrected, verdict]
        )
    return header, rows


def _cell_correction_table(audit: Audit, show: Show) -> tuple[list[str], list[list[str]]]:
    conf = _conf(audit)
    header = ["Model", "Cell", "Before", "After", f"corrected ({conf})", "before→after, corrected"]
    rows = []
    for m in audit.models:
        c = m.corrected
        if c is None:
            continue
        change = Span(c.estimate - m.strict, c.low - m.strict, c.high - m.strict)
        rows.append(
            [show(m.model), f"{show(m.domain)} L{m.level}", pct(m.strict), pct(m.structured),
             _span(c), _change(change)]
        )
    return header, rows


def closing_sentences(audit: Audit, show: Show = as_is) -> list[str]:
    """The sentences that close the aggregates, in order, in every report: the uncertain verdicts,
    the adjudications, the extraction error, the verdicts and the order within it."""
    lines = [uncertainty_sentence(audit, show)]
    if audit.adjudications is not None:
        lines.append(adjudication_sentence(audit.adjudications, show))
    lines += extraction_sentences(audit, show)
    verdicts = error_verdict_sentence(audit, show)
    lines += [*([verdicts] if verdicts is not None else []), order_sentence(audit, show)]
    return lines


def statements(audit: Audit) -> dict[str, object]:
    """Every sentence about certainty and extraction error, as the reports print them."""
    return {
        "uncertainty": uncertainty_sentence(audit),
        "extraction": extraction_sentences(audit),
        "verdicts_by_error": error_verdict_sentence(audit),
        "order": order_sentence(audit),
        "closing": closing_sentences(audit),
    }
