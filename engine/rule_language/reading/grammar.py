"""The one place keyaudit builds Lark parsers and turns Lark's trees and errors into its own.

Grammars are looked up in two places only: the bundled ``keyaudit.grammars`` package and the
folder of the rule file that names them (or a subfolder of it). ``%import .common`` always
resolves, falling back to the bundled ``common.lark``, so a maintainer's grammar in their own
folder can use the shared pieces. Parsers are LALR with the contextual lexer, built once per
grammar file and cached: parsing is the hot path of scoring.

LALR and free text: the answer grammars deliberately leave shift/reduce conflicts that Lark
resolves as *shift*. That resolution is what makes a construction greedy ("a relation takes
every word up to the next clause boundary"), which is the intended reading; reduce/reduce
conflicts are still errors.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import re
import sys
from collections.abc import Collection, Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path

import lark
from lark import Token
from lark.exceptions import GrammarError, LarkError, LexError, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternRE

from ...errors import RuleError, located
from ...load.filekind import exists_at_all, file_problem
from ...load.timelimit import TimeLimitExceeded, time_limit
from .ast import AttributeHook, Leaf, Node
from .conflicts import notes_for
from .fast_lalr import FastParser, Unparsed, fast_parser
from .kinds import KindError, splice_kinds
from .parser_cache import build_parser_noting_conflicts
from .phrases import PhraseError, expand_phrases
from .word_dispatch import install_word_dispatch

BUNDLED_PACKAGE = "keyaudit.grammars"
#: Largest grammar file read (bytes).
MAX_GRAMMAR_BYTES = 1024 * 1024
#: Most grammar files one parser may load through ``%import`` (a cycle or an explosion stops here).
MAX_IMPORTS = 500
#: CPU seconds building one parser may take.
BUILD_SECONDS = 60.0
#: Most terminals one parser may have: named terminals and each distinct string literal (a
#: keyword), after Lark drops the unused ones. Building LALR tables and the contextual lexer costs
#: about states x terminals, and a list of keywords makes both grow together: 2,000 keywords took
#: 23 s and 1.8 GB, 5,000 ran out of memory. 500 build in about 2 s and 170 MB; the bundled
#: grammars have at most 48. Checked as Lark compiles the grammar, before any table is built.
MAX_TERMINALS = 500
#: Python frames building one parser may nest, counted from where the build starts: Lark's
#: grammar compiler recurses along chains of rules, and a fixed headroom makes whether a chain
#: is too deep a property of the grammar, not of how deep the caller's stack happened to be.
BUILD_FRAMES = 6000


@contextlib.contextmanager
def recursion_headroom(frames: int) -> Iterator[None]:
    """Allow ``frames`` more nested Python calls than the stack holds now (never fewer than the
    interpreter's current limit); the limit is restored afterwards."""
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, depth + frames))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


class GrammarParseError(Exception):
    """A string the grammar does not accept: the text, the column, and what was expected.

    Not a :class:`KeyauditError`: a key that matches no template is a finding to report, not a
    reason to stop. ``str()`` is one line fit for a report.
    """

    def __init__(self, text: str, column: int, expected: list[str], context: str) -> None:
        self.text, self.column, self.expected, self.context = text, column, expected, context
        wanted = ", ".join(expected[:8]) + (" ..." if len(expected) > 8 else "")
        super().__init__(f"column {column}: expected {wanted or 'end of text'}; here: {context!r}")


def bundled_grammar_dir() -> Path:
    """Folder of the grammars shipped with keyaudit (works from a wheel too)."""
    return Path(str(resources.files(BUNDLED_PACKAGE)))


