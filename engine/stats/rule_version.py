"""A rule's version: one hash of the files that decide its verdicts.

The files are the rule's ``.toml``, its key and answer grammars, and every grammar they load
through ``%import`` (followed transitively, resolved as the grammar loader resolves them: the
rule's folder, then keyaudit's bundled grammars, then Lark's own). Each file is hashed as bytes
(SHA-256) under the name a rule or grammar uses for it, so the version does not depend on where
the files lie on a machine; any change to any of them gives another version. The shared value
kinds a grammar takes in with ``%use`` (``grammars/kinds/``) are files of the rule too (role
``kind``): a change to a kind's phrasings is a new version of every rule that uses it. A validation card
(:mod:`.validation_card`) records the version its figures were measured on.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import RuleError, located
from ..rule_language.reading.grammar import MAX_IMPORTS, _ImportLoader
from ..rule_language.reading.kinds import kinds_used
from ..rule_language.rules.rule import Rule

#: ``%import`` statements at the start of a line (a comment line starts with ``//``):
#: ``%import .common.WORD``, ``%import .common.WORD -> _WORD``, ``%import .common (A, B)``.
_IMPORT = re.compile(r"^[ \t]*%import[ \t]+\.*([\w.]+)[ \t]*(\()?", re.MULTILINE)
#: Characters of the version shown (hex digits of the SHA-256 over every file's hash).
VERSION_DIGITS = 16


@dataclass(frozen=True)
class RuleFile:
    """One file of a rule: its role (``rule``, ``key grammar``, ``answer grammar``, ``import``),
    the name the rule or a grammar uses for it, and the SHA-256 of its bytes."""

    role: str
    name: str
    sha256: str


def imported_names(text: str) -> list[str]:
    """The grammar files a grammar's text imports, as the loader is asked for them
    (``common.lark`` for ``%import .common.WORD`` and for ``%import .common (A, B)``)."""
    names = []
    for match in _IMPORT.finditer(text):
        parts = match.group(1).split(".")
        module = parts if match.group(2) else parts[:-1]
        if module:
            names.append("/".join(module) + ".lark")
    return names


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise RuleError(located(path, None, None, f"cannot read: {error.strerror or error}")) from None


def _note_kinds(text: str, kinds: dict[str, str]) -> None:
    """Add the value kinds a grammar's text takes in (``%use``) to ``kinds``, by name."""
    for kind in kinds_used(text):
        kinds[f"kinds/{kind.name}"] = _digest(kind)


def rule_files(rule: Rule) -> tuple[RuleFile, ...]:
    """The files of a loaded rule, in a fixed order: the rule, its two grammars, then every
    imported grammar (sorted by name, each once)."""
    files = [RuleFile("rule", rule.path.name, _digest(rule.path))]
    grammars = (("key grammar", rule.key_grammar.path), ("answer grammar", rule.answer_grammar.path))
    imports: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for role, path in grammars:
        files.append(RuleFile(role, path.name, _digest(path)))
        loader = _ImportLoader(path.parent)
        text = path.read_text(encoding="utf-8", errors="replace")
        pending = imported_names(text)
        _note_kinds(text, kinds)
        while pending:
            name = pending.pop()
            if name in imports:
                continue
            if len(imports) >= MAX_IMPORTS:
                raise RuleError(located(path, None, None, "too many imported grammars to hash"))
            try:
                found = loader.find(name)
            except Exception as error:  # noqa: BLE001 - ImportRefused: the loader refuses it too
                raise RuleError(located(path, None, None, f"grammar error: {error}")) from None
            if found is None:  # the rule loaded, so Lark found it elsewhere: hash what we can name
                imports[name] = "not found"
                continue
            imports[name] = _digest(found)
            imported = found.read_text(encoding="utf-8", errors="replace")
            pending += imported_names(imported)
            _note_kinds(imported, kinds)
    files += [RuleFile("import", name, digest) for name, digest in sorted(imports.items())]
    files += [RuleFile("kind", name, digest) for name, digest in sorted(kinds.items())]
    return tuple(files)


def version_of(files: tuple[RuleFile, ...]) -> str:
    """``sha256:`` and the first :data:`VERSION_DIGITS` hex digits of the hash over every file's
    role, name and hash."""
    digest = hashlib.sha256()
    for f in files:
        digest.update(f"{f.role}\0{f.name}\0{f.sha256}\n".encode())
    return "sha256:" + digest.hexdigest()[:VERSION_DIGITS]


def rule_version(rule: Rule) -> str:
    """The version of a loaded rule (see the module docstring)."""
    return version_of(rule_files(rule))
