"""The audit as a Markdown report, in the structure and tone of the seed audit.

Sections: title and the offline/counterfactual disclaimer, scope (models found vs expected),
1 key structure, 2 the proposed rule (its description, clauses, examples, baseline and its
application to stored responses), 3 counterfactual accuracy, 4 effect on aggregates, 5 other
sentence-valued keys. Everything is written from the :class:`~keyaudit.engine.audit.Audit`; a
section with nothing to say is left out rather than printed empty. Tables are padded so their
pipes line up in plain text. No timestamps: the same audit gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..rule_language.authoring.keystructure import CellStructure
from .card_text import card_lines
from .design_text import no_level_pairs, one_level
from .extraction_text import (
    adjudication_sentence,
    closing_sentences,
    correction_table,
    uncertainty_sentence,
)
from .findings import Audit, CellAudit, Difference, ModelAggregate, RuleProof, format_value
from .formatting import (
    Show,
    accuracy_span,
    as_is,
    bounds_cells,
    corrected_span,
    pct,
    pp,
    slot_values_text,
)
from .markdown_text import code, prose, table_cell

MAX_UNPARSED_LISTED = 50


# ---- formatting helpers -------------------------------------------------------------------------


def ci(d: Difference) -> str:
    if math.isnan(d.ci_low):
        return "—"
    return f"{100 * d.ci_low:+.2f} to {100 * d.ci_high:+.2f} pp"


def num(value: float | None, digits: int = 2) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:.{digits}f}"


def count(n: int) -> str:
    return f"{n:,}"


def cell_name(domain: str, level: int) -> str:
    return f"{code(domain)} L{level}"


def values_text(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={format_value(v)}" for k, v in values.items())


def table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A Markdown table padded to aligned columns; ``align`` has one ``l``/``r`` per column.
    Cells are Markdown already (data in them through :func:`prose` or :func:`code`); their pipes
    are escaped here, so no cell can split into two."""
    header = [table_cell(h) for h in header]
    rows = [[table_cell(c) for c in r] for r in rows]
    widths = [max(3, len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            out.append(cell.rjust(widths[i]) if align[i] == "r" else cell.ljust(widths[i]))
        return "| " + " | ".join(out) + " |"

    rule = (
        "| "
        + " | ".join(
            "-" * (w - 1) + ":" if a == "r" else "-" * w for w, a in zip(widths, align, strict=True)
        )
        + " |"
    )
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{count(n)} {word if n == 1 else (plural or word + 's')}"


def _number_word(n: int) -> str:
    words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    return words[n] if 0 <= n < len(words) else count(n)


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# ---- sections ------------------------------------------------------------------------------------


def _header(audit: Audit) -> list[str]:
    names = [p.name for p in audit.rules]
    rules = "rule" if len(names) == 1 else "rules"
    s = audit.settings
    return [
        "# Sentence-valued answer-key scoring audit",
        "",
        f"Benchmark: **{prose(audit.scope.benchmark)}**. Proposed {rules}: "
        + _join([f"{code(p.name)} ({code(p.path)})" for p in audit.rules])
        + (
            f". Levels L{s.lo} and L{s.hi}"
            if no_level_pairs(audit) is None
            else ". Levels " + ", ".join(f"L{v}" for v in audit.scope.levels)
        )
        + f"; {count(s.resamples)} bootstrap resamples, seed {s.seed},"
        f" {100 * s.confidence:g}% intervals. {epochs_sentence(audit)}",
        "",
        "This is an offline, counterfactual analysis. No API was called, and no dataset, stored"
        " response, scorer, or existing analysis output was changed. The proposed "
        + ("rule below has" if len(names) == 1 else "rules below have")
        + " **not** been applied to the benchmark.",
    ]


def epochs_sentence(audit: Audit) -> str:
    """Which samples were scored: the epochs policy, stated in every report."""
    most = audit.scope.max_samples
    if audit.settings.epochs == "all":
        return (
            "Every sample of an item is scored and averaged per item (`--epochs all`; up to"
            f" {_plural(most, 'sample')} per model and item); the bootstrap still resamples image"
            " clusters."
        )
    return "One response per model and item: the first epoch (`--epochs first`)."


def sources_sentence(audit: Audit) -> str | None:
    """How responses were read from evaluation logs (scorer or filter, id field, model name)."""
    logs = audit.scope.log_sources
    if not logs:
        return None
    return "Responses were read from the evaluation logs as written: " + "; ".join(
        code(info.describe()) for info in logs
    ) + "."


def _scope(audit: Audit) -> list[str]:
    scope = audit.scope
    found = len(scope.models_found)
    lines = ["", "## Scope limitation" if scope.missing_models else "## Scope", ""]
    if scope.roster:
        text = (
            f"The benchmark currently contains stored result files for **{_plural(found, 'model')}**"
            + (
                f", not {len(scope.roster)}."
                if scope.missing_models
                else f", its full roster of {len(scope.roster)}."
            )
        )
    else:
        text = f"The benchmark contains stored result files for **{_plural(found, 'model')}** and names no roster of expected models."
    per_cell = []
    for cell in audit.cells:
        rows = [m for m in audit.models if (m.domain, m.level) == (cell.domain, cell.level)]
        ns = sorted({m.n for m in rows})
        total = sum(m.n for m in rows)
        if len(ns) == 1:
            per_cell.append(
                f"Each has {count(ns[0])} evaluated {cell_name(cell.domain, cell.level)} responses"
                f" ({count(total)} stored responses in all)."
            )
        else:
            per_cell.append(
                f"They have {count(ns[0])} to {count(ns[-1])} evaluated"
                f" {cell_name(cell.domain, cell.level)} responses ({count(total)} in all)."
            )
    text += " " + " ".join(per_cell)
    text += (
        " Consequently, the model tables below cover all"
        f" **{_plural(audit.n_ruled_responses, 'stored response')}** available for the audited"
        f" {'cell' if len(audit.cells) == 1 else 'cells'}."
    )
    if scope.missing_models:
        missing = len(scope.missing_models)
        text += (
            f" Results for {_number_word(missing)} additional"
            f" {'model' if missing == 1 else 'models'} ({_join([prose(m) for m in scope.missing_models])}) cannot be"
            " calculated without their missing stored responses; no values are invented for them."
        )
    lines.append(text)
    sources = sources_sentence(audit)
    if sources:
        lines += ["", sources]
    if scope.computed_models:
        lines += [
            "",
            f"The stored files of {_join([prose(m) for m in scope.computed_models])} have no `correct` field: their"
            " current strict verdicts were computed by keyaudit with the strict scorer (answer line"
            " equal to the key up to case and whitespace).",
        ]
    return lines


def _structure(audit: Audit) -> list[str]:
    structures = audit.key_structure
    if not structures:
        return []
    lines: list[str] = [""]
    single = len(structures) == 1
    if single:
        lines.append(f"## 1. Structure of the {count(structures[0].n_keys)} keys")
    else:
        lines.append("## 1. Key structure")
    for st in structures:
        if not single:
            lines += ["", f"### {cell_name(st.domain, st.level)}: {count(st.n_keys)} keys"]
        lines += _one_structure(st, single)
    return lines


def _status_name(st: CellStructure) -> str | None:
    """The ``[key]`` value that labels templates, when each template has exactly one value of it."""
    names = [n for t in st.templates for n in t.target_counts]
    if not names:
        return None
    first = "status" if "status" in names else names[0]
    if all(len(t.target_counts.get(first, {})) == 1 for t in st.templates):
        return first
    return None


def _one_structure(st: CellStructure, single: bool) -> list[str]:
    lines = [""]
    n_templates = len(st.templates)
    where = "" if single else f" of {cell_name(st.domain, st.level)}"
    lines.append(
        f"The values{where} are not free prose. They instantiate exactly"
        f" {_number_word(n_templates)} {'template' if n_templates == 1 else 'templates'}"
        f" of the rule's key grammar:"
    )
    label = _status_name(st)
    header = ([prose(label.capitalize())] if label else []) + ["Count", "Template"]
    rows = []
    for t in st.templates:
        first = [code(next(iter(t.target_counts[label])))] if label else []
        rows.append([*first, count(t.count), code(t.template)])
    lines += ["", table(header, rows, ("l" if label else "") + "rl")]
    lines += [
        "",
        f"There are only **{_plural(st.distinct, 'distinct complete string')}** across the"
        f" {count(st.n_keys)} values.",
    ]
    slot_lines = []
    for i, t in enumerate(st.templates, start=1):
        for slot in t.slots:
            values = slot_values_text(t.slot_values.get(slot, {}), code, count)
            slot_lines.append(f"- template {i}, {code('{' + slot + '}')}: {values}")
    if slot_lines:
        lines += ["", "Slot values (count of keys):", "", *slot_lines]
    unparsed = st.unparsed or ()
    lines.append("")
    if not unparsed:
        lines.append(
            f"Parse coverage: all {count(st.n_keys)} keys match a template of the rule's key grammar."
        )
    else:
        parsed = st.n_keys - len(unparsed)
        lines.append(
            f"Parse coverage: {count(parsed)} of {count(st.n_keys)} keys match a template;"
            f" {_plural(len(unparsed), 'key')} match none:"
        )
        lines.append("")
        for u in unparsed[:MAX_UNPARSED_LISTED]:
            lines.append(f"- {code(u.id)}: {code(u.key)}")
        if len(unparsed) > MAX_UNPARSED_LISTED:
            lines.append(
                f"- … and {count(len(unparsed) - MAX_UNPARSED_LISTED)} more (all are in the JSON output)."
            )
    lines += ["", f"{_number_word(len(st.examples)).capitalize()} verbatim examples:", ""]
    width = len(str(len(st.examples)))
    for i, e in enumerate(st.examples, start=1):
        lines.append(f"{str(i) + '.':<{width + 1}} {code(e.id)}: {code(e.key)}")
    return lines


def _rule_section(audit: Audit) -> list[str]:
    lines: list[str] = []
    single = len(audit.rules) == 1
    for proof in audit.rules:
        lines += [
            "",
            "## 2. Proposed scoring rule—not applied"
            if single
            else f"## 2. Proposed scoring rule {code(proof.name)}—not applied",
            "",
        ]
        cells = _join([cell_name(d, lv) for d, lv in proof.cells])
        lines.append(
            f"The rule {code(proof.name)} ({code(proof.path)}) covers {cells}. It parses keys with"
            f" {code(proof.key_grammar)} and answers with {code(proof.answer_grammar)}, and compares"
            f" only the key's values {_join([code(v) for v in proof.key_values])}."
        )
        if proof.description:
            lines += ["", prose(" ".join(proof.description.split()))]
        if proof.question:
            lines += ["", f"The question it scores: “{prose(proof.question)}”"]
        if proof.card is not None:
            lines += ["", " ".join(card_lines(proof.card, show=prose))]
        lines += [
            "",
            "The answer line is extracted, cleaned and parsed; the clauses below are then checked in"
            " order, and the first that fails names the rejection:",
            "",
        ]
        for i, r in enumerate(proof.requirements, start=1):
            when = f" (only when {code(r.when)})" if r.when else ""
            explain = f" {prose(r.explain)}" if r.explain else ""
            lines.append(f"{i}. {code(r.reason)}{when}: requires {code(r.check)}.{explain}")
        accepts = [
            (e, t)
            for e, t in zip(proof.examples, proof.example_targets, strict=True)
            if e.expect_accept
        ]
        rejects = [
            (e, t)
            for e, t in zip(proof.examples, proof.example_targets, strict=True)
            if not e.expect_accept
        ]
        if accepts:
            lines += ["", "Examples of what the rule would accept:", ""]
            lines += [
                f"- {code(_example_answer(e.response))} for target {code(values_text(t))}."
                for e, t in accepts
            ]
        if rejects:
            lines += ["", "Examples of what it would reject:", ""]
            lines += [
                f"- {code(_example_answer(e.response))} for target {code(values_text(t))}: {prose(e.expect_reason)}."
                for e, t in rejects
            ]
        passed = sum(e.passed for e in proof.examples)
        lines += ["", f"All {count(passed)} of the rule's examples pass as stated."]
        for k in proof.keys_checks:
            lines[-1] += " " + _keys_check_sentence(k)
        for cell in audit.cells:
            if cell.rule == proof.name:
                lines += ["", _baseline_sentence(cell)]
        lines += _application(audit, proof)
    return lines


def _keys_check_sentence(k) -> str:
    """What a passing keys check proved, saying which pairs were rejected and which accepted
    because ``[keys_check] accepts`` declares them right (they are not "rejected")."""
    pairs = "pairs of strings with different key values" + (
        "" if k.exhaustive else " (an even, deterministic sample of all pairs)"
    )
    if k.pairs_accepted:
        verdicts = (
            f"{count(k.pairs_rejected)} of the {count(k.pairs_checked)} {pairs} are rejected; the"
            f" other {count(k.pairs_accepted)} are accepted, as the rule's `[keys_check] accepts`"
            " declares."
        )
    else:
        verdicts = f"{'all ' if k.exhaustive else ''}{count(k.pairs_checked)} {pairs} are rejected."
    return (
        f"The keys check passes over all {count(k.n_keys)} keys of {cell_name(k.domain, k.level)}:"
        f" each of the {count(k.distinct)} distinct strings is accepted as its own answer, and "
        + verdicts
    )


def _example_answer(response: str) -> str:
    text = response.strip()
    if text.startswith("ANSWER:") and "\n" not in text:
        return text[len("ANSWER:") :].strip()
    return text


def _baseline_sentence(cell: CellAudit) -> str:
    statuses = _join([f"{count(n)} {code(s)}" for s, n in cell.status_counts])
    by = "" if cell.status_field == "status" else f" (by their {code(cell.status_field)})"
    best = values_text(cell.best_constant_values)
    return (
        f"The evaluated {count(cell.n_evaluated)}-item sample of {cell_name(cell.domain, cell.level)}"
        f" contains {statuses} keys{by}. Under this proposed comparator, the strongest constant answer"
        f" is a key with {code(best)} ({code(cell.best_constant)}), so the constant-answer baseline"
        f" becomes **{cell.baseline_after_correct}/{cell.n_evaluated} = {pct(cell.baseline_after)}**"
        f" (strict: {cell.baseline_before_correct}/{cell.n_evaluated} ="
        f" {pct(cell.baseline_before)}). Aggregate adjusted scores below use that counterfactual"
        " baseline."
    )


def _application(audit: Audit, proof: RuleProof) -> list[str]:
    lines: list[str] = []
    for domain, level in proof.cells:
        worked = [w for w in audit.worked_examples if (w.domain, w.level) == (domain, level)]
        if not worked:
            continue
        models = sorted({w.model for w in worked})
        statuses = sorted({w.status for w in worked})
        lines += [
            "",
            f"### Application to {count(len(worked))} real stored responses"
            + ("" if len(proof.cells) == 1 else f" of {cell_name(domain, level)}"),
            "",
            f"These are {_number_word(len(statuses))} deterministic examples per available model"
            f" ({len(models)} models): the first sampled item, in id order, of each key status"
            f" ({_join([code(s) for s in statuses])}). Answer lines are reproduced verbatim.",
            "",
        ]
        width = len(str(len(worked))) + 1
        for i, w in enumerate(worked, start=1):
            verdict = "ACCEPT" if w.accept else "REJECT"
            lines.append(
                f"{str(i) + '.':<{width}} **{prose(w.model)} — {code(w.id)} — target {code(values_text(w.target))} — {verdict}**"
            )
            pad = " " * (width + 1)
            if w.question:
                lines.append(f"{pad}- Question: {code(w.question)}")
            answer = w.answer_line if w.answer_line is not None else "(no ANSWER line)"
            lines.append(f"{pad}- {code(answer)}")
            reason = f"; {prose(w.reason)}" if w.reason else ""
            lines.append(f"{pad}- Extracted: {code(values_text(w.extracted))}{reason}.")
    return lines


def _accuracy(audit: Audit) -> list[str]:
    if not audit.models:
        return []
    cells = [
        c
        for c in audit.cells
        if any((m.domain, m.level) == (c.domain, c.level) for m in audit.models)
    ]
    if len(cells) == 1:
        lines = ["", f"## 3. Counterfactual {cell_name(cells[0].domain, cells[0].level)} accuracy"]
    else:
        lines = [
            "",
            "## 3. Counterfactual accuracy",
            "",
            "Per audited cell: each model's current strict accuracy, its accuracy under the proposed"
            " rule, and how many responses change verdict in each direction.",
        ]
    corrected = audit.extraction is not None
    for cell in cells:
        rows = [m for m in audit.models if (m.domain, m.level) == (cell.domain, cell.level)]
        if len(cells) > 1:
            lines += ["", f"### {cell_name(cell.domain, cell.level)}"]
        lines.append("")
        lines.append(
            table(
                [
                    "Model",
                    "N",
                    "Current strict",
                    "Proposed structured",
                    "Wrong→right",
                    "Right→wrong",
                    "Uncertain",
                    "Could be",
                    *(["Corrected for the measured error"] if corrected else []),
                ],
                [
                    [
                        prose(m.model),
                        count(m.n),
                        pct(m.strict),
                        f"**{pct(m.structured)}**",
                        count(len(m.flips_up)),
                        count(len(m.flips_down)),
                        count(len(m.uncertain)),
                        accuracy_span(m),
                        *([corrected_span(m)] if corrected else []),
                    ]
                    for m in rows
                ],
                "lrrrrrrr" + ("r" if corrected else ""),
            )
        )
        lines += [
            "",
            "*Uncertain*: verdicts where the rule may have misread the answer (words of its"
            " vocabulary it could not place, a component found only outside the answer line, a"
            " claim under a condition…); *Could be*: the proposed accuracy with all of them wrong"
            " … all right."
            + (
                " *Corrected for the measured error*: the proposed accuracy re-estimated from the"
                " rule's misreading rates measured on the adjudicated sample, with the interval of"
                " that error (section 4)."
                if corrected
                else ""
            ),
        ]
        down = [m for m in rows if m.flips_down]
        lines.append("")
        if down:
            lines.append("Responses the strict scorer accepted and the rule rejects, to inspect:")
            lines.append("")
            for m in down:
                lines.append(f"- {prose(m.model)}: {', '.join(code(i) for i in m.flips_down)}")
        else:
            lines.append(
                "No response the strict scorer accepted is rejected by the rule; every change is"
                " wrong→right (the ids are in the JSON output, `models[].flips_up`)."
            )
    return lines


def _same(values: Sequence[int]) -> int | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def _aggregates(audit: Audit) -> list[str]:
    aggs = audit.aggregates
    if not aggs:
        return []
    if (sentence := no_level_pairs(audit)) is not None:
        return ["", "## 4. Effect on aggregates", "", sentence, *_extraction_error(audit)]
    s = audit.settings
    lo, hi = s.lo, s.hi
    conf = f"{100 * s.confidence:g}%"
    n_hi = _same([a.n_hi_cells for a in aggs])
    n_paired = _same([a.n_paired for a in aggs])
    n_cells = _same([a.n_cells for a in aggs])
    changed = _join([cell_name(c.domain, c.level) for c in audit.cells])
    lines = ["", "## 4. Effect on aggregates", ""]
    lines.append(
        f"“Raw L{hi}” is the mean raw accuracy across "
        + (f"all {n_hi} domain/L{hi} cells" if n_hi else f"each model's domain/L{hi} cells")
        + f". “Adjusted L{hi}” is the mean baseline-adjusted score, (raw − baseline)/(1 − baseline),"
        f" over the paired domains (domains with both L{lo} and L{hi} cells"
        + (f"; {n_paired} here" if n_paired else "")
        + f"). “L{hi}−L{lo}” is the mean over paired domains of the adjusted L{hi} minus adjusted"
        f" L{lo} score; its {conf} interval and verdict come from a {count(s.resamples)}-resample,"
        " domain-stratified image-cluster bootstrap with the baselines held fixed. “Overall macro”"
        " is the mean adjusted score over all "
        + (f"{n_cells} cells" if n_cells else "of a model's cells")
        + f". Only {changed} and {'its' if len(audit.cells) == 1 else 'their'} empirical baseline"
        f"{'' if len(audit.cells) == 1 else 's'} are changed in the after calculation."
    )
    rows = []
    for a in aggs:
        rows.append(
            [
                prose(a.model),
                pct(a.raw_before),
                pct(a.raw_after),
                pct(a.adjusted_before),
                pct(a.adjusted_after),
                pp(a.diff_before.estimate),
                a.diff_before.verdict,
                pp(a.diff_after.estimate),
                ci(a.diff_after),
                a.diff_after.verdict,
                pct(a.overall_before),
                pct(a.overall_after),
            ]
        )
    header = [
        "Model",
        f"Raw L{hi} before",
        f"Raw L{hi} after",
        f"Adjusted L{hi} before",
        f"Adjusted L{hi} after",
        f"Adjusted L{hi}−L{lo} before",
        "Verdict before",
        f"Adjusted L{hi}−L{lo} after",
        f"{conf} CI after",
        "Verdict after",
        "Overall macro before",
        "Overall macro after",
    ]
    lines += ["", table(header, rows, "lrrrrrlrrlrr")]
    lines += ["", verdict_sentence(audit, show=prose)]
    lines += [
        "",
        f"Uncertainty of L{hi}−L{lo}: clusters are images, strata are paired domains. The analytic"
        " SE is the cluster-robust (delta-method) standard error of Miller (2024); the design effect"
        " is its variance over the variance if every item were independent.",
        "",
    ]
    urows = []
    for a in aggs:
        sizes = sorted(a.diff_after.clusters_per_stratum.values())
        clusters = (
            "—"
            if not sizes
            else (
                f"{len(sizes)} × {sizes[0]}"
                if sizes[0] == sizes[-1]
                else f"{len(sizes)} × {sizes[0]}–{sizes[-1]}"
            )
        )
        urows.append(
            [
                prose(a.model),
                clusters,
                pp(a.diff_before.bootstrap_se).lstrip("+"),
                pp(a.diff_after.bootstrap_se).lstrip("+"),
                pp(a.diff_before.analytic_se).lstrip("+"),
                pp(a.diff_after.analytic_se).lstrip("+"),
                num(a.diff_before.design_effect),
                num(a.diff_after.design_effect),
            ]
        )
    lines.append(
        table(
            [
                "Model",
                "Strata × clusters",
                "Bootstrap SE before",
                "Bootstrap SE after",
                "Analytic SE before",
                "Analytic SE after",
                "Design effect before",
                "Design effect after",
            ],
            urows,
            "lrrrrrrr",
        )
    )
    bounded = [a for a in audit.aggregates if a.bounds is not None]
    if bounded:
        lo, hi = audit.settings.levels
        lines += [
            "",
            "If every uncertain verdict were wrong … right, after the rule:",
            "",
            table(
                ["Model", "Uncertain", f"Raw L{hi}", f"Adjusted L{hi}", f"L{hi}−L{lo}", "Verdict", "Overall"],
                [
                    [prose(a.model), count(a.bounds.n_uncertain), *bounds_cells(a.bounds)]
                    for a in bounded
                ],
                "lrrrrlr",
            ),
        ]
    return lines + _extraction_error(audit)


def _extraction_error(audit: Audit) -> list[str]:
    """The subsection on the rule's own misreadings: the corrected figures and the closing
    sentences (one level or two)."""
    lines = ["", "### Extraction error: the rule's own misreadings", ""]
    header, rows = correction_table(audit, show=prose)
    if rows:
        lines += [
            "Each model's figures after the rule corrected for the error measured on the adjudicated"
            " sample, with intervals that include it:",
            "",
            table(header, rows, "llrrrr" if one_level(audit) else "lrrrrrl"),
            "",
        ]
    for sentence in closing_sentences(audit, show=prose):
        lines += [sentence, ""]
    lines.pop()
    return lines


def verdict_sentence(audit: Audit, show: Show = as_is) -> str:
    """Which L(hi)−L(lo) verdicts change, or that none does (with how the means moved); with
    one level, that there is no such verdict."""
    if (sentence := no_level_pairs(audit)) is not None:
        return sentence
    lo, hi = audit.settings.levels
    aggs = audit.aggregates
    changes = audit.verdict_changes
    if changes:
        listed = _join(
            [f"{show(a.model)} ({a.diff_before.verdict} → {a.diff_after.verdict})" for a in changes]
        )
        return (
            f"The L{lo}-to-L{hi} significance verdict changes for {_plural(len(changes), 'model')}"
            f" of {len(aggs)} under this proposal: {listed}."
        )
    rises = sum(a.raw_after > a.raw_before for a in aggs)
    moved = sum(
        not math.isnan(a.diff_before.estimate) and a.diff_after.estimate != a.diff_before.estimate
        for a in aggs
    )
    detail = []
    if rises == len(aggs):
        detail.append(f"every L{hi} raw mean rises")
    elif rises:
        detail.append(f"{rises} of {len(aggs)} L{hi} raw means rise")
    if moved == len(aggs):
        detail.append(f"the size of every adjusted L{hi}−L{lo} difference changes")
    elif moved:
        detail.append(f"the size of {moved} of {len(aggs)} adjusted differences changes")
    tail = f", although {' and '.join(detail)}" if detail else ""
    return f"No L{lo}-to-L{hi} significance verdict changes under this proposal{tail}."


def _flagged(audit: Audit) -> list[str]:
    rows = audit.flagged
    if not rows:
        return []
    ruled = {(c.domain, c.level) for c in audit.cells}
    models = len(audit.scope.models_found)
    lines = ["", "## 5. Other sentence-valued or multi-clause keys", ""]
    lines.append(
        "For this diagnostic, a ground-truth value is flagged when it is not a JSON/list container"
        " and either contains a semicolon or contains at least six alphanumeric word tokens."
        " “Items” counts flagged values in the full domain answer key. “Evaluated responses” is the"
        " corresponding number of stored model responses whose keys were flagged. Accuracy is the"
        " current unmodified strict score on only those flagged responses, pooled across the"
        f" {models} available {'model' if models == 1 else 'models'}."
        + (
            " Cells audited above are marked †."
            if any((r.domain, r.level) in ruled for r in rows)
            else ""
        )
    )
    body = []
    for r in rows:
        acc = r.strict_accuracy
        shown = pct(acc)
        if r.candidate:
            shown = f"**{shown}**"
        mark = " †" if (r.domain, r.level) in ruled else ""
        body.append(
            [
                f"{code(r.domain)}{mark}",
                f"L{r.level}",
                count(r.flagged),
                count(r.total),
                count(r.evaluated),
                count(r.strict_correct),
                shown,
            ]
        )
    lines += [
        "",
        table(
            [
                "Domain",
                "Level",
                "Flagged corpus items",
                "Total corpus items at level",
                "Evaluated responses",
                "Current strict correct",
                "Current strict accuracy",
            ],
            body,
            "lrrrrrr",
        ),
    ]
    zero = [r for r in rows if r.candidate and (r.domain, r.level) not in ruled]
    lines.append("")
    if zero:
        names = _join([cell_name(r.domain, r.level) for r in zero])
        lines.append(
            (
                f"The zero-scoring cells ({names}) are strong candidates for separate structured-key"
                " audits"
                if len(zero) > 1
                else f"The zero-scoring cell {names} is a strong candidate for a separate"
                " structured-key audit"
            )
            + ", but this table does not establish that current scoring is wrong. Some keys may"
            " intentionally require every component, and each cell requires a domain-specific"
            " acceptance rule before any score is changed. No such rule or score change is applied"
            " here."
        )
    else:
        lines.append(
            "No other flagged cell scores zero under the strict scorer. This table does not"
            " establish whether any current scoring is wrong; no rule or score change is applied"
            " here."
        )
    return lines


def _summary(audit: Audit) -> list[str]:
    """With several ruled cells, one row per cell before the sections (the whole-benchmark view)."""
    rows = audit.cell_summaries
    if len(rows) < 2:
        return []
    return [
        "",
        "## Summary: every ruled cell",
        "",
        "Strict scoring against each cell's proposed rule; mean accuracy is the mean over models."
        " The aggregates (section 4) apply every rule together.",
        "",
        table(
            ["Cell", "Rule", "Keys", "Items", "Responses", "Baseline", "Mean accuracy",
             "Wrong→right", "Right→wrong", "Uncertain"],
            [
                [
                    cell_name(c.domain, c.level),
                    code(c.rule),
                    count(c.n_keys),
                    count(c.n_items),
                    count(c.n_responses),
                    f"{pct(c.baseline_before)} → {pct(c.baseline_after)}",
                    f"{pct(c.mean_before)} → **{pct(c.mean_after)}**",
                    count(c.flips_up),
                    count(c.flips_down),
                    count(c.n_uncertain),
                ]
                for c in rows
            ],
            "llrrrrrrrr",
        ),
    ]


def _before_after(audit: Audit) -> list[str]:
    """Before → after for any design: per ruled cell and model, and the leaderboard."""
    from .design_text import cell_rows, flip_sentences, leaderboard_rows, tau_sentence

    if audit.design is None:
        return []
    conf = f"{100 * audit.design.confidence:g}%"
    return [
        "",
        "## Before → after: every ruled cell and the leaderboard",
        "",
        f"Paired image-cluster bootstrap, {count(audit.design.resamples)} replicates, one draw per "
        "domain shared by every model.",
        "",
        table(
            ("Cell", "Model", "Before", "After", "Change", f"{conf} interval"),
            cell_rows(audit, show=prose),
            "llrrrr",
        ),
        "",
        "Leaderboard (overall: mean adjusted score over every cell):",
        "",
        table(
            ("Model", "Overall before", "Overall after", "Change", f"{conf} interval", "Rank"),
            leaderboard_rows(audit, show=prose),
            "lrrrrr",
        ),
        "",
        tau_sentence(audit, show=prose),
        "",
        *(f"- {sentence}" for sentence in flip_sentences(audit, show=prose)),
    ]


def render_markdown(audit: Audit) -> str:
    """The whole report as Markdown text (ends with one newline)."""
    parts = (
        _header(audit)
        + _summary(audit)
        + _scope(audit)
        + _structure(audit)
        + _rule_section(audit)
        + _accuracy(audit)
        + _aggregates(audit)
        + _before_after(audit)
        + _flagged(audit)
    )
    return "\n".join(parts).rstrip() + "\n"


__all__ = [
    "ModelAggregate",
    "adjudication_sentence",
    "render_markdown",
    "table",
    "uncertainty_sentence",
    "verdict_sentence",
]
