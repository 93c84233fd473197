"""Normalised text before every answer grammar: the wrappers and compatibility forms a model puts
around an answer, read once for every rule, with each character's place in the original kept.

Why one module: LaTeX (``$D$``, ``\\boxed{C}``, ``\\text{top edge}``, ``45^\\circ``,
``\\approx 173``), full-width letters, invisible characters and arrows used as answer markers
(``→ D``) turn up in every benchmark's answers, and a rule grammar that has to spell each of
them re-grows the same general language. Here they become the plain text a grammar already
reads — ``D``, ``C``, ``top edge``, ``45°``, ``≈ 173`` — before the rule's own ``[answer]``
replacements and deletions run, so no rule needs a LaTeX terminal of its own.

What it does, in order, in one pass over the text:

* **Compatibility forms**: full-width ASCII (``Ｄ`` → ``D``), mathematical alphanumerics
  (``𝐷``, ``𝜒`` → ``D``, ``χ``), odd spaces (no-break, thin, ideographic) → a space; zero-width
  characters and the byte-order mark are dropped. Superscripts stay (``m/s²`` keeps its ²).
* **LaTeX**, only where the text has a backslash or a pair of ``$``: math delimiters (``$``,
  ``$$``, ``\\(`` ``\\)``, ``\\[`` ``\\]``) are dropped; text and box commands (``\\text``,
  ``\\mathrm``, ``\\boxed``, ``\\textbf``, …) keep their argument; ``\\frac{a}{b}`` is ``a/b``;
  symbol commands become their character (``\\approx`` ``≈``, ``\\times`` ``×``, ``\\cdot``
  ``·``, ``\\to`` ``→``, ``^\\circ`` ``°``, ``\\%`` ``%``, ``\\le`` ``≤``); spacing commands a space;
  ``\\left`` and ``\\right`` nothing; Greek letters the letter (``\\chi`` → ``χ``, ``\\Delta`` →
  ``Δ``) and LaTeX arrows theirs (``\\downarrow`` → ``↓``), which grammars read as words; any
  other command its name as a word (``\\sin`` → ``sin``); braces of commands and math go.
* **Answer markers**: an arrow (``→``, ``->``, ``=>``, ``⇒``, ``⟹``) or a bullet (``•``, ``▪``,
  ``- `` before a word, not before a number: ``- 2`` may be minus two) that opens the answer marks
  it and is dropped; arrows inside the line stay (``from 60 → 120``).

Every output character records the index of the source character it came from
(:attr:`Normalised.origin`), so a reader can always show the words the model wrote.
Bounded: one pass, output at most a constant times the input, no backtracking.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["Normalised", "normalise"]

#: Commands whose one braced argument is the text itself.
_TEXT_COMMANDS = frozenset(
    ["text", "textrm", "textbf", "textit", "textsf", "texttt", "textnormal", "textup", "emph", "mathrm", "mathbf", "mathit", "mathsf", "mathtt", "mathnormal", "mathbb", "mathcal", "boldsymbol", "bm", "operatorname", "boxed", "fbox", "mbox", "hbox", "underline", "overline", "hat", "vec", "bar", "tilde", "widehat", "widetilde"]
)
#: Commands that are one character.
_SYMBOLS = {
    "approx": "≈", "simeq": "≃", "sim": "~", "times": "×", "cdot": "·", "div": "÷", "pm": "±",
    "mp": "∓", "le": "≤", "leq": "≤", "leqslant": "≤", "ge": "≥", "geq": "≥", "geqslant": "≥",
    "ne": "≠", "neq": "≠", "to": "→", "rightarrow": "→", "Rightarrow": "⇒", "implies": "⇒",
    "longrightarrow": "→", "Longrightarrow": "⇒", "leftarrow": "←", "gets": "←", "circ": "°",
    "degree": "°", "deg": "°", "infty": "∞", "lt": "<", "gt": ">", "ldots": "...", "dots": "...",
    "cdots": "...", "prime": "'", "minus": "-", "uparrow": "↑", "Uparrow": "⇑", "downarrow": "↓",
    "Downarrow": "⇓", "nearrow": "↗", "searrow": "↘", "checkmark": "✓",
}
#: Greek letter commands: the letter itself, which grammars read as a word ("\chi" -> "χ").
_GREEK = dict(
    zip(
        ["alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "varpi", "rho", "varrho", "sigma", "varsigma", "tau", "upsilon", "phi", "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"],
        "αβγδεεζηθθικλμνξππρρσςτυφφχψωΓΔΘΛΞΠΣΥΦΨΩ",
        strict=True,
    )
)
_SYMBOLS.update(_GREEK)
#: Spacing commands (a space) and sizing commands (nothing).
_SPACES = frozenset({",", ";", ":", " ", "quad", "qquad", "enspace", "thinspace", "medspace"})
_NOTHING = frozenset(
    {"!", "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
     "displaystyle", "textstyle", "limits", "nolimits"}
)
#: ``\X`` that is the character X itself.
_ESCAPED = frozenset("%$&#_{}")
_FRACTIONS = frozenset({"frac", "dfrac", "tfrac", "cfrac"})

_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_SPACE_LIKE = frozenset("\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000")
_OPENING_ARROW = re.compile(r"\s*(?:→|->|=>|⇒|⟹|⟶|➔|➜|➞|[•◦▪‣]|-(?=\s+\D))\s*")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
#: Lowercase and uppercase mathematical alphanumeric blocks (U+1D400-U+1D7FF) fold by NFKC.
_MATH_ALNUM = range(0x1D400, 0x1D800)


@dataclass(frozen=True)
class Normalised:
    """The normalised text and, for each of its characters, the index it came from."""

    text: str
    #: ``origin[i]`` is the source index of ``text[i]``; one more entry, the source's length.
    origin: tuple[int, ...]

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The source slice that ``text[start:end]`` was made from."""
        if start >= end:
            return self.origin[start], self.origin[start]
        return self.origin[start], self.origin[end - 1] + 1


