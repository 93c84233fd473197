"""The review queue as one self-contained HTML page that a person labels in a browser.

``keyaudit review … --html FILE`` writes it beside (or instead of) the JSONL/CSV queue. The page
holds the same records as the JSONL (:func:`~keyaudit.engine.reports.review_file.review_jsonl`),
shows one row per verdict to check, and lets the reviewer label each row accept / reject / skip
with a note, by mouse or keyboard (j/k move, a/r/s label, n edits the note). "Download
adjudications" writes the JSONL that ``check --adjudications`` reads — the records as written,
with ``accept`` (true / false, or null for skipped and unlabelled rows) and ``note``; "Load
labels" reads such a file back (every row must be one of this queue's), to go on later.

Labels live in the page only, never in the browser's storage: every page opened from disk shares
one ``localStorage`` (one origin, ``file://``), so any other downloaded page could read and
rewrite labels kept there, and the adjudications would carry labels nobody gave. Leaving the page
with labels not downloaded asks first.

Safety: the records travel as JSON inside a ``<script type="application/json">`` block with
``<``, ``>`` and ``&`` escaped (so no answer text can close the block), and the page puts every
text into the document with ``textContent``, never as HTML: a response holding ``<script>``
shows those characters; a Content-Security-Policy lets the page's own script run and no other.
No network, no CDN: inline CSS and JS; it opens from disk. The same queue gives the same bytes
(nothing time- or machine-dependent is written).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .markup import csp, escape_text, fill, script_json
from .review_file import review_jsonl

__all__ = ["review_html"]


def review_html(rows: Sequence[Any], title: str = "keyaudit review") -> str:
    """The page for ``rows`` (what ``review_queue`` returns)."""
    # JSON Lines end at "\n" only: an answer may hold U+2028, U+2029 or U+0085, which
    # json.dumps writes as they are and str.splitlines would take for line ends.
    records = [json.loads(line) for line in review_jsonl(rows).split("\n") if line]
    return fill(
        _PAGE,
        {"CSP": csp(_SCRIPT), "TITLE": escape_text(title),
         "DATA": script_json({"records": records}), "SCRIPT": _SCRIPT},
    )


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{TITLE}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1b1f24; }
header { position: sticky; top: 0; background: #f6f8fa; border-bottom: 1px solid #d0d7de;
  padding: 8px 16px; display: flex; gap: 16px; align-items: center; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0; }
#progress { color: #57606a; }
button { font: inherit; padding: 3px 10px; border: 1px solid #d0d7de; border-radius: 6px;
  background: #fff; cursor: pointer; }
button.on { font-weight: 600; }
button.accept.on { background: #dafbe1; border-color: #1a7f37; }
button.reject.on { background: #ffebe9; border-color: #cf222e; }
button.skip.on { background: #eaeef2; }
main { padding: 8px 16px 64px; }
.row { border: 1px solid #d0d7de; border-radius: 6px; margin: 8px 0; padding: 8px 12px; }
.row.current { outline: 2px solid #0969da; }
.meta { color: #57606a; font-size: 12px; }
.answer { font-family: ui-monospace, monospace; white-space: pre-wrap; background: #f6f8fa;
  padding: 4px 6px; border-radius: 4px; margin: 4px 0; }
.verdict { font-weight: 600; }
.controls { display: flex; gap: 8px; align-items: center; margin-top: 6px; }
.controls input { flex: 1; font: inherit; padding: 3px 6px; }
.help { color: #57606a; font-size: 12px; }
.load input { font-size: 12px; }
</style>
</head>
<body>
<header>
  <h1>{{TITLE}}</h1>
  <span id="progress"></span>
  <button id="download">Download adjudications</button>
  <label class="load">Load labels <input type="file" id="load" accept=".jsonl,application/x-ndjson,application/json"></label>
  <span id="loaded" class="help"></span>
  <span class="help">j/k: next/previous · a: accept · r: reject · s: skip · n: note</span>
</header>
<main id="rows"></main>
<script type="application/json" id="queue">{{DATA}}</script>
<script>{{SCRIPT}}</script>
</body>
</html>
"""

