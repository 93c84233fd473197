"""Shared value kinds: general phrasings a domain grammar takes in with one line, ``%use NAME``.

Every domain used to re-grow the same general language in its own grammar: "goes up", "neither
grows nor shrinks", "↑" for a change; "yep", "Would it change? No." for a yes/no; "the C–B
contact", "C over B" for a joint. A *kind* says that once, in ``grammars/kinds/NAME.lark``, with
its own corpus of phrasings it must read (``grammars/kinds/NAME.corpus``, tested), and a domain
grammar declares the kind and its domain words::

    %use change
    %part CHANGE_NOUN: speed | rpm | angular velocity        // what changes, in this domain
    %part MORE_WORDS: faster | quicker                       // its own comparatives
    %part LESS_WORDS: slower

How: the kind's text is appended after the domain's own text (so the domain's line numbers, and
every error position in it, stay as they are), and then the phrase lexicon is compiled over both
together — so the kind's phrases see the domain's parts. A definition the domain gives itself
(a ``%part``, ``%phrase``, terminal or rule of the same name) replaces the kind's: the kind's
parts named ``*_WORDS``/``*_NOUN`` are the slots a domain is meant to fill, each with a default.

Kinds are keyaudit's own vocabulary: they are read only from the bundled ``grammars/kinds/``
folder (a rule's folder cannot shadow one), a kind may use other kinds, and at most
:data:`MAX_KINDS` are taken in. A kind file holds no ``%import``: the domain grammar imports the
shared terminals (``NEG``, ``WS``…) a kind's rules name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["KindError", "Spliced", "kind_dir", "kinds_used", "splice_kinds"]

#: ``%use NAME`` on a line of its own (a comment may follow).
_USE = re.compile(r"^[ \t]*%use[ \t]+([A-Za-z0-9_]+)[ \t]*(?://.*)?$")
#: A top-level definition's name: a ``%part``/``%phrase``, a terminal or a rule (``?name``, ``!name``).
_DEFINITION = re.compile(
    r"^(?:%(?:phrase|part)[ \t]+)?[?!]?([A-Za-z_][A-Za-z0-9_]*)(?:\.-?\d+)?[ \t]*:"
)
#: Most kinds one grammar may take in (directly or through other kinds).
MAX_KINDS = 16
#: Largest kind file read (the bundled ones are a few kilobytes).
MAX_KIND_BYTES = 200_000


class KindError(Exception):
    """A ``%use`` that cannot be served; ``line`` is the 1-based line of the ``%use``."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Spliced:
    """A grammar's text with its kinds appended, and where each kind's text starts.

    ``segments`` holds ``(first line in text, kind file)`` for each appended kind, in order, so an
    error on a line past the domain's own text names the kind file and its own line.
    """

    text: str
    own_lines: int
    segments: tuple[tuple[int, Path], ...]

    def origin(self, line: int) -> tuple[Path | None, int]:
        """The file (None: the domain grammar itself) and line a line of :attr:`text` came from."""
        found: tuple[Path | None, int] = (None, line)
        for first, path in self.segments:
            if line >= first:
                found = (path, line - first + 1)
        return found


def kind_dir() -> Path:
    """The bundled folder of kinds (works from a wheel too)."""
    return Path(str(resources.files("keyaudit.grammars"))) / "kinds"


def _read_kind(name: str) -> tuple[Path, str]:
    path = kind_dir() / f"{name}.lark"
    try:
        data = path.read_bytes()[: MAX_KIND_BYTES + 1]
    except OSError:
        known = sorted(p.stem for p in kind_dir().glob("*.lark"))
        raise KindError(0, f"no value kind named {name!r} (kinds: {', '.join(known)})") from None
    if len(data) > MAX_KIND_BYTES:
        raise KindError(0, f"value kind {name!r} is larger than {MAX_KIND_BYTES:,} bytes")
    return path, data.decode("utf-8")


def _defined_names(lines: list[str]) -> set[str]:
    """Names defined at the top level of a grammar's lines (continuation lines are indented)."""
    names = set()
    for raw in lines:
        if raw[:1] in " \t|" or raw.lstrip().startswith("//"):
            continue
        match = _DEFINITION.match(raw)
        if match:
            names.add(match.group(1))
    return names


def _without(lines: list[str], names: set[str]) -> list[str]:
    """The kind's lines with every definition the domain gives itself blanked (lines kept, so the
    kind's own line numbers stay right)."""
    out = list(lines)
    dropping = False
    for i, raw in enumerate(lines):
        top = raw[:1] not in " \t|" and not raw.lstrip().startswith("//") and raw.strip() != ""
        if top:
            match = _DEFINITION.match(raw)
            dropping = bool(match and match.group(1) in names)
        elif raw.strip() == "":
            dropping = False
        if dropping:
            out[i] = ""
    return out


def _uses(lines: list[str]) -> list[tuple[int, str]]:
    return [(n, m.group(1)) for n, raw in enumerate(lines, 1) if (m := _USE.match(raw))]


def kinds_used(text: str) -> list[Path]:
    """The kind files a grammar's text takes in, directly or through other kinds, in order."""
    try:
        return [path for path, _ in _gather(text.split("\n"))]
    except KindError:
        return []


def _gather(lines: list[str]) -> list[tuple[Path, list[str]]]:
    """Every kind the lines use, depth first, each once: ``(path, lines)``."""
    seen: dict[str, tuple[Path, list[str]]] = {}
    order: list[str] = []

    def visit(at: list[str], depth: int) -> None:
        for number, name in _uses(at):
            if name in seen:
                continue
            if len(seen) >= MAX_KINDS or depth > MAX_KINDS:
                raise KindError(number, f"more than {MAX_KINDS} value kinds taken in through %use")
            try:
                path, text = _read_kind(name)
            except KindError as error:
                raise KindError(number, error.message) from None
            kind_lines = text.split("\n")
            if any(line.lstrip().startswith("%import") for line in kind_lines):
                raise KindError(number, f"value kind {name!r} has an %import (kinds may not)")
            seen[name] = (path, kind_lines)
            order.append(name)  # before the kinds it uses: its own definitions win over theirs
            visit(kind_lines, depth + 1)

    visit(lines, 0)
    return [seen[name] for name in order]


def splice_kinds(text: str) -> Spliced:
    """``text`` with every kind it uses appended (``%use`` lines become blank), the domain's own
    definitions taking precedence; KindError for an unknown kind or too many."""
    lines = text.split("\n")
    if not any(_USE.match(raw) for raw in lines):
        return Spliced(text, len(lines), ())
    kinds = _gather(lines)
    own = [("" if _USE.match(raw) else raw) for raw in lines]
    defined = _defined_names(own)
    out = list(own)
    segments = []
    for path, kind_lines in kinds:
        body = [("" if _USE.match(raw) else raw) for raw in kind_lines]
        body = _without(body, defined)
        defined |= _defined_names(body)
        segments.append((len(out) + 1, path))
        out += body
    return Spliced("\n".join(out), len(lines), tuple(segments))
