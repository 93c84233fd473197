"""Phrase lexicons: word patterns in a grammar file, compiled to Lark regex terminals at load.

A rule author writes a domain's wording as *word patterns*, not regular expressions::

    %part  SPIN: rotation | rotational | spin | turning
    %phrase DIR_SAME.8: [its | the] [{SPIN}] direction (stays | remains | is) (unchanged | the same)
                      | same [{SPIN}] (direction | way | sense)

* words match literally, case-insensitively, whole words only; any run of whitespace between
  words is allowed (``the same`` also matches ``the   same`` or a line break);
* ``(a | b c)`` is a choice, ``[a | b]`` an optional choice; choices nest;
* ``{NAME}`` inlines a ``%part`` (defined anywhere in the same file, before or after use);
* ``"..."`` is a literal written as is (punctuation: ``":"``, ``"="``, ``"-"``); no whitespace is
  required next to a literal that does not start or end with a letter or digit;
* ``/.../`` is a raw regular expression, the escape hatch for what words cannot say (a
  case-sensitive block letter: ``/(?-i:[A-H])/``);
* ``&( ... )`` is a lookahead, "followed by", and ``!( ... )`` "not followed by": the inside is an
  ordinary pattern, matched with the usual gap after the piece before it, and nothing is
  consumed (``same !(speed | "=")``); ``$`` is the end of the text (``&("," | ";" | $)``);
* a ``%phrase`` or ``%part`` continues on the following indented lines (or lines that start
  with ``|``), so a long choice can be broken anywhere.

Each ``%phrase NAME[.PRIORITY]: ...`` becomes the Lark terminal ``NAME[.PRIORITY]: /.../i`` in
place, on the same line, so Lark's own error positions stay right. Nothing generated is written
anywhere: the grammar file is the source. Mistakes are :class:`PhraseError` with line and column.

The compiled regex is shaped for Python's backtracking engine without changing what it matches
(tests/test_phrases.py compares it with the plain form at every position of real answers): a
lookahead on the characters a phrase can start with (of words, literals and simple raw regexes),
first-letter classes on alternatives, and no word-end check before required whitespace.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ...load.safe_io import read_sealed, write_sealed

try:  # the regex parser, to find a raw regex's first characters
    import re._parser as sre_parse  # Python 3.11+
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

__all__ = ["PhraseError", "expand_phrases"]

#: Longest regex a phrase may compile to (a phrase that explodes through nested parts is refused);
#: the speed measures (first-letter classes, first-character guards) add about a third.
MAX_PATTERN_CHARS = 60_000
#: Deepest nesting of parts inside parts.
MAX_PART_DEPTH = 12
#: Most characters all of a file's phrases may compile to together (the bundled grammars need
#: at most 110,000). Parts are compiled once each and every sequence and choice is measured as it
#: grows, so a lexicon of many references to references ("billion laughs") stops at this size
#: in time and memory proportional to it, not to what it would expand to.
MAX_EXPANDED_CHARS = 2_000_000
#: Deepest nesting of ``( )``, ``[ ]`` and lookaheads inside one pattern.
MAX_GROUP_DEPTH = 100

_DIRECTIVE = re.compile(r"^(%phrase|%part)[ \t]+([A-Z_][A-Z0-9_]*)(\.-?\d+)?[ \t]*:(.*)$")
_WORD_END = "(?![A-Za-z0-9])"
_WORD = re.compile(r"[A-Za-z0-9'’][A-Za-z0-9'’.\-]*")
#: Where the gap before a lookahead goes, inside it, once the piece before it is known: ``\s+``
#: after a word-like end, else ``\s*`` (only lookaheads whose inside starts word-like carry it).
_LEAD = "\x00"
#: In a witness, where a gap (``\s+`` or ``\s*``: any whitespace, or none) goes.
_GAP = "\x01"
#: Most witnesses a piece keeps (past it they are unknown).
MAX_WITNESSES = 256


class PhraseError(Exception):
    """A malformed word pattern; ``line``/``column`` are 1-based positions in the grammar file."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message


