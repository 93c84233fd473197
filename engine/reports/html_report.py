"""The audit as one self-contained HTML page: ``keyaudit check … --html FILE``.

The page is the whole audit: every section and table of the Markdown report, in its order and
with its figures (rendered from the same Markdown, :func:`~.markup.markdown_sections`; its tables
sort by any column), two forest plots (each model's L5−L4 before and after, where there are two
levels, and each model's overall change), and **every verdict** of the ruled cells in a browser
(:mod:`.verdict_data`): per cell every scored response with its model, id, key, answer line,
strict and rule verdicts, reason, extracted values and doubts, filtered by model, verdict, reason
and uncertain, found by id or answer text, sorted by any column, paged, each row opening to how
the rule read its answer line (what ``test-rule --explain`` prints).

Self-contained: inline CSS, JS and SVG, no network; it opens from disk. Safe: the page's one
script runs under a Content-Security-Policy that allows that script alone (by hash); data enters
the document as text only (the report through a CommonMark renderer with raw HTML and links off,
the verdicts with ``textContent``); the data block is JSON with ``<``, ``>`` and ``&`` escaped.
Reproducible: the same inputs and seed give the same bytes (nothing time- or machine-dependent,
every list in a fixed order, the template filled in one pass).
"""

from __future__ import annotations

from ..errors import printable
from .findings import Audit
from .forest_svg import ForestRow, Mark, Series, forest_svg
from .markdown_report import no_level_pairs, render_markdown
from .markup import csp, escape_text, fill, markdown_sections, script_safe
from .verdict_data import Explain, VerdictData, verdict_data

__all__ = ["figures", "html_report", "page"]

BEFORE = Series("before (strict)", "#8c959f")
AFTER = Series("after (rule)", "#0969da")


def figures(audit: Audit) -> list[str]:
    """The forest plots as SVG: L(hi)−L(lo) per model before and after (two levels only), and
    each model's overall change."""
    out = []
    conf = f"{100 * audit.settings.confidence:g}%"
    if audit.aggregates and no_level_pairs(audit) is None:
        lo, hi = audit.settings.levels
        rows = [
            ForestRow(a.model, tuple(Mark(d.estimate, d.ci_low, d.ci_high) for d in (a.diff_before, a.diff_after)))
            for a in audit.aggregates
        ]
        out.append(
            forest_svg(
                f"Adjusted L{hi}−L{lo} per model, before and after, with its {conf} bootstrap interval",
                "percentage points", (BEFORE, AFTER), rows,
            )
        )
    design = audit.design
    if design is not None and design.models:
        order = sorted(range(len(design.models)), key=lambda j: (design.rank_after[j], design.models[j]))
        rows = [
            ForestRow(design.models[j], (Mark(c.estimate, c.low, c.high),))
            for j in order
            for c in (design.overall_change[j],)
        ]
        out.append(
            forest_svg(
                f"Overall score after − before per model, with its {conf} interval",
                "percentage points (overall: the mean adjusted score over every cell)",
                (Series("after − before", AFTER.colour),), rows,
            )
        )
    return [svg for svg in out if svg]


def html_report(audit: Audit, explain: Explain) -> bytes:
    """The page as UTF-8 (see the module docstring); ``explain`` reads one answer line with its
    cell's rule (:func:`~.explain_text.explain_answer`)."""
    return page(audit, render_markdown(audit), verdict_data(audit, explain))


def page(audit: Audit, markdown: str, verdicts: VerdictData) -> bytes:
    """The page of ``audit`` from its Markdown report and its verdicts' data, as UTF-8: the data
    (41 MB for a whole full-size benchmark) goes in piece by piece, encoded as it comes."""
    head, sections = markdown_sections(markdown)
    svgs = figures(audit)
    contents = []
    if svgs:
        contents.append(("figures", "Figures"))
    contents += [(f"s{n}", s.title) for n, s in enumerate(sections, start=1)]
    contents.append(("verdicts", "Every verdict"))
    body = "".join(
        f'<section class="report" id="s{n}">\n{s.html}</section>\n' for n, s in enumerate(sections, start=1)
    )
    figure_html = (
        '<section id="figures">\n<h2>Figures</h2>\n<div class="figures">\n'
        + "\n".join(f"<figure>{svg}</figure>" for svg in svgs)
        + "\n</div>\n</section>\n"
        if svgs
        else ""
    )
    n = verdicts.n_rows
    values = {
        "CSP": csp(_SCRIPT),
        "TITLE": escape_text(printable(f"keyaudit audit: {audit.scope.benchmark}")),
        "CSS": _CSS,
        "HEAD": head,
        "CONTENTS": "".join(f'<li><a href="#{a}">{escape_text(t)}</a></li>' for a, t in contents),
        "FIGURES": figure_html,
        "SECTIONS": body,
        "VERDICTS": f"{n:,} scored response{'' if n == 1 else 's'}",
        "SCRIPT": _SCRIPT,
    }
    before, after = _PAGE.split("{{DATA}}")  # each filled in one pass: no value is read again
    return b"".join(
        [
            fill(before, values).encode("utf-8"),
            *(script_safe(chunk).encode("utf-8") for chunk in verdicts.json_chunks()),
            fill(after, values).encode("utf-8"),
        ]
    )


