"""Strings from data written into Markdown so that they stay what they are: text.

Model names, benchmark names, keys, answer lines, ids and rule text come from files other people
wrote, and the Markdown report is published and rendered. Written as they are, a model name
holding a newline and ``| Model C | 12 | 100.00% |`` adds a table row of figures no model earned,
a ``|`` shifts a row's cells, a leading ``#`` or ``-`` makes a heading or a list item, and
``<img onerror=...>`` is raw HTML a CommonMark renderer keeps. Every such string goes through
:func:`prose` (inline prose), :func:`code` (a code span) or, in a table, :func:`table_cell`:

* characters a reader would not see or that move text around — newlines, tabs, other control
  characters, zero-width and bidirectional marks (U+200B, U+202E), line and paragraph separators
  — are shown as escapes (``\\n``, ``\\u202e``), as the terminal shows them: a newline can never
  end the line, and a lookalike name is marked;
* in prose, every character that can start or close Markdown syntax in the middle of a line
  (`` ` * [ ] < ~ #``, ``&`` before a name, ``_`` unless it stands between two letters or
  digits, ``\\`` before punctuation) is backslash-escaped, and so is whatever could open a block
  where the text starts a line (``-``, ``+``, ``=``, ``>``, ``1.``, ``1)``); leading and
  trailing spaces are written ``&#32;``, which no renderer strips or reads as indentation;
  ``www.`` and ``://`` are broken so GitHub does not turn them into links;
* a code span's fence is longer than any run of backticks in it, and padded with a space where
  it holds a backtick or CommonMark would otherwise eat a leading and a trailing space;
* in a table, every ``|`` (in prose and code alike) is escaped as ``\\|``, which GFM tables
  read back as a literal ``|`` before anything else, so no cell can be split.
"""

from __future__ import annotations

import re

from ..errors import printable

__all__ = ["code", "prose", "table_cell"]

#: A backslash that would escape what follows it: one before ASCII punctuation, or at the end
#: (where the report's own markup follows). Before a letter (``C:\\dir``, ``\\n``) it is literal.
_ESCAPING_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~]| *$)")
#: Characters that are Markdown syntax anywhere in a line (``!`` only before ``[``, ``(`` and
#: ``)`` only after ``]``, so escaping the brackets is enough for links and images; ``&`` only
#: where it could begin an entity).
_INLINE = re.compile(r"[`*\[\]<~#]|&(?=[A-Za-z0-9#])")
#: An underscore between two letters or digits (``physical_stability``) can neither open nor
#: close emphasis, so it stays as it is; any other can, and is escaped.
_LONE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
#: What opens a block where the text starts a line: a list marker, a block quote, a thematic
#: break or setext underline, an ordered list marker (digits then ``.`` or ``)``).
_BLOCK_START = re.compile(r"^(?:[-+=>]|\d{1,9}[.)])")
#: Where GitHub would make a link of plain text.
_LINK_STARTS = re.compile(r"(?i)(www)(\.)|(:)(//)")


def _visible(value: str) -> str:
    """Control, zero-width, bidirectional and separator characters as escapes (``\\n``,
    ``\\u202e``): every character left is one a reader sees."""
    return printable(str(value))


def prose(value: object) -> str:
    """``value`` as Markdown prose that renders as exactly its (visible) characters."""
    shown = _ESCAPING_BACKSLASH.sub(r"\\\\", _visible(value))
    shown = _INLINE.sub(r"\\\g<0>", shown)
    shown = _LONE_UNDERSCORE.sub(r"\\_", shown)
    shown = _LINK_STARTS.sub(lambda m: f"{m[1] or m[3]}\\{m[2] or m[4]}", shown)
    if (start := _BLOCK_START.match(shown)) is not None:
        marker = start.group(0)
        shown = marker[:-1] + "\\" + marker[-1] + shown[len(marker) :]
    core = shown.strip(" ")
    if not core:
        return "&#32;" * len(shown)
    lead = len(shown) - len(shown.lstrip(" "))
    trail = len(shown) - len(shown.rstrip(" "))
    return "&#32;" * lead + core + "&#32;" * trail


def code(value: object) -> str:
    """``value`` as one inline code span, whatever backticks and spaces it holds."""
    shown = _visible(value)
    if not shown:
        return "` `"
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = longest > 0 or (shown[0] == " " and shown[-1] == " " and shown.strip(" ") != "")
    return f"{fence} {shown} {fence}" if pad else f"{fence}{shown}{fence}"


def table_cell(cell: str) -> str:
    """A cell already written as Markdown, with its pipes escaped for a GFM table row."""
    return cell.replace("|", "\\|")
