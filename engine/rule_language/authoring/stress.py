"""A behavioural test matrix for a rule (``keyaudit test-rule RULE --stress``), after CheckList.

Labelled sets measure a rule on the wordings their authors thought of; this measures it on the
kinds of wording that every benchmark's answers use, built by construction from the cell's own
keys, so the expected verdict is known without a person labelling anything:

* **minimum functionality**: a key restated as the answer is right for itself; a different key
  (one the rule tells apart) is wrong for it;
* **invariance**: wrapping the answer (LaTeX, ``\\boxed{}``, an arrow, quotes, bold, a bullet),
  restating the question before it, a contrast with the other value, the other value said of
  another object, lower-case labels, a typo in a long word, numbers in words — the verdict must not
  change;
* **directional**: a correction from wrong to right is right, from right to wrong is wrong; a
  hedge, a "?", "or <the other value>" or two values under complementary conditions make a
  right answer wrong.

Each probe is (wording, key, answer, expected verdict). :func:`stress` scores them all and gives
per wording the agreement and the first failing probe, so an author sees at once which kind of
wording the rule cannot read. Keys are taken in a fixed order and the pairs deterministically, so
the matrix is the same on every run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..rules.rule import Rule
from ..scoring.scorer import Scorer

__all__ = ["Probe", "StressResult", "WordingResult", "build_probes", "stress", "WORDINGS"]

#: At most this many distinct keys of a cell are probed (most frequent first).
MAX_KEYS = 12


@dataclass(frozen=True)
class Probe:
    """One answer built from the cell's keys, with the verdict it must get by construction."""

    wording: str
    key: str
    answer: str
    expect: bool


@dataclass
class WordingResult:
    wording: str
    n: int = 0
    agree: int = 0
    #: The first probe the rule decided otherwise, with the reason it gave.
    failure: tuple[Probe, str] | None = None

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else 1.0


@dataclass
class StressResult:
    wordings: list[WordingResult] = field(default_factory=list)
    #: Keys the rule does not accept when restated as their own answer (no probe can be built).
    unusable_keys: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return sum(w.n for w in self.wordings)

    @property
    def rate(self) -> float:
        n = self.n
        return sum(w.agree for w in self.wordings) / n if n else 1.0


