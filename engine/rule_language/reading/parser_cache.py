"""Built LALR parsers, cached as plain data in keyaudit's private cache folder.

Building a parser's LALR tables costs tens of milliseconds per grammar; keyaudit caches them. It
does **not** use Lark's own ``cache=True``: that unpickles a file with a predictable name in the
shared temp folder, so another local user who plants a pickle there runs code as whoever runs
keyaudit next. Instead:

* entries live in the private folder ``parsers/`` of the cache root (see
  :mod:`keyaudit.engine.load.safe_io`: created ``0700``, owner and mode checked, read and written
  through the folder's descriptor, written atomically);
* an entry is *data*, not pickle: the tables Lark serialises (dicts, lists, tuples, strings and
  numbers) as tagged JSON, turned back into Lark's own classes by Lark's deserialiser, which only
  instantiates the classes it names itself. Loading an entry cannot run code;
* an entry is keyed by the grammar's text, the options that shape the tables, and the Lark and
  Python versions; it records every imported grammar file (as asked for, where it was found, and
  a SHA-256 of its text), and is used only if each import still resolves to the same file with
  the same text. A SHA-256 of the payload is checked before decoding;
* anything odd is a miss: the parser is built again and the entry rewritten.

Every build also records the reductions its grammar hides (:mod:`.conflicts`: shift/reduce
conflicts Lark resolves silently), stored in the entry's header, so a load from the cache knows
them without a second analysis.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import lark
import lark.lexer as lark_lexer
from lark import Lark
from lark.grammar import Rule
from lark.lexer import TerminalDef

from ...load.safe_io import PrivateDir, seal, unseal
from . import conflicts
from .conflicts import MAX_NOTES, ConflictLog, hidden_reductions

#: v2: the header also holds the grammar's hidden reductions.
FORMAT = "parsers-v2"
FOLDER = "parsers"
#: Entries kept (most recently used first).
KEEP = 64
MAX_ENTRY_BYTES = 64 * 1024 * 1024
_SUFFIX = ".json"
#: Options given back when a parser is loaded (they hold Python objects, not table data).
_RUNTIME_OPTIONS = {"tree_class", "import_paths", "source_path", "propagate_positions"}
_DROPPED_OPTIONS = _RUNTIME_OPTIONS | {
    "cache",
    "lexer_callbacks",
    "postlex",
    "transformer",
    "edit_terminals",
    "_plugins",
}


class RecordingLoader(Protocol):
    """What a Lark import loader must offer to be cached: it records each file it returns and
    can say, later, where a name resolves now (``None``: nowhere)."""

    #: (name asked for, path found, SHA-256 of the text), one per file returned.
    used: list[tuple[str, str, str]]

    def __call__(self, base_path: str | None, grammar_path: str) -> tuple[str, str]: ...

    def locate(self, grammar_path: str) -> tuple[str, str] | None: ...


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def entry_key(grammar: str, options: dict[str, Any]) -> str:
    """Key of a grammar's tables: its text, the table-shaping options, Lark's and Python's
    versions, and the conflict analysis's source."""
    shaping = {k: v for k, v in options.items() if k not in _DROPPED_OPTIONS}
    digest = hashlib.sha256(FORMAT.encode())
    digest.update(f"\0{lark.__version__}\0{sys.version_info[:2]}\0{_analysis_digest()}\0".encode())
    digest.update(repr(sorted(shaping.items())).encode())
    digest.update(b"\0" + grammar.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _analysis_digest() -> str:
    """The conflict analysis's own source: an entry's stored hidden reductions are only as
    current as the code that found them."""
    return hashlib.sha256(Path(conflicts.__file__).read_bytes()).hexdigest()


@contextlib.contextmanager
def without_collision_scan() -> Iterator[None]:
    """Build with Lark's terminal-collision scan off, whether or not ``interegular`` is installed.

    Lark runs the scan on every lexer it builds when ``interegular`` can be imported (it is an
    extra of Lark's, so many environments have it): on the bundled grammars, whose phrase
    terminals overlap by design and are ordered by priority, it took over 60 s of CPU for one
    grammar (gear_train), past the build limit. The build must not depend on what else is
    installed; collisions are an authoring check of their own (``test-rule --strict``)."""
    previous = lark_lexer.has_interegular
    lark_lexer.has_interegular = False
    try:
        yield
    finally:
        lark_lexer.has_interegular = previous


#: A grammar's hidden reductions: (rule, terminals before which Lark shifts), see :mod:`.conflicts`.
Hidden = list[tuple[str, tuple[str, ...]]]


def build_parser(
    grammar: str,
    *,
    loader: RecordingLoader | None,
    runtime: dict[str, Any],
    **options: Any,
) -> Lark:
    """A Lark LALR parser for ``grammar``: from the cache when a valid entry exists, else built
    (``import_paths=[loader]``) and stored. ``runtime`` options (``tree_class``, ``source_path``,
    ``propagate_positions``) are given to the parser either way."""
    return build_parser_noting_conflicts(grammar, loader=loader, runtime=runtime, **options)[0]


def build_parser_noting_conflicts(
    grammar: str,
    *,
    loader: RecordingLoader | None,
    runtime: dict[str, Any],
    **options: Any,
) -> tuple[Lark, Hidden]:
    """:func:`build_parser`, and the reductions the grammar hides (recorded when the tables were
    built, kept in the cache entry)."""
    key = entry_key(grammar, options)
    folder = PrivateDir.open(FOLDER)
    if folder is not None:
        with folder:
            cached = _read(folder, key, loader, runtime)
            if cached is not None:
                return cached
    import_paths = [loader] if loader is not None else []
    with without_collision_scan(), ConflictLog() as log:
        parser = Lark(grammar, import_paths=import_paths, **options, **runtime)
    hidden = hidden_reductions(log.conflicts, parser.rules)
    if folder is not None:
        _write(key, parser, loader, hidden)
    return parser, hidden


def _hidden_from(header: dict) -> Hidden | None:
    """The hidden reductions a header stores, or None when they are not well-formed (a miss)."""
    stored = header.get("hidden")
    if not isinstance(stored, list) or len(stored) > MAX_NOTES:
        return None
    hidden: Hidden = []
    for item in stored:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], list)):
            return None
        if not all(isinstance(t, str) for t in item[1]):
            return None
        hidden.append((item[0], tuple(item[1])))
    return hidden


