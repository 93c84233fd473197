"""Score one answer against one key with a rule: the single scoring path of keyaudit.

``check``, ``score``, the keys check, the rule's own examples and the rule baseline all call
:func:`score_response`. Steps: find the answer line → clean it → parse key and answer with the
rule's grammars → evaluate ``[[let]]`` values → the first ``[[require]]`` clause that fails gives
the reason; if none fails the answer is accepted. ``[output]`` values are reported either way.

Every input string gets a verdict: a missing answer line, a grammar failure or an expression that
fails on a strange answer become rejections with a named built-in reason, never an exception.
Every answer is scored within the bounds of :mod:`.answer_limits` (length, cleaning, CPU time,
outputs) and :mod:`..expressions.limits` (work and values of each expression); exceeding one is the
verdict **rule error** naming the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from ...errors import ExpressionError
from ...load.answer_line import find_answer_line
from ...load.timelimit import ANSWER_SECONDS, TimeLimitExceeded, time_limit
from ..reading.answer_layout import read_layout
from ..reading.asides import move_asides
from ..reading.ast import Node, format_tree
from ..reading.certainty import OFFERING_CLAUSE, grammar_vocabulary, unplaced_material
from ..reading.claims import TRIGGER_KINDS, ClaimSet, read_claims
from ..reading.grammar import GrammarParseError
from ..reading.json_answer import read_json_object
from ..reading.normalise import normalise
from ..reading.restated import drop_restated_question
from ..reading.spelled_decimals import spell_decimals, spell_measures
from ..reading.tolerant import capital_labels
from ..rules.rule import (
    ANSWER_MISSING,
    ANSWER_UNPARSEABLE,
    KEY_UNPARSED,
    RULE_ERROR,
    AnswerFormat,
    Requirement,
    Rule,
)
from .answer_limits import (
    MAX_ANSWER_CHARS,
    MAX_KEY_CHARS,
    MAX_SLOW_ANSWERS,
    Outputs,
    bounded_replace,
    cut_answer,
)
from .decisions import cue_marks
from .second_reading import SecondReading

#: Most (key, answer) verdicts remembered by one scorer before the memo starts afresh, and the
#: most characters of answers it may hold; the same for parsed answer trees, and parsed keys.
_MEMO_LIMIT = 65_536
_MEMO_CHARS = 8_000_000
_TREE_CHARS = 2_000_000
_KEYS_LIMIT = 65_536

#: How much of the end of a response the certainty check reads as an answer: the conclusion a
#: model wrote just before its answer line (or last, when it wrote none).
CONCLUSION_CHARS = 300


def conclusion_of(response: str, answer_text: str | None) -> str:
    """The last non-empty line before the answer line, then the answer line's text; without an
    answer line, the response's last non-empty line. At most :data:`CONCLUSION_CHARS`."""
    tail = response[-4 * CONCLUSION_CHARS :].splitlines()
    lines = [line.strip() for line in tail if line.strip()]
    if not lines:
        return ""
    text = lines[-1] if answer_text is None else " ".join(lines[-2:-1]) + " " + answer_text
    return " ".join(text.split())[-CONCLUSION_CHARS:]


def needs_conclusion(verdict: Verdict) -> bool:
    """Whether the certainty of ``verdict`` also reads the response's conclusion. No verdict does
    since issue 23: measured on every labelled set, the conclusion read as an answer marked about
    1.3% of verdicts (a component the model gave in its reasoning and left off its answer line,
    rightly missing by every rule's semantics), and the few misreadings among them were all ones
    where the answer line itself held the value unread, which the second reading's "unread
    value" sign marks on its own (:mod:`.second_reading`). :meth:`Scorer.conclusion_doubt`
    stays available for a caller that wants it."""
    del verdict
    return False


def conclusion_doubt_text(accepted: bool) -> str | None:
    """The doubt a conclusion that would be accepted raises (None when it would not)."""
    return "the response's last lines, read as an answer, give accept" if accepted else None


