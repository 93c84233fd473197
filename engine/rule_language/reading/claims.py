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
  claims at all; so does a sentence that opens with one ("Will D's speed increase, decrease, or
  stay the same? It decreases") or offers a kind's values as alternatives ("faster or slower?"). A "?" or "(?)" right after a claim hedges it
  ("Same speed?", "No (?)"): the answer asks instead of asserting.
* **Subjects.** A claim is about the last subject mentioned before it in its clause; a claim with
  none is about the answer's target. Claims about another entity are context, not answers.
* **Corrections.** A ``correction`` retracts the earlier claims of every kind claimed after it
  ("faster — no, wait: slower" keeps *slower* only; "no; 55 — no wait, no; 35" keeps 35): the
  last one stands.
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

import functools
import re
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
    #: Grammar rules that name a kind without claiming anything ("speed", "direction"), by rule.
    nouns: dict[str, str] = field(default_factory=dict)
    #: Each kind's "no change" value ("stay the same", "unchanged"): how one predicate shared by
    #: two kinds ("speed and direction both unchanged") reads for each of them.
    steady: dict[str, str] = field(default_factory=dict)
    #: The grammar rule that holds the answer's claims (physical_stability: the opening, as the
    #: seed's rule reads the status from the first word); the rest of the line is explanation and
    #: is not read. None: the whole answer line.
    within: str | None = None
    #: Kinds whose value is their subject ("bulb C goes out": the claim "goes out" says C): a
    #: claim of one takes its subject's name as its value, and is about the target whatever its
    #: subject (the subject is the answer, not who the claim is about). Without a subject it
    #: keeps its own value.
    value_from_subject: frozenset[str] = frozenset()

    @functools.cached_property
    def atoms(self) -> frozenset[str]:
        """The node kinds the layer reads whole: claims, triggers, nouns and the subject rule."""
        return (
            frozenset(self.kinds) | TRIGGER_KINDS | frozenset(self.nouns)
            | ({self.subject} if self.subject else set())
        )

    def convert(self, value: Any, source: str, kind: str) -> Any:
        """``value`` of kind ``source`` said of kind ``kind``: "no change" stays "no change", a bare
        "changes" (every value but the steady one) stays a bare change; anything more specific
        ("faster") says nothing about another kind (None)."""
        if source == kind:
            return value
        if source not in self.steady or kind not in self.steady:
            return None
        values = _values(value)
        if values == [self.steady[source]]:
            return self.steady[kind]
        moving = [v for v in self.kinds[source] if v != self.steady[source]]
        if values and sorted(values) == sorted(moving):
            other = [v for v in self.kinds[kind] if v != self.steady[kind]]
            return other[0] if len(other) == 1 else other
        return None


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
    #: Said inside a contrast ("unlike the sphere (χ = 2)"): about what the answer is compared
    #: with, so context, not the answer.
    contrasted: bool = False
    #: Said of a supposed world ("it would only stay put if ...", "it would be a torus only if
    #: ..."): a counterfactual, context, not the answer.
    hypothetical: bool = False

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
            "role": self.role,
        }

    @property
    def role(self) -> str:
        """The claim's discourse role, as ``--explain`` names it: only ``answer`` claims count."""
        if self.asked:
            return "question restated"
        if self.contrasted:  # what the answer is compared with, whatever came after it
            return "contrast"
        if self.retracted:
            return "corrected"
        if self.hypothetical:
            return "counterfactual"
        if not self.about_target:
            return "another object"
        if self.conditional:
            return "answer, under a condition"
        return "answer"


