"""A cache of rule proofs: a rule's own examples and the keys check of its cells, run once.

Proving a rule (``check``, ``test-rule``) scores its examples and every pair of its cells' distinct
keys; on the embedded example ``check --all`` spent 32 of 38 s there, on rules whose files had not
changed since the last run (issue 24). A proof depends only on

* the rule's files — its ``.toml``, its grammars and every grammar they import
  (:func:`~keyaudit.engine.stats.rule_version.rule_version`, the hash a validation card records);
* the keys of its cells, in order;
* the code that scores: :func:`~keyaudit.engine.rule_language.scoring.fingerprint.engine_fingerprint`
  (keyaudit's version and a hash of the rule language's source and bundled grammars, so a
  development checkout whose engine changed never reads a stale proof), Lark's version and
  Python's;

so an entry is keyed by a SHA-256 of all of these and lives in the private cache folder
``proofs/`` (:mod:`keyaudit.engine.load.safe_io`: the same rules as the key and parser caches —
``$KEYAUDIT_CACHE_DIR``, ``off`` turns it off; nothing is read from a folder another user can
write). The payload is :mod:`marshal` of plain values (it cannot run code), checked by its SHA-256
and by shape before use; anything odd is a miss and the rule is proved again.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from collections.abc import Sequence
from typing import Any

import lark

from .load.safe_io import read_sealed, write_sealed
from .reports.findings import CellKeysCheck, ExampleRun, KeysCheckFailure
from .rule_language.rules.rule import Rule
from .rule_language.scoring.fingerprint import engine_fingerprint
from .stats.rule_version import rule_version

__all__ = ["Proved", "proof_key", "read_proof", "write_proof"]

FORMAT = "proofs-v2"
FOLDER = "proofs"
#: Entries kept (most recently used first).
KEEP = 64
MAX_ENTRY_BYTES = 256 << 20
_SUFFIX = ".proof"

#: What a proof holds that does not change with the card: examples, keys checks, example targets.
Proved = tuple[tuple[ExampleRun, ...], tuple[CellKeysCheck, ...], tuple[dict[str, Any], ...]]


def proof_key(rule: Rule, cells: Sequence[tuple[str, int, Sequence[str]]]) -> str:
    """The content key of ``rule``'s proof on these cells' keys ((domain, level, keys) each)."""
    engine = f"{engine_fingerprint()}\0{lark.__version__}\0{sys.version_info[:2]}"
    digest = hashlib.sha256(f"{FORMAT}\0{engine}\0{rule_version(rule)}".encode())
    for domain, level, keys in cells:
        digest.update(f"\0{domain}\0{level}\0{len(keys)}\0".encode("utf-8", "surrogatepass"))
        for key in keys:
            digest.update(key.encode("utf-8", "surrogatepass") + b"\x1f")
    return digest.hexdigest()


def read_proof(key: str) -> Proved | None:
    """The cached proof for ``key``, or None (a miss)."""
    payload = read_sealed(FOLDER, key[:40] + _SUFFIX, FORMAT, key, MAX_ENTRY_BYTES)
    if payload is None:
        return None
    try:
        return _decode(marshal.loads(payload))
    except Exception:  # noqa: BLE001 - any damage or foreign shape is a miss
        return None


def write_proof(key: str, proved: Proved) -> None:
    """Store a proof; failures are ignored (the cache is only an optimisation)."""
    try:
        payload = marshal.dumps(_encode(proved))
    except (ValueError, TypeError):
        return
    write_sealed(FOLDER, key[:40] + _SUFFIX, FORMAT, key, payload, KEEP, _SUFFIX)


def _encode(proved: Proved) -> tuple:
    examples, checks, targets = proved
    return (
        tuple(
            (e.note, e.line, e.key, e.response, e.expect_accept, e.expect_reason, e.accept,
             e.reason, e.values, e.mismatches)
            for e in examples
        ),
        tuple(
            (c.domain, c.level, c.n_keys, c.distinct, c.pairs_checked, c.unparsed,
             tuple((f.key, f.answer, f.problem, f.reason) for f in c.failures), c.exhaustive,
             c.pairs_accepted)
            for c in checks
        ),
        tuple(targets),
    )


def _decode(value: Any) -> Proved:
    """The proof of an entry; raises on any shape that is not exactly what :func:`_encode` wrote."""
    examples_raw, checks_raw, targets = value
    examples = tuple(
        ExampleRun(
            note=_str(note), line=line if line is None else int(line), key=_str(key),
            response=_str(response), expect_accept=_bool(expect_accept),
            expect_reason=_str(expect_reason), accept=_bool(accept), reason=_str(reason),
            values=_dict(values), mismatches=tuple(_str(m) for m in mismatches),
        )
        for note, line, key, response, expect_accept, expect_reason, accept, reason, values, mismatches
        in examples_raw
    )
    checks = tuple(
        CellKeysCheck(
            domain=_str(domain), level=int(level), n_keys=int(n_keys), distinct=int(distinct),
            pairs_checked=int(pairs), unparsed=tuple((_str(k), _str(e)) for k, e in unparsed),
            failures=tuple(
                KeysCheckFailure(_str(k), _str(a), _str(p), _str(r)) for k, a, p, r in failures
            ),
            exhaustive=_bool(exhaustive),
            pairs_accepted=int(accepted),
        )
        for domain, level, n_keys, distinct, pairs, unparsed, failures, exhaustive, accepted
        in checks_raw
    )
    return examples, checks, tuple(_dict(t) for t in targets)


def _str(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("not a string")
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise TypeError("not a boolean")
    return value


def _dict(value: Any) -> dict:
    if type(value) is not dict or not all(type(k) is str for k in value):
        raise TypeError("not a record")
    return value