#: How every doubt that judging a verdict hit a limit ends (:func:`_judged`): the CPU-time bound's
#: message and the recursion limit's. Such a doubt depends on the machine, not the answer.
_RECURSION_DOUBT = "judging the verdict's certainty nests too deeply for Python"
LIMIT_DOUBT_ENDINGS = (" of CPU time", _RECURSION_DOUBT)


def _judged(work: Callable[[], Any]) -> Any:
    """``work()`` within the answer's CPU-time bound, or the doubt that judging it hit a limit
    (a string): judging certainty never turns into an error of its own."""
    try:
        with time_limit(ANSWER_SECONDS, "judging the verdict's certainty"):
            return work()
    except TimeLimitExceeded as error:
        return str(error)
    except RecursionError:
        return _RECURSION_DOUBT


def with_doubt(verdict: Verdict, doubt: str) -> Verdict:
    """``verdict`` with one more reason to doubt it (kept once)."""
    return replace(verdict, uncertain=tuple(dict.fromkeys((*verdict.uncertain, doubt))))


__all__ = [
    "MAX_ANSWER_CHARS",
    "ParsedKey",
    "Record",
    "Scorer",
    "Verdict",
    "clean_answer",
    "conclusion_of",
    "jsonable",
    "normalise_characters",
]


@dataclass(frozen=True, slots=True)  # slots: an audit keeps a million distinct verdicts
class Verdict:
    """The outcome of scoring one answer: accepted or not, why not, and what was extracted."""

    accept: bool
    reason: str
    values: dict[str, Any]
    answer_text: str | None = None
    detail: str = ""
    #: Why the verdict is uncertain (empty: certain); see :mod:`..reading.certainty`. Set by ``score``.
    uncertain: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedKey:
    """A key parsed by the rule's key grammar, with its ``[key]`` values (``target``)."""

    text: str
    node: Node | None
    target: dict[str, Any]
    error: str = ""
    template: str = ""
    slots: dict[str, str] = field(default_factory=dict)
    #: The entity the answer must be about (the rule's ``[claims] target``), if it names one.
    claims_target: Any = None


class Record:
    """A plain mapping readable by expressions as ``name.field`` (used for ``target``)."""

    kind = "record"

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def field(self, name: str) -> Any:
        return self._values.get(name)

    def find(self, kind: str) -> list:
        return []

    def text(self) -> str:
        return ""


def jsonable(value: Any) -> Any:
    """Tuples become lists, nodes their text and non-finite numbers null (JSON has no
    ``Infinity``), so values serialise to valid JSON."""
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    text = getattr(value, "text", None)
    return text() if callable(text) else str(value)


@lru_cache(maxsize=64)
def _deletions(characters: str) -> dict[int, None]:
    return {ord(c): None for c in characters}


def normalise_characters(text: str, fmt: AnswerFormat, limit: int | None = None) -> str:
    """The ``[answer]`` replacements and deletions (curly quotes, dashes, markdown), nothing else.

    With ``limit``, a replacement that lengthens the text keeps only its first ``limit``
    characters (:func:`~.answer_limits.bounded_replace`).
    """
    for old, new in fmt.replace:
        if old in text:
            text = (
                text.replace(old, new) if limit is None else bounded_replace(text, old, new, limit)
            )
    return text.translate(_deletions(fmt.delete)) if fmt.delete else text