_CLAIM_FIELDS = frozenset(
    {
        "kind", "value", "negated", "hedged", "questioned", "asked", "subject", "retracted",
        "about_target", "conditional", "contrasted", "hypothetical", "node",
    }
)
#: Boundaries that end a sentence (and with it a condition); a spaced "|" or "·" separates the
#: cells of a one-line table ("Speed: same | Direction: same") the way a ";" does.
_SENTENCE_ENDS = frozenset({";", ".", "!", "?", "|", "·", "•"})
#: Words a heading clause may hold besides its subject ("**Gear D:** same speed").
HEADING_WORDS = 2
#: Clause ends a subject heading reaches across ("D: same speed, same direction"); any other ends it
#: ("A: same — direction: no change").
HEADING_KEEPING = frozenset({",", "and", "(", ")"})
#: Boundary words that open a clause qualifying the one before ("..., but I might be wrong").
CONTRAST_WORDS = frozenset({"but", "though", "although", "however"})
#: Clause ends across which a kind named by a noun ("Direction: unchanged", "speed and direction
#: both unchanged") still waits for its predicate; any other boundary ends the topic.
TOPIC_KEEPING = frozenset(
    {",", ":", "—", "–", "-", "--", "(", ")", "[", "]", "and", "and then", "as", "if", "otherwise", "unless"}
)
#: Most words of a question that labels the answer after it ("Direction? Unchanged.", "Speed of D?
#: Stays the same."): a sentence this short, ended by "?" with no claim in it, keeps its topic as
#: ":" does, so a bare value after it is about the kind it named.
LABEL_QUESTION_WORDS = 4
#: ... and the one that joins a noun to the next one's predicate ("speed and direction both
#: unchanged"; "or", "/" and "nor" join too).
JOINERS = frozenset({"and", ","})
#: Words that may come before a noun heading its clause ("*both* speed and direction", "nor *its*
#: direction"); after any other word the noun is an object ("turns at double speed, ...").
DETERMINERS = frozenset(
    {"the", "its", "it's", "their", "both", "either", "neither", "a", "an", "his", "her", "gear's", "s"}
)
#: Boundary words that open a contrast: the claims up to its end are about what the answer is
#: compared with ("unlike the sphere (χ = 2), ...", "compared with before (70 rpm), ..."), context.
CONTRAST_OPENERS = frozenset(
    {"unlike", "compared with", "compared to", "in contrast to", "in contrast with", "contrary to",
     "by contrast with", "in comparison to", "in comparison with"}
)
#: Words opening a relative clause: after "unlike X," they go on speaking of X.
RELATIVE_WORDS = frozenset({"which", "who", "whose", "where", "that"})
#: Boundaries that end a contrast (a parenthesis or a ":" inside it does not).
CONTRAST_KEEPING = frozenset({"(", ")", "[", "]", ":", "and", "as", "which means", "meaning"})
#: Modal words that, with "only" ("would only ... if", "would be X only if"), make a counterfactual.
HYPOTHETICAL_MODALS = frozenset({"would", "could", "'d"})
#: A modal word inside a claim's own words ("would not exceed", "would be 0").
_MODAL_IN = re.compile(r"(?i)\b(?:would|could)\b|'d\b")
#: Boundary words after which the model speaks of the real case again ("..., so it is unchanged").
SUPPOSITION_ENDS = frozenset({"so", "thus", "hence", "therefore", "but", "however", "whereas"})
#: Of those, the ones that turn back from a supposed world to the real one: "if the bearing were
#: 180° instead, B would be nearest, but at the given bearing it is D" — the "if" clause and its
#: modal consequence before "but" are counterfactual (a condition the answer then sets aside).
COUNTERFACTUAL_TURNS = frozenset({"but", "however", "whereas", "yet"})
#: Words after an opening "a"/"an" that make it no article of an indefinite object.
ARTICLE_NOT_NEXT = frozenset({"would", "could", "'d", "is", "was", "slides", "tips", ""})
#: Boundary words that open a conditional clause.
CONDITIONAL_WORDS = frozenset({"if", "had", "otherwise", "unless", "when", "whenever", "provided"})
#: ... of those, the ones that open a supposition ("if X were Y", "had X been Y").
SUPPOSING_WORDS = frozenset({"if", "had"})
#: First words of a clause that, ended by "?", restates the question rather than answering it.
QUESTION_OPENERS = frozenset(
    {"is", "are", "was", "were", "does", "do", "did", "would", "will", "can", "could", "should",
     "has", "have", "what", "which", "how", "where", "whether"}
)
#: ... of those, the ones that ask which value, not whether one holds ("Which is bigger?").
WH_OPENERS = frozenset({"what", "which", "how", "where"})
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
    #: Nouns that took a shared claim ("no change in speed or *direction*"): read, not unread.
    nouns: list[Node | Leaf] = field(default_factory=list)
    #: ``[start, end]`` of each stretch of the line said of something else than the answer: a
    #: contrast ("unlike what a quick guess suggests: by 0.5") or a supposition ("it would only
    #: clear if ..."). A rule's own readings (a number component's tiers) set aside what lies there,
    #: as the layer does for its claims (``claims.context_spans``).
    context_spans: list[list[int]] = field(default_factory=list)

    def field(self, name: str) -> Any:
        if name == "hedged":
            return any(k.hedged for k in self.kinds.values())
        if name == "context_spans":
            return self.context_spans
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


