"""Certainty from the reading's own decisions taken on a weak cue (issue 39).

The reading decides, for every line, which words give a component's value, which claims conflict
and which words are typos of a known one. Each decision follows a cue, and where the cue is weak
a new wording is misread without any other sign. The marks here name such decisions; each only
flags, never changes a verdict. They were chosen, and the older signs pruned, by what they mark on
labelled sets: a sign that marks right verdicts only costs a reviewer's time and says nothing.

Tried and left out (measured on the fresh r4 sets' tune rows): trying each claim the layer set
aside (a question restated, a correction, a contrast, a counterfactual, another object's claim)
counted instead, and each claim counted under a condition set aside, and marking where that flips
the verdict: 24 right verdicts marked, no wrong one. The layer's roles are right far more often
than a flip says they matter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..reading.claims import ClaimSet

__all__ = ["cue_marks"]

#: Anything that offers a second value: an alternative, a hedge, a question, a condition, a range,
#: a second value added ("both", "and", "but", "also", "as well") or a supposed one ("would").
_OFFERING = re.compile(
    r"\b(?:or|either|nor|whether|maybe|perhaps|possibly|probably|likely|might|depend\w*|unless|"
    r"both|and|but|also|too|well|would|could|each|"
    r"otherwise|if|between|first|then|wait|actually|mean|sorry|no\s+wait)\b|[/?]|\d\s*(?:[-–]|to)\s*\d",
    re.I,
)
#: A contrast opener, then its object, then a relative clause that may still be about it
#: ("unlike the slower shot, which struck the wall, ..."): group 1 is the relative clause.
_CONTRAST_RELATIVE = re.compile(
    r"\b(?:unlike|compared\s+(?:with|to)|in\s+contrast\s+(?:to|with)|contrary\s+to)\b[^,;.:]*,"
    r"\s*((?:which|who|that)\b[^,;.:]*)",
    re.I,
)
#: A value word glued to more letters by a hyphen ("stable-ish", "semi-stable").
_GLUED_AFTER = re.compile(r"^-[A-Za-z]")
_GLUED_BEFORE = re.compile(r"[A-Za-z]-$")
_WORD = re.compile(r"[A-Za-z]+")


def _near(typed: str, known: str) -> bool:
    """One edit apart: two neighbouring letters swapped; for words of five letters or more also
    one letter added, dropped or changed (short words differ by one letter too often)."""
    if typed == known:
        return False
    n, m = len(typed), len(known)
    if n == m:
        diffs = [i for i in range(n) if typed[i] != known[i]]
        if len(diffs) == 2 and diffs[1] == diffs[0] + 1:
            return typed[diffs[0]] == known[diffs[1]] and typed[diffs[1]] == known[diffs[0]]
        return len(diffs) == 1 and n >= 5
    if min(n, m) < 5 or abs(n - m) != 1:
        return False
    short, long_ = (typed, known) if n < m else (known, typed)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def cue_marks(
    source: str,
    claims: ClaimSet | None,
    accepted: bool,
    step: str | None,
    part_name: str | None,
    values: Iterable[str],
    known: frozenset[str],
    tolerant: bool = True,
) -> list[str]:
    """Marks for decisions the reading took on a weak cue, read off the line and its claims.

    ``step`` is the failing component step of a rejection (missing, conflict, hedged, wrong;
    None for an acceptance or another reason), ``part_name`` its component and ``values`` the
    component's declared values; ``known`` the words the rule's grammar knows; ``source`` the
    parsed line (the text the claims' offsets are in); ``tolerant`` false for a rule that asks
    for exact words (a word one letter off is then rightly not its value).

    * a conflict read where nothing on the line offers a second value (no "or", "/", "?",
      hedge, condition, correction or range): one of the values is likely a label or context
      ("| In danger zone | no |", "margin 3,8 m");
    * a component missing while a word one letter off one of its values stands on the line
      ("yse" for yes);
    * an acceptance whose counted value was read from inside a hyphenated word ("stable-ish");
    * a verdict resting on a claim in a relative clause just after a contrast ("unlike the
      slower shot, which struck the wall, ..."): the contrast may reach into it.
    """
    marks: list[str] = []
    text = source
    if step == "conflict" and not _OFFERING.search(text):
        marks.append(f"the {part_name} conflict was read, but nothing on the line offers a second value")
    if step == "missing" and tolerant:
        words = {v.lower() for value in values for v in _WORD.findall(value) if len(v) >= 3}
        for match in _WORD.finditer(text):
            typed = match.group().lower()
            if typed in known or typed in words:
                continue
            near = next((w for w in sorted(words) if _near(typed, w)), None)
            if near is not None:
                marks.append(f"the {part_name} was read as missing, but {match.group()!r} is one letter off {near!r}")
                break
    if isinstance(claims, ClaimSet):
        counted = [c for c in claims.all_claims() if c.about_target and not c.retracted and not c.asked]
        if accepted:
            for claim in counted:
                start, end = claim.node.start, claim.node.end
                if _GLUED_AFTER.match(source[end : end + 2]) or _GLUED_BEFORE.search(source[max(0, start - 2) : start]):
                    word = re.search(r"[\w-]*$", source[:start]).group() + source[start:end] + re.match(r"[\w-]*", source[end:]).group()
                    marks.append(f"the value {claim.text()!r} was read inside {word!r}")
                    break
        for match in _CONTRAST_RELATIVE.finditer(source):
            inside = [c for c in counted if match.start(1) <= c.node.start < match.end(1)]
            if inside:
                marks.append(f"the claim {inside[0].text()!r} follows a contrast ('{match.group(1)[:30]}'): it may be the contrast's")
    return list(dict.fromkeys(marks))
