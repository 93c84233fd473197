"""The value of a number written in words: "sixty-five", "minus two", "one hundred and twenty",
"ten point five", "three and a half". Read by ``number()`` in rule expressions and by
:mod:`.spelled_decimals`, which writes decimals in words in digits before any grammar reads them.
"""

from __future__ import annotations

__all__ = ["TENS", "UNDER_TWENTY", "number_from_words"]

#: Number words number() reads ("sixty-five", "minus two", "one hundred and twenty").
UNDER_TWENTY = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
)
TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_WORD_VALUES = {word: value for value, word in enumerate(UNDER_TWENTY)} | {
    word: 20 + 10 * index for index, word in enumerate(TENS)
}


def number_from_words(text: str) -> float | None:
    """The value of a number written in words (under a million), else None."""
    words = text.lower().replace("-", " ").split()
    half = 0.5 if words[-3:] == ["and", "a", "half"] else 0.0
    if half:
        words = words[:-3]
    fraction = 0.0
    if "point" in words:  # "ten point five", "fifty-seven point two five"
        digits = words[words.index("point") + 1 :]
        words = words[: words.index("point")]
        if not digits or half or any(_WORD_VALUES.get(d, 10 if d != "oh" else 0) > 9 for d in digits):
            return None
        fraction = float("0." + "".join(str(_WORD_VALUES.get(d, 0)) for d in digits))
    sign = 1.0
    if words and words[0] in ("minus", "negative"):
        sign, words = -1.0, words[1:]
    if not words or len(words) > 8:
        return None
    total = current = 0
    seen = False
    for word in words:
        if word == "and" and seen:
            continue
        if word == "a" and not seen:
            current, seen = 1, True
        elif word in _WORD_VALUES:
            current, seen = current + _WORD_VALUES[word], True
        elif word == "hundred" and seen:
            current *= 100
        elif word == "thousand" and seen:
            total, current = total + current * 1000, 0
        else:
            return None
    return sign * (total + current + half + fraction) if seen else None