def _read_items(answer: Node, stop: frozenset[str], within: str | None) -> Iterator[Node | Leaf]:
    """The items the layer reads: the whole answer's, or only those inside ``within`` nodes."""
    if within is None:
        yield from _items(answer, stop)
        return
    for region in answer.find(within):
        if isinstance(region, Node):
            yield from _items(region, stop)


def read_items(answer: Node, stop: frozenset[str], within: str | None) -> tuple[Node | Leaf, ...]:
    """:func:`_read_items` as a tuple, walked once per parsed answer: the claim layer and the
    second reading (:mod:`..scoring.second_reading`) both read them, and a tree never changes."""
    key = "\0items"  # cannot collide with a field name (see Node.find)
    memo = answer._memo
    known = memo.get(key)
    if known is not None and known[0] is stop and known[1] == within:
        return known[2]
    items = tuple(_read_items(answer, stop, within))
    memo[key] = (stop, within, items)
    return items


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


@dataclass
class _Noun:
    """A kind named without a claim ("speed", "direction"), waiting for its predicate."""

    kind: str
    subject: str | None
    #: The claim it was joined to, before it ("no change in speed or direction"), if any.
    source: Claim | None
    #: A coordinator ("and", "or", "nor", ",") followed it at once: it shares the next claim.
    joined: bool = False
    #: Filler words after it before a coordinator (then it is no bare noun: "the speed ratio").
    after: int = 0
    #: Filler words between its coordinator and the next claim ("nor its direction").
    gap: int = 0
    node: Any = None


#: Filler words a coordinated noun may have between it and its claim ("nor *its* direction").
COORDINATION_GAP = 3


