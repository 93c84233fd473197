"""The claim layer: what an answer asserts, read from its tokens the way NegEx/ConText reads notes.

An answer grammar built on the layer parses the answer line into a flat sequence of items: the
domain's *claim* nodes (a speed change, a verdict...), *subject* mentions (which entity a claim is
about), and the shared trigger nodes of ``grammars/claims.lark``: ``neg`` (not, never, no, neither,
nor, rather than...), ``hedge`` (probably, may, I think...), ``correction`` (no, wait...; scratch
that), ``alt`` (or, /) and ``boundary`` (clause ends: ; . , — but, because...). The trigger words
live in that grammar as phrase lexicons, kept as data; this module only decides, once for every
domain, what they do:

* **Negation scope.** A ``neg`` negates the next claim in its clause, and every further claim joined
  to it by ``alt`` only ("does not increase or decrease", "neither faster nor slower"). A boundary
  ends the scope ("not slower, but faster": *slower* denied, *faster* asserted).
* **Hedges.** A hedge anywhere in a clause hedges every claim of that clause, before or after it
  ("probably faster", "faster probably"). A hedge in a clause without claims hedges the next
  claim's clause ("faster, I think; direction unchanged": the direction), or, when no claim
  follows it, the last claim's clause ("faster, I think", "faster (probably)"). A claimless hedge
  clause opened by a contrast ("No, but I might be wrong; bottom, 7") qualifies what came before:
  it hedges the last claim's clause, not the next. A clause that opens with a question word
  and ends with "?" restates the question ("Is it in the danger zone? Yes."): its claims are not
  claims at all. A "?" or "(?)" right after a claim hedges it
  ("Same speed?", "No (?)"): the answer asks instead of asserting.
* **Subjects.** A claim is about the last subject mentioned before it in its clause; a claim with
  none is about the answer's target. Claims about another entity are context, not answers.
* **Corrections.** A ``correction`` retracts the earlier claims of the kind of the next claim
  ("faster — no, wait: slower" keeps *slower* only).
* **Alternatives.** Two claims of one kind joined by ``alt`` are both asserted, so two different
  values are a conflict for the rule to name ("increase/decrease").
* **Values.** A claim's value comes from the rule (the claim node's ``value`` attribute): a string,
  or a list of strings for a claim that only narrows the answer ("the speed changes" = increase or
  decrease). A kind's *values* are those of its asserted claims about the target; with none, a
  denial that leaves exactly one of the kind's declared values implies it ("not reversed" →
  unchanged; "neither faster nor slower" → the same).

The rule reads the result as ``claims.<kind>.values``, ``claims.<kind>.hedged``,
``claims.<kind>.claims`` (every claim record) and ``claims.hedged`` (any counted claim hedged).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .ast import Leaf, Node

__all__ = ["Claim", "ClaimSet", "ClaimSpec", "KindResult", "TRIGGER_KINDS", "read_claims"]

#: Filler words after which a negation that found no claim expires (NegEx's scope window).
NEGATION_WINDOW = 4

#: Node kinds of the shared trigger grammar (grammars/claims.lark).
TRIGGER_KINDS = frozenset({"neg", "hedge", "correction", "alt", "boundary"})
#: Its terminals, which a grammar may list directly as items (no node per token: faster).
TRIGGER_TERMINALS = {kind.upper(): kind for kind in TRIGGER_KINDS}


@dataclass(frozen=True)
class ClaimSpec:
    """A rule's ``[claims]`` table: its claim kinds, their value sets, subjects and target."""

    kinds: dict[str, tuple[str, ...]]
    subject: str | None = None