def resolve_grammar(name: str, rule_dir: Path | None, origin: Path | None = None) -> Path:
    """Find grammar file ``name`` for a rule in ``rule_dir``; refuse anything outside the folders.

    A relative name is tried in the rule's folder first, then in the bundled grammars. Links are
    resolved before the check, so a link out of the folders is refused too; the name must end in
    ``.lark`` (nothing else is ever opened as a grammar, so no other file's text can appear in
    a grammar error).
    """

    def refuse(message: str) -> RuleError:
        return RuleError(located(origin, None, None, f"grammar {_shown(name)} {message}"))

    if "\0" in name:
        raise refuse("contains a NUL character")
    if len(name) > 1024:
        raise refuse("is longer than 1,024 characters")
    if not name.endswith(".lark"):
        raise refuse("must be a .lark file")
    allowed = [bundled_grammar_dir().resolve()]
    candidates = [bundled_grammar_dir() / name]
    if rule_dir is not None:
        candidates.insert(0, rule_dir / name)
    try:
        if rule_dir is not None:
            allowed.append(rule_dir.resolve())
        for candidate in candidates:
            path = candidate.resolve()
            if not any(path == root or root in path.parents for root in allowed):
                raise refuse(
                    "is outside the allowed grammar folders "
                    "(the rule's folder and keyaudit's bundled grammars)"
                )
            problem = file_problem(candidate, "a grammar file")
            if problem is None:
                return path
            if problem != "does not exist":
                raise refuse(problem)
    except (OSError, RuntimeError, ValueError) as error:  # a link loop, a name too long
        raise refuse(_reason(error)) from None
    raise refuse("not found in the rule's folder or the bundled grammars")


def _shown(name: str) -> str:
    return repr(name) if len(name) <= 80 else repr(name[:80]) + "..."


def _reason(error: BaseException) -> str:
    if isinstance(error, RuntimeError) and "loop" in str(error).lower():
        return "is a symbolic link loop"  # Path.resolve() before Python 3.13
    if isinstance(error, OSError) and error.errno == errno.ELOOP:
        return "is a symbolic link loop"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return " ".join(str(error).split()) or type(error).__name__


def _lex_error(path: Path, text: str, error: LexError) -> str:
    """Lark's refusal of a terminal, in one line at the terminal's own line: "zero-width
    terminals. (NAME: <its whole regex>)" said nothing of where, and a compiled phrase's regex
    runs to thousands of characters."""
    message = str(error)
    found = re.search(r"zero-width terminals\. \((\w+):", message)
    if found is None:
        return located(path, None, None, f"grammar error: {' '.join(message.split())[:300]}")
    name = found.group(1)
    line = next(
        (n for n, row in enumerate(text.split("\n"), start=1)
         if re.match(rf"\s*{re.escape(name)}(\.-?\d+)?\s*:", row)),
        None,
    )
    return located(
        path, line, None,
        f"terminal {name} can match empty text: every terminal must consume at least one character",
    )


def read_grammar(path: Path) -> str:
    """A grammar file's text (at most :data:`MAX_GRAMMAR_BYTES`, UTF-8) with its phrase lexicon
    (``%phrase``/``%part``) compiled in place; RuleError else."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_GRAMMAR_BYTES + 1)
    except OSError as error:
        raise RuleError(
            located(path, None, None, f"cannot read grammar: {_reason(error)}")
        ) from None
    if len(data) > MAX_GRAMMAR_BYTES:
        raise RuleError(
            located(path, None, None, f"grammar file larger than {MAX_GRAMMAR_BYTES:,} bytes")
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise RuleError(located(path, line, column, "grammar is not UTF-8 text")) from None
    try:
        spliced = splice_kinds(text)
    except KindError as error:
        raise RuleError(located(path, error.line or None, None, error.message)) from None
    try:
        return expand_phrases(spliced.text)
    except PhraseError as error:
        origin, line = spliced.origin(error.line)
        if origin is None:
            raise RuleError(located(path, error.line, error.column, error.message)) from None
        # a kind's phrase that names a part nobody defined: say which kind, and where it is used
        raise RuleError(
            located(path, None, None, f"{error.message} (in value kind {origin.stem}, line {line})")
        ) from None


#: The name the rest of keyaudit reads a grammar file's text by (phrase lexicons compiled in).
read_grammar_text = read_grammar


class TooManyTerminals(Exception):
    """A grammar with more than :data:`MAX_TERMINALS` terminals (raised while Lark compiles it)."""


class _TerminalBudget:
    """Lark's ``edit_terminals`` hook: called once per terminal of the compiled grammar, after the
    unused ones are dropped and before the lexer and LALR tables are built; it counts them and
    stops the build past :data:`MAX_TERMINALS`. (Not part of the parser cache's key: Lark calls
    it only when it builds.)"""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, terminal: object) -> None:
        self.count += 1
        if self.count > MAX_TERMINALS:
            raise TooManyTerminals()

    def __repr__(self) -> str:
        return "keyaudit.TerminalBudget"


def _too_many_terminals(count: int | None = None) -> str:
    has = f"{count:,}" if count is not None else "more"
    return (
        f"grammar error: a grammar may have at most {MAX_TERMINALS:,} terminals (each named "
        f"terminal and each distinct string literal counts), this one has {has}: put keywords "
        "into one regex terminal or a %phrase lexicon"
    )


class ImportRefused(Exception):
    """An ``%import`` the loader will not serve. Not an ``OSError`` on purpose: on ``OSError``
    Lark would go on to try the importing file's own folder and the current directory itself,
    outside keyaudit's confinement."""