def read_claims(answer: Node, spec: ClaimSpec, target: Any) -> ClaimSet:
    """Resolve every claim of ``answer`` (see the module docstring for what each trigger does)."""
    atoms = spec.atoms
    found: list[Claim] = []
    clause = 0
    subject: str | None = None
    negating = False  # a neg waits for its claim
    carry = False  # the last claim was negated: an alt extends the negation to the next one
    repair_from: int | None = None  # index in `found` where the last correction started
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
    # Shared predicates: kinds named by nouns, waiting for a claim ("speed and direction both
    # unchanged") or sharing the claim before them ("no change in speed or direction").
    nouns: list[_Noun] = []
    used: list[Node | Leaf] = []  # nouns that took a claim
    topic: str | None = None  # the kind the sentence is about, for a bare "unchanged"
    chain: Claim | None = None  # the last claim, while only coordinators and a few words follow
    chain_gap = 0
    hedge_in_clause = False
    lead = 0  # words of the current clause before its first noun, determiners aside
    other_subject = False  # the clause names an entity other than the target
    # A sentence that opens with a question word, or offers a kind's values as alternatives, and
    # ends with "?" restates the question ("Will D's speed increase, decrease, or stay the same?").
    sentence_start = 0  # index in `found` of the current sentence's first claim
    sentence_words = 0
    sentence_asking = False
    sentence_wh = False  # ... with "which", "what", "how" or "where" (no yes/no question)
    sentence_alt = False
    # Inside a contrast ("unlike X ..."): the parenthesis depth it opened at, until it ends.
    # "would only ... if", "would be X only if": claims said of a supposed world, not the answer
    modal_at: int | None = None  # index in `found` at the sentence's last "would"/"could"
    supposed_from: int | None = None  # index in `found` at the sentence's last "if"
    supposed_modal = False  # a "would"/"could" since that "if"
    supposed: list[Claim] = []  # claims of an "if ... would ..." supposition, once it has ended
    clause_leads: list[str] = []  # the current clause's first words ("a", "torus", "would")
    clause_hypothetical = False  # the clause says what an indefinite other object would give
    complementary = False  # the sentence said "otherwise": its conditions offer values side by side
    hypothetical = False
    previous_word = current_word = ""
    # "clears; by 2.6 m?": a line whose last sentence ends with "?" asks its answer, not says it;
    # the sentences here end at ". ! ?" outside brackets (";" joins a key's clauses)
    asked_from = line_sentence = 0
    ends_asking = False  # the last items are a "?" (and closing brackets)
    contrast_depth: int | None = None
    contrast_subject: str | None = None  # the entity it compares with ("unlike gear B ...")
    contrast_comma = False  # a "," inside a contrast: it ends unless a relative clause follows
    contrast_relative = False  # the contrast goes on through a relative clause, to its end
    depth = 0
    # "A (the driver) keeps its RPM": the subject before a parenthesis without claims holds after it
    paren_subject: str | None = None
    paren_found = -1
    # "**D:** same speed, same direction": a subject heading its sentence, ended by ":"
    heading: str | None = None
    # The question's options echoed: claims since the last "(" / "[" (a group) or since the last
    # clause end other than a comma (a segment), and whether an "or" / "/" joined them.
    # A list of options has its values joined by "or" / "/", or nothing between them ("Yes/No:").
    group_start, group_alt, group_fillers = 0, False, 0
    segment_start, segment_alt, segment_fillers = 0, False, 0

    def is_target(name: str | None) -> bool:
        return name is None or target is None or name == str(target)

    def add(kind: str, item: Any, value: Any, negated: bool, at: int, about: str | None) -> Claim:
        from_subject = kind in spec.value_from_subject
        if from_subject and about is not None:
            value = about
        claim = Claim(kind, item, value, negated, at, about, conditional=conditional)
        claim.contrasted = contrast_depth is not None
        claim.hypothetical = hypothetical or clause_hypothetical
        about_target = from_subject or is_target(about)
        claim.about_target = about_target and not claim.contrasted and not claim.hypothetical
        found.append(claim)
        return claim

    def flush() -> None:
        """A sentence ends: nouns that shared the claim before them get it."""
        for noun in nouns:
            src = noun.source
            if src is None or noun.after > 1 or src.kind == noun.kind:
                continue
            value = spec.convert(src.value, src.kind, noun.kind)
            if value is not None:
                used.append(noun.node)
                claim = add(noun.kind, src.node, value, src.negated, src.clause,
                            noun.subject or src.subject)
                claim.retracted = src.retracted
        nouns.clear()

    def end_supposition() -> None:
        """An "if ... would ..." supposition ends (not one of "V1 if ..., otherwise V2"): its
        claims may be set aside at the end (:func:`_set_aside_suppositions`)."""
        if supposed_modal and supposed_from is not None and not complementary:
            supposed.extend(found[supposed_from:])

    spans: list[list[int]] = []
    restarted = False  # a second answer starts (a correction, ", or", "otherwise"), no claim since
    span_from: int | None = None  # where the current contrast or supposition began
    for item in read_items(answer, atoms, spec.within):
        if (contrast_depth is not None or hypothetical) != (span_from is not None):
            if span_from is None:
                span_from = item.start
            else:
                spans.append([span_from, item.start])
                span_from = None
        kind = TRIGGER_TERMINALS.get(item.kind, item.kind)
        written = item.text().strip()  # the item's words as the model wrote them
        if contrast_comma:
            # "unlike tank A, which needs 20 min, E ...": a relative clause after the compared
            # thing is about it too; anything else after the comma is the answer again
            contrast_comma = False
            first = written.lower().split(" ", 1)[0]
            if first in RELATIVE_WORDS and (kind in spec.kinds or kind not in atoms):
                contrast_relative = True
            else:
                contrast_depth = None
        if supposed_from is not None and not supposed_modal and (kind in atoms or not isinstance(item, Leaf)):
            # "if the maximum were 150 it would not exceed": a claim's or a negation's own words
            # may hold the modal
            supposed_modal = _MODAL_IN.search(written) is not None
        # the item's words, read once: a clause end, a negation ("nor") or a plain word
        lowered = written.lower() if kind in ("boundary", "neg") or isinstance(item, Leaf) else ""
        word = lowered if kind == "boundary" else ""
        previous_word, current_word = (
            (current_word, lowered) if isinstance(item, Leaf) or kind == "boundary" else (current_word, "")
        )
        if word == "?":
            ends_asking = previous_word != "("  # "(?)" hedges one claim, where it stands
        elif word not in (")", "]"):
            ends_asking = False  # a word or a claim after it: the line goes on
        if word == "?" and asking:
            for claim in found:
                if claim.clause == clause:
                    claim.asked = True
        elif word == "?" and (sentence_asking or _offers_alternatives(found[sentence_start:], sentence_alt)):
            for claim in found[sentence_start:]:
                claim.asked = True
        elif word == "?" and last_claim is not None:
            last_claim.questioned = True
        if kind == "boundary":
            clause_words_before = clause_words - (1 if subject is not None else 0)
            clause_words, asking = 0, False
        else:
            if clause_words == 0 and isinstance(item, Leaf):
                asking = lowered in QUESTION_OPENERS
            if sentence_words == 0 and isinstance(item, Leaf):
                sentence_asking = lowered in QUESTION_OPENERS
                sentence_wh = lowered in WH_OPENERS
            clause_words += 1
            sentence_words += 1
            sentence_alt = sentence_alt or kind == "alt"
        if word != "(":
            last_claim = None
        if kind == "boundary":
            clause_leads, clause_hypothetical = [], False
        elif len(clause_leads) < 4:
            # (the article as written: "A torus would ..." is one, "A would slide off" block A)
            said = written if isinstance(item, Leaf) and kind not in atoms else ""
            clause_leads.append(said.lower() if said in ("a", "an", "A", "An") or clause_leads else said)
            modal = said.lower() in HYPOTHETICAL_MODALS if said else _MODAL_IN.match(written) is not None
            if modal and 3 <= len(clause_leads) <= 4 and clause_leads[0] in ("a", "an") and clause_leads[1] not in ARTICLE_NOT_NEXT:
                # "a torus would be 0", "a Klein bottle would be non-orientable": what another,
                # indefinite, object would give is no claim about this one
                clause_hypothetical = True
        if isinstance(item, Leaf) and kind not in atoms:
            if lowered in HYPOTHETICAL_MODALS:
                modal_at = len(found)
                supposed_modal = supposed_from is not None
            elif lowered == "only" and modal_at is not None:
                hypothetical = True  # "it would only stay put if ...": what follows is supposed
            words_since_neg += 1
            if lowered in _OR_WORDS:  # a grammar that reads "or" / "/" as a plain word
                group_alt = segment_alt = True
            else:
                group_fillers += 1
                segment_fillers += 1
            if negating and words_since_neg > NEGATION_WINDOW:
                negating = False
            chain_gap += 1
            if lowered not in DETERMINERS and lowered.isalnum():  # "D's": a subject's "'s"
                lead += 1
            if chain_gap > COORDINATION_GAP:
                chain = None
            for noun in nouns:
                if noun.joined:
                    noun.gap += 1
                else:
                    noun.after += 1
            continue
        if kind in ("boundary", "alt") or (kind == "neg" and lowered == "nor"):
            joins = kind != "boundary" or word in JOINERS
            # "Direction? Unchanged.": a short question of no claim labels the answer after it
            labels_next = word == "?" and len(found) == sentence_start and 0 < sentence_words <= LABEL_QUESTION_WORDS
            if kind == "boundary" and word not in TOPIC_KEEPING and not labels_next:
                flush()
                topic, chain = None, None
            elif joins:
                for noun in nouns:
                    if not noun.after:
                        noun.joined = True
        if (kind == "alt" and previous_word == ",") or word == "otherwise":
            # "direction unchanged, or stay the same", "... if X, otherwise stay the same": a
            # second answer starts, as after a correction
            restarted = True
        if kind == "boundary" and depth == 0 and word in _LINE_SENTENCE_ENDS:
            asked_from, line_sentence = line_sentence, len(found)
        if kind == "boundary":
            if word in ("(", "["):
                depth += 1
            elif word in (")", "]"):
                depth = max(0, depth - 1)
                if contrast_depth is not None and depth < contrast_depth:
                    contrast_depth = None  # "(unlike X: 2)": the parenthesis held the contrast
            if contrast_depth is not None and word not in CONTRAST_KEEPING and not contrast_depth:
                if word == "," and not contrast_relative:
                    contrast_comma = True  # "unlike tank A, which ...": the next word decides
                else:
                    contrast_depth = None  # inside a parenthesis, the contrast lasts until it closes
                contrast_relative = False
            if word in CONTRAST_OPENERS:
                contrast_depth, contrast_subject = depth, None
            if look_back is not None:  # the contrast clause ended without a claim of its own
                hedged_clauses.add(look_back)
                hedge_waiting, look_back = False, None
            if hedge_in_clause and other_subject and not claim_in_clause:
                # "(C probably too)": a hedge on an elided claim about another entity
                hedge_waiting = False
            if hedge_in_clause and claim_in_clause:
                # "faster probably; direction unchanged": a hedge after its clause's claim hedged
                # that clause (hedged_clauses), and waits for no other
                hedge_waiting = False
            if word in OPTION_LIST_ENDS:
                closes_group = word in (")", "]")
                start, offered, fillers = (
                    (group_start, group_alt, group_fillers)
                    if closes_group
                    else (segment_start, segment_alt, segment_fillers)
                )
                listed = found[start:]
                if (offered or not fillers) and _lists_every_option(listed, spec):
                    for claim in listed:  # "Speed (increase / decrease / same): ...": the options
                        claim.asked = True
            if word in ("(", "["):
                group_start, group_alt, group_fillers = len(found), False, 0
            if word in _LIST_SEPARATORS:  # "No, over the max:" is two claims, not a list
                group_fillers += 1
                segment_fillers += 1
            else:
                segment_start, segment_alt, segment_fillers = len(found), False, 0
            if word == ":" and subject is not None and not claim_in_clause and clause_words_before <= HEADING_WORDS:
                heading = subject
            if word in _SENTENCE_ENDS or (word not in HEADING_KEEPING and word != ":"):
                heading = None
            clause += 1
            opener, claim_in_clause = word, False
            inner = subject
            subject, negating, carry = heading, False, False
            if word == "(":
                paren_subject, paren_found = inner, len(found)
            elif word == ")" and paren_found == len(found):
                subject, paren_found = paren_subject, -1
            if word == "if" and previous_word == "only" and modal_at is not None:
                for claim in found[modal_at:]:  # "it would be a torus only if ...": supposed
                    claim.hypothetical, claim.about_target = True, False
            if word in COUNTERFACTUAL_TURNS and supposed_modal:
                for claim in found[supposed_from:]:  # "if X were Y, Z would ..., but ...": supposed
                    claim.hypothetical, claim.about_target = True, False
                conditional = False  # what follows the turn is said of the real case
            if word in _SENTENCE_ENDS:
                complementary = False
            elif word == "otherwise":
                complementary = True  # "V1 if ..., otherwise V2 would ...": two values offered
            if word in SUPPOSING_WORDS:
                supposed_from, supposed_modal = len(found), False
            elif word in _SENTENCE_ENDS or word in SUPPOSITION_ENDS or word in COUNTERFACTUAL_TURNS:
                end_supposition()
                supposed_from, supposed_modal = None, False
            if word in _SENTENCE_ENDS or word in SUPPOSITION_ENDS:
                modal_at, hypothetical = None, False
            if word in _SENTENCE_ENDS:
                sentence_start, sentence_words, sentence_asking, sentence_alt = len(found), 0, False, False
                sentence_wh = False
            hedge_in_clause = other_subject = False
            lead = 0
            if word in CONDITIONAL_WORDS:
                conditional = True  # "if X, Y": the consequence is conditional too
            elif word in _SENTENCE_ENDS:
                conditional = False
        elif kind == spec.subject:
            name = item.field("name") if isinstance(item, Node) else item.text()
            subject = None if name is None else str(name)
            if contrast_depth is not None:
                if contrast_subject is not None and subject != contrast_subject:
                    contrast_depth = None  # "unlike gear B (which speeds up) D slows down"
                else:
                    contrast_subject = subject
            other_subject = other_subject or not is_target(subject)
        elif kind in spec.nouns:
            noun_kind = spec.nouns[kind]
            # after a claim it is that claim's object or shares it ("increase in speed", "no
            # change in speed or direction"), never the subject of a predicate still to come
            # (or, after other words, the object of a verb: "turns at double speed")
            nouns.append(
                _Noun(noun_kind, subject, chain, after=1 if chain is not None or lead else 0, node=item)
            )
            topic = noun_kind
        elif kind == "neg":
            negating, words_since_neg = True, 0
        elif kind == "hedge" and sentence_wh and written == "?":
            # "Which is actually bigger? Neither.": a grammar's own "?" after a value word ends a
            # sentence that opened with "which", "what", "how" or "where": it restates the question
            # ("Is it C? B." offers C as a guess, and stays doubtful)
            for claim in found[sentence_start:]:
                claim.asked = True
            sentence_start, sentence_words, sentence_asking, sentence_wh = len(found), 0, False, False
        elif kind == "hedge":
            hedged_clauses.add(clause)
            hedge_waiting = hedge_in_clause = True
            if opener in CONTRAST_WORDS and not claim_in_clause and found:
                look_back = found[-1].clause
        elif kind == "alt":
            negating = negating or carry
            group_alt = segment_alt = True
        elif kind == "correction":
            restarted = True
            # "... (unlike a quick guess: B is actually bigger)": a correction said inside a
            # contrast or a supposition corrects that, not the answer's claims before it
            if contrast_depth is None and not hypothetical:
                repair_from = len(found)
        elif kind in spec.kinds:
            value = item.field("value") if isinstance(item, Node) else item.text()
            bare = item.field("bare") if isinstance(item, Node) else None
            # the kinds this claim speaks of, with its value said of each
            said: list[tuple[str, Any]] = []
            if bare and nouns:
                group = [n.kind for n in nouns[:-1] if n.joined] + [nouns[-1].kind]
                said = [(k, spec.convert(value, kind, k)) for k in dict.fromkeys(group)]
            elif bare == "noun":  # a lone "changes" about no kind named just before: nothing
                continue
            elif bare and topic is not None and not (
                restarted and item.text().strip().lower() in spec.kinds.get(kind, ())
            ):
                # (where a second answer starts, after a correction, ", or" or "otherwise", a
                # kind's own value word, verbatim, is that kind's: "direction unchanged - no wait,
                # stay the same" corrects the speed, the key's first part; "..., otherwise it
                # stays the same" is still the direction)
                said = [(topic, spec.convert(value, kind, topic))]
            said = [(k, v) for k, v in said if v is not None] or [(kind, value)]
            if not bare:
                for noun in nouns:
                    if noun.joined and noun.gap <= COORDINATION_GAP and noun.kind != kind:
                        shared = spec.convert(value, kind, noun.kind)
                        if shared is not None:
                            said.append((noun.kind, shared))
            about = subject
            if about is None:
                about = next((n.subject for n in nouns if n.subject is not None), None)
            made = [add(k, item, v, negating, clause, about) for k, v in said]
            restarted = False
            claim = made[0]
            if repair_from is not None and contrast_depth is None and not hypothetical:
                # each kind said after a correction replaces its own (not one said in a contrast)
                for earlier in found[:repair_from]:
                    if earlier.kind in {c.kind for c in made}:
                        earlier.retracted = True
            if hedge_waiting:
                hedged_clauses.add(clause)
                hedge_waiting = False
            look_back, claim_in_clause = None, True
            used.extend(n.node for n in nouns if len(made) > 1 or n.kind == made[0].kind)
            nouns.clear()
            topic = made[-1].kind
            chain, chain_gap = claim, 0
            carry, negating = claim.negated, False
            last_claim = claim
    flush()
    end_supposition()
    _set_aside_suppositions(supposed, found)
    if look_back is not None:
        hedged_clauses.add(look_back)
    if hedge_in_clause and other_subject and not claim_in_clause:
        hedge_waiting = False
    if hedge_waiting and found:  # a trailing hedge ("faster, I think") looks back
        hedged_clauses.add(found[-1].clause)
    if ends_asking:
        for claim in found[asked_from:]:
            claim.questioned = True
    for claim in found:
        claim.hedged = not claim.asked and (claim.clause in hedged_clauses or claim.questioned)
    if span_from is not None:
        spans.append([span_from, len(answer.source)])
    return ClaimSet(
        {kind: _resolve(kind, values, found) for kind, values in spec.kinds.items()}, used, spans
    )