def clean_answer(text: str, fmt: AnswerFormat) -> str:
    """Normalise the text (LaTeX, compatibility forms, answer markers: :mod:`..reading.normalise`;
    decimals in words in digits, :mod:`..reading.spelled_decimals`; a flat JSON object as its fields,
    :mod:`..reading.json_answer`; a padding label, a one-line table, numbered sub-answers and proper
    fractions as plain clauses, :mod:`..reading.answer_layout`), then apply the rule's ``[answer]`` cleaning: replacements, deletions, the question restated set
    aside (:mod:`..reading.restated`), whitespace, asides moved
    behind their sentence (:mod:`..reading.asides`), trimming.

    The text is cut to :data:`MAX_ANSWER_CHARS` first and again at the end.
    """
    text = read_layout(normalise(read_json_object(cut_answer(text))).text)
    text = normalise_characters(text, fmt, MAX_ANSWER_CHARS)
    text = spell_measures(spell_decimals(text))
    text = drop_restated_question(text, fmt.question_words, fmt.question_runs)
    if fmt.tolerant is not None:
        text = fmt.tolerant.correct(text)
    if fmt.labels:
        text = capital_labels(text)
    text = move_asides(" ".join(text.split()))
    text = text.strip(fmt.trim)
    if fmt.lowercase:
        text = text.lower()
    return text[:MAX_ANSWER_CHARS]


class _BoundedMemo:
    """A memo of at most :data:`_MEMO_LIMIT` entries and ``max_chars`` characters of the texts
    they were computed from; when either bound would be passed it starts over."""

    __slots__ = ("entries", "chars", "max_chars")

    def __init__(self, max_chars: int) -> None:
        self.entries: dict[Any, Any] = {}
        self.chars = 0
        self.max_chars = max_chars

    def get(self, key: Any) -> Any:
        return self.entries.get(key)

    def put(self, key: Any, value: Any, chars: int) -> None:
        self.chars += chars
        if len(self.entries) >= _MEMO_LIMIT or self.chars > self.max_chars:
            self.entries.clear()
            self.chars = chars
        self.entries[key] = value