def _read(
    folder: PrivateDir, key: str, loader: RecordingLoader | None, runtime: dict[str, Any]
) -> tuple[Lark, Hidden] | None:
    name = key[:40] + _SUFFIX
    data = folder.read(name, MAX_ENTRY_BYTES)
    if data is None:
        return None
    sealed = unseal(data, FORMAT, key)
    if sealed is None:
        return None
    try:
        if not _imports_unchanged(sealed[0].get("imports"), loader):
            return None
        hidden = _hidden_from(sealed[0])
        if hidden is None:
            return None
        tables = decode(json.loads(sealed[1]))
        # Lark.load() takes no options; _load() is what Lark's own cache calls with them.
        parser = Lark.__new__(Lark)._load(
            tables, **{k: v for k, v in runtime.items() if k != "source_path"}
        )
    except Exception:  # noqa: BLE001 - a damaged or foreign entry is a miss
        return None
    folder.touch(name)
    return parser, hidden


def _imports_unchanged(imports: Any, loader: RecordingLoader | None) -> bool:
    if not isinstance(imports, list):
        return False
    if imports and loader is None:
        return False
    for item in imports:
        if not (
            isinstance(item, list) and len(item) == 3 and all(isinstance(s, str) for s in item)
        ):
            return False
        asked, path, digest = item
        found = loader.locate(asked) if loader is not None else None
        if found is None or found[0] != path or _sha256(found[1]) != digest:
            return False
    return True


def _write(key: str, parser: Lark, loader: RecordingLoader | None, hidden: Hidden) -> None:
    try:
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        data["options"] = {k: v for k, v in data["options"].items() if k not in _DROPPED_OPTIONS}
        payload = json.dumps(encode({"data": data, "memo": memo}), separators=(",", ":")).encode()
    except (TypeError, ValueError, RecursionError):
        return  # something that is not plain data: not cached
    imports = [list(item) for item in (loader.used if loader is not None else [])]
    folder = PrivateDir.open(FOLDER)
    if folder is None:
        return
    with folder:
        stored = [[rule, list(terminals)] for rule, terminals in hidden]
        folder.write(key[:40] + _SUFFIX, seal(FORMAT, key, payload, imports=imports, hidden=stored))
        folder.prune(lambda n: n.endswith(_SUFFIX), KEEP)


# ---- tagged JSON: every JSON array is a tagged container, so decoding is unambiguous

_SCALARS = (type(None), bool, int, float)


def encode(value: Any) -> Any:
    """Plain data as JSON: lists ``["L", ...]``, tuples ``["T", ...]``, dicts ``["D", k, v, ...]``
    (keys keep their type); strings (``str`` subclasses such as Lark's ``Token`` become plain
    strings) and numbers as they are. Anything else raises ``TypeError``."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if isinstance(value, str):
        return str(value)
    if kind is list:
        return ["L", *map(encode, value)]
    if kind is tuple:
        return ["T", *map(encode, value)]
    if kind is dict:
        out: list[Any] = ["D"]
        for k, v in value.items():
            out.append(encode(k))
            out.append(encode(v))
        return out
    raise TypeError(f"not plain data: {kind.__name__}")


def decode(value: Any) -> Any:
    """The inverse of :func:`encode`; an unknown tag raises ``ValueError``."""
    if type(value) is not list:
        return value
    if not value:
        raise ValueError("untagged empty array")
    tag = value[0]
    if tag == "L":
        return [decode(v) for v in value[1:]]
    if tag == "T":
        return tuple(decode(v) for v in value[1:])
    if tag == "D":
        items = value[1:]
        return {_hashable(decode(items[i])): decode(items[i + 1]) for i in range(0, len(items), 2)}
    raise ValueError(f"unknown tag {tag!r}")


def _hashable(value: Any) -> Any:
    hash(value)  # a list where a key belongs raises TypeError: a damaged entry
    return value