def _set_aside_suppositions(supposed: list[Claim], found: list[Claim]) -> None:
    """"If the needle rose another 15 it would be in the red; right now it is safe", "clears by
    26.2 m; if the wall were 40 m tall it would hit it": where the line also says a value of the
    same kind plainly (no condition, no supposition, not corrected or asked), an "if ... would ..."
    supposition's claims of that kind are a counterfactual the answer sets beside its own, not a
    second answer. Where it does not, the supposition may be the question's own premise
    restated ("if A's teeth were doubled, D would slow down"): it stays the answer, conditional."""
    if not supposed:
        return
    inside = {id(c) for c in supposed}
    plain = {
        c.kind
        for c in found
        if id(c) not in inside and c.about_target
        and not (c.conditional or c.hypothetical or c.retracted or c.asked or c.contrasted)
    }
    for claim in supposed:
        if claim.kind in plain and claim.about_target:
            claim.hypothetical, claim.about_target = True, False


#: The ends of a line's sentences, for a "?" that asks the whole last one.
_LINE_SENTENCE_ENDS = frozenset({".", "!", "?"})


#: Clause ends after which claims that list every value of a kind, joined by "or" or "/", are the
#: question's options echoed ("Speed (increase / decrease / stay the same): same", "Yes/No: No",
#: "[stable/unstable]"): a ")" or "]" closes a group, a ":" ends a segment.
OPTION_LIST_ENDS = frozenset({")", "]", ":"})
#: Clause ends that continue a list of options ("increase, decrease, or the same").
_LIST_SEPARATORS = frozenset({","})
_OR_WORDS = frozenset({"or", "/"})


def _lists_every_option(claims: list[Claim], spec: ClaimSpec) -> bool:
    """The clause's claims, none denied, name every declared value (two or more) of one kind: the
    options restated, not an answer. A kind without declared values (letters, numbers) never
    qualifies: its options cannot be known to be complete."""
    if len(claims) < 2 or any(c.negated for c in claims):
        return False
    said: dict[str, set[str]] = {}
    for claim in claims:
        said.setdefault(claim.kind, set()).update(str(v) for v in _values(claim.value))
    return any(
        len(domain) > 1 and set(domain) <= said.get(kind, set())
        for kind, domain in spec.kinds.items()
    )


def _offers_alternatives(claims: list[Claim], alt: bool) -> bool:
    """The claims of a sentence offer two or more values of one kind as alternatives ("D's speed:
    increase, decrease, or the same?"): a restated question, not an answer."""
    if not alt:
        return False
    values: dict[str, set[str]] = {}
    for claim in claims:
        values.setdefault(claim.kind, set()).update(str(v) for v in _values(claim.value))
    return any(len(v) > 1 for v in values.values())


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
