"""The audit as one self-contained HTML page: ``keyaudit check … --html FILE``.

It starts on the summary (per ruled cell: baseline and mean accuracy before → after, flips,
uncertain verdicts) and the leaderboard before → after; the per-model tables sort by any column;
every flip and every uncertain verdict opens to its answer line, what the rule extracted, the
claims as ``test-rule --explain`` shows them, and the reason; a forest plot of each model's change
is inline SVG; filters by model, cell, reason and uncertain. Inline CSS and JS, no network, no CDN:
it opens from disk.

It carries no more of the benchmark than the Markdown report does — item ids and answer lines
(never whole responses or the benchmark's other files). Texts enter the page with
``textContent`` only (an answer holding ``<script>`` shows those characters), and the data block
is JSON with ``<``, ``>`` and ``&`` escaped. The same inputs and seed give the same bytes: nothing
time- or machine-dependent is written, and every list is in a fixed order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from .findings import Audit
from .formatting import pct, pp
from .review_page import escape_text, script_json

__all__ = ["audit_items", "html_report"]


def audit_items(
    audit: Audit, response_text: Mapping[tuple[str, str, int], str], explain: Callable[[str, str, str], Any]
) -> list[dict[str, Any]]:
    """Every flip and uncertain verdict, opened: ``response_text`` maps (model, id, epoch) to the
    stored response; ``explain(cell_rule, key, text)`` returns what ``Scorer.explain`` returns
    plus the key text, as ``(key, verdict, claim dicts)``."""
    items = []
    for m in audit.models:
        uncertain = dict(m.uncertain)
        kinds: dict[str, list[str]] = {}
        for name in m.flips_up:
            kinds.setdefault(name, []).append("wrong → right")
        for name in m.flips_down:
            kinds.setdefault(name, []).append("right → wrong")
        for name in uncertain:
            kinds.setdefault(name, [])
        for name in sorted(kinds):
            item_id, _, epoch = name.partition("#")
            text = response_text.get((m.model, item_id, int(epoch or 1)))
            if text is None:
                continue
            key, verdict, claims = explain(f"{m.domain}\0{m.level}", item_id, text)
            items.append(
                {
                    "model": m.model,
                    "cell": f"{m.domain} L{m.level}",
                    "id": name,
                    "key": key,
                    "flip": ", ".join(kinds[name]),
                    "uncertain": list(uncertain.get(name, ())),
                    "answer_line": verdict.answer_text,
                    "extracted": verdict.values,
                    "verdict": "accept" if verdict.accept else "reject",
                    "reason": verdict.reason or "",
                    "claims": claims,
                }
            )
    return items


def _number(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(value, 10)


def _page_data(audit: Audit, items: list[dict[str, Any]]) -> dict[str, Any]:
    summary = [
        {
            "cell": f"{c.domain} L{c.level}", "rule": c.rule, "keys": c.n_keys, "items": c.n_items,
            "baseline": f"{pct(c.baseline_before)} → {pct(c.baseline_after)}",
            "mean": f"{pct(c.mean_before)} → {pct(c.mean_after)}",
            "mean_after": _number(c.mean_after),
            "flips_up": c.flips_up, "flips_down": c.flips_down, "uncertain": c.n_uncertain,
        }
        for c in audit.cell_summaries
    ]
    models = [
        {
            "model": m.model, "cell": f"{m.domain} L{m.level}", "n": m.n,
            "before": _number(m.strict), "after": _number(m.structured),
            "flips_up": len(m.flips_up), "flips_down": len(m.flips_down),
            "uncertain": len(m.uncertain),
        }
        for m in audit.models
    ]
    board = []
    if audit.design is not None:
        d = audit.design
        for j, model in enumerate(d.models):
            board.append(
                {
                    "model": model, "before": _number(d.overall_before[j]),
                    "after": _number(d.overall_after[j]), "change": _number(d.overall_change[j].estimate),
                    "low": _number(d.overall_change[j].low), "high": _number(d.overall_change[j].high),
                    "rank_before": d.rank_before[j], "rank_after": d.rank_after[j],
                }
            )
        board.sort(key=lambda row: (row["rank_after"], row["model"]))
    return {"summary": summary, "models": models, "leaderboard": board, "items": items}


def _forest_svg(audit: Audit) -> str:
    """Each model's overall change (after − before) with its interval, as inline SVG."""
    d = audit.design
    if d is None or not d.models:
        return ""
    rows = sorted(range(len(d.models)), key=lambda j: (d.rank_after[j], d.models[j]))
    values = [v for j in rows for v in (d.overall_change[j].low, d.overall_change[j].high, 0.0)
              if not math.isnan(v)]
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    width, left, top, step = 720, 220, 30, 24
    plot = width - left - 20

    def x(v: float) -> str:
        return f"{left + (v - lo) / (hi - lo) * plot:.1f}"

    height = top + step * len(rows) + 30
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="Change of each model\'s overall score, after minus before">',
        f'<text x="{left}" y="16" font-size="12">Overall after − before, with its '
        f'{100 * d.confidence:g}% interval (percentage points)</text>',
        f'<line x1="{x(0.0)}" y1="{top - 6}" x2="{x(0.0)}" y2="{height - 24}" stroke="#888" '
        'stroke-dasharray="3,3"/>',
    ]
    for row, j in enumerate(rows):
        y = top + step * row + 10
        change = d.overall_change[j]
        out.append(f'<text x="{left - 8}" y="{y + 4}" font-size="12" text-anchor="end">{escape_text(d.models[j])}</text>')
        if not math.isnan(change.low):
            out.append(f'<line x1="{x(change.low)}" y1="{y}" x2="{x(change.high)}" y2="{y}" stroke="#0969da" stroke-width="2"/>')
        out.append(f'<circle cx="{x(change.estimate)}" cy="{y}" r="4" fill="#0969da"><title>'
                   f'{escape_text(d.models[j])}: {pp(change.estimate)}</title></circle>')
    for tick in (lo, 0.0, hi):
        out.append(f'<text x="{x(tick)}" y="{height - 8}" font-size="11" text-anchor="middle">{pp(tick)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def html_report(audit: Audit, items: list[dict[str, Any]]) -> str:
    """The page (see the module docstring)."""
    title = f"keyaudit audit: {audit.scope.benchmark}"
    return (
        _PAGE.replace("{{TITLE}}", escape_text(title))
        .replace("{{SVG}}", _forest_svg(audit))
        .replace("{{DATA}}", script_json(_page_data(audit, items), sort_keys=True))
    )


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{TITLE}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 24px 48px; color: #1b1f24; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border-bottom: 1px solid #d0d7de; padding: 3px 10px; text-align: right; }
th:first-child, td:first-child, th.text, td.text { text-align: left; }
th { cursor: pointer; background: #f6f8fa; user-select: none; }
th.sorted-asc::after { content: " ▲"; } th.sorted-desc::after { content: " ▼"; }
.filters { display: flex; gap: 12px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
details { border: 1px solid #d0d7de; border-radius: 6px; margin: 6px 0; padding: 4px 10px; }
summary { cursor: pointer; }
.answer { font-family: ui-monospace, monospace; white-space: pre-wrap; background: #f6f8fa; padding: 4px 6px; }
.muted { color: #57606a; }
</style>
</head>
<body>
<h1>{{TITLE}}</h1>
<p class="muted">Offline and counterfactual: nothing was changed; before = the benchmark's strict verdicts, after = the rules'.</p>
<h2>Every ruled cell</h2>
<table id="summary"></table>
<h2>Leaderboard before → after</h2>
<table id="leaderboard"></table>
<div id="forest">{{SVG}}</div>
<h2>Per model and cell</h2>
<table id="models"></table>
<h2>Flips and uncertain verdicts</h2>
<div class="filters">
  <label>Model <select id="f-model"></select></label>
  <label>Cell <select id="f-cell"></select></label>
  <label>Reason <select id="f-reason"></select></label>
  <label><input type="checkbox" id="f-uncertain"> uncertain only</label>
  <span id="f-count" class="muted"></span>
</div>
<div id="items"></div>
<script type="application/json" id="audit-data">{{DATA}}</script>
<script>
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("audit-data").textContent);
  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function percent(v) { return v === null ? "—" : (100 * v).toFixed(2) + "%"; }
  function points(v) { return v === null ? "—" : (v >= 0 ? "+" : "") + (100 * v).toFixed(2) + " pp"; }
  function sortable(table, columns, rows) {
    let key = null, descending = false;
    function draw() {
      table.textContent = "";
      const head = el("tr");
      columns.forEach(function (c) {
        const th = el("th", c.label, c.text ? "text" : "");
        th.dataset.key = c.key;
        if (c.key === key) th.classList.add(descending ? "sorted-desc" : "sorted-asc");
        th.addEventListener("click", function () {
          descending = key === c.key ? !descending : false;
          key = c.key;
          rows.sort(function (a, b) {
            const x = a[c.key], y = b[c.key];
            const order = (x === y) ? 0 : (x === null ? -1 : (y === null ? 1 : (x < y ? -1 : 1)));
            return descending ? -order : order;
          });
          draw();
        });
        head.appendChild(th);
      });
      table.appendChild(head);
      rows.forEach(function (r) {
        const tr = el("tr");
        columns.forEach(function (c) {
          tr.appendChild(el("td", c.show ? c.show(r[c.key]) : r[c.key], c.text ? "text" : ""));
        });
        table.appendChild(tr);
      });
    }
    draw();
  }
  sortable(document.getElementById("summary"), [
    {key: "cell", label: "Cell", text: true}, {key: "rule", label: "Rule", text: true},
    {key: "keys", label: "Keys"}, {key: "items", label: "Items"},
    {key: "baseline", label: "Baseline before → after"}, {key: "mean", label: "Mean accuracy before → after"},
    {key: "flips_up", label: "Wrong→right"}, {key: "flips_down", label: "Right→wrong"},
    {key: "uncertain", label: "Uncertain"}], data.summary);
  sortable(document.getElementById("leaderboard"), [
    {key: "model", label: "Model", text: true}, {key: "before", label: "Overall before", show: percent},
    {key: "after", label: "Overall after", show: percent}, {key: "change", label: "Change", show: points},
    {key: "low", label: "Interval low", show: points}, {key: "high", label: "Interval high", show: points},
    {key: "rank_before", label: "Rank before"}, {key: "rank_after", label: "Rank after"}], data.leaderboard);
  sortable(document.getElementById("models"), [
    {key: "model", label: "Model", text: true}, {key: "cell", label: "Cell", text: true},
    {key: "n", label: "N"}, {key: "before", label: "Strict", show: percent},
    {key: "after", label: "Rule", show: percent}, {key: "flips_up", label: "Wrong→right"},
    {key: "flips_down", label: "Right→wrong"}, {key: "uncertain", label: "Uncertain"}], data.models);

  const filters = {model: document.getElementById("f-model"), cell: document.getElementById("f-cell"),
                   reason: document.getElementById("f-reason")};
  function options(select, values) {
    select.appendChild(el("option", "all"));
    values.forEach(function (v) { select.appendChild(el("option", v)); });
  }
  function distinct(field) {
    return Array.from(new Set(data.items.map(function (i) { return i[field] || "(accepted)"; }))).sort();
  }
  options(filters.model, distinct("model"));
  options(filters.cell, distinct("cell"));
  options(filters.reason, distinct("reason"));
  const list = document.getElementById("items");
  function drawItems() {
    list.textContent = "";
    let shown = 0;
    data.items.forEach(function (item) {
      const reason = item.reason || "(accepted)";
      if (filters.model.value !== "all" && item.model !== filters.model.value) return;
      if (filters.cell.value !== "all" && item.cell !== filters.cell.value) return;
      if (filters.reason.value !== "all" && reason !== filters.reason.value) return;
      if (document.getElementById("f-uncertain").checked && !item.uncertain.length) return;
      shown++;
      const box = el("details", null, "item");
      const flags = [item.flip, item.uncertain.length ? "uncertain" : ""].filter(Boolean).join(" · ");
      box.appendChild(el("summary", item.model + " · " + item.id + " · " + item.cell + " · " +
        item.verdict + (item.reason ? " (" + item.reason + ")" : "") + (flags ? " · " + flags : "")));
      box.appendChild(el("div", "key: " + item.key, "muted"));
      box.appendChild(el("div", item.answer_line === null ? "(no answer line)" : item.answer_line, "answer"));
      box.appendChild(el("div", "extracted: " + JSON.stringify(item.extracted)));
      const claims = el("ul");
      item.claims.forEach(function (c) { claims.appendChild(el("li", c)); });
      box.appendChild(el("div", "claims (" + item.claims.length + "):"));
      box.appendChild(claims);
      box.appendChild(el("div", "verdict: " + item.verdict + (item.reason ? ": " + item.reason : "")));
      if (item.uncertain.length) box.appendChild(el("div", "uncertain: " + item.uncertain.join("; "), "muted"));
      list.appendChild(box);
    });
    document.getElementById("f-count").textContent = shown + " of " + data.items.length + " shown";
  }
  [filters.model, filters.cell, filters.reason, document.getElementById("f-uncertain")].forEach(function (f) {
    f.addEventListener("change", drawItems);
  });
  drawItems();
})();
</script>
</body>
</html>
"""