class Scorer:
    """Scores answers with one rule; caches parsed keys (a cell has few distinct key strings)."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self._keys: dict[str, ParsedKey] = {}
        #: Verdicts by (key, answer text).
        self._memo = _BoundedMemo(_MEMO_CHARS)
        #: Parsed answer trees by cleaned text: one answer line is parsed once, whatever its key
        #: (trees and their attributes do not depend on the key).
        self._trees = _BoundedMemo(_TREE_CHARS)
        #: Claims by (id of the tree, claims target), with the tree they were read from.
        self._claims = _BoundedMemo(_TREE_CHARS)
        #: Answers that exceeded the time limit so far (see answer_limits.MAX_SLOW_ANSWERS).
        self.slow_answers = 0
        self._words: frozenset[str] | None = None
        self._second: SecondReading | None = None
        #: Certainty reasons by (key, cleaned text, whether a misreading would matter).
        self._doubts = _BoundedMemo(_MEMO_CHARS)
        #: The environment of the last answer scored, reused by its certainty check.
        self._last_env: tuple[str, str, dict[str, Any]] | None = None
        self._last_clean: tuple[str, str] | None = None
        attributes = rule.attributes
        #: ``target`` as attributes read it: the ``[key]`` values of the key being scored (None
        #: while a key itself is parsed, and for a tree shown without a key). Where some
        #: attribute reads it, a parsed answer (and its attributes) belongs to one key.
        self._target: Record | None = None
        self._target_key: str | None = None

        in_progress: set[tuple[int, str]] = set()

        def hook(name: str, node: Node) -> tuple[bool, Any]:
            table = attributes.get(node.kind)
            if table is None or name not in table:
                return False, None
            # An attribute that needs itself (directly or through others) would recurse forever.
            token = (id(node), name)
            if token in in_progress:
                raise ExpressionError(
                    f"attribute {name!r} of {node.kind!r} depends on itself; "
                    "see [[attribute]] in the rule file"
                )
            in_progress.add(token)
            try:
                return True, table[name].evaluate({"self": node, "target": self._target})
            finally:
                in_progress.discard(token)

        self._hook = hook if attributes else None
        #: ``rule.attributes_read_target``, read once: it walks every attribute, and each parse
        #: asked it again (about 1% of a rule's whole scoring path, issue 38).
        self._reads_target = rule.attributes_read_target
        #: Only nodes of kinds with derived attributes need the hook (see Node.field).
        self._hook_kinds = frozenset(attributes)

    def parse_key(self, key: str) -> ParsedKey:
        """Parse ``key`` (cached); a key that matches no template has ``node=None`` and an error."""
        cached = self._keys.get(key)
        if cached is not None:
            return cached
        if len(key) > MAX_KEY_CHARS:
            parsed = ParsedKey(key, None, {}, error=f"key longer than {MAX_KEY_CHARS:,} characters")
        else:
            parsed = self._parse_key(key)
        if len(self._keys) >= _KEYS_LIMIT:
            self._keys.clear()
        self._keys[key] = parsed
        return parsed

    def _parse_key(self, key: str) -> ParsedKey:
        # a key's own nodes know no target (their attributes make it): `target` is null there
        before = self._target, self._target_key
        self._target, self._target_key = None, None
        try:
            return self._parse_key_node(key)
        finally:
            self._target, self._target_key = before

    def _parse_key_node(self, key: str) -> ParsedKey:
        try:
            with time_limit(ANSWER_SECONDS, "parsing this key"):
                node = self.rule.key_grammar.parse(key, self._hook, self._hook_kinds)
        except GrammarParseError as error:
            return ParsedKey(key, None, {}, error=str(error))
        except TimeLimitExceeded as error:
            return ParsedKey(key, None, {}, error=f"{error} ({_BACKTRACKING})")
        except RecursionError:
            return ParsedKey(key, None, {}, error="the key's parse tree nests too deeply")
        target = {name: expr.evaluate({"key": node}) for name, expr in self.rule.key_values.items()}
        template, slots = self.rule.key_grammar.template(node)
        claims_target = (
            self.rule.claims_target.evaluate({"key": node})
            if self.rule.claims_target is not None
            else None
        )
        return ParsedKey(
            key, node, target, template=template, slots=slots, claims_target=claims_target
        )

    def score(self, key: str, response: str, certainty: bool = True) -> Verdict:
        """Score a full stored response (its answer line is found here) against ``key``.

        The verdict carries its certainty (:meth:`certainty`): the reasons it may be a misreading.
        Checks that only need the verdict (the keys check, baselines, examples) pass
        ``certainty=False`` and skip that work.

        The same verdict is put together from its two parts by the batch scorer
        (:mod:`.batch`), which scores each distinct answer line once: :meth:`score_line` (a
        function of the key and the cleaned answer line) and, for a rejection for something
        missing, :meth:`conclusion_doubt` (a function of the key and the response's conclusion).
        """
        fmt = self.rule.answer_format
        line = find_answer_line(response, fmt.label, fmt.which)
        verdict = self.score_line(key, None if line is None else line.text, certainty)
        if certainty and needs_conclusion(verdict):
            doubt = self.conclusion_doubt(key, conclusion_of(response, verdict.answer_text))
            if doubt:
                verdict = with_doubt(verdict, doubt)
        return verdict

    def score_line(self, key: str, raw_answer: str | None, certainty: bool = True) -> Verdict:
        """The verdict on one answer line's text (``None``: the response has none), with every
        sign of uncertainty the line itself shows (:meth:`line_doubts`). A function of ``key``
        and the cleaned text, except ``answer_text``, which is ``raw_answer`` cut."""
        if raw_answer is None:
            return Verdict(False, ANSWER_MISSING, self._empty_values())
        verdict = self.score_answer_text(key, raw_answer)
        if not certainty:
            return verdict
        outcome = _judged(lambda: self.line_doubts(key, verdict))
        reasons = outcome if isinstance(outcome, tuple) else (outcome,)
        return replace(verdict, uncertain=reasons) if reasons else verdict

    def line_doubts(self, key: str, verdict: Verdict) -> tuple[str, ...]:
        """The signs in the answer line itself that ``verdict`` may be a misreading."""
        if verdict.reason in (KEY_UNPARSED, RULE_ERROR):
            return ()
        reasons: list[str] = []
        parsed_key = self.parse_key(key)
        self._for_key(parsed_key)
        text = self._cleaned(verdict.answer_text) if verdict.answer_text is not None else ""
        # Misreadings that matter turn a rejection for something missing or conflicting, or an
        # acceptance; a rejection for a wrong component stands on what was read. The signs of
        # leftover material are read in full for such a rejection, and for an acceptance only
        # where the leftover offers an alternative or a condition (see _tree_doubts).
        doubtful = verdict.reason.endswith(("missing", "conflict", "ambiguous"))
        if text and parsed_key.node is not None:
            memo_key = (key, text)
            doubts = self._doubts.get(memo_key)
            if doubts is None:
                try:
                    tree = self._parse_answer(text)
                except GrammarParseError:
                    tree = None
                doubts = () if tree is None else tuple(self._tree_doubts(parsed_key, tree, verdict.accept, doubtful, verdict.reason))
                if verdict.reason == ANSWER_UNPARSEABLE:
                    doubts += ("the answer grammar could not read the line",)
                doubts += tuple(self._second_doubts(text, verdict, tree))
                if tree is not None:
                    doubts = self._with_decisions(parsed_key, tree, verdict, doubts)
                self._doubts.put(memo_key, doubts, len(text))
            reasons += doubts
        tolerant = self.rule.answer_format.tolerant
        if tolerant is not None and verdict.answer_text is not None and parsed_key.node is not None:
            untolerant = replace(self.rule.answer_format, tolerant=None)
            plain = clean_answer(verdict.answer_text, untolerant)
            typos = tolerant.typos(plain)
            # a typo read as its word is a decision the verdict rests on only where the line
            # read without it gets the other verdict ("decreses" → speed missing)
            if typos and self._accepts_cleaned(parsed_key, plain) is not verdict.accept:
                reasons += [f"read {typed!r} as {read!r} (one letter off)" for typed, read in typos]
        return tuple(dict.fromkeys(reasons))

    def _env_of(self, parsed_key: ParsedKey, tree: Node) -> dict[str, Any] | None:
        """The expressions' environment of ``tree`` (the last one scored where it is that)."""
        last = self._last_env
        if last is not None and last[0] == parsed_key.text and last[2]["answer"] is tree:
            return last[2]
        try:
            return self._environment(parsed_key, tree)
        except ExpressionError:
            return None

    def _accepts_cleaned(self, parsed_key: ParsedKey, text: str) -> bool | None:
        """Whether the rule accepts the cleaned line ``text`` (None: it cannot be read)."""
        try:
            tree = self._parse_answer(text) if text else None
        except GrammarParseError:
            return False
        if tree is None:
            return False
        try:
            env = self._environment(parsed_key, tree)
            return all(passed is not False for _, passed in self._clause_outcomes(env))
        except ExpressionError:
            return None

    def _with_decisions(self, parsed_key: ParsedKey, tree: Node, verdict: Verdict, doubts: tuple[str, ...]) -> tuple[str, ...]:
        """``doubts`` with the marks of the decisions the reading took on a weak cue
        (:mod:`.decisions`)."""
        env = self._env_of(parsed_key, tree)
        if env is None:
            return doubts
        if self._second is None:
            self._second = SecondReading.of(self.rule)
        part = next((p for p in self._second.parts if verdict.reason in p.reasons.values()), None)
        step = None if part is None else next(k for k, r in part.reasons.items() if r == verdict.reason)
        tolerant = self.rule.answer_format.tolerant
        known = self._vocabulary() | (tolerant.known if tolerant is not None else frozenset())
        claims = env.get("claims")
        marks = cue_marks(
            tree.source,
            claims if isinstance(claims, ClaimSet) else None,
            verdict.accept,
            step,
            None if part is None else part.name,
            () if part is None else part.values,
            known,
            not self.rule.answer_format.exact_words,
        )
        return doubts + tuple(marks)

    def conclusion_doubt(self, key: str, conclusion: str) -> str | None:
        """For a rejection for a missing component: the doubt when the response's conclusion
        (:func:`conclusion_of`), read as an answer, would be accepted; else None."""
        if not conclusion:
            return None
        outcome = _judged(lambda: self.score_answer_text(key, conclusion))
        return outcome if isinstance(outcome, str) else conclusion_doubt_text(outcome.accept)

    def _tree_doubts(
        self, parsed_key: ParsedKey, tree: Node, accepted: bool, doubtful: bool, reason: str = ""
    ) -> list[str]:
        """Signs in the parsed answer: the rule's own ``[[uncertain]]`` clauses always; the
        generic signs of material the rule left over where a misreading would matter — in full
        for a rejection for something missing or conflicting (``doubtful``), and for an
        acceptance only a leftover clause that offers an alternative or a condition, or a claim
        counted under a condition."""
        rule = self.rule
        reasons: list[str] = []
        last = self._last_env
        if last is not None and last[0] == parsed_key.text and last[2]["answer"] is tree:
            env = last[2]
        else:
            try:
                env = self._environment(parsed_key, tree)
            except ExpressionError:
                return reasons
        for doubt, check in rule.uncertain:
            try:
                if check.evaluate(env):
                    reasons.append(doubt)
            except ExpressionError:
                continue
        if not (accepted or doubtful):
            return reasons
        if rule.certainty_when is not None:
            try:
                if not rule.certainty_when.evaluate(env):
                    return reasons
            except ExpressionError:
                pass
        # (tokens the parser had to read as plain words marked right verdicts only on every
        # labelled set, issue 39: not a sign any more)
        skip = set(TRIGGER_KINDS)
        if rule.claims is not None and rule.claims.subject:
            skip.add(rule.claims.subject)
        claims = env.get("claims")
        read: list[tuple[int, int]] = []
        if rule.claims is not None:
            # a kind's noun alone ("60 rpm -> 30 rpm") claims nothing, unless it shared a claim
            skip.update(rule.claims.nouns)
            if isinstance(claims, ClaimSet):
                read = [(n.start, n.end) for n in claims.nouns]
        only = None if doubtful else OFFERING_CLAUSE
        reasons += unplaced_material(tree, skip, self._vocabulary(), rule.certainty, read, only)
        if isinstance(claims, ClaimSet):
            found = claims.all_claims()
            others = {c.subject for c in found if not c.about_target}
            if doubtful and others and any(c.subject is None and not c.retracted for c in found):
                named = ", ".join(sorted(str(o) for o in others))
                reasons.append(f"a claim without a subject was taken as the target's ({named} also named)")
        return reasons

    def _second_doubts(self, text: str, verdict: Verdict, tree: Node | None) -> list[str]:
        """Where a second, simple reading of the line (:mod:`.second_reading`) disagrees with
        the verdict; compared on every verdict, whatever ``[certainty] when`` says."""
        if self._second is None:
            self._second = SecondReading.of(self.rule)
        return self._second.doubts(text, verdict.accept, verdict.reason, tree, verdict.values)

    def _vocabulary(self) -> frozenset[str]:
        if self._words is None:
            self._words = grammar_vocabulary(self.rule.answer_grammar.path, self.rule.certainty)
        return self._words

    def score_answer_text(self, key: str, raw_answer: str) -> Verdict:
        """Score the text of an answer line (after the label) against ``key``.

        Scoring is a pure function of (key, answer), so repeated pairs (the baseline tries every
        candidate answer on every item) are answered from a bounded memo. The answer is cut to
        :data:`MAX_ANSWER_CHARS` before anything else.
        """
        raw_answer = cut_answer(raw_answer)
        memo_key = (key, raw_answer)
        verdict = self._memo.get(memo_key)
        if verdict is None:
            verdict = self._score_bounded(key, raw_answer)
            self._memo.put(memo_key, verdict, len(raw_answer))
        return verdict

    def _score_bounded(self, key: str, raw_answer: str) -> Verdict:
        """:meth:`_score_answer_text` within the answer's CPU-time bound."""
        if self.slow_answers >= MAX_SLOW_ANSWERS:
            return self.not_scored(raw_answer)
        try:
            with time_limit(ANSWER_SECONDS, "scoring this answer"):
                return self._score_answer_text(key, raw_answer)
        except TimeLimitExceeded as error:
            self.slow_answers += 1
            detail = f"{error} ({_BACKTRACKING})"
        except RecursionError:
            detail = "the answer's parse tree or a value nests too deeply for Python"
        except MemoryError:
            detail = "scoring this answer ran out of memory"
        return Verdict(False, RULE_ERROR, self._empty_values(), raw_answer, detail)

    def not_scored(self, raw_answer: str | None) -> Verdict:
        """The verdict on an answer not tried because :data:`MAX_SLOW_ANSWERS` answers already
        exceeded the time limit."""
        return Verdict(
            False,
            RULE_ERROR,
            self._empty_values(),
            raw_answer,
            f"not scored: {self.slow_answers} answers already exceeded the time limit of "
            f"{ANSWER_SECONDS:g} s of CPU time per answer ({_BACKTRACKING})",
        )

    def _score_answer_text(self, key: str, raw_answer: str) -> Verdict:
        rule = self.rule
        parsed_key = self.parse_key(key)
        self._for_key(parsed_key)
        if parsed_key.node is None:
            return Verdict(False, KEY_UNPARSED, self._empty_values(), raw_answer, parsed_key.error)
        text = self._cleaned(raw_answer)
        if not text:
            return Verdict(False, ANSWER_MISSING, self._empty_values(), raw_answer)
        try:
            answer = self._parse_answer(text)
        except GrammarParseError as error:
            return Verdict(False, ANSWER_UNPARSEABLE, self._empty_values(), raw_answer, str(error))
        outputs = Outputs()
        try:
            env = self._environment(parsed_key, answer)
            self._last_env = (key, text, env)
            values = {
                name: outputs.convert(name, expr.evaluate(env))
                for name, expr in rule.outputs.items()
            }
            notes = "; ".join(outputs.notes)
            for requirement, passed in self._clause_outcomes(env):
                if passed is False:
                    return Verdict(False, requirement.reason, values, raw_answer, notes)
        except ExpressionError as error:
            return Verdict(False, RULE_ERROR, self._empty_values(), raw_answer, str(error))
        return Verdict(True, "", values, raw_answer, notes)

    def _cleaned(self, raw_answer: str) -> str:
        """``clean_answer`` of ``raw_answer``; the certainty check cleans the text the verdict
        was just scored on, so the last one is kept."""
        last = self._last_clean
        if last is not None and last[0] == raw_answer:
            return last[1]
        text = clean_answer(raw_answer, self.rule.answer_format)
        self._last_clean = (raw_answer, text)
        return text

    def _for_key(self, parsed_key: ParsedKey | None) -> None:
        """Attributes read ``target`` as this key's values from now on."""
        if parsed_key is None or parsed_key.node is None:
            self._target, self._target_key = None, None
        elif self._target_key != parsed_key.text:
            self._target, self._target_key = Record(parsed_key.target), parsed_key.text

    def _parse_answer(self, text: str) -> Node:
        """The answer grammar's tree for a cleaned answer text, parsed once per distinct text
        (per key too, where an attribute reads ``target``: its values are then the key's)."""
        memo = (self._target_key, text) if self._reads_target else text
        tree = self._trees.get(memo)
        if tree is None:
            tree = self.rule.answer_grammar.parse(text, self._hook, self._hook_kinds)
            self._trees.put(memo, tree, len(text))
        return tree

    def explain(self, key: str, raw_answer: str) -> tuple[Verdict, ClaimSet | None]:
        """The verdict on one answer text and the claims the layer read from it."""
        verdict = self._score_bounded(key, cut_answer(raw_answer))
        parsed_key = self.parse_key(key)
        self._for_key(parsed_key)
        text = clean_answer(raw_answer, self.rule.answer_format)
        if self.rule.claims is None or parsed_key.node is None or not text:
            return verdict, None
        try:
            with time_limit(ANSWER_SECONDS, "reading this answer's claims"):
                answer = self._parse_answer(text)
                return verdict, self._claims_of(answer, parsed_key.claims_target)
        except (GrammarParseError, ExpressionError, TimeLimitExceeded, RecursionError):
            return verdict, None

    def tree(self, raw_answer: str) -> list[str] | str:
        """The answer grammar's parse tree of one answer text (``format_tree`` lines), or why
        there is none (one line: no answer text, or where parsing failed)."""
        text = clean_answer(raw_answer, self.rule.answer_format)
        if not text:
            return "no answer text"
        self._for_key(None)
        try:
            with time_limit(ANSWER_SECONDS, "parsing this answer"):
                return format_tree(self._parse_answer(text))
        except GrammarParseError as error:
            return f"the answer grammar does not parse it: {error}"
        except (TimeLimitExceeded, RecursionError):
            return "parsing it exceeded the time or depth limit"

    def trace(self, key: str, raw_answer: str) -> list[tuple[Requirement, bool | None]]:
        """Each ``[[require]]`` clause in order with its outcome on this answer, up to the first
        that fails (``None``: skipped by its ``when``) — why the verdict follows."""
        parsed_key = self.parse_key(key)
        self._for_key(parsed_key)
        text = clean_answer(raw_answer, self.rule.answer_format)
        if parsed_key.node is None or not text:
            return []
        try:
            with time_limit(ANSWER_SECONDS, "tracing this answer"):
                return self._trace(parsed_key, text)
        except (TimeLimitExceeded, RecursionError):
            return []

    def _trace(self, parsed_key: ParsedKey, text: str) -> list[tuple[Requirement, bool | None]]:
        try:
            env = self._environment(parsed_key, self._parse_answer(text))
            return list(self._clause_outcomes(env))
        except (GrammarParseError, ExpressionError):
            return []

    def _clause_outcomes(self, env: dict[str, Any]) -> Iterator[tuple[Requirement, bool | None]]:
        """The ``[[require]]`` clauses in order with their outcome (``None``: skipped by its
        ``when``), ending at the first that fails: the one place a verdict's reason is decided."""
        for requirement in self.rule.requirements:
            if requirement.when is not None and not requirement.when.evaluate(env):
                yield requirement, None
                continue
            passed = bool(requirement.check.evaluate(env))
            yield requirement, passed
            if not passed:
                return

    def _environment(self, parsed_key: ParsedKey, answer: Node) -> dict[str, Any]:
        """The names expressions see: key, answer, target, claims, then every ``[[let]]``."""
        env: dict[str, Any] = {
            "key": parsed_key.node,
            "answer": answer,
            "target": Record(parsed_key.target),
        }
        if self.rule.claims is not None:
            env["claims"] = self._claims_of(answer, parsed_key.claims_target)
        for name, expr in self.rule.lets:
            env[name] = expr.evaluate(env)
        return env

    def _claims_of(self, answer: Node, target: Any) -> ClaimSet:
        """The claims of a parsed answer, read once per (tree, claims target): claims depend on
        the key only through its target, so a line scored against many keys (the keys check,
        the constant-answer baseline) is read once. Kept with the tree they were read from, so
        their nodes are the ones the rule's other expressions find."""
        spec = self.rule.claims
        assert spec is not None
        try:
            memo_key = (id(answer), target)
            hit = self._claims.get(memo_key)
        except TypeError:  # an unhashable target: nothing to share
            return read_claims(answer, spec, target)
        if hit is not None and hit[0] is answer:
            return hit[1]
        claims = read_claims(answer, spec, target)
        self._claims.put(memo_key, (answer, claims), len(answer.source))
        return claims

    def _empty_values(self) -> dict[str, Any]:
        return dict.fromkeys(self.rule.outputs)


_BACKTRACKING = (
    "a grammar terminal probably backtracks catastrophically: nested or overlapping repeats "
    "such as (a|aa)+ or (\\w+\\s?)*"
)