@dataclass
class Claim:
    """One claim found in the answer, with everything the layer resolved about it."""

    kind: str
    node: Node | Leaf
    value: Any
    negated: bool
    clause: int
    subject: str | None
    hedged: bool = False
    #: Followed at once by "?" or "(?)": the answer asks rather than asserts ("Same speed?").
    questioned: bool = False
    #: Inside a restated question ("Is it in the danger zone? Yes."): not a claim at all.
    asked: bool = False
    retracted: bool = False
    about_target: bool = True
    #: Said under a condition ("if ...", "otherwise ...", "unless ..."): counted, but doubtful.
    conditional: bool = False

    def field(self, name: str) -> Any:
        if name == "text":
            return self.node.text()
        if name in _CLAIM_FIELDS:
            return getattr(self, name)
        return None

    def find(self, kind: str) -> list:
        return self.node.find(kind) if isinstance(self.node, Node) else []

    def text(self) -> str:
        return self.node.text()

    def describe(self) -> dict[str, Any]:
        """The claim as the explain view shows it."""
        return {
            "kind": self.kind,
            "words": self.node.text(),
            "value": self.value,
            "polarity": "denied" if self.negated else "asserted",
            "hedged": self.hedged,
            "subject": self.subject,
            "about_target": self.about_target,
            "retracted": self.retracted,
        }


_CLAIM_FIELDS = frozenset(
    {
        "kind", "value", "negated", "hedged", "questioned", "asked", "subject", "retracted",
        "about_target", "conditional", "node",
    }
)
#: Boundaries that end a sentence (and with it a condition).
_SENTENCE_ENDS = frozenset({";", ".", "!", "?"})
#: Boundary words that open a clause qualifying the one before ("..., but I might be wrong").
CONTRAST_WORDS = frozenset({"but", "though", "although", "however"})
#: Boundary words that open a conditional clause.
CONDITIONAL_WORDS = frozenset({"if", "otherwise", "unless", "when", "whenever", "provided"})
#: First words of a clause that, ended by "?", restates the question rather than answering it.
QUESTION_OPENERS = frozenset(
    {"is", "are", "was", "were", "does", "do", "did", "would", "will", "can", "could", "should",
     "has", "have", "what", "which", "how", "where", "whether"}
)
CLAIM_FIELDS = _CLAIM_FIELDS | {"text"}
KIND_FIELDS = frozenset({"values", "hedged", "claims", "denied", "context"})


@dataclass
class KindResult:
    """What the answer says for one claim kind, as expressions read it (``claims.speed...``)."""

    kind: str
    claims: list[Claim] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    denied: list[Any] = field(default_factory=list)
    hedged: bool = False

    def field(self, name: str) -> Any:
        if name == "context":
            return [c for c in self.claims if not c.about_target]
        return getattr(self, name) if name in KIND_FIELDS else None

    def find(self, kind: str) -> list:
        return []

    def text(self) -> str:
        return ", ".join(str(v) for v in self.values)


@dataclass
class ClaimSet:
    """Every kind's result; ``claims.hedged`` is true when any counted claim is hedged."""

    kinds: dict[str, KindResult]

    def field(self, name: str) -> Any:
        if name == "hedged":
            return any(k.hedged for k in self.kinds.values())
        return self.kinds.get(name)

    def find(self, kind: str) -> list:
        return []

    def text(self) -> str:
        return "; ".join(f"{k}: {r.text()}" for k, r in self.kinds.items())

    def all_claims(self) -> list[Claim]:
        return sorted(
            (c for r in self.kinds.values() for c in r.claims), key=lambda c: c.node.start
        )