_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto 48px; padding: 0 24px; max-width: 1400px; color: #1b1f24; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 32px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 15px; margin-top: 20px; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; background: #f6f8fa; padding: 0 3px; border-radius: 3px; overflow-wrap: break-word; }
table { border-collapse: collapse; margin: 8px 0; font-variant-numeric: tabular-nums; }
section.report table { display: block; max-width: 100%; overflow-x: auto; }
section.report td:first-child { white-space: nowrap; }
th, td { border-bottom: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; cursor: pointer; user-select: none; }
th.sorted-asc::after { content: " ▲"; } th.sorted-desc::after { content: " ▼"; }
nav ol { columns: 2; margin: 4px 0; } nav h2 { border: 0; }
.figures { display: flex; flex-wrap: wrap; gap: 16px; } figure { margin: 0; }
.filters, .pager { display: flex; gap: 12px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
.muted { color: #57606a; }
table.verdicts { width: 100%; font-size: 13px; }
table.verdicts td { overflow-wrap: break-word; }
table.verdicts td.answer { max-width: 32em; overflow-wrap: anywhere; }
table.verdicts td.key { max-width: 14em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
table.verdicts td.model, table.verdicts td.id, table.verdicts td.strict, table.verdicts td.accept,
table.verdicts td.reject, table.verdicts td.change { white-space: nowrap; }
table.verdicts tr.row { cursor: pointer; } table.verdicts tr.row:hover, table.verdicts tr.row:focus { background: #f6f8fa; }
table.verdicts tr.open { background: #ddf4ff; }
tr.detail td { background: #fbfcfd; max-width: none; }
.answer { font-family: ui-monospace, "DejaVu Sans Mono", monospace; white-space: pre-wrap; }
pre.explain { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
.accept { color: #1a7f37; } .reject { color: #cf222e; }
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{TITLE}}</title>
<style>{{CSS}}</style>
</head>
<body>
<header id="head">
{{HEAD}}</header>
<nav id="contents"><h2>Contents</h2><ol>{{CONTENTS}}</ol></nav>
{{FIGURES}}{{SECTIONS}}<section id="verdicts">
<h2>Every verdict</h2>
<p>{{VERDICTS}} of the ruled cells, each with the rule's verdict as the audit counted it. Filter
by model, verdict, reason and uncertain, find an id or answer text, sort by any column (click its
head), and open a row to see how the rule read the answer line: the claims, the extracted values,
each clause and the verdict, as <code>keyaudit test-rule --explain</code> prints them.</p>
<div class="filters">
<label>Cell <select id="v-cell"></select></label>
<label>Model <select id="v-model"></select></label>
<label>Verdict <select id="v-verdict">
<option value="">all</option><option value="accept">accept</option><option value="reject">reject</option>
<option value="up">wrong → right</option><option value="down">right → wrong</option><option value="same">unchanged</option>
</select></label>
<label>Reason <select id="v-reason"></select></label>
<label><input type="checkbox" id="v-uncertain"> uncertain only</label>
<label>Find <input type="search" id="v-find" placeholder="id or answer text"></label>
<span id="v-count" class="muted"></span>
</div>
<table id="v-table" class="verdicts"><thead><tr></tr></thead><tbody></tbody></table>
<div class="pager">
<button id="v-first">« first</button><button id="v-prev">‹ previous</button>
<span id="v-page"></span>
<button id="v-next">next ›</button><button id="v-last">last »</button>
<label>Rows per page <select id="v-size"><option>25</option><option selected>50</option><option>100</option><option>200</option></select></label>
</div>
</section>
<script type="application/json" id="audit-data">{{DATA}}</script>
<script>{{SCRIPT}}</script>
</body>
</html>
"""

_SCRIPT = """
"use strict";
(function () {
  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  // The report's tables sort by any column: numbers by value, "—" last, text as text.
  function number(text) {
    const m = /^\\s*([+-]?)(\\d[\\d,]*(?:\\.\\d+)?)/.exec(text);
    return m ? Number((m[1] + m[2]).replace(/,/g, "")) : null;
  }
  function compare(a, b) {
    const x = number(a), y = number(b);
    if (x !== null && y !== null) return x - y;
    if (x !== null || y !== null) return x === null ? 1 : -1;
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  document.querySelectorAll("section.report table").forEach(function (table) {
    const body = table.tBodies[0];
    if (!body) return;
    const original = Array.from(body.rows);
    const heads = Array.from(table.querySelectorAll("thead th"));
    heads.forEach(function (th, column) {
      th.title = "sort by this column";
      th.addEventListener("click", function () {
        const descending = th.classList.contains("sorted-asc");
        heads.forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(descending ? "sorted-desc" : "sorted-asc");
        const rows = original.slice().sort(function (r, s) {
          const order = compare(r.cells[column].textContent, s.cells[column].textContent);
          return (descending ? -order : order) || original.indexOf(r) - original.indexOf(s);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // Every verdict.
  const data = JSON.parse($("audit-data").textContent);
  const S = data.strings, V = data.verdicts, E = data.explanations, M = data.models;
  const table = $("v-table"), body = table.tBodies[0];
  const controls = {cell: $("v-cell"), model: $("v-model"), verdict: $("v-verdict"), reason: $("v-reason"),
                    uncertain: $("v-uncertain"), find: $("v-find"), size: $("v-size")};
  let cell = null, shown = [], page = 0, size = Number(controls.size.value), sortBy = null, descending = false;
  const opened = new Set();

  function sample(i) {
    const v = V[cell.verdict[i]], strict = cell.strict.charCodeAt(i) === 49;
    return {
      model: M[cell.model[i]], id: cell.ids[cell.item[i]], epoch: cell.epoch.length ? cell.epoch[i] : 1,
      key: S[cell.keys[cell.item[i]]], answer: v[0] < 0 ? null : S[v[0]], accept: v[1] === 1, strict: strict,
      change: v[1] === 1 && !strict ? "wrong → right" : (strict && v[1] !== 1 ? "right → wrong" : ""),
      reason: S[v[2]], extracted: S[v[3]], uncertain: v[4].map(function (u) { return S[u]; }),
      explanation: v[5] < 0 ? null : E[v[5]].map(function (s) { return S[s]; }),
      labelled: cell.labelled.length > 0 && cell.labelled.charCodeAt(i) === 49,
    };
  }
  const COLUMNS = [
    ["model", "Model"], ["id", "Id"], ["epoch", "Epoch"], ["key", "Key"], ["answer", "Answer line"],
    ["strict", "Strict"], ["rule", "Rule"], ["change", "Change"], ["reason", "Reason"],
    ["extracted", "Extracted"], ["uncertain", "Uncertain"]];
  function value(s, column) {
    switch (column) {
      case "strict": return s.strict ? "right" : "wrong";
      case "rule": return s.accept ? "accept" : "reject";
      case "answer": return s.answer === null ? "(no answer line)" : s.answer;
      case "uncertain": return s.uncertain.join("; ");
      case "epoch": return s.epoch;
      default: return s[column];
    }
  }
  function columns() {
    return COLUMNS.filter(function (c) { return c[0] !== "epoch" || cell.epoch.length; });
  }
  function options(select, values, all) {
    select.textContent = "";
    const first = el("option", all); first.value = ""; select.appendChild(first);
    values.forEach(function (pair) { const o = el("option", pair[1]); o.value = pair[0]; select.appendChild(o); });
  }
  function chooseCell() {
    cell = data.cells[Number(controls.cell.value)];
    const models = Array.from(new Set(cell.model)).sort(function (a, b) { return a - b; });
    options(controls.model, models.map(function (m) { return [String(m), M[m]]; }), "all");
    const reasons = new Map();
    cell.verdict.forEach(function (v) { reasons.set(V[v][2], (reasons.get(V[v][2]) || 0) + 1); });
    const listed = Array.from(reasons.keys()).sort(function (a, b) { return S[a] < S[b] ? -1 : 1; });
    options(controls.reason, listed.map(function (r) {
      return [String(r), (S[r] || "(accepted)") + " (" + reasons.get(r) + ")"];
    }), "all");
    sortBy = null; opened.clear();
    const head = table.tHead.rows[0];
    head.textContent = "";
    columns().forEach(function (c) {
      const th = el("th", c[1]);
      th.dataset.column = c[0];
      th.title = "sort by this column";
      th.addEventListener("click", function () {
        descending = sortBy === c[0] ? !descending : false;
        sortBy = c[0];
        filter();
      });
      head.appendChild(th);
    });
    filter();
  }
  function filter() {
    const model = controls.model.value, verdict = controls.verdict.value, reason = controls.reason.value;
    const uncertain = controls.uncertain.checked, find = controls.find.value.trim().toLowerCase();
    shown = [];
    for (let i = 0; i < cell.verdict.length; i++) {
      const v = V[cell.verdict[i]], strict = cell.strict.charCodeAt(i) === 49, accept = v[1] === 1;
      if (model && cell.model[i] !== Number(model)) continue;
      if (verdict === "accept" && !accept) continue;
      if (verdict === "reject" && accept) continue;
      if (verdict === "up" && !(accept && !strict)) continue;
      if (verdict === "down" && !(strict && !accept)) continue;
      if (verdict === "same" && accept !== strict) continue;
      if (reason && v[2] !== Number(reason)) continue;
      if (uncertain && !v[4].length) continue;
      if (find && cell.ids[cell.item[i]].toLowerCase().indexOf(find) < 0 &&
          (v[0] < 0 || S[v[0]].toLowerCase().indexOf(find) < 0)) continue;
      shown.push(i);
    }
    if (sortBy !== null) {
      const keyed = shown.map(function (i) { return [value(sample(i), sortBy), i]; });
      const numeric = sortBy === "epoch";
      keyed.sort(function (a, b) {
        const order = numeric ? a[0] - b[0] : (a[0] < b[0] ? -1 : (a[0] > b[0] ? 1 : 0));
        return (descending ? -order : order) || a[1] - b[1];
      });
      shown = keyed.map(function (k) { return k[1]; });
    }
    page = 0;
    draw();
  }
  function detail(s, span) {
    const row = el("tr", null, "detail"), td = el("td");
    td.colSpan = span;
    td.appendChild(el("div", "key: " + s.key));
    td.appendChild(el("div", s.answer === null ? "(no answer line)" : "answer: " + s.answer, "answer"));
    td.appendChild(el("div", "strict: " + (s.strict ? "right" : "wrong") + " · rule: " + (s.accept ? "accept" : "reject") +
      (s.reason ? " (" + s.reason + ")" : "") + (s.labelled ? " · labelled by a person" : "")));
    if (s.uncertain.length) td.appendChild(el("div", "uncertain: " + s.uncertain.join("; "), "muted"));
    td.appendChild(el("pre", s.explanation === null ? "(no answer line to read)" : s.explanation.join("\\n"), "explain"));
    row.appendChild(td);
    return row;
  }
  function draw() {
    const pages = Math.max(1, Math.ceil(shown.length / size));
    page = Math.min(Math.max(page, 0), pages - 1);
    body.textContent = "";
    const cols = columns();
    shown.slice(page * size, (page + 1) * size).forEach(function (i) {
      const s = sample(i), tr = el("tr", null, "row");
      tr.tabIndex = 0;
      tr.dataset.index = String(i);
      cols.forEach(function (c) {
        const td = el("td", value(s, c[0]), c[0]);
        if (c[0] === "rule") td.className = s.accept ? "accept" : "reject";
        if (c[0] === "key") td.title = s.key;
        tr.appendChild(td);
      });
      function toggle() {
        if (opened.has(i)) opened.delete(i); else opened.add(i);
        draw();
      }
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
      body.appendChild(tr);
      if (opened.has(i)) { tr.classList.add("open"); body.appendChild(detail(s, cols.length)); }
    });
    table.tHead.querySelectorAll("th").forEach(function (th) {
      th.classList.toggle("sorted-asc", th.dataset.column === sortBy && !descending);
      th.classList.toggle("sorted-desc", th.dataset.column === sortBy && descending);
    });
    const first = shown.length ? page * size + 1 : 0, last = Math.min(shown.length, (page + 1) * size);
    $("v-count").textContent = shown.length + " of " + cell.verdict.length + " shown";
    $("v-page").textContent = "page " + (page + 1) + " of " + pages + " (rows " + first + "–" + last + ")";
  }
  data.cells.forEach(function (c, n) {
    const o = el("option", c.name + " (" + c.verdict.length + ")"); o.value = String(n); controls.cell.appendChild(o);
  });
  controls.cell.addEventListener("change", chooseCell);
  [controls.model, controls.verdict, controls.reason, controls.uncertain].forEach(function (c) {
    c.addEventListener("change", filter);
  });
  controls.find.addEventListener("input", filter);
  controls.size.addEventListener("change", function () {  // the first row shown stays in view
    const first = page * size;
    size = Number(controls.size.value);
    page = Math.floor(first / size);
    draw();
  });
  $("v-first").addEventListener("click", function () { page = 0; draw(); });
  $("v-prev").addEventListener("click", function () { page -= 1; draw(); });
  $("v-next").addEventListener("click", function () { page += 1; draw(); });
  $("v-last").addEventListener("click", function () { page = Infinity; draw(); });
  if (data.cells.length) chooseCell(); else $("verdicts").hidden = true;
  document.body.dataset.ready = "1";
  performance.mark("keyaudit-ready");  // bench/html_page.py reads when the page was ready
})();
"""