class _ImportLoader:
    """A Lark import loader confined to the rule's folder, the bundled grammars and Lark's own.

    ``%import .common`` (or ``common``) is looked up in ``base_dir`` (the main grammar's folder),
    then in keyaudit's bundled grammars, then in Lark's standard grammars. Every path is resolved
    (links followed) and must stay inside the folder it was found in, be a regular ``.lark`` file
    and be UTF-8 text of at most :data:`MAX_GRAMMAR_BYTES`; anything else stops the build with
    :class:`ImportRefused` naming only the import. It records every file it serves (for
    :mod:`.parser_cache`) and refuses more than :data:`MAX_IMPORTS` loads (an import cycle, or
    a grammar importing the same files exponentially often).

    A class with a stable ``repr`` (not a closure).
    """

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir
        self.used: list[tuple[str, str, str]] = []

    def folders(self) -> list[Path]:
        return [self.base_dir, bundled_grammar_dir(), Path(lark.__file__).parent / "grammars"]

    def locate(self, grammar_path: str) -> tuple[str, str] | None:
        """``(path, text)`` of the file ``grammar_path`` names, or ``None`` when there is none;
        the text with its kinds spliced in and its phrase lexicon compiled (:func:`read_grammar`).

        Raises :class:`ImportRefused` for a file that exists but may not be used.
        """
        path = self.find(grammar_path)
        if path is None:
            return None
        try:
            return str(path), read_grammar(path)
        except RuleError as error:
            raise ImportRefused(f"import {_shown(grammar_path)}: {error}") from None

    def find(self, grammar_path: str) -> Path | None:
        """The file ``grammar_path`` names, checked as :meth:`locate` checks it but not read (a
        rule's version hashes its files' bytes: compiling a phrase lexicon is not needed)."""
        if "\0" in grammar_path or not grammar_path.endswith(".lark") or len(grammar_path) > 1024:
            raise ImportRefused(f"import {_shown(grammar_path)}: not a grammar name")
        for folder in self.folders():
            try:
                root = folder.resolve()
                path = (folder / grammar_path).resolve()
            except (OSError, RuntimeError, ValueError) as error:
                raise ImportRefused(f"import {_shown(grammar_path)} {_reason(error)}") from None
            if not exists_at_all(folder / grammar_path):
                continue
            if not (path == root or root in path.parents):
                raise ImportRefused(
                    f"import {_shown(grammar_path)} leads outside the allowed grammar folders"
                )
            problem = file_problem(folder / grammar_path, "a grammar file")
            if problem is not None:
                raise ImportRefused(f"import {_shown(grammar_path)} {problem}")
            return path
        return None

    def __call__(self, base_path: str | None, grammar_path: str) -> tuple[str, str]:
        if len(self.used) >= MAX_IMPORTS:
            raise ImportRefused(
                f"more than {MAX_IMPORTS} grammar files loaded through %import: "
                "an import cycle (a grammar importing itself?)"
            )
        found = self.locate(grammar_path)
        if found is None:
            raise ImportRefused(
                f"cannot find imported grammar {_shown(grammar_path)} in the rule's folder, "
                "the bundled grammars or Lark's grammars"
            )
        path, text = found
        self.used.append((grammar_path, path, hashlib.sha256(text.encode()).hexdigest()))
        return path, text

    def __repr__(self) -> str:
        return f"_ImportLoader({str(self.base_dir)!r})"


