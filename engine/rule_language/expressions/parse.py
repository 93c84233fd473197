"""Parse rule expressions with Lark and turn every Lark error into one located line.

This is the only module that talks to Lark for expressions. The parser (LALR, grammar
``keyaudit/grammars/expr.lark``) is built once, lazily, and reused. Lark exceptions never leave
this module: :func:`parse` raises :class:`~keyaudit.engine.errors.ExpressionError` whose message is
``path:line:column: what went wrong; what was expected (near "...")``.

Positions follow one convention, :meth:`Origin.locate`: ``Origin`` is where the expression's
*opening delimiter* sits in the rule file (the quote of a TOML string; for a ``'''`` string, its
last quote), so offset ``k`` (0-based) on the expression's first line is reported at column
``origin.column + 1 + k``; on later lines of a multi-line string, lines are counted from
``origin.line`` and columns are the 1-based column in that line. TOML escapes before the error
(``\\"`` inside a basic string) shift the reported column by their extra characters; rule authors
who want exact columns use literal strings (``'...'``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from ...errors import ExpressionError, located
from ..reading.parser_cache import build_parser

__all__ = ["Origin", "DEFAULT_ORIGIN", "parse", "get_parser", "fail"]


@dataclass(frozen=True)
class Origin:
    """Where an expression string starts in its rule file (see the module docstring)."""

    path: str
    line: int = 1
    column: int = 0

    def locate(self, line: int | None, column: int | None) -> tuple[int | None, int | None]:
        """Map a 1-based (line, column) inside the expression to (line, column) in the file."""
        if line is None or column is None:
            return self.line, None
        if line == 1:
            return self.line, self.column + column
        return self.line + line - 1, column


#: Used when the caller gives no origin: ``<expression>:1:5:`` is the 5th character.
DEFAULT_ORIGIN = Origin("<expression>", 1, 0)


def fail(origin: Origin, line: int | None, column: int | None, message: str) -> ExpressionError:
    """Build (not raise) an ExpressionError located at (line, column) inside the expression."""
    file_line, file_column = origin.locate(line, column)
    return ExpressionError(located(origin.path, file_line, file_column, message))


@lru_cache(maxsize=1)
def get_parser() -> Lark:
    """The expression parser, built on first use from the packaged grammar.

    Its LALR tables are kept in keyaudit's private cache folder (:mod:`..reading.parser_cache`), never in
    Lark's pickle cache in the shared temp folder.
    """
    text = resources.files("keyaudit.grammars").joinpath("expr.lark").read_text(encoding="utf-8")
    return build_parser(
        text,
        loader=None,
        runtime={"propagate_positions": True},
        parser="lalr",
        maybe_placeholders=True,
    )


#: How terminals that are not plain strings are named in "expected ..." messages.
_TERMINAL_NAMES = {"NAME": "a name", "NUMBER": "a number", "STRING": "a string", "$END": "the end"}
#: Terminals that start an operand; if any is expected, say "expected a value" instead of listing.
_OPERAND_STARTS = {"NAME", "NUMBER", "STRING"}

#: Hints for characters that are not part of the language but are common in other languages.
_CHAR_HINTS = {
    "=": "use '==' to compare",
    "&": "use 'and'",
    "|": "use 'or'",
    "!": "use 'not' (or '!=')",
    '"': "unterminated string (strings end on the same line, with the same quote)",
    "'": "unterminated string (strings end on the same line, with the same quote)",
    "%": "there is no '%' operator",
    "{": "there are no dicts or sets; use a list [...]",
    "}": "there are no dicts or sets; use a list [...]",
    "#": "comments are not allowed inside expressions",
}

#: Hints for names that are keywords in Python but not here.
_NAME_HINTS = {
    "is": "use '==' or '!='",
    "lambda": "there are no lambdas; use a comprehension [... for x in xs]",
}


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    try:
        pattern = get_parser().get_terminal(name).pattern
    except KeyError:
        return name
    if isinstance(pattern, PatternStr):
        return repr(pattern.value)
    return name.lower()


def _expected(names: set[str] | frozenset[str]) -> str:
    """Say what the parser would have accepted, shortly: a value, or the few tokens listed."""
    if names & _OPERAND_STARTS:
        return "expected a value (name, number, string, '(' or '[')"
    described = sorted({_describe_terminal(n) for n in names})
    if len(described) > 12:
        described = described[:12] + ["..."]
    return "expected " + (described[0] if len(described) == 1 else "one of " + ", ".join(described))


def _near(error: UnexpectedInput, text: str) -> str:
    snippet = error.get_context(text, span=12).splitlines()[0].strip()
    return f' (near "{snippet}")' if snippet else ""


def _describe(error: UnexpectedInput, text: str) -> str:
    near = _near(error, text)
    if isinstance(error, UnexpectedCharacters):
        char = error.char
        hint = _CHAR_HINTS.get(char)
        if char == "!" and text[error.pos_in_stream + 1 : error.pos_in_stream + 2] == "=":
            hint = None
        what = f"unexpected character {char!r}"
        return f"{what}; {hint}{near}" if hint else f"{what}; {_expected(error.allowed)}{near}"
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            return f"unexpected end of expression; {_expected(error.expected)}"
        hint = _NAME_HINTS.get(str(token)) if token.type == "NAME" else None
        if token.type == "LPAR" and not error.expected & _OPERAND_STARTS:
            hint = "only functions of the table can be called, by their name: f(x)"
        what = f"unexpected {token.value!r}"
        return f"{what}; {hint or _expected(error.expected)}{near}"
    return str(error).splitlines()[0]  # pragma: no cover - other UnexpectedInput kinds


def parse(text: str, origin: Origin = DEFAULT_ORIGIN) -> Tree:
    """Parse ``text`` into a Lark tree, or raise a located one-line ExpressionError."""
    try:
        return get_parser().parse(text)
    except UnexpectedInput as error:
        line, column = error.line, error.column
        at_end = isinstance(error, UnexpectedToken) and error.token.type == "$END"
        if at_end or line is None or line < 0:  # the end has no position of its own
            line, column = _end_position(text)
        raise fail(origin, line, column, _describe(error, text)) from None
    except LarkError as error:  # pragma: no cover - defensive: lark errors never escape
        raise fail(origin, None, None, " ".join(str(error).split())) from None


def _end_position(text: str) -> tuple[int, int]:
    """1-based (line, column) just after the last non-blank character."""
    stripped = text.rstrip()
    lines = stripped.split("\n")
    return len(lines), len(lines[-1]) + 1


def token_position(token: Token) -> tuple[int | None, int | None]:
    """(line, column) of a token inside the expression."""
    return token.line, token.column


_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def decode_string(token: Token, origin: Origin) -> str:
    r"""The value of a STRING token: quotes removed, escapes ``\\ \' \" \n \t \r \0 \uXXXX``."""
    body = token.value[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = body[i + 1]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code == "u" and _is_hex(body[i + 2 : i + 6]):
            point = int(body[i + 2 : i + 6], 16)
            low = body[i + 8 : i + 12] if body[i + 6 : i + 8] == "\\u" else ""
            if 0xD800 <= point < 0xDC00 and _is_hex(low) and 0xDC00 <= int(low, 16) < 0xE000:
                # a surrogate pair, as JSON writes characters beyond the BMP: one character
                point = 0x10000 + ((point - 0xD800) << 10) + (int(low, 16) - 0xDC00)
                i += 6
            elif 0xD800 <= point < 0xE000:
                column = token.column + 1 + i if token.column is not None else None
                raise fail(
                    origin,
                    token.line,
                    column,
                    f"'\\u{point:04x}' is half of a surrogate pair, not a character",
                )
            out.append(chr(point))
            i += 6
        else:
            column = token.column + 1 + i if token.column is not None else None
            raise fail(origin, token.line, column, f"unknown escape '\\{code}' in string")
    return "".join(out)


def _is_hex(text: str) -> bool:
    return len(text) == 4 and all(c in "0123456789abcdefABCDEF" for c in text)
