"""Decimals spelled in words, written in digits before any grammar reads the line.

"Clears by fourteen point seven metres", "at nine point six m", "zero point six metres": a model
that spells its numbers spells decimals too, and a rule's grammar reads its values as digits
(``12.3``), so each rule would need the words again, with their arithmetic. A number in words with
a decimal "point" has one reading and no other use in an answer ("the left one" is a pronoun; "one
point" is not), so it is rewritten once for every rule: "fourteen point seven" becomes "14.7".
Whole numbers in words are left to the grammars (``NUMBER_WORDS`` in ``common.lark``), where a
bare "one" or "no one" can be told apart.
"""

from __future__ import annotations

import re

from .number_words import TENS, UNDER_TWENTY, number_from_words

__all__ = ["spell_decimals"]

_DIGITS = UNDER_TWENTY[:10]
_WORDS = (*UNDER_TWENTY, *TENS)
_WORD = "(?:" + "|".join(_WORDS) + ")"
_DIGIT = "(?:" + "|".join((*_DIGITS, "oh")) + ")"
#: A whole part in words (up to hundreds), "point", then digits in words.
_SPELLED = re.compile(
    rf"(?<![A-Za-z-])(?:(?:minus|negative)\s+)?"
    rf"{_WORD}(?:(?:\s+|-)(?:and\s+)?(?:{_WORD}|hundred))*"
    rf"\s+point((?:\s+{_DIGIT})+)(?![A-Za-z-])",
    re.IGNORECASE,
)


def _digits(match: re.Match[str]) -> str:
    whole_words = match.group(0)[: match.start(1) - match.start(0)].rsplit("point", 1)[0]
    whole = number_from_words(whole_words)
    if whole is None or whole != int(whole):
        return match.group(0)
    digits = "".join("0" if d.lower() == "oh" else str(_DIGITS.index(d.lower())) for d in match.group(1).split())
    sign = "-" if whole < 0 or whole_words.strip().lower().startswith(("minus", "negative")) else ""
    return f"{sign}{abs(int(whole))}.{digits}"


def spell_decimals(text: str) -> str:
    """``text`` with every decimal in words ("fourteen point seven") in digits ("14.7")."""
    if "point" not in text and "Point" not in text and "POINT" not in text:
        return text
    return _SPELLED.sub(_digits, text)
