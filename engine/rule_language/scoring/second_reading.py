"""A second, simple reading of an answer line, compared with the rule's verdict (issue 23).

The rule reads an answer through its grammar and the claim layer: a precise reading that knows the
phrasings it was built on. Where it misreads an unseen phrasing, nothing in its own reading says so.
This module reads the same line a second time, simply and without the grammar — word matching of
each component's declared values, of numbers and of letters, and a few general cues (alternatives,
hedges, corrections, a question restated) — and names the places where the two readings disagree
in a way that would change the verdict:

* **alternatives** — two different values of one component joined by "or", "either", a bare
  "/", "by one ... by another", or a range ("10.8–11.3", "between 105 and 110"), none denied,
  while the verdict read one value of it (an acceptance, or a wrong value);
* **hedge** — a hedge said in the first person or as a sentence adverb ("my best guess", "not 100%
  sure", "if I read it right", "presumably"), while the verdict is an acceptance or a wrong value;
* **question echo** — the line restates a question and then answers it ("Danger zone reached?
  No.", "Direction? Unchanged.", "Of A, B, C or E, which is closest? C."), while the verdict is a
  rejection the restated question may have caused (hedged, conflict, missing);
* **unread value** — the verdict says a component is missing, yet a value of it (a declared
  value, a letter, a number not inside arithmetic) stands on the line where the grammar built no
  node ("closest to d", "$C$", "by five metres", "-2.0");
* **correction** — the line corrects itself ("wait", "sorry", "I mean", "— actually") and the
  first value it then gives of a component is not the verdict's;
* **one value in a conflict** — the verdict says a component's values conflict, yet outside
  its asides (parentheses that compare with something else, not offering another answer) or in
  its conclusion ("..., so B.") the line gives one value; and a conflict in a line that corrects
  itself;
* **claim-layer limits** — decisions the claim layer took at one of its edges, read off the items
  it read: for a verdict that read one value, an "or" with plain words but no claim after it in
  its clause ("goes up or down", "either just clears or clips"), a negation with nothing at all
  after it ("it changes and it doesn't:"); for one value or a conflict, a negation word the
  grammar left a plain word beside a claim. (A negation at the edge of the layer's window, and one
  with no claim in its clause, were signs until issue 39: they marked right verdicts only.)

The reading is cheap (a handful of regular expressions over one cleaned line, and the items of the
tree the rule already parsed) and runs once per distinct (key, answer line), inside the scorer's
memo of doubts. It never changes a verdict: it only adds reasons to doubt it.

What it reads from the rule is data: the ``[[component]]`` tables (name, claim kind, kind, reason
names) and the ``[claims]`` kinds' declared values; a claim kind with declared values but no
component is matched to the rule's reasons by its name ("status missing", "wrong status"). The
cues themselves (hedges, alternatives, corrections, question words) are general language, the same
for every rule, and kept here apart from the claim layer's own lexicons on purpose: a phrasing the
layer's lexicon misses should not be missed by the second reading for the same reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import tomllib

from ..reading.ast import Leaf, Node
from ..reading.claims import read_items

__all__ = ["Part", "SecondReading", "parts_of"]

#: The standard steps of a component's reasons, and words that name them in other reasons.
_STEP_WORDS = {
    "missing": ("missing",),
    "hedged": ("hedged",),
    "conflict": ("conflict", "conflicts", "ambiguous"),
    "wrong": ("wrong", "reversed"),
}

#: Number words the simple reading takes as numbers ("five metres", "minus two").
_NUMBER_WORDS = (
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    "fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
    "ninety|hundred|minus"
)
_NUMBER = re.compile(
    rf"(?<![\w.])[-+]?\d+(?:[.,]\d+)?(?![\w])|(?<![\w-])(?:{_NUMBER_WORDS})(?![\w-])", re.I
)
_PAIR = re.compile(r"(?<![\w'’])([A-H])\s*(?:[-–—/|]|-on-|\s(?:on|and)\s)\s*([A-H])(?![\w'’])")
#: "one" as a pronoun or determiner, not a number ("by one estimate", "the one", "which one").
_ONE_AS_WORD = re.compile(r"\b(?:by|in|the|no|any|each|every|which|that|this|only)\s+$", re.I)
_LETTER = re.compile(r"(?<![\w'’.-])([A-Za-z])(?![\w'’-])")

#: Hedges a writer says of their own answer: the first person, or a sentence adverb. Kept apart
#: from the claim layer's lexicon on purpose (an independent reading); "appears"/"seems" of a
#: thing ("A appears longer") are content in some domains, so only "it seems" counts.
_HEDGE = re.compile(
    r"\b(?:probably|presumably|perhaps|maybe|possibly|likely|supposedly|arguably|"
    r"(?:i|we)\s*(?:'d|would)?\s*(?:think|believe|guess|suspect|assume|suppose|reckon|say)|"
    r"(?:my|best|educated|rough)\s+guess|guess(?:ing)?|not\s+(?:\d+\s*%\s*|fully\s+|entirely\s+|"
    r"completely\s+|totally\s+|quite\s+|very\s+)?(?:sure|certain)|unsure|uncertain|"
    r"if\s+(?:i|we)\b[^.;]{0,40}?\b(?:right|correctly)|(?:it|this|that)\s+(?:seems|appears|looks)|"
    r"as\s+far\s+as\s+i\s+can\s+tell)\b",
    re.I,
)
#: Sentence ends: two values in different sentences are not offered as alternatives.
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)|\n")
_QUESTION = re.compile(r"\?")
_QUESTION_WORDS = re.compile(
    r"^\W*(?:is|are|was|were|does|do|did|would|will|can|could|should|has|have|what|which|how|"
    r"where|whether|why|who)\b|\b(?:which|what|how|whether)\b",
    re.I,
)
_CORRECTION = re.compile(
    r"\b(?:wait|sorry|i\s+mean|correction|scratch\s+that|on\s+second\s+thought|oops|let\s+me\s+correct)\b"
    r"|[,;:—-]\s*actually\b",
    re.I,
)
#: Words a negation may stand before without denying anything in particular.
_WORDS = re.compile(r"[\w'’]+")


@dataclass(frozen=True)
class Part:
    """One thing the answer must give, as the simple reading sees it."""

    name: str
    claim: str
    #: choice, number, angle, letter or pair (two entity letters: "C–B", "C on B", "C and B")
    kind: str
    values: tuple[str, ...]
    #: step (missing, hedged, conflict, wrong) -> the rule's reason for it
    reasons: dict[str, str] = field(default_factory=dict)

    @cached_property
    def _choice(self) -> tuple[re.Pattern[str], dict[str, str]] | None:
        """One pattern for every declared value, longest first ("non-orientable" before
        "orientable"), each by its last word, by its stem when long enough ("increase" →
        increas…); with the group name of each value."""
        if len(self.values) < 2:
            return None
        groups: dict[str, str] = {}
        alternatives = []
        for n, value in enumerate(sorted(self.values, key=len, reverse=True)):
            word = value.split()[-1].lower()
            if len(word) > 4:
                body = re.escape(re.sub(r"(?:ed|es|s|e)$", "", word)) + r"\w*"
            elif len(word) == 4 and word.endswith("s"):  # "tips": tip, tipped, tipping
                body = re.escape(word[:-1]) + r"\w*"
            else:
                body = re.escape(word) + r"(?![\w-])"
            groups[f"v{n}"] = value
            alternatives.append(f"(?P<v{n}>{body})")
        return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + ")", re.I), groups

    def mentions(self, text: str) -> list[tuple[int, int, str]]:
        """Where the line names a value of this part: (start, end, value), in order."""
        found: list[tuple[int, int, str]] = []
        if self.kind == "choice":
            choice = self._choice
            if choice is not None:
                pattern, groups = choice
                for m in pattern.finditer(text):
                    found.append((m.start(), m.end(), groups[m.lastgroup or ""]))
        elif self.kind in ("number", "angle"):
            for m in _NUMBER.finditer(text):
                token = m.group().lower()
                if token == "minus" or token == "one" and _ONE_AS_WORD.search(text, 0, m.start()):
                    continue
                found.append((m.start(), m.end(), _number_key(token)))
        elif self.kind == "pair":
            for m in _PAIR.finditer(text):
                found.append((m.start(), m.end(), f"{m.group(1)}-{m.group(2)}"))
        elif self.kind == "letter":
            allowed = {v.upper() for v in self.values} or set("ABCDEFGH")
            for m in _LETTER.finditer(text):
                letter = m.group(1)
                if letter.upper() in allowed and letter not in ("a", "I"):
                    found.append((m.start(), m.end(), letter.upper()))
        return found


def _number_key(token: str) -> str:
    try:
        return repr(float(token.replace(",", ".")))
    except ValueError:
        return token.lower()


def parts_of(source_text: str, kinds: dict[str, tuple[str, ...]], reasons: Iterable[str]) -> tuple[Part, ...]:
    """The parts of a rule: its ``[[component]]`` tables, then each claim kind with declared
    values that no component reads (matched to the rule's reasons by name). Reads the rule
    file's data only."""
    try:
        data = tomllib.loads(source_text) if source_text else {}
    except tomllib.TOMLDecodeError:
        data = {}
    parts: list[Part] = []
    covered: set[str] = set()
    for entry in data.get("component", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        claim = entry.get("claim", name)
        named = {"missing": f"{name} missing", "hedged": f"{name} hedged",
                 "conflict": f"{name} conflict", "wrong": f"wrong {name}"}
        named.update({k: v for k, v in (entry.get("reasons") or {}).items() if isinstance(v, str)})
        parts.append(Part(name, claim, str(entry.get("kind", "")), tuple(kinds.get(claim, ())), named))
        covered.add(claim)
    reasons = list(reasons)
    for claim, values in kinds.items():
        if claim in covered or len(values) < 2:
            continue
        named = {}
        for reason in reasons:
            words = reason.lower().split()
            if claim in words or f"{claim}s" in words:
                for step, cues in _STEP_WORDS.items():
                    if any(c in words for c in cues):
                        named.setdefault(step, reason)
        parts.append(Part(claim, claim, "choice", tuple(values), named))
    return tuple(parts)


def _step(part: Part, reason: str) -> str | None:
    return next((step for step, r in part.reasons.items() if r == reason), None)


class SecondReading:
    """The simple reading of one rule's answers, and its comparison with the rule's verdicts."""

    def __init__(self, parts: tuple[Part, ...], claims: Any = None) -> None:
        self.parts = parts
        #: The rule's ClaimSpec (None: no claim layer, whose limits are then not looked at).
        self.claims = claims

    @classmethod
    def of(cls, rule: Any) -> SecondReading:
        """The second reading of a loaded rule (reads its file's data, never its code)."""
        kinds = rule.claims.kinds if rule.claims is not None else {}
        parts = parts_of(rule.source_text, kinds, rule.reasons)
        return cls(parts, rule.claims)

    @staticmethod
    def _cue(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
        return pattern.search(text)

    def doubts(
        self,
        text: str,
        accept: bool,
        reason: str,
        tree: Node | None = None,
        values: dict[str, Any] | None = None,
    ) -> list[str]:
        """The reasons to doubt a verdict (``accept``, ``reason``, with its outputs ``values``:
        a component's value under its name) on the cleaned line ``text``, whose parse by the
        rule's grammar is ``tree`` (None: it did not parse)."""
        out: list[str] = []
        hedged = not accept and "hedged" in reason
        conflict = not accept and any(w in reason for w in ("conflict", "ambiguous"))
        missing = not accept and reason.endswith("missing")
        single = not (hedged or conflict or missing)  # accepted, or one wrong value read
        said = {part.name: part.mentions(text) for part in self.parts}

        if single:
            m = self._cue(_HEDGE, text)
            if m is not None:
                out.append(f"the line holds a hedge the reading did not count ({m.group()!r})")
        elif tree is not None:
            echo = self._echo(text)
            if echo:
                out.append(f"the line restates a question before its answer ({echo!r})")

        correction = self._cue(_CORRECTION, text)
        for part in self.parts:
            mentions = said[part.name]
            if not mentions:
                continue
            if single:
                pair = self._alternatives(text, mentions, part.kind)
                if pair:
                    out.append(f"the line offers {part.name} alternatives ({pair!r})")
                value = (values or {}).get(part.name)
                first = _said_after(text, mentions, correction) if value is not None else None
                if first is not None and not _same(part, first, value):
                    out.append(f"after a correction the line gives the {part.name} {first!r}, not the value read")
            elif conflict and _step(part, reason) == "conflict":
                one = _main_value(text, mentions)
                if one is not None:
                    out.append(f"the {part.name} conflict was read, but the line's own answer gives one value ({one!r})")
            elif missing and tree is not None and _step(part, reason) == "missing":
                loose = self._unread(text, tree, mentions, part)
                if loose:
                    out.append(f"the {part.name} was read as missing, but {loose!r} is on the line, unread")
        if conflict and correction is not None:
            out.append("values conflict in an answer that corrects itself: the correction may not have been read")
        if tree is not None and self.claims is not None and (single or conflict or missing):
            items = read_items(tree, self.claims.atoms, self.claims.within)
            if not missing:
                out += _limits(items, frozenset(self.claims.kinds), single)
        return list(dict.fromkeys(out))

    def _unread(self, text: str, tree: Node, mentions: list[tuple[int, int, str]], part: Part) -> str | None:
        """The first value of ``part`` said where the grammar built no node, inside the part of
        the line the claim layer reads (a rule's ``[claims] within``), not inside arithmetic."""
        placed = _placed_spans(tree)
        regions = None
        if self.claims is not None and self.claims.within is not None:
            regions = [(n.start, n.end) for n in tree.find(self.claims.within) if isinstance(n, Node)]
        for s, e, _ in mentions:
            if any(a < e and s < b for a, b in placed):
                continue
            if regions is not None and not any(a <= s and e <= b for a, b in regions):
                continue
            if part.kind in ("number", "angle") and _in_formula(text, s, e):
                continue
            return text[s:e]
        return None

    def _alternatives(self, text: str, mentions: list[tuple[int, int, str]], kind: str) -> str | None:
        """Two different values joined by an alternative in one sentence, at most 8 words apart
        ("up or down", "D ..., or B if ...", "105 or 110", "10.8–11.3", "6.8 m by one
        estimate, 6.1 m by another"), neither denied; None if there are none."""
        for (s1, e1, v1), (s2, e2, v2) in zip(mentions, mentions[1:], strict=False):
            if v1 == v2:
                continue
            between = text[e1:s2]
            if _SENTENCE_END.search(between) or len(_WORDS.findall(between)) > 8:
                continue
            if _DENIED.search(text[max(0, s1 - 20) : s1]):
                continue  # "not B or C", "neither faster nor slower"
            after = text[e2 : e2 + 40]
            offered = (
                (self._cue(_OR, between) is not None and not _NOT_OFFERED.match(_after_or(between)))
                or bool(_SLASH.match(between))
                or bool(_BY_ONE.search(between) and _BY_OTHER.search(after))
            )
            if not offered and kind in ("number", "angle"):
                before = text[max(0, s1 - 14) : s1]
                offered = bool(
                    (_DASH_RANGE.match(between) or _AND_RANGE.search(before) and _AND.match(between))
                    and not _REFERENCE.search(before)
                    and not _OPERATOR.match(after)
                    and not _OPERATOR.search(before[-3:])
                )
            if offered:
                return text[s1:e2][:50]
        return None

    def _echo(self, text: str) -> str | None:
        """The restated question, when a "?" is followed by more of the line and what comes
        before it is a question, not a value asked about ("Same speed?", a hedge the layer
        reads): it opens with or holds a question word, offers alternatives, or names no value
        of any part."""
        for m in _QUESTION.finditer(text):
            if text[m.start() - 1 : m.start()] == "(":
                continue  # "(?)": a hedge on the claim before it
            after = text[m.end() :]
            if not re.search(r"[A-Za-z0-9]", after):
                continue
            start = max((e.end() for e in _SENTENCE_END.finditer(text, 0, m.start())), default=0)
            asked = text[start : m.start()]
            if not _WORDS.findall(asked):
                continue
            if (
                _QUESTION_WORDS.search(asked)
                or self._cue(_OR, asked)
                or not any(part.mentions(asked) for part in self.parts)
            ):
                return " ".join(asked.split())[-40:]
        return None


_OR = re.compile(r"\b(?:or|either)\b", re.I)
_SLASH = re.compile(r"^\s*/\s*$")
#: What follows "or" without offering another value ("or, equivalently, -90", "or so").
_NOT_OFFERED = re.compile(r"(?:equivalently|i\.?e\.?|that\s+is|in\s+other\s+words|so|more|less)\b", re.I)
_BY_ONE = re.compile(r"\bby\s+one\b|\bin\s+one\b|\bone\s+way\b", re.I)
_BY_OTHER = re.compile(r"\bby\s+(?:another|the\s+other)\b|\bin\s+(?:another|the\s+other)\b|\bthe\s+other\s+way\b", re.I)
_DASH_RANGE = re.compile(r"^(?:-|\s*to\s+)$")
_AND_RANGE = re.compile(r"\bbetween\s*$", re.I)
_AND = re.compile(r"^\s*(?:[^\W\d]+\s*)?and\s*$", re.I)
#: A range that is a reference, not an answer: "the 0–140 scale", "(range 20–120)".
_REFERENCE = re.compile(r"\b(?:the|a|an|scale|range|from|of)\s*$", re.I)
_OPERATOR = re.compile(r"^\s*[=+*×/^<>≈]|[=+*×/^<>]\s*$")
_DENIED = re.compile(r"\b(?:not|no|neither|nor|never|without)\s+(?:\w+\s+){0,2}$|n't\s+(?:\w+\s+){0,2}$", re.I)


def _said_after(text: str, mentions: list[tuple[int, int, str]], correction: re.Match[str] | None) -> str | None:
    """The value a correction gives: the first value said (not denied, not inside arithmetic)
    after the correction cue, if the line corrects itself and says one."""
    if correction is None:
        return None
    for start, end, value in mentions:
        if start < correction.end() or _DENIED.search(text[max(0, start - 20) : start]):
            continue
        if _in_formula(text, start, end):
            continue
        return value
    return None


def _same(part: Part, said: str, value: Any) -> bool:
    """Whether the simple reading's value ``said`` is the verdict's ``value`` of ``part``."""
    if part.kind in ("number", "angle"):
        try:
            return abs(float(said) - float(value)) <= 1e-6 * max(1.0, abs(float(value)))
        except (TypeError, ValueError):
            return True  # a number word: no opinion
    if isinstance(value, (tuple, list)):
        value = "-".join(str(v) for v in value)
    return str(said).lower() == str(value).lower()


#: Words that open the line's conclusion ("..., so B.", "therefore stable").
_CONCLUSION = re.compile(r"(?:^|[,;:.—-]\s*|\s)(?:so|therefore|thus|hence|final(?:ly)?|overall|i\.e\.)\b", re.I)
#: An aside that offers another answer rather than comparing with something else.
_OFFERS = re.compile(
    r"\b(?:or|either|if|maybe|perhaps|possibly|probably|depending|otherwise|by|with|using)\b|\?", re.I
)
_PARENS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def _main_value(text: str, mentions: list[tuple[int, int, str]]) -> str | None:
    """The one value the line's own answer gives, where the conflict's other values lie only in
    an aside: outside parentheses ("-4, orientable (a double torus would have -2)") or in the
    conclusion after its reasoning ("B is nearer than C, ..., so B.")."""
    if len({v for _, _, v in mentions}) < 2:
        return None
    asides = [(m.start(), m.end()) for m in _PARENS.finditer(text) if not _OFFERS.search(m.group())]
    if asides:
        outside = {v for s, e, v in mentions if not any(a <= s and e <= b for a, b in asides)}
        if len(outside) == 1:
            return outside.pop()
    last = None
    for m in _CONCLUSION.finditer(text):
        last = m
    if last is not None:
        tail = {v for s, _, v in mentions if s >= last.end()}
        if len(tail) == 1 and not _SENTENCE_END.search(text[last.end() :].rstrip(" .!")):
            return tail.pop()
    return None


def _after_or(between: str) -> str:
    """What follows the first "or"/"either" of ``between`` (for "or, equivalently, ...")."""
    m = _OR.search(between)
    return between[m.end() :].lstrip(" ,") if m else ""


def _in_formula(text: str, start: int, end: int) -> bool:
    """A number inside arithmetic ("2 − 2g", "V − E + F = 2") rather than said as a value."""
    around = text[max(0, start - 3) : start] + " " + text[end : end + 3]
    return bool(re.search(r"[=+*×/^]|-\s*\w", around) or re.match(r"[A-Za-z]", text[end : end + 1]))


#: Nouns a restated question may consist of alone ("Direction? Unchanged.", "Speed? Faster.").
_ECHO_NOUNS = frozenset({"direction", "speed", "answer", "status", "change", "value", "result", "verdict"})


def _placed_spans(tree: Node) -> list[tuple[int, int]]:
    """The spans of the nodes the grammar built below the root: material it recognised (claims,
    references, relations), as opposed to plain words and bare terminals. A node that wraps
    nearly the whole line is looked into instead."""
    spans: list[tuple[int, int]] = []
    stack = [tree]
    whole = max(1, len(tree.source))
    while stack:
        node = stack.pop()
        for child in node.children:
            if not isinstance(child, Node):
                continue
            if (child.end - child.start) * 10 >= whole * 9 and any(isinstance(c, Node) for c in child.children):
                stack.append(child)
            else:
                spans.append((child.start, child.end))
    return spans


def _limits(items: Sequence[Any], claim_kinds: frozenset[str], single: bool) -> list[str]:
    """Decisions the claim layer took at its edges, read off its items (claims, triggers and
    plain words in order), for a verdict that read one value of each part: an "or" with plain
    words but no claim after it in its clause ("goes up or down"), a negation with nothing at
    all after it ("it changes and it doesn't:")."""
    out: list[str] = []
    kinds = [_kind(item) for item in items]
    for n, kind in enumerate(kinds):
        if kind == "word" and _NEGATION_WORD.fullmatch(items[n].text().strip()):
            start = max((j for j in range(n) if kinds[j] == "boundary"), default=-1) + 1
            end = next((j for j in range(n, len(kinds)) if kinds[j] == "boundary"), len(kinds))
            if any(k in claim_kinds for k in kinds[start:end]):
                out.append(f"a negation was left as a plain word beside a claim ({items[n].text()!r})")
            continue
        if kind not in ("alt", "neg") or not single:
            continue
        rest = kinds[n + 1 :]
        end = next((j for j, k in enumerate(rest) if k == "boundary"), len(rest))
        clause = rest[:end]
        before = kinds[:n]
        opened = max((j for j, k in enumerate(before) if k == "boundary"), default=-1)
        if kind == "alt" and clause and not any(k in claim_kinds for k in clause):
            if items[n].text().strip().lower() not in ("or", "either"):
                continue
            if "neg" in before[opened + 1 :]:
                continue
            first = items[n + 1]
            word = first.text().strip().lower() if kinds[n + 1] == "word" else ""
            previous = items[n - 1].text().strip().lower() if n else ""
            if word.isalpha() and word not in _ALT_TAILS and previous not in ("with", "whether"):
                out.append(f"an alternative was read with nothing after it ('or {first.text()}')")
        if kind == "neg" and not clause and n > 0 and kinds[n - 1] != "boundary":
            out.append(f"a negation denies nothing after it ({items[n].text()!r})")
    return list(dict.fromkeys(out))


#: A negation word (the claim layer's triggers are read by the grammar; one left as a plain word
#: beside a claim may have been meant to deny it).
_NEGATION_WORD = re.compile(
    r"(?i:not|never|nor|neither|cannot|[a-z]+n[’']t|(?:does|do|did|is|are|was|were|wo|would|could|should|has|have|had|ca)nt)"
)

#: Words after "or" that offer no alternative value ("or so", "either way", "with or without").
_ALT_TAILS = frozenset(
    {"so", "more", "less", "thereabouts", "rather", "equivalently", "else", "way", "without", "not", "the", "a"}
)

_TRIGGERS = {"NEG": "neg", "HEDGE": "hedge", "CORRECTION": "correction", "ALT": "alt", "BOUNDARY": "boundary"}


def _kind(item: Any) -> str:
    if isinstance(item, Leaf):
        return _TRIGGERS.get(item.kind, "word")
    return _TRIGGERS.get(item.kind, item.kind)
