"""Non-restrictive relative clauses ("D, which is the output, slows down") moved out of the way.

A comma-enclosed relative clause interrupts the clause it comments on: a claim's subject and its
predicate ("D … slows down"), or the two halves of one phrase ("its direction … stays the same"),
end up on either side of it, and the clause ends (the commas) cut them apart. Reading it the way a
person does means reading the main clause first and the aside after it, so the aside is moved to
the end of its sentence, behind a ";" (a clause end), with its relative pronoun replaced by the
word it refers to (the last word before the comma): "D slows down; D is the output", "block B
slides off; B's centre of mass lies beyond A". Its own claims are kept, about the right subject,
and no longer split the main clause.

Only asides closed by a second comma inside the same sentence move; "…, which holds." at the end of
a sentence is already where it would go. The text is scanned once (linear, no backtracking).

An aside about the thing a contrast compares with ("Unlike gear A, which slows, D speeds up") stays
where it is, in brackets: "Unlike gear A (which slows), D speeds up". Moved behind the sentence it
would become a claim of its own ("A slows"), outside the contrast that makes it context; in
brackets, the claim layer keeps the contrast open until the bracket closes.
"""

from __future__ import annotations

import re

from .claims import CONTRAST_OPENERS

#: Words that open a non-restrictive relative clause after a comma, and what replaces them when
#: the clause moves ("{}" is the word before the comma).
RELATIVE_PRONOUNS = {"which": "{}", "who": "{}", "whose": "{}'s"}

#: ", which … ," with no sentence or clause punctuation inside, at most 200 characters.
_ASIDE = re.compile(
    r",\s*((?:" + "|".join(RELATIVE_PRONOUNS) + r")\b[^,;.:!?()\[\]\n]{1,200}?)\s*,\s*",
    re.IGNORECASE,
)
#: Comma-enclosed asides that only comment ("the driver, of course, is unaffected"; "none of the
#: gears, D included, reverse"): moved behind their sentence as they are, so the subject before
#: them still reaches its predicate. ("except D" is no aside: it takes D out of the claim.)
_INTERJECTIONS = (
    r"of course|naturally|obviously|clearly|again|in turn|in this case|in any case|as expected|in fact"
    r"|as before|by contrast|in contrast|on the other hand|as a result|consequently|accordingly"
    r"|that is|i\.e\.|e\.g\.|notably|importantly|incidentally|for its part|too|also|as well"
)
#: One to three words ("D", "gear D", "the output gear").
_SHORT = r"(?:\s+[^\s,;.:!?()\[\]]+){1,3}"
_COMMENT = re.compile(
    r",\s*((?:" + _INTERJECTIONS + r")|(?:including|incl\.|even|especially)" + _SHORT
    + r"|" + _SHORT + r"\s+(?:included|among them|too|as well))\s*,\s*"
    # an appositive after a one-letter name: "E, the top block, tips off D"
    + r"|(?<=\b(?-i:[A-Z])),\s*((?:the|a|an)" + _SHORT + r")\s*,\s*",
    re.IGNORECASE,
)
#: A sentence and its end: ".;!?" followed by a space or the end ("3.5" does not end one).
_SENTENCE = re.compile(r"(?:[^.;!?]|[.;!?](?=[^\s.;!?]))+[.;!?]*\s*|[.;!?]+\s*")


#: Words that open a contrast (the claim layer's own list), with nothing that ends a clause
#: between them and the aside.
_CONTRAST_BEFORE = re.compile(
    r"\b(?:"
    + "|".join(re.escape(o).replace(r"\ ", r"\s+") for o in sorted(CONTRAST_OPENERS, key=len, reverse=True))
    + r")\b[^,;.:!?]*$",
    re.IGNORECASE,
)


def move_asides(text: str) -> str:
    """``text`` with each comma-enclosed relative clause moved to the end of its sentence."""
    if text.count(",") < 2:
        return text
    return "".join(_move_in_sentence(m.group(0)) for m in _SENTENCE.finditer(text))


def _move_in_sentence(sentence: str) -> str:
    body = sentence.rstrip(".;!? \t")
    end = sentence[len(body) :]
    asides: list[str] = []
    kept: list[str] = []
    start = 0
    for aside in sorted([*_ASIDE.finditer(body), *_COMMENT.finditer(body)], key=lambda m: m.start()):
        if aside.start() < start:  # overlaps the aside before it
            continue
        if not body[aside.end() :].strip(" ,"):  # nothing after it: it is already at the end
            break
        before = body[start : aside.start()]
        text = (aside.group(1) or aside.group(2)).strip()
        if aside.re is _ASIDE and _CONTRAST_BEFORE.search(before):
            kept.append(f"{before} ({text}), ")  # the contrast's own aside: stays, in brackets
            start = aside.end()
            continue
        kept.append(before + " ")
        asides.append(_resolved(text, before) if aside.re is _ASIDE else text)
        start = aside.end()
    if start == 0:
        return sentence
    kept.append(body[start:])
    return "".join(kept).rstrip() + "".join("; " + a for a in asides) + end


def _resolved(aside: str, before: str) -> str:
    """The aside with its pronoun replaced by the word it refers to ("which is" → "D is")."""
    pronoun, _, rest = aside.partition(" ")
    words = before.split()
    antecedent = words[-1].strip("\"'()[]*:") if words else ""
    if not antecedent:
        return aside
    return RELATIVE_PRONOUNS[pronoun.lower()].format(antecedent) + " " + rest