_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n: int) -> str:
    """``n`` (0-999) in English words: 45 -> "forty-five", 253 -> "two hundred fifty-three"."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    rest = n % 100
    return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + number_words(rest))


def _with_number_words(text: str) -> str | None:
    """``text`` with its first whole number below 1,000 (not part of a decimal) in words, its
    sign as "minus", or None. Only the first: the answer's value, not a convention spelled after
    it ("270 degrees; 0=right, 90=up")."""
    match = re.search(r"(?<![\d.])(-?)(\d{1,3})(?![\d]|\.\d)", text)
    if match is None:
        return None
    words = ("minus " if match.group(1) else "") + number_words(int(match.group(2)))
    return text[: match.start()] + words + text[match.end() :]


def _lower_labels(text: str) -> str | None:
    """``text`` with its one-letter capital labels (block B, gear D, option C) in lower case."""
    changed = re.sub(r"(?<![A-Za-z])([B-HJ-Z])(?![A-Za-z])", lambda m: m.group(1).lower(), text)
    return changed if changed != text else None


def _typo(text: str) -> str | None:
    """``text`` with its longest word of six letters or more misspelt by one swap of two inner
    letters (a transposition, the commonest typo), or None."""
    words = [m for m in re.finditer(r"[A-Za-z]{6,}", text)]
    if not words:
        return None
    word = max(words, key=lambda m: (len(m.group()), -m.start()))
    w = word.group()
    middle = len(w) // 2
    if w[middle] == w[middle + 1]:
        middle -= 1
    typo = w[:middle] + w[middle + 1] + w[middle] + w[middle + 2 :]
    return text[: word.start()] + typo + text[word.end() :]


def _one_clause(text: str) -> str:
    """A key's clauses joined by "and", as a relative clause says them ("no and new value 35"),
    without the commas that would end it."""
    return re.sub(r"\s*,\s*", " ", re.sub(r"\s*;\s*", " and ", text))


def _right_if_made(answer: str | None) -> tuple[str, bool] | None:
    """A transformed right answer, still right; None where the key offers nothing to transform."""
    return None if answer is None else (answer, True)


#: (name, build(right, wrong, question) -> (answer, expected) or None, what it tests)
Builder = Callable[[str, str, str], "tuple[str, bool] | None"]
WORDINGS: list[tuple[str, Builder, str]] = [
    ("plain right", lambda r, w, q: (r, True), "the key restated is right"),
    ("plain wrong", lambda r, w, q: (w, False), "another key is wrong"),
    ("LaTeX text", lambda r, w, q: (f"$\\text{{{r}}}$", True), "$\\text{...}$ around the answer"),
    ("boxed", lambda r, w, q: (f"$\\boxed{{\\text{{{r}}}}}$", True), "\\boxed{} around the answer"),
    ("arrow marker", lambda r, w, q: (f"→ {r}", True), "an arrow before the answer"),
    ("quoted", lambda r, w, q: (f'"{r}"', True), "quotes around the answer"),
    ("bold", lambda r, w, q: (f"**{r}**", True), "markdown bold"),
    ("bullet", lambda r, w, q: (f"• {r}", True), "a bullet before the answer"),
    ("question restated", lambda r, w, q: (f"{q} {r}", True), "the question, then the answer"),
    ("question restated, wrong", lambda r, w, q: (f"{q} {w}", False), "the question, then a wrong answer"),
    ("correction to right", lambda r, w, q: (f"{w} - no wait, {r}", True), "wrong, corrected to right"),
    ("correction to wrong", lambda r, w, q: (f"{r} - no wait, {w}", False), "right, corrected to wrong"),
    ("actually", lambda r, w, q: (f"{w}. Actually, {r}", True), "'actually' before the right answer"),
    ("hedge", lambda r, w, q: (f"Probably {r}", False), "a hedge before the answer"),
    ("question mark", lambda r, w, q: (f"{r}?", False), "the answer asked, not said"),
    ("alternative", lambda r, w, q: (f"{r}, or {w}", False), "two answers offered"),
    ("two conditions", lambda r, w, q: (f"{r} if the figure is to scale, otherwise {w}", False),
     "different answers under complementary conditions"),
    ("contrast", lambda r, w, q: (f"{r} (unlike what a quick guess suggests: {w})", True),
     "a contrast with the other value"),
    ("another object's claim", lambda r, w, q: (f"{r}, unlike the other one, which is {_one_clause(w)}", True),
     "the other value said of another object"),
    ("lower-case labels", lambda r, w, q: _right_if_made(_lower_labels(r)),
     "one-letter labels in lower case"),
    ("typo", lambda r, w, q: _right_if_made(_typo(r)), "a typo in a long word"),
    ("number words", lambda r, w, q: _right_if_made(_with_number_words(r)),
     "numbers in words"),
]


def _distinct_keys(keys: Sequence[str]) -> list[str]:
    counts: dict[str, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts, key=lambda k: (-counts[k], k))[:MAX_KEYS]


def _fields(scorer: Scorer, key: str) -> frozenset[str]:
    """The ``[key]`` values a key sets: keys that set the same ones answer the same question
    (fbd's direction keys and slip keys do not)."""
    target = scorer.parse_key(key).target
    return frozenset(name for name, value in target.items() if value is not None)


def build_probes(scorer: Scorer, keys: Sequence[str]) -> tuple[list[Probe], list[str]]:
    """The probes for a cell's keys, and the keys that could not be used (not right for
    themselves). Each key's wrong partner is the next distinct key the rule rejects for it."""
    rule: Rule = scorer.rule
    label = rule.answer_format.label
    # the question as a model would restate it: placeholders ("force {LABEL}") as a plain word
    # (only its sentences that ask: "Also state whether ..." is an instruction, not restated)
    question = " ".join(re.sub(r"\{[^{}]*\}", "X", rule.question or "").split())
    question = " ".join(re.findall(r"[^.?!]*\?", question)).strip() or question
    distinct = _distinct_keys(keys)
    usable = [k for k in distinct if scorer.score(k, f"{label} {k}", certainty=False).accept]
    unusable = [k for k in distinct if k not in usable]
    probes: list[Probe] = []
    for i, right in enumerate(usable):
        # the wrong partner answers the same question: a key of the same template first
        fields = _fields(scorer, right)
        others = usable[i + 1 :] + usable[:i]
        others.sort(key=lambda o: _fields(scorer, o) != fields)
        wrong = next(
            (o for o in others if not scorer.score(right, f"{label} {o}", certainty=False).accept),
            None,
        )
        if wrong is None:
            continue
        for name, build, _ in WORDINGS:
            if name == "typo" and rule.answer_format.exact_words:
                continue  # the rule asks for exact words: a typo is its own question
            built = build(right, wrong, question)
            if built is not None:
                probes.append(Probe(name, right, f"{label} {built[0]}", built[1]))
    return probes, unusable


def stress(scorer: Scorer, keys: Sequence[str]) -> StressResult:
    """Score every probe of ``keys`` and gather agreement per wording (in :data:`WORDINGS` order)."""
    probes, unusable = build_probes(scorer, keys)
    results = {name: WordingResult(name) for name, _, _ in WORDINGS}
    for probe in probes:
        verdict = scorer.score(probe.key, probe.answer, certainty=False)
        result = results[probe.wording]
        result.n += 1
        if verdict.accept == probe.expect:
            result.agree += 1
        elif result.failure is None:
            result.failure = (probe, verdict.reason or "accepted")
    return StressResult([r for r in results.values() if r.n], unusable)
