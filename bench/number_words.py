"""Numbers in words: keyaudit's own reader against text2num and number-parser (issue 22, item 2).

    pip install text2num number-parser   # only for this measurement; not dependencies
    python bench/number_words.py

The issue asked to take numbers in words from a well-kept library where one reads more of our
cases. The corpus below is the forms answer lines use (compounds, "and", signs, decimals read
digit by digit, "and a half"); each reader's count of exact values is printed. Result of the last
run: bench/results/number_words.md.
"""

from __future__ import annotations

CASES = {
    "sixty-five": 65, "two hundred fifty-three": 253, "two hundred and fifty-three": 253,
    "one hundred twenty": 120, "minus two": -2, "negative two": -2, "ten point five": 10.5,
    "fifty-seven point two five": 57.25, "zero": 0, "one and a half": 1.5, "three thousand": 3000,
    "one thousand and five": 1005, "a hundred": 100, "twelve": 12, "forty two": 42,
    "nineteen": 19, "ninety-nine": 99, "seven hundred": 700, "two and a half": 2.5, "half": 0.5,
    "a quarter": 0.25, "three quarters": 0.75, "eleven point two": 11.2, "one point five": 1.5,
    "twenty-one thousand": 21000, "sixteen": 16, "four hundred and six": 406,
    "zero point seven five": 0.75, "a dozen": 12, "fifteen hundred": 1500,
}


def _ours(text: str):
    from keyaudit.engine.rule_language.expressions.functions import _number

    return _number(text)


def _text2num(text: str):
    from text_to_num import alpha2digit

    out = alpha2digit(text, "en").replace(",", "").strip()
    try:
        return float(out)
    except ValueError:
        return None


def _number_parser(text: str):
    from number_parser import parse_number

    value = parse_number(text)
    return None if value is None else float(value)


def main() -> None:
    for name, read in (("keyaudit number()", _ours), ("text2num", _text2num), ("number-parser", _number_parser)):
        try:
            got = {case: read(case) for case in CASES}
        except ImportError as error:
            print(f"{name}: not installed ({error.name})")
            continue
        right = [c for c, v in CASES.items() if got[c] is not None and abs(got[c] - v) < 1e-9]
        missed = ", ".join(sorted(set(CASES) - set(right)))
        print(f"{name}: {len(right)}/{len(CASES)} exact; missed: {missed}")


if __name__ == "__main__":
    main()