class _Builder:
    __slots__ = ("chars", "origin")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.origin: list[int] = []

    def add(self, text: str, at: int) -> None:
        for ch in text:
            self.chars.append(ch)
            self.origin.append(at)


def _fold(ch: str) -> str:
    """A compatibility character's plain form (full-width, math alphanumerics, odd spaces)."""
    code = ord(ch)
    if 0xFF01 <= code <= 0xFF5E:
        return chr(code - 0xFEE0)
    if ch in _SPACE_LIKE:
        return " "
    if ch in _INVISIBLE:
        return ""
    if code in _MATH_ALNUM:
        return unicodedata.normalize("NFKC", ch)
    return ch


def _has_latex(text: str) -> bool:
    return "\\" in text or text.count("$") >= 2


def _braced(text: str, i: int, end: int) -> tuple[int, int] | None:
    """The span inside the brace group starting at ``text[i]`` (after spaces) and closing before
    ``end``, or None."""
    j = i
    while j < end and text[j] == " ":
        j += 1
    if j >= end or text[j] != "{":
        return None
    depth = 0
    for k in range(j, min(end, j + 2000)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return j + 1, k
    return None


def _latex(text: str, start: int, end: int, out: _Builder, depth: int = 0) -> None:
    """Append ``text[start:end]`` with its LaTeX read as plain text."""
    i = start
    while i < end:
        ch = text[i]
        if ch == "\\" and i + 1 < end:
            match = _COMMAND.match(text, i)
            assert match is not None
            name = match.group(1)
            after = match.end()
            if name in ("(", ")", "[", "]"):
                i = after
                continue
            if name in _ESCAPED:
                out.add(name, i)
                i = after
                continue
            if name in _SPACES:
                out.add(" ", i)
                while name.isalpha() and after < end and text[after] == " ":
                    after += 1  # TeX skips the spaces after a control word
                i = after
                continue
            if name in _NOTHING:
                i = after
                continue
            if depth < 20 and name in _FRACTIONS:
                top = _braced(text, after, end)
                bottom = _braced(text, top[1] + 1, end) if top else None
                if top and bottom:
                    _latex(text, top[0], top[1], out, depth + 1)
                    out.add("/", after)
                    _latex(text, bottom[0], bottom[1], out, depth + 1)
                    i = bottom[1] + 1
                    continue
            if depth < 20 and name in _TEXT_COMMANDS:
                arg = _braced(text, after, end)
                if arg:
                    _latex(text, arg[0], arg[1], out, depth + 1)
                    i = arg[1] + 1
                    continue
            if name == "sqrt" and depth < 20:
                arg = _braced(text, after, end)
                if arg:
                    out.add("sqrt(", i)
                    _latex(text, arg[0], arg[1], out, depth + 1)
                    out.add(")", arg[1])
                    i = arg[1] + 1
                    continue
            symbol = _SYMBOLS.get(name)
            if symbol is not None:
                out.add(symbol, i)
                if name in _GREEK:
                    # TeX skips the spaces after a control word: "\Delta y" is "Δy"
                    gap = after
                    while gap < end and text[gap] == " ":
                        gap += 1
                    if gap < end and text[gap].isalpha():
                        after = gap
            elif name.isalpha():
                # a word: keep it apart from a letter or digit right before ("2\pi" -> "2 pi")
                if out.chars and out.chars[-1].isalnum():
                    out.add(" ", i)
                out.add(name, i)
                if after < end and text[after].isalnum():
                    out.add(" ", i)
            i = after
            continue
        if ch == "^":
            # ^\circ, ^{\circ}, ^{o}: a degree sign; ^{2}: ^2
            rest = text[i + 1 : i + 12]
            degree = re.match(r"\s*(?:\{\s*\\circ\s*\}|\\circ|\{\s*o\s*\})", rest)
            if degree:
                out.add("°", i)
                i += 1 + degree.end()
                continue
            out.add("^", i)
            i += 1
            continue
        if ch in "{}":
            i += 1
            continue
        base = "".join(out.chars[-2:])
        if ch == "_" and len(base) == 2 and base.isascii() and base.isalpha():
            # a word's subscript is a word apart: "\text{direction}_D" is "direction _D"
            out.add(" _", i)
            i += 1
            continue
        if ch == "$":
            i += 1
            continue
        if ch == "~":
            out.add(" ", i)
            i += 1
            continue
        folded = _fold(ch)
        if folded:
            out.add(folded, i)
        i += 1


_OPENERS = {"$$": "$$", "$": "$", "\\(": "\\)", "\\[": "\\]"}
_OPENER = re.compile(r"\$\$|\$|\\\(|\\\[")


def _math_segments(text: str) -> list[tuple[int, int]]:
    """Spans of math (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``, delimiters included); an
    unpaired opener stays text (``costs $5``)."""
    spans = []
    i = 0
    while True:
        match = _OPENER.search(text, i)
        if match is None:
            return spans
        closer = _OPENERS[match.group()]
        close = text.find(closer, match.end())
        if close < 0:
            i = match.end()
            continue
        spans.append((match.start(), close + len(closer)))
        i = close + len(closer)


def normalise(text: str) -> Normalised:
    """``text`` with wrappers, LaTeX and compatibility forms read as plain text (see the module)."""
    out = _Builder()
    if _has_latex(text):
        segments = _math_segments(text)
        i = 0
        for start, end in segments:
            _plain(text, i, start, out)
            _latex(text, start, end, out)
            i = end
        _plain(text, i, len(text), out)
    else:
        _plain(text, 0, len(text), out)
    normalised = "".join(out.chars)
    origin = out.origin
    marker = _OPENING_ARROW.match(normalised)
    if marker and marker.end() < len(normalised):
        normalised = normalised[marker.end() :]
        origin = origin[marker.end() :]
    return Normalised(normalised, tuple(origin) + (len(text),))


def _plain(text: str, start: int, end: int, out: _Builder) -> None:
    """Text outside ``$…$``: commands there are LaTeX too (``\\boxed{C}`` with no dollars)."""
    if "\\" in text[start:end]:
        _latex_outside_math(text, start, end, out)
        return
    for i in range(start, end):
        folded = _fold(text[i])
        if folded:
            out.add(folded, i)


def _latex_outside_math(text: str, start: int, end: int, out: _Builder) -> None:
    """Outside math, only commands are read: braces, ``^`` and ``~`` are the model's own text
    unless they belong to a command."""
    i = start
    while i < end:
        slash = text.find("\\", i, end)
        if slash < 0:
            slash = end
        for k in range(i, slash):
            folded = _fold(text[k])
            if folded:
                out.add(folded, k)
        if slash >= end:
            return
        match = _COMMAND.match(text, slash)
        stop = match.end() if match else slash + 1
        name = match.group(1) if match else ""
        if name in _TEXT_COMMANDS or name in _FRACTIONS or name == "sqrt":
            arg = _braced(text, stop, end)
            if arg:
                last = arg[1] + 1
                if name in _FRACTIONS:
                    second = _braced(text, last, end)
                    if second:
                        last = second[1] + 1
                _latex(text, slash, last, out)
                i = last
                continue
        if name.isalpha() and not _known_command(name):
            # outside math an unknown "\word" is the model's own text ("back\slash")
            for k in range(slash, stop):
                out.add(text[k], k)
            i = stop
            continue
        if name.isalpha():  # the spaces after a control word are TeX's to skip or keep
            while stop < end and text[stop] == " ":
                stop += 1
            if stop < end and name in _GREEK and text[stop].isalpha():
                pass  # "\Delta y": the letter follows at once
            elif stop > match.end():
                _latex(text, slash, match.end(), out)
                if name not in _SPACES:
                    out.add(" ", match.end())
                i = stop
                continue
        _latex(text, slash, stop, out)
        i = stop


def _known_command(name: str) -> bool:
    return (
        name in _SYMBOLS or name in _TEXT_COMMANDS or name in _FRACTIONS or name in _SPACES
        or name in _NOTHING or name == "sqrt"
    )