_import_loader = _ImportLoader


class _NodeFactory:
    """Lark's ``tree_class``: builds keyaudit nodes; a stable ``repr`` keeps Lark's cache valid."""

    def __init__(self, grammar: CompiledGrammar) -> None:
        self.grammar = grammar
        #: What :meth:`__call__` does, for the lean driver (:mod:`.fast_lalr`) to do it without
        #: the call: rules named with this prefix become ``spliced(children)``, the others
        #: ``build_node(kind, children)``.
        self.splice_prefix = "_"
        self.spliced = _Spliced
        self.build_node = grammar._build_node

    def __call__(self, kind: str, children: list) -> Node | _Spliced:
        # Rules named with a leading "_" (and Lark's own __star/__plus helpers) are spliced into
        # their parent, which reads only ``.children``: no Node is built for them. For free text
        # (`_item*`) that is most reductions.
        if kind[0] == "_":
            return _Spliced(children)
        return self.grammar._build_node(kind, children)

    def __repr__(self) -> str:
        return "keyaudit.Node"


class _Spliced:
    """The children of an inlined rule, on their way into the parent node."""

    __slots__ = ("children",)

    def __init__(self, children: list) -> None:
        self.children = children


class CompiledGrammar:
    """A built LALR parser for one grammar file, producing :class:`Node` trees."""

    def __init__(self, path: Path, start: str = "start") -> None:
        self.path = path
        # The text and attribute hook of the parse in progress, read by :meth:`_build_node`:
        # Lark builds our nodes directly (no intermediate Tree), which roughly halves parse time.
        self._source = ""
        self._hook: AttributeHook | None = None
        self._hook_kinds: Collection[str] | None = None
        self._converted: dict[int, tuple[list, int]] = {}
        self._fast: FastParser | None = None
        text = read_grammar(path)
        try:
            with time_limit(BUILD_SECONDS, "building the parser"), recursion_headroom(BUILD_FRAMES):
                # The built LALR tables are cached in keyaudit's private cache folder, keyed by
                # the grammar's text and options, and rebuilt when an imported file changes.
                self._lark, hidden = build_parser_noting_conflicts(
                    text,
                    loader=_ImportLoader(path.parent),
                    runtime={"tree_class": _NodeFactory(self), "source_path": str(path)},
                    parser="lalr",
                    lexer="contextual",
                    start=start,
                    maybe_placeholders=False,
                    edit_terminals=_TerminalBudget(),
                )
                if len(self._lark.terminals) > MAX_TERMINALS:  # a parser from the cache
                    raise TooManyTerminals(len(self._lark.terminals))
                install_word_dispatch(self._lark)
                self._fast = fast_parser(self._lark)
        except ImportRefused as error:
            raise RuleError(located(path, None, None, f"grammar error: {error}")) from None
        except GrammarError as error:
            raise RuleError(located(path, None, None, f"grammar error: {error}")) from None
        except LexError as error:
            raise RuleError(_lex_error(path, text, error)) from None
        except UnexpectedInput as error:
            raise RuleError(
                located(path, error.line, error.column, f"grammar syntax error: {error}")
            ) from None
        except RecursionError:
            raise RuleError(
                located(
                    path,
                    None,
                    None,
                    "grammar error: rules or imports nest too deeply (an %import cycle, or a "
                    "chain of thousands of rules)",
                )
            ) from None
        except TimeLimitExceeded as error:
            raise RuleError(located(path, None, None, f"grammar error: {error}")) from None
        except TooManyTerminals as error:
            count = error.args[0] if error.args else None
            raise RuleError(located(path, None, None, _too_many_terminals(count))) from None
        except (MemoryError, SystemError):
            # Out of memory inside Lark or re; a C function that fails this way can surface as
            # "SystemError: <function ... at 0x...> returned NULL", which says nothing to a user.
            raise RuleError(
                located(path, None, None, "grammar error: building the parser ran out of memory")
            ) from None
        except Exception as error:  # noqa: BLE001 - whatever Lark or re make of a hostile grammar
            raise RuleError(
                located(
                    path, None, None, f"grammar error: {type(error).__name__}: {_reason(error)}"
                )
            ) from None

        #: Reductions this grammar hides (shift/reduce conflicts Lark resolves silently), each
        #: with the line of its rule: a rule load refuses them unless the rule file lists them as
        #: reviewed (``[rule] reviewed_conflicts``).
        self.hidden_reductions = notes_for(path, text, hidden)
        #: Free-text grammars (those with a ``WORD`` terminal) recover from a token that fits no
        #: construction by reading it as a plain word; key grammars stay strict.
        names = {t.name for t in self._lark.terminals}
        self.recover_as = next((n for n in ("WORD", "_WORD") if n in names), None)
        #: Terminals defined by a regular expression: a node holding only one of these is a *slot*
        #: of a template (a letter, a number), as opposed to fixed wording such as "stable".
        #: Names a node of this grammar can have: rule names and aliases (for ``[claims]``).
        self.rule_names = frozenset(
            {str(r.origin.name) for r in self._lark.rules}
            | {str(r.alias) for r in self._lark.rules if r.alias}
        )
        #: Every name ``node.name`` can read: rules, aliases and terminals (also in lower case).
        terminals = {t.name for t in self._lark.terminals}
        self.field_names = self.rule_names | terminals | {t.lower() for t in terminals}
        self.regex_terminals = frozenset(
            t.name for t in self._lark.terminals if isinstance(t.pattern, PatternRE)
        )

    def template(self, node: Node) -> tuple[str, dict[str, str]]:
        """The template a parsed key instantiates, and its slot values.

        Each slot (a node whose only child is a regex terminal) is replaced by ``{NAME}``; two
        keys share a template exactly when they differ only in slot values.
        """
        slots: dict[str, str] = {}
        pieces: list[str] = []
        cursor = node.start
        for item in _slots(node, self.regex_terminals):
            name = item.kind
            number = 2
            while name in slots:  # two slots of one rule name: keep both
                name, number = f"{item.kind}_{number}", number + 1
            pieces.append(node.source[cursor : item.start])
            pieces.append("{" + name.upper() + "}")
            slots[name] = item.text()
            cursor = item.end
        pieces.append(node.source[cursor : node.end])
        return "".join(pieces), slots

    def parse(
        self,
        text: str,
        hook: AttributeHook | None = None,
        hook_kinds: Collection[str] | None = None,
    ) -> Node:
        """Parse ``text`` into a :class:`Node` tree or raise :class:`GrammarParseError`.

        ``hook`` computes derived attributes; only nodes of ``hook_kinds`` (None: every kind)
        get it, the others answer their fields without asking.
        """
        try:
            self._source, self._hook, self._hook_kinds = text, hook, hook_kinds
            recovery = None
            tree = self._parse_without_errors(text)
            if tree is None:
                recovery = _Recovery(self.recover_as, len(text)) if self.recover_as else None
                tree = (
                    self._lark.parse(text, on_error=recovery)
                    if recovery is not None
                    else self._lark.parse(text)
                )
        except UnexpectedInput as error:
            column = getattr(error, "column", 0) or 0
            expected = sorted(
                getattr(error, "expected", None) or getattr(error, "allowed", None) or []
            )
            raise GrammarParseError(
                text, column, expected, error.get_context(text, span=24).split("\n")[0]
            ) from None
        except LarkError as error:  # pragma: no cover - defensive: any other Lark failure
            raise GrammarParseError(text, 0, [], str(error)) from None
        finally:
            self._source, self._hook, self._hook_kinds = "", None, None
            self._converted.clear()
        if isinstance(tree, (Token, Leaf)):  # a grammar whose start rule is a single terminal
            leaf = _leaf(tree) if isinstance(tree, Token) else tree
            tree = Node("start", [leaf], text, 0, len(text), hook)
        # The root spans the whole text: a node's span otherwise ends at its last kept child,
        # which would cut fixed wording (anonymous tokens) off the ends of a key's template.
        tree.start, tree.end = 0, len(text)
        tree.recovered = tuple(recovery.kinds) if recovery is not None else ()
        return tree

    def _parse_without_errors(self, text: str) -> Node | Leaf | Token | None:
        """The tree by the lean driver (:mod:`.fast_lalr`), or None when the text needs Lark's
        parse: an error to report or recover from (the nodes built so far are dropped)."""
        if self._fast is None:
            return None
        try:
            return self._fast.parse(text)
        except Unparsed:
            self._converted.clear()
            return None

    def _build_node(self, kind: str, children: list) -> Node:
        """Lark's ``tree_class``: build a :class:`Node` from a rule match (tokens → leaves).

        Tokens are turned into leaves in place. For a left-recursive list (``_item*``) Lark hands
        back the previous node's children list with one item appended; only the items not seen
        before are converted, which keeps building the tree linear in the number of items
        instead of quadratic.
        """
        if len(children) <= 16:  # a short list: converting it again costs less than remembering
            for index, child in enumerate(children):
                if isinstance(child, Token):
                    children[index] = _leaf(child)
        else:
            seen = self._converted.get(id(children))
            done = seen[1] if seen is not None and seen[0] is children else 0
            for index in range(done, len(children)):
                child = children[index]
                if isinstance(child, Token):
                    children[index] = _leaf(child)
            self._converted[id(children)] = (children, len(children))
        start = children[0].start if children else 0
        end = children[-1].end if children else start
        hook, kinds = self._hook, self._hook_kinds
        if hook is not None and kinds is not None and kind not in kinds:
            hook = None  # no derived attribute for this kind: field() need not ask
        return Node(str(kind), children, self._source, start, end, hook)


