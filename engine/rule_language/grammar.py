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

from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import GrammarError, LarkError, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternRE

from ..errors import RuleError, located
from .ast import AttributeHook, Leaf, Node
from .phrases import PhraseError, expand_phrases

BUNDLED_PACKAGE = "keyaudit.grammars"


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

    A relative name is tried in the rule's folder first, then in the bundled grammars.
    """
    candidates: list[Path] = []
    if rule_dir is not None:
        candidates.append((rule_dir / name).resolve())
    candidates.append((bundled_grammar_dir() / name).resolve())
    allowed = [bundled_grammar_dir().resolve()] + ([rule_dir.resolve()] if rule_dir else [])
    for path in candidates:
        if not any(path == root or root in path.parents for root in allowed):
            raise RuleError(
                located(
                    origin,
                    None,
                    None,
                    f"grammar {name!r} is outside the allowed grammar folders "
                    f"(the rule's folder and keyaudit's bundled grammars)",
                )
            )
        if path.is_file():
            return path
    raise RuleError(
        located(
            origin,
            None,
            None,
            f"grammar {name!r} not found in the rule's folder or the bundled grammars",
        )
    )


def read_grammar_text(path: Path) -> str:
    """A grammar file's text with its phrase lexicon (``%phrase``/``%part``) compiled in place."""
    try:
        return expand_phrases(path.read_text(encoding="utf-8"))
    except PhraseError as error:
        raise RuleError(located(path, error.line, error.column, error.message)) from None


class _ImportLoader:
    """A Lark import loader: relative imports from ``base_dir``, then the bundled grammars.

    A class with a stable ``repr`` (not a closure): Lark's parser cache keys on the options'
    text, and every imported file's hash is checked when a cached parser is loaded.
    """

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir

    def __call__(self, base_path: str | None, grammar_path: str) -> tuple[str, str]:
        for folder in (self.base_dir, bundled_grammar_dir()):
            path = folder / grammar_path
            if path.is_file():
                return str(path), read_grammar_text(path)
        raise OSError(f"cannot find imported grammar {grammar_path!r}")

    def __repr__(self) -> str:
        return f"_ImportLoader({str(self.base_dir)!r})"


_import_loader = _ImportLoader


class _NodeFactory:
    """Lark's ``tree_class``: builds keyaudit nodes; a stable ``repr`` keeps Lark's cache valid."""

    def __init__(self, grammar: CompiledGrammar) -> None:
        self.grammar = grammar

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
        try:
            self._lark = Lark(
                read_grammar_text(path),
                parser="lalr",
                lexer="contextual",
                start=start,
                maybe_placeholders=False,
                tree_class=_NodeFactory(self),
                # Lark keeps the built LALR tables in the temp folder, keyed by the grammar's
                # text and options, and rebuilds when the grammar or an imported file changes.
                cache=True,
                import_paths=[_import_loader(path.parent)],
                source_path=str(path),
            )
        except GrammarError as error:
            raise RuleError(located(path, None, None, f"grammar error: {error}")) from None
        except UnexpectedInput as error:
            raise RuleError(
                located(path, error.line, error.column, f"grammar syntax error: {error}")
            ) from None
        except (LarkError, OSError, UnicodeDecodeError) as error:
            raise RuleError(located(path, None, None, f"grammar error: {error}")) from None

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

    def parse(self, text: str, hook: AttributeHook | None = None) -> Node:
        """Parse ``text`` into a :class:`Node` tree or raise :class:`GrammarParseError`."""
        try:
            self._source, self._hook = text, hook
            recovery = _Recovery(self.recover_as) if self.recover_as else None
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
            self._source, self._hook = "", None
        if isinstance(tree, Token):  # a grammar whose start rule is a single terminal
            tree = Node("start", [_leaf(tree)], text, 0, len(text), hook)
        # The root spans the whole text: a node's span otherwise ends at its last kept child,
        # which would cut fixed wording (anonymous tokens) off the ends of a key's template.
        tree.start, tree.end = 0, len(text)
        tree.recovered = tuple(recovery.kinds) if recovery is not None else ()
        return tree

    def _build_node(self, kind: str, children: list) -> Node:
        """Lark's ``tree_class``: build a :class:`Node` from a rule match (tokens → leaves)."""
        # A list, as Lark splices the children of inlined (_rule) nodes into their parent.
        items = [_leaf(c) if isinstance(c, Token) else c for c in children]
        start = items[0].start if items else 0
        end = items[-1].end if items else start
        return Node(str(kind), items, self._source, start, end, self._hook)


class _Recovery:
    """Error recovery for free text: a token no construction can take is read as a ``WORD``.

    With LALR, one parser state serves several contexts, so the contextual lexer may produce a
    token (``GROUP_SEP`` for "and" after a block letter) that the current construction cannot
    continue with. The intended reading is then that the construction has ended and the token is
    filler: feeding it as ``WORD`` does exactly that. Where even a word cannot follow, the token
    is dropped. Recoveries are bounded, so parsing time stays linear in the text.
    """

    LIMIT = 500

    def __init__(self, word: str) -> None:
        self.word = word
        self.used = 0
        #: The terminal names of the tokens recovered (read as a word or dropped), in order.
        self.kinds: list[str] = []

    def __call__(self, error: UnexpectedInput) -> bool:
        self.used += 1
        if self.used > self.LIMIT:
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
