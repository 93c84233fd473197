"""What every page keyaudit writes shares: text escaped for HTML, JSON safe inside a ``<script>``,
a template filled in one pass, a Content-Security-Policy that lets only the page's own script
run, and the Markdown report rendered as HTML.

Why each:

* :func:`fill` replaces every ``{{NAME}}`` of the template in one pass, so text put in (a model
  named ``{{DATA}}``) is never read as a placeholder again;
* :func:`csp` names the page's one script by its SHA-256 hash: a browser runs no other script,
  whatever reached the page (the data block is ``application/json``, never run);
* :func:`markdown_sections` renders the Markdown report with a CommonMark parser (markdown-it-py,
  which ``rich`` already installs) with raw HTML, links, images and autolinks turned off: every
  character of the report is text or the report's own structure (headings, paragraphs, tables,
  lists, code, emphasis), so the page shows the same sections, tables and figures as the
  Markdown, in the same order, and nothing in them can be markup.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Section", "csp", "escape_text", "fill", "markdown_sections", "script_json", "script_safe"]


def escape_text(text: str) -> str:
    """Text for an HTML element or a quoted attribute."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace('"', "&quot;").replace("'", "&#39;")
    )


def script_json(value: Any, sort_keys: bool = False) -> str:
    """JSON safe inside a <script> element: no '<', '>' or '&' can end it or start a tag."""
    return script_safe(json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, separators=(",", ":")))


def script_safe(json_text: str) -> str:
    """JSON text (or a piece of it) with '<', '>' and '&' written as escapes, which JSON reads
    back as the same characters and which cannot end a <script> element."""
    return json_text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``{{NAME}}`` replaced by ``values[NAME]``, in one pass."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def csp(script: str) -> str:
    """The Content-Security-Policy of a page whose only script is ``script``: no network, no
    other script, inline styles (the page's own stylesheet and the tables' alignment)."""
    if "\r" in script:  # a browser reads CR as LF before it hashes: the hash would not match
        raise ValueError("a page's script must not hold a carriage return")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


@dataclass(frozen=True)
class Section:
    """One ``##`` section of the Markdown report as HTML: its heading's text and its body."""

    title: str
    html: str


def _renderer():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    return md.disable(["link", "image", "autolink", "reference", "html_inline", "html_block"])


def _heading_text(inline) -> str:
    return "".join(t.content for t in inline.children or () if t.type in ("text", "code_inline"))


def markdown_sections(markdown: str) -> tuple[str, list[Section]]:
    """The report's head (its title and opening paragraphs) as HTML, and each ``##`` section."""
    md = _renderer()
    tokens = md.parse(markdown)
    starts = [i for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
    bounds = [*starts, len(tokens)]
    render = md.renderer.render
    head = render(tokens[: bounds[0]], md.options, {})
    sections = [
        Section(_heading_text(tokens[a + 1]), render(tokens[a:b], md.options, {}))
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    return head, sections