class _Recovery:
    """Error recovery for free text: a token no construction can take is read as a ``WORD``.

    With LALR, one parser state serves several contexts, so the contextual lexer may produce a
    token (``GROUP_SEP`` for "and" after a block letter) that the current construction cannot
    continue with. The intended reading is then that the construction has ended and the token is
    filler: feeding it as ``WORD`` does exactly that. Where even a word cannot follow, the token
    is dropped. Every recovery consumes at least one character (or ends the text), so at most
    ``len(text) + 2`` are ever needed: that is the bound, and noise after the claims, however long,
    never turns an answer into "answer unparseable". Time stays linear in the text.
    """

    def __init__(self, word: str, length: int) -> None:
        self.word = word
        self.used = 0
        self.limit = length + 2
        #: The terminal names of the tokens recovered (read as a word or dropped), in order.
        self.kinds: list[str] = []

    def __call__(self, error: UnexpectedInput) -> bool:
        self.used += 1
        if self.used > self.limit:
            return False
        if isinstance(error, UnexpectedToken):
            self.kinds.append(str(error.token.type))
            parser = error.interactive_parser
            if self.word in parser.choices():
                value = "" if error.token.type == "$END" else str(error.token)
                parser.feed_token(Token.new_borrow_pos(self.word, value, error.token))
                return True
            return error.token.type != "$END"
        return True


def _slots(node: Node, regex_terminals: frozenset[str]):
    for child in node.children:
        if isinstance(child, Node):
            only = child.children[0] if len(child.children) == 1 else None
            if isinstance(only, Leaf) and only.kind in regex_terminals:
                yield child
            else:
                yield from _slots(child, regex_terminals)


def _leaf(token: Token) -> Leaf:
    return Leaf(token.type, str(token), token.start_pos or 0, token.end_pos or 0)


@lru_cache(maxsize=32)
def compile_grammar(path: Path) -> CompiledGrammar:
    """Build (once per process) the parser for the grammar file at ``path``."""
    return CompiledGrammar(path)