@dataclass(frozen=True)
class _Piece:
    """One compiled element of a sequence: its regex and whether it is word-like at each end."""

    regex: str
    optional: bool
    word_start: bool
    word_end: bool
    #: The characters a match can start with (both cases), or None when unknown (a raw regex).
    first: frozenset[str] | None = None
    #: A lookahead ``&(...)``/``!(...)`` (or a choice or sequence of them): it consumes nothing,
    #: and its regex holds ``_LEAD`` where the gap after the piece before it goes.
    zero_width: bool = False
    #: Starts with a raw lookaround (``/(?<=...)/``...): glued to the piece before it, no gap.
    lookaround: bool = False
    #: Every text the piece can match, when that is a short finite list (a word, a literal, a
    #: choice of them, a simple raw regex), with :data:`_GAP` where whitespace may go; None
    #: when unknown or too many. Used only to prove that a lookbehind after it can never hold.
    witnesses: tuple[str, ...] | None = None


@dataclass
class _Definition:
    kind: str  # "%phrase" or "%part"
    name: str
    priority: str
    body: str
    line: int
    column: int  # column of the body's first character
    end_line: int


@functools.lru_cache(maxsize=32)
def expand_phrases(text: str) -> str:
    """Return ``text`` with every ``%part`` removed and every ``%phrase`` compiled in place.

    A pure function of the text, so it is remembered: for the last 32 texts in this process
    (``check --all`` reads ``claims.lark`` and ``common.lark`` once for each of its rules, and
    again to check its parser cache's imports) and across runs in the private cache folder
    ``phrases/`` (:mod:`...load.safe_io`'s trust rules; keyed by the text, this module's source and
    Python's version). Compiling the lexicons was most of loading the bundled rules: about 1 s of
    a warm ``check --all`` on the example."""
    if "%phrase" not in text and "%part" not in text:
        return text
    key = _cache_key(text)
    entry = key[:40] + _CACHE_SUFFIX
    payload = read_sealed(_CACHE_FOLDER, entry, _CACHE_FORMAT, key, _MAX_CACHED_BYTES)
    if payload is not None:
        try:
            return payload.decode("utf-8")
        except UnicodeDecodeError:
            pass
    expanded = _expand(text)
    if len(expanded) <= _MAX_CACHED_BYTES // 4:
        write_sealed(
            _CACHE_FOLDER, entry, _CACHE_FORMAT, key, expanded.encode("utf-8"), _CACHE_KEEP, _CACHE_SUFFIX
        )
    return expanded


_CACHE_FOLDER = "phrases"
_CACHE_SUFFIX = ".phrases"
_CACHE_FORMAT = "phrases-v1"
_CACHE_KEEP = 128
_MAX_CACHED_BYTES = 16 << 20