def _items(node: Node, stop: frozenset[str]) -> Iterator[Node | Leaf]:
    """The answer's items in document order: claim, subject and trigger nodes are atoms."""
    for child in node.children:
        if child.kind in stop or isinstance(child, Leaf):
            yield child
        else:
            yield from _items(child, stop)


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def read_claims(answer: Node, spec: ClaimSpec, target: Any) -> ClaimSet:
    """Resolve every claim of ``answer`` (see the module docstring for what each trigger does)."""
    atoms = frozenset(spec.kinds) | TRIGGER_KINDS | ({spec.subject} if spec.subject else set())
    found: list[Claim] = []
    clause = 0
    subject: str | None = None
    negating = False  # a neg waits for its claim
    carry = False  # the last claim was negated: an alt extends the negation to the next one
    correcting = False
    hedged_clauses: set[int] = set()
    hedge_waiting = False  # a hedge in a clause without claims hedges the next claim's clause
    conditional = False
    words_since_neg = 0
    last_claim: Claim | None = None  # the claim a following "?" or "(?)" would question
    clause_words = 0  # words seen in the current clause
    asking = False  # the current clause opened with a question word ("Would its speed change?")
    opener = ""  # the boundary word that opened the current clause
    claim_in_clause = False
    look_back: int | None = None  # "..., but I might be wrong": the clause a contrast hedge qualifies
    for item in _items(answer, atoms):
        kind = TRIGGER_TERMINALS.get(item.kind, item.kind)
        word = item.text().strip().lower() if kind == "boundary" else ""
        if word == "?" and asking:
            for claim in found:
                if claim.clause == clause:
                    claim.asked = True
        elif word == "?" and last_claim is not None:
            last_claim.questioned = True
        if kind == "boundary":
            clause_words, asking = 0, False
        else:
            if clause_words == 0 and isinstance(item, Leaf):
                asking = item.text().strip().lower() in QUESTION_OPENERS
            clause_words += 1
        if word != "(":
            last_claim = None
        if isinstance(item, Leaf) and kind not in atoms:
            words_since_neg += 1
            if negating and words_since_neg > NEGATION_WINDOW:
                negating = False
            continue
        if kind == "boundary":
            if look_back is not None:  # the contrast clause ended without a claim of its own
                hedged_clauses.add(look_back)
                hedge_waiting, look_back = False, None
            clause += 1
            opener, claim_in_clause = word, False
            subject, negating, carry = None, False, False
            if word in CONDITIONAL_WORDS:
                conditional = True  # "if X, Y": the consequence is conditional too
            elif word in _SENTENCE_ENDS:
                conditional = False
        elif kind == spec.subject:
            name = item.field("name") if isinstance(item, Node) else item.text()
            subject = None if name is None else str(name)
        elif kind == "neg":
            negating, words_since_neg = True, 0
        elif kind == "hedge":
            hedged_clauses.add(clause)
            hedge_waiting = True
            if opener in CONTRAST_WORDS and not claim_in_clause and found:
                look_back = found[-1].clause
        elif kind == "alt":
            negating = negating or carry
        elif kind == "correction":
            correcting = True
        elif kind in spec.kinds:
            value = item.field("value") if isinstance(item, Node) else item.text()
            claim = Claim(kind, item, value, negating, clause, subject, conditional=conditional)
            claim.about_target = subject is None or target is None or subject == str(target)
            if correcting:
                for earlier in found:
                    if earlier.kind == kind:
                        earlier.retracted = True
                correcting = False
            if hedge_waiting:
                hedged_clauses.add(clause)
                hedge_waiting = False
            look_back, claim_in_clause = None, True
            found.append(claim)
            carry, negating = claim.negated, False
            last_claim = claim
    if look_back is not None:
        hedged_clauses.add(look_back)
    if hedge_waiting and found:  # a trailing hedge ("faster, I think") looks back
        hedged_clauses.add(found[-1].clause)
    for claim in found:
        claim.hedged = not claim.asked and (claim.clause in hedged_clauses or claim.questioned)
    return ClaimSet({kind: _resolve(kind, values, found) for kind, values in spec.kinds.items()})


def _resolve(kind: str, domain: Sequence[str], found: list[Claim]) -> KindResult:
    result = KindResult(kind)
    result.claims = [c for c in found if c.kind == kind]
    counted = [c for c in result.claims if c.about_target and not c.retracted and not c.asked]
    asserted: list[Any] = []
    denied: list[Any] = []
    for claim in counted:
        bucket = denied if claim.negated else asserted
        for value in _values(claim.value):
            if value not in bucket:
                bucket.append(value)
    result.denied = denied
    result.values = asserted
    if denied and domain:
        left = [v for v in domain if v not in denied]
        if len(left) == 1 and left[0] not in asserted:  # a contradiction stays visible
            result.values = [*asserted, left[0]]
    result.hedged = any(c.hedged for c in counted)
    return result
