"""Decimals spelled in words, written in digits before any grammar reads the line.

"Clears by fourteen point seven metres", "at nine point six m", "zero point six metres": a model
that spells its numbers spells decimals too, and a rule's grammar reads its values as digits
(``12.3``), so each rule would need the words again, with their arithmetic. A number in words with
a decimal "point" has one reading and no other use in an answer ("the left one" is a pronoun; "one
point" is not), so it is rewritten once for every rule: "fourteen point seven" becomes "14.7".
A whole number in words before a unit ("twenty-seven metres", "seventeen m", "twelve and a half
minutes", "half a metre") has one reading too, and is written in digits as well; other whole
numbers in words are left to the grammars (``NUMBER_WORDS`` in ``common.lark``), where a bare
"one" or "no one" can be told apart.
"""

from __future__ import annotations

import re

from .number_words import TENS, UNDER_TWENTY, number_from_words

__all__ = ["spell_decimals", "spell_measures"]

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


#: Units after which a whole number in words is a measure (lower case; "m", "s", "h" whole words).
UNITS = (
    "metres", "metre", "meters", "meter", "m", "cm", "mm", "km", "ft", "feet", "foot", "inches", "inch",
    "minutes", "minute", "mins", "min", "seconds", "second", "secs", "sec", "s", "hours", "hour", "hrs",
    "hr", "h", "degrees", "degree", "deg", "°", "map units", "units", "unit", "psi", "bar", "kpa",
    "percent", "%", "rpm", "volts", "volt", "amps", "amp", "newtons", "newton", "kg", "grams",
)
_UNIT = "(?:" + "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True)) + ")"
#: A whole number in words (up to thousands, "and a half" allowed) right before a unit.
_MEASURE = re.compile(
    rf"(?<![A-Za-z-])((?:(?:minus|negative)\s+)?"
    rf"{_WORD}(?:(?:\s+|-)(?:and\s+)?(?:{_WORD}|hundred|thousand))*(?:\s+and\s+a\s+half)?)"
    rf"(\s*)(?={_UNIT}(?![A-Za-z]))",
    re.IGNORECASE,
)
#: "half a metre", "half an hour": a half of one unit.
_HALF = re.compile(rf"(?<![A-Za-z-])half\s+an?\s+(?={_UNIT}(?![A-Za-z]))", re.IGNORECASE)


#: A word before a number in words that may be part of it, misspelt ("fourty six"): then the
#: number is not read, rather than read as its last part.
_NUMBER_LIKE_BEFORE = re.compile(r"(?:ty|teen|hundred|thousand|and)\s+$", re.IGNORECASE)


def _measure(match: re.Match[str]) -> str:
    value = number_from_words(match.group(1))
    if value is None or _NUMBER_LIKE_BEFORE.search(match.string, 0, match.start()):
        return match.group(0)
    return f"{value:g}{match.group(2) or ' '}"


def spell_measures(text: str) -> str:
    """``text`` with every whole number in words before a unit in digits ("twenty-seven metres"
    -> "27 metres", "twelve and a half minutes" -> "12.5 minutes", "half a metre" -> "0.5 metre")."""
    text = _HALF.sub("0.5 ", text)
    return _MEASURE.sub(_measure, text)