@functools.lru_cache(maxsize=1)
def _source_hash() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def _cache_key(text: str) -> str:
    digest = hashlib.sha256(f"{_CACHE_FORMAT}\0{_source_hash()}\0{sys.version_info[:2]}\0".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _expand(text: str) -> str:
    """:func:`expand_phrases` itself, computed."""
    if "%phrase" not in text and "%part" not in text:
        return text
    lines = text.split("\n")
    definitions = _collect(lines)
    parts = {d.name: d for d in definitions if d.kind == "%part"}
    out = list(lines)
    compiled: dict[str, _Piece] = {}
    total = 0
    for d in definitions:
        for number in range(d.line, d.end_line + 1):
            out[number - 1] = ""
        if d.kind == "%phrase":
            piece = _compile_body(d, parts, (), compiled)
            if piece.zero_width:
                column = d.column + len(d.body) - len(d.body.lstrip())
                raise PhraseError(d.line, column, f"phrase {d.name} is only lookaheads and matches no text")
            regex = _bounded(piece)
            if _can_match_empty(regex):
                column = d.column + len(d.body) - len(d.body.lstrip())
                raise PhraseError(
                    d.line,
                    column,
                    f"phrase {d.name} can match empty text (it is only raw lookarounds or optional"
                    " pieces): a terminal must consume at least one character",
                )
            if len(regex) > MAX_PATTERN_CHARS:
                raise PhraseError(d.line, 1, f"phrase {d.name} compiles to over {MAX_PATTERN_CHARS} characters")
            total += len(regex)
            if total > MAX_EXPANDED_CHARS:
                raise PhraseError(
                    d.line, 1, f"the phrases up to {d.name} compile to over {MAX_EXPANDED_CHARS} characters"
                )
            out[d.line - 1] = f"{d.name}{d.priority}: /{regex.replace('/', chr(92) + '/')}/i"
    return "\n".join(out)


def _can_match_empty(regex: str) -> bool:
    """Whether the compiled regex can match zero characters (Lark refuses such a terminal with
    its whole regex and no line; here the phrase's line says it)."""
    try:
        return sre_parse.parse(regex, re.IGNORECASE).getwidth()[0] == 0
    except (re.error, RecursionError, OverflowError):
        return False


def _collect(lines: list[str]) -> list[_Definition]:
    found: list[_Definition] = []
    current: _Definition | None = None
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        indented = raw[:1] in " \t"
        if current is not None and indented and stripped.startswith("//"):
            current.end_line = number  # a comment inside a definition
            continue
        if current is not None and stripped and (stripped.startswith("|") or indented):
            current.body += " " + stripped
            current.end_line = number
            continue
        current = None
        if not stripped.startswith("%phrase") and not stripped.startswith("%part"):
            continue
        match = _DIRECTIVE.match(stripped)
        if match is None:
            raise PhraseError(number, 1, "expected '%phrase NAME[.PRIORITY]: pattern' or '%part NAME: pattern'")
        kind, name, priority, body = match.groups()
        if kind == "%part" and priority:
            raise PhraseError(number, 1, f"part {name} cannot have a priority (only phrases are terminals)")
        if any(d.name == name for d in found):
            raise PhraseError(number, 1, f"{name} is defined twice")
        column = raw.index(body) + 1 if body.strip() else len(raw) + 1
        current = _Definition(kind, name, priority or "", body, number, column, number)
        found.append(current)
    return found


def _bounded(piece: _Piece) -> str:
    """Whole words only: no letter or digit may touch a word-like end of the match."""
    before = r"(?<![A-Za-z0-9])" if piece.word_start else ""
    after = _WORD_END if piece.word_end else ""
    return f"{_first_guard(piece.first)}{before}(?:{piece.regex}){after}"


def _first_guard(first: frozenset[str] | None) -> str:
    """A lookahead on the first character: at the many positions where the phrase cannot start
    (most words of an answer), the regex engine gives up after one test instead of walking
    every alternative. It changes no match, only speed."""
    if not first:
        return ""
    return "(?=[" + "".join(re.escape(c) for c in sorted(first)) + "])"


def _cased_first(regex: str) -> str:
    """An alternative that starts with a letter starts with a case-sensitive class of its two
    cases instead (``the`` → ``(?-i:[tT])he``).

    The same match as the phrase's case-insensitive flag gives an ASCII letter, but as the first
    test of an alternative it lets the regex engine skip that alternative on one comparison —
    in a list of synonyms, nearly all of them are skipped so."""
    c = regex[:1]
    if c.isascii() and c.isalpha():
        return f"(?-i:[{c.lower()}{c.upper()}])" + regex[1:]
    return regex


def _raw_first(raw: str) -> frozenset[str] | None:
    """The characters a raw regex's match can start with, when its parse says so simply
    (literals, classes of up to 512 characters, groups, alternatives, repeats), else None (no
    guard). Lookarounds and anchors are skipped: a superset of the true first characters is
    still a correct guard."""
    try:
        parsed = sre_parse.parse(raw)
    except (re.error, RecursionError):
        return None
    found = _ops_first(list(parsed), 0)
    return None if found is None or found[1] else frozenset(found[0])


def _ops_first(ops: list, depth: int) -> tuple[set[str], bool] | None:
    """(first characters, whether the sequence can match empty) of a parsed sequence, or None."""
    if depth > 20:
        return None
    first: set[str] = set()
    for op, av in ops:
        name = str(op)
        if name == "LITERAL":
            return first | _both_cases(chr(av)), False
        if name == "IN":
            chars = _class_chars(av)
            return None if chars is None else (first | chars, False)
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue  # zero width
        if name == "SUBPATTERN":
            inner = _ops_first(list(av[-1]), depth + 1)
        elif name == "BRANCH":
            branches = [_ops_first(list(b), depth + 1) for b in av[1]]
            if any(b is None for b in branches):
                return None
            inner = (set().union(*(b[0] for b in branches)), any(b[1] for b in branches))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            item = _ops_first(list(av[2]), depth + 1)
            inner = None if item is None else (item[0], item[1] or av[0] == 0)
        else:
            return None
        if inner is None:
            return None
        first |= inner[0]
        if not inner[1]:
            return first, False
    return first, True


def _class_chars(items: list) -> set[str] | None:
    chars: set[str] = set()
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            chars |= _both_cases(chr(av))
        elif name == "RANGE" and av[1] - av[0] < 512:
            for code in range(av[0], av[1] + 1):
                chars |= _both_cases(chr(code))
        else:
            return None  # a negated class, a category (\\d, \\s) or a wide range
    return chars


def _both_cases(c: str) -> set[str]:
    return {c, c.lower(), c.upper()} if len(c.lower()) == len(c.upper()) == 1 else {c}


def _first_of(text: str) -> frozenset[str]:
    """Both cases of a literal's first character (an apostrophe stands for both kinds)."""
    c = text[0]
    return frozenset("'’") if c in "'’" else frozenset(_both_cases(c))


class _Parser:
    """Recursive-descent reader of one pattern body: alternatives of sequences of elements."""

    def __init__(
        self,
        d: _Definition,
        parts: dict[str, _Definition],
        stack: tuple[str, ...],
        compiled: dict[str, _Piece],
    ):
        self.d, self.parts, self.stack = d, parts, stack
        #: Each part's compiled piece, shared by every parser of one file: a part is compiled
        #: once however often it is referenced.
        self.compiled = compiled
        self.text, self.pos, self.depth = d.body, 0, 0

    def check_size(self, pieces: list[_Piece], start: int) -> None:
        """Refuse a sequence or choice that has grown past ``MAX_PATTERN_CHARS`` (measured as it
        grows: nothing larger is ever built)."""
        if sum(len(p.regex) for p in pieces) > MAX_PATTERN_CHARS:
            self.pos = start
            raise self.fail(f"this pattern compiles to over {MAX_PATTERN_CHARS} characters")

    def fail(self, message: str) -> PhraseError:
        return PhraseError(self.d.line, self.d.column + self.pos, message)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def alternatives(self, closer: str | None) -> list[list[_Piece]]:
        start = self.pos
        options = [self.sequence(closer)]
        size = sum(len(p.regex) for p in options[0])
        self.skip()
        while self.pos < len(self.text) and self.text[self.pos] == "|":
            self.pos += 1
            options.append(self.sequence(closer))
            size += sum(len(p.regex) for p in options[-1])
            if size > MAX_PATTERN_CHARS:
                self.pos = start
                raise self.fail(f"this choice compiles to over {MAX_PATTERN_CHARS} characters")
            self.skip()
        if len({_zero_width(o) for o in options}) > 1:
            self.pos = start
            raise self.fail("a choice mixes lookaheads with text: put the lookahead in every alternative or none")
        return options

    def sequence(self, closer: str | None) -> list[_Piece]:
        pieces: list[_Piece] = []
        start = self.pos
        while True:
            self.skip()
            if self.pos >= len(self.text) or self.text[self.pos] == "|" or (
                closer and self.text[self.pos] == closer
            ):
                break
            at = self.pos
            pieces.append(self.element())
            self.check_size(pieces, start)
            if len(pieces) > 1 and pieces[-1].lookaround:
                self.check_lookbehind(pieces[-2], at)
        if not pieces:
            raise self.fail("empty alternative (two '|' in a row, or a '|' at an end)")
        if all(p.optional for p in pieces):
            raise self.fail("an alternative made only of optional [...] parts matches nothing")
        if all(p.optional or p.zero_width for p in pieces) and any(p.optional for p in pieces):
            raise self.fail("an alternative of optional [...] parts and lookaheads needs a required word")
        return pieces

    def element(self) -> _Piece:
        c = self.text[self.pos]
        if c in "&!":
            return self.lookahead()
        if c == "$":
            self.pos += 1
            return _Piece("$", False, False, False)
        if c in "([":
            closer = ")" if c == "(" else "]"
            start = self.pos
            self.enter()
            self.pos += 1
            options = self.alternatives(closer)
            self.depth -= 1
            if self.pos >= len(self.text) or self.text[self.pos] != closer:
                self.pos = start
                raise self.fail(f"'{c}' is never closed with '{closer}'")
            self.pos += 1
            piece = _choice(options)
            if piece.zero_width and c == "[":
                self.pos = start
                raise self.fail("a lookahead cannot be optional")
            return _Piece(
                piece.regex, c == "[", piece.word_start, piece.word_end, piece.first,
                piece.zero_width, piece.lookaround, piece.witnesses,
            )
        if c == "{":
            end = self.text.find("}", self.pos)
            name = self.text[self.pos + 1 : end] if end > 0 else ""
            if end < 0 or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
                raise self.fail("expected '{PART_NAME}'")
            part = self.parts.get(name)
            if part is None:
                raise self.fail(f"unknown part {{{name}}}" + _suggestion(name, self.parts))
            if name in self.stack or len(self.stack) >= MAX_PART_DEPTH:
                raise self.fail(f"part {{{name}}} includes itself")
            self.pos = end + 1
            if name not in self.compiled:
                inner = _Parser(part, self.parts, (*self.stack, name), self.compiled)
                inner.depth = self.depth  # groups nest across parts too
                self.compiled[name] = _choice(inner.alternatives(None))
            return self.compiled[name]
        if c == '"':
            end = self.text.find('"', self.pos + 1)
            if end < 0:
                raise self.fail('a literal "..." is never closed')
            literal = self.text[self.pos + 1 : end]
            if not literal:
                raise self.fail('empty literal ""')
            self.pos = end + 1
            return _Piece(
                re.escape(literal),
                False,
                literal[0].isalnum(),
                literal[-1].isalnum(),
                _first_of(literal),
                witnesses=(literal,),
            )
        if c == "/":
            end = self.text.find("/", self.pos + 1)
            while end > 0 and self.text[end - 1] == "\\":
                end = self.text.find("/", end + 1)
            if end < 0:
                raise self.fail("a raw /regex/ is never closed")
            raw = self.text[self.pos + 1 : end]
            try:
                re.compile(raw)
            except (re.error, OverflowError, RecursionError, ValueError) as error:
                raise self.fail(f"bad regex: {error}") from None
            self.pos = end + 1
            if raw.startswith(("(?=", "(?!", "(?<")):  # a lookaround: no gap, no word edge
                # grouped, as every raw piece is: a top-level '|' (/(?<=a )|(?<=b )/) stays
                # inside it instead of splitting the whole phrase
                return _Piece(f"(?:{raw})", False, False, False, lookaround=True)
            return _Piece(f"(?:{raw})", False, True, True, _raw_first(raw), witnesses=_raw_witnesses(raw))
        match = _WORD.match(self.text, self.pos)
        if match is None:
            raise self.fail(f"unexpected {c!r}: quote punctuation as a literal, e.g. \":\"")
        self.pos = match.end()
        word = match.group(0).replace("’", "'")
        regex = re.escape(word).replace("'", "['’]")
        if word[-1].isalnum():  # whole words: "max" never matches the start of "maximum"
            regex += _WORD_END
        variants = (word,) if "'" not in word else (word, word.replace("'", "’"))
        return _Piece(regex, False, True, word[-1].isalnum(), _first_of(word), witnesses=variants)

    def check_lookbehind(self, before: _Piece, at: int) -> None:
        """A raw lookbehind glued to the piece before it looks at that piece's last characters:
        where it can hold after none of them (``{L} /(?<=[A-D] )/``: the letter is never followed
        by the space the lookbehind wants), the phrase can never match here. A load error then,
        where Lark would take it silently and no answer would ever read it. Said only when
        proved: the piece before is required and every text it can match is known (with no gap
        inside what the lookbehind looks at), and so is what the lookbehind accepts, or it sees
        only the piece's own characters."""
        end = self.text.find("/", at + 1)
        while end > 0 and self.text[end - 1] == "\\":
            end = self.text.find("/", end + 1)
        raw = self.text[at + 1 : end] if self.text[at : at + 1] == "/" else ""
        checks = _lookbehinds(raw)
        if not checks or before.optional or before.zero_width or not before.witnesses:
            return
        texts = before.witnesses
        for positive, width, accepted in checks:
            if not all(_can_tell(t, width, positive, accepted) for t in texts):
                continue
            holds = [_holds(t, width, accepted) for t in texts]
            if (positive and not any(holds)) or (not positive and all(holds)):
                shown = ", ".join(repr(t.replace(_GAP, " ")) for t in texts[:3])
                shown += ", …" if len(texts) > 3 else ""
                self.pos = at
                raise self.fail(
                    f"the lookbehind /{raw}/ can never hold here: it looks at the end of the piece"
                    f" before it ({shown}; no gap is put before a lookbehind), which "
                    + ("never ends as it requires" if positive else "always ends as it forbids")
                    + ", so this phrase never matches"
                )

    def enter(self) -> None:
        """One group deeper; past ``MAX_GROUP_DEPTH`` a clear error, not a RecursionError."""
        self.depth += 1
        if self.depth > MAX_GROUP_DEPTH:
            raise self.fail(f"groups nest deeper than {MAX_GROUP_DEPTH}")

    def lookahead(self) -> _Piece:
        """``&( ... )`` / ``!( ... )``: the inside, after the gap, is (not) next in the text."""
        start = self.pos
        sign = self.text[self.pos]
        if self.text[self.pos + 1 : self.pos + 2] != "(":
            raise self.fail(f"expected '(' right after '{sign}' (a lookahead is {sign}(...); quote punctuation)")
        self.enter()
        self.pos += 2
        options = self.alternatives(")")
        self.depth -= 1
        if self.pos >= len(self.text) or self.text[self.pos] != ")":
            self.pos = start
            raise self.fail(f"'{sign}(' is never closed with ')'")
        self.pos += 1
        inner = _choice(options)
        lead = "" if inner.zero_width else _LEAD if inner.word_start else r"\s*"
        regex = f"(?{'=' if sign == '&' else '!'}{lead}{inner.regex})"
        return _Piece(regex, False, False, False, None, zero_width=True)


def _union(options: list[tuple[str, ...] | None]) -> tuple[str, ...] | None:
    if any(o is None for o in options):
        return None
    found = tuple(dict.fromkeys(t for o in options for t in o))
    return found if len(found) <= MAX_WITNESSES else None


def _sequence_witnesses(pieces: list[_Piece]) -> tuple[str, ...] | None:
    """The texts a sequence can match (a gap between consuming pieces), when each piece's are
    known; lookarounds consume nothing (what they rule out stays in: a superset proves no
    more than the truth)."""
    found = [""]
    for piece in pieces:
        if piece.zero_width or piece.lookaround:
            continue
        if piece.witnesses is None:
            return None
        joined = [f + (_GAP if f and w else "") + w for f in found for w in piece.witnesses]
        if piece.optional:
            joined += found
        found = list(dict.fromkeys(joined))
        if len(found) > MAX_WITNESSES:
            return None
    return tuple(found)


def _raw_witnesses(raw: str) -> tuple[str, ...] | None:
    """Every text a simple raw regex matches (literals, small classes, groups, alternatives,
    short bounded repeats; lookarounds and anchors read as matching empty), else None."""
    try:
        parsed = sre_parse.parse(raw)
    except (re.error, RecursionError, OverflowError):
        return None
    found = _ops_witnesses(list(parsed), 0)
    return None if found is None else tuple(found)


def _ops_witnesses(ops: list, depth: int) -> list[str] | None:
    if depth > 20:
        return None
    found = [""]
    for op, av in ops:
        name = str(op)
        if name == "LITERAL":
            options = [chr(av)]
        elif name == "IN":
            options = _class_witnesses(av)
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        elif name == "SUBPATTERN":
            options = _ops_witnesses(list(av[-1]), depth + 1)
        elif name == "BRANCH":
            branches = [_ops_witnesses(list(b), depth + 1) for b in av[1]]
            options = None if any(b is None for b in branches) else [t for b in branches for t in b]
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[1] <= 3:
            item = _ops_witnesses(list(av[2]), depth + 1)
            options = None
            if item is not None:
                options, level = [], [""]
                for count in range(av[1] + 1):
                    if count >= av[0]:
                        options += level
                    level = [a + b for a in level for b in item]
                    if len(level) > MAX_WITNESSES:
                        return None
        else:
            return None
        if options is None:
            return None
        found = list(dict.fromkeys(a + b for a in found for b in options))
        if len(found) > MAX_WITNESSES:
            return None
    return found


def _class_witnesses(items: list) -> list[str] | None:
    chars: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            chars.append(chr(av))
        elif name == "RANGE" and av[1] - av[0] < 64:
            chars += [chr(c) for c in range(av[0], av[1] + 1)]
        else:
            return None  # a negated class, a category (\d, \s) or a wide range
    return chars


def _lookbehinds(raw: str) -> list[tuple[bool, int, tuple[str, ...] | None]]:
    """The lookbehinds of a raw piece made only of them: (positive, width, the texts it accepts
    or None when unknown), each fixed-width as Python requires; [] for anything else (a
    lookahead, a consuming part, a case-sensitive part: the check compares ignoring case)."""
    if not raw.startswith("(?<") or raw.startswith("(?<P") or "(?-i" in raw:
        return []
    try:
        parsed = list(sre_parse.parse(raw))
    except (re.error, RecursionError, OverflowError):
        return []
    found = []
    for op, av in parsed:
        if str(op) not in ("ASSERT", "ASSERT_NOT") or av[0] != -1:
            return []
        low, high = av[1].getwidth()
        if low != high or high == 0:
            return []
        accepted = _ops_witnesses(list(av[1]), 0)
        found.append((str(op) == "ASSERT", high, None if accepted is None else tuple(accepted)))
    return found


def _can_tell(text: str, width: int, positive: bool, accepted: tuple[str, ...] | None) -> bool:
    """Whether the lookbehind's verdict after ``text`` is known without the text before it."""
    if len(text) >= width:
        return _GAP not in text[-width:] and accepted is not None
    return positive and accepted is not None and _GAP not in text


def _holds(text: str, width: int, accepted: tuple[str, ...]) -> bool:
    """Whether a lookbehind accepting ``accepted`` can hold right after ``text``."""
    window = text[-width:].lower()
    return any(a.lower().endswith(window) if len(text) < width else a.lower() == window for a in accepted)


def _zero_width(pieces: list[_Piece]) -> bool:
    return all(p.zero_width for p in pieces)


def _resolve(regex: str, after_word: bool) -> str:
    """Put the gap before a lookahead inside it: ``\\s+`` after a word-like end, else ``\\s*``."""
    return regex.replace(_LEAD, r"\s+" if after_word else r"\s*")


def _compile_body(
    d: _Definition, parts: dict[str, _Definition], stack: tuple[str, ...], compiled: dict[str, _Piece]
) -> _Piece:
    parser = _Parser(d, parts, stack, compiled)
    options = parser.alternatives(None)
    if parser.pos < len(parser.text):
        raise parser.fail(f"unexpected {parser.text[parser.pos]!r}")
    return _choice(options)


def _choice(options: list[list[_Piece]]) -> _Piece:
    compiled = [_sequence(o) for o in options]
    firsts = [p.first for p in compiled]
    regex = (
        "(?:" + "|".join(_cased_first(p.regex) for p in compiled) + ")"
        if len(compiled) > 1
        else compiled[0].regex
    )
    return _Piece(
        regex,
        False,
        all(p.word_start for p in compiled),
        all(p.word_end for p in compiled),
        None if any(f is None for f in firsts) else frozenset().union(*firsts),
        all(p.zero_width for p in compiled),
        len(compiled) == 1 and compiled[0].lookaround,
        _union([p.witnesses for p in compiled]),
    )


def _gap(left: _Piece, right: _Piece) -> str:
    if right.lookaround:
        return ""  # a lookaround looks at the text right after the previous piece
    return r"\s+" if left.word_end and right.word_start else r"\s*"


def _sequence(pieces: list[_Piece]) -> _Piece:
    """Join pieces with whitespace; an optional piece carries its own gap inside its group.

    A lookahead consumes nothing: the gap before the next piece is the one after the piece
    before the lookahead, and the lookahead's own gap (after that same piece) goes inside it.
    Lookaheads before the first required piece look at its start (the gap before the whole
    sequence is the enclosing one's); a sequence of lookaheads only stays a lookahead."""
    if _zero_width(pieces):
        return _Piece("".join(p.regex for p in pieces), False, False, False, None, zero_width=True)
    first = next((i for i, p in enumerate(pieces) if not p.optional and not p.zero_width), None)
    assert first is not None  # the parser refuses sequences of optional pieces and lookaheads only
    anchor = pieces[first]
    regex = ""
    # Optional pieces before the first required one: each with the gap *after* it (to the next
    # piece that consumes text); lookaheads there look at the anchor's start.
    for i in range(first):
        if pieces[i].zero_width:
            regex += pieces[i].regex.replace(_LEAD, "")  # the enclosing gap is already consumed
            continue
        nxt = next(p for p in pieces[i + 1 :] if not p.zero_width)
        gap = _gap(pieces[i], nxt)
        regex += f"(?:{_unbounded(pieces[i].regex, gap)}{gap})?"
    regex += anchor.regex
    previous = anchor
    after_lookahead = False
    for piece in pieces[first + 1 :]:
        if piece.zero_width:
            regex += _resolve(piece.regex, previous.word_end)
            after_lookahead = True
            continue
        gap = _gap(previous, piece)
        if piece.optional:
            regex += f"(?:{gap}{piece.regex})?"
        else:
            regex = (regex if after_lookahead else _unbounded(regex, gap)) + gap + piece.regex
            previous = piece
            after_lookahead = False
    return _Piece(
        regex,
        False,
        anchor.word_start,
        previous.word_end,
        _sequence_first(pieces),
        # the regex starts with a lookaround: a leading &(...)/!(...), or a raw one
        lookaround=pieces[0].zero_width or (first == 0 and anchor.lookaround),
        witnesses=_sequence_witnesses(pieces),
    )


def _unbounded(regex: str, gap: str) -> str:
    """Drop a word's end check before ``\\s+``: whitespace after it already proves the word
    ended, and the regex engine is spared one test per word."""
    if gap == r"\s+" and regex.endswith(_WORD_END):
        return regex[: -len(_WORD_END)]
    return regex


def _sequence_first(pieces: list[_Piece]) -> frozenset[str] | None:
    """What a sequence can start with: its leading optional pieces' and first required piece's."""
    found: set[str] = set()
    for piece in pieces:
        if piece.zero_width:
            continue  # a lookahead consumes nothing: the match starts with what follows it
        if piece.first is None:
            return None
        found |= piece.first
        if not piece.optional:
            return frozenset(found)
    return None


def _suggestion(name: str, known: dict[str, _Definition]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {{{close[0]}}}?)" if close else ""