_SCRIPT = """
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("queue").textContent);
  const records = data.records;
  // Labels live in this page only: never in localStorage, which every page opened from disk
  // shares (see the module docstring). unsaved: labelled since the last download or load.
  let labels = {};
  let unsaved = false;
  let current = 0;
  const rowsEl = document.getElementById("rows");
  const rowEls = [];

  function save() {
    unsaved = true;
    progress();
  }
  function progress() {
    let done = 0;
    for (let i = 0; i < records.length; i++) {
      const l = labels[i];
      if (l && (l.label === "accept" || l.label === "reject" || l.label === "skip")) done++;
    }
    document.getElementById("progress").textContent =
      done + " of " + records.length + " labelled";
  }
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function setLabel(i, label) {
    const entry = labels[i] || {};
    entry.label = label;
    labels[i] = entry;
    paint(i);
    save();
  }
  function paint(i) {
    const entry = labels[i] || {};
    for (const button of rowEls[i].querySelectorAll("button[data-label]")) {
      button.classList.toggle("on", button.dataset.label === entry.label);
    }
  }
  function select(i) {
    if (i < 0 || i >= records.length) return;
    rowEls[current] && rowEls[current].classList.remove("current");
    current = i;
    rowEls[current].classList.add("current");
    rowEls[current].scrollIntoView({block: "nearest"});
  }
  records.forEach(function (r, i) {
    const row = el("section", "row");
    row.dataset.index = String(i);
    row.appendChild(el("div", "meta", "#" + (i + 1) + " · " + r.id + " · " + r.model +
      " · epoch " + r.epoch + " · " + r.selected));
    row.appendChild(el("div", "meta", "key: " + r.key));
    row.appendChild(el("div", "answer", r.answer_line === null ? "(no answer line)" : r.answer_line));
    row.appendChild(el("div", "verdict", "rule: " + r.verdict));
    row.appendChild(el("div", "meta", "extracted: " + JSON.stringify(r.extracted)));
    if (r.uncertain && r.uncertain.length) {
      row.appendChild(el("div", "meta", "uncertain: " + r.uncertain.join("; ")));
    }
    const controls = el("div", "controls");
    [["accept", "Accept (a)"], ["reject", "Reject (r)"], ["skip", "Skip (s)"]].forEach(function (pair) {
      const button = el("button", pair[0], pair[1]);
      button.dataset.label = pair[0];
      button.addEventListener("click", function () { select(i); setLabel(i, pair[0]); });
      controls.appendChild(button);
    });
    const note = el("input");
    note.placeholder = "note";
    note.value = (labels[i] && labels[i].note) || "";
    note.addEventListener("input", function () {
      const entry = labels[i] || {};
      entry.note = note.value;
      labels[i] = entry;
      save();
    });
    note.addEventListener("focus", function () { select(i); });
    controls.appendChild(note);
    row.appendChild(controls);
    row.addEventListener("click", function () { select(i); });
    rowsEl.appendChild(row);
    rowEls.push(row);
    paint(i);
  });
  document.addEventListener("keydown", function (event) {
    if (event.target && event.target.tagName === "INPUT") {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    if (key === "j") { select(current + 1); }
    else if (key === "k") { select(current - 1); }
    else if (key === "a") { setLabel(current, "accept"); select(current + 1); }
    else if (key === "r") { setLabel(current, "reject"); select(current + 1); }
    else if (key === "s") { setLabel(current, "skip"); select(current + 1); }
    else if (key === "n") { rowEls[current].querySelector("input").focus(); }
    else { return; }
    event.preventDefault();
  });
  document.getElementById("download").addEventListener("click", function () {
    const lines = records.map(function (r, i) {
      const entry = labels[i] || {};
      const out = Object.assign({}, r);
      out.accept = entry.label === "accept" ? true : (entry.label === "reject" ? false : null);
      out.note = entry.note || "";
      return JSON.stringify(out) + "\\n";
    });
    const blob = new Blob(lines, {type: "application/x-ndjson"});
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "adjudications.jsonl";
    document.body.appendChild(link);
    link.click();
    link.remove();
    unsaved = false;
  });
  // Load labels: a file this page (or review --out) wrote, every row one of this queue's.
  function identity(r) { return JSON.stringify([r.id, r.model, r.epoch === undefined || r.epoch === null ? 1 : r.epoch]); }
  const index = new Map(records.map(function (r, i) { return [identity(r), i]; }));
  function readLabels(text) {
    const found = {};
    const lines = text.split("\\n");
    for (let n = 0; n < lines.length; n++) {
      const line = lines[n].replace(/\\r$/, "");
      if (!line.trim()) continue;
      let row;
      try { row = JSON.parse(line); } catch (e) { throw new Error("line " + (n + 1) + ": not JSON"); }
      const i = row && typeof row === "object" ? index.get(identity(row)) : undefined;
      if (i === undefined) throw new Error("line " + (n + 1) + ": not a row of this queue");
      if (row.accept !== true && row.accept !== false && row.accept !== null && row.accept !== undefined) {
        throw new Error("line " + (n + 1) + ": accept must be true, false or null");
      }
      if (row.note !== undefined && row.note !== null && typeof row.note !== "string") {
        throw new Error("line " + (n + 1) + ": note must be text");
      }
      found[i] = {label: row.accept === true ? "accept" : (row.accept === false ? "reject" : undefined),
                  note: row.note || ""};
    }
    return found;
  }
  document.getElementById("load").addEventListener("change", function (event) {
    const file = event.target.files && event.target.files[0];
    if (!file) return;
    const shown = document.getElementById("loaded");
    file.text().then(function (text) {
      let found;
      try { found = readLabels(text); } catch (e) { shown.textContent = file.name + ": " + e.message + "; nothing loaded"; return; }
      labels = found;
      rowEls.forEach(function (row, i) {
        paint(i);
        row.querySelector("input").value = (labels[i] && labels[i].note) || "";
      });
      unsaved = false;
      progress();
      shown.textContent = "labels loaded from " + file.name;
    });
    event.target.value = "";
  });
  window.addEventListener("beforeunload", function (event) {
    if (unsaved) { event.preventDefault(); event.returnValue = ""; }
  });
  if (records.length) select(0);
  progress();
})();
"""
