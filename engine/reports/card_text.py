"""A rule's validation card in words: the line or two ``check`` prints for each rule (terminal and
Markdown alike), and the card's figure quoted where a report's extraction error is unmeasured.

A card is a file that comes with the rule: its figures are what the rule's author recorded, and
keyaudit measures none of them in the run that prints them. Anyone can write "1,000,000 of
1,000,000 agreed" and the right version hash into one. So every sentence here gives a card's
figure as the card's claim, never as keyaudit's measurement; the version hash says only which
files the record is about.
"""

from __future__ import annotations

from ..stats.validation_card import CardEntry, CardStatus
from .formatting import Show, as_is, pct


def _sets(n: int) -> str:
    return f"{n} labelled set{'s' if n != 1 else ''}"


def pooled_text(status: CardStatus) -> str:
    """``98.46% agreement on 773 cases of 4 labelled sets (Wilson 95% 97.3%–99.1%)``."""
    low, high = status.interval
    return (
        f"{pct(status.agreement)} accept agreement on {status.cases:,} cases of"
        f" {_sets(len(status.entries))} (Wilson 95% {pct(low)}–{pct(high)})"
    )


def entry_text(entry: CardEntry, show: Show = as_is) -> str:
    low, high = entry.interval
    return (
        f"{show(entry.set)}: {entry.agree}/{entry.cases} = {pct(entry.agreement)}"
        f" ({pct(low)}–{pct(high)}), {show(str(entry.date))}, version {show(entry.version)}"
    )


def card_lines(status: CardStatus, show: Show = as_is) -> list[str]:
    """What a report says of a rule's card: its pooled figure before tuning, and plainly whether
    the figure is on the rule's files as they are now."""
    if not status.entries:
        where = "" if status.exists else f" ({show(str(status.path))} does not exist)"
        return [
            f"Validation card of {show(status.rule)}: none{where}. The rule's agreement on labelled sets"
            " it was not tuned on is not recorded; `keyaudit test-rule RULE --cases FILE --card`"
            " records it."
        ]
    head = (
        f"Validation card of {show(status.rule)} ({show(str(status.path))}), as its author"
        f" recorded it (a claim that comes with the rule, not measured by keyaudit here):"
        f" {pooled_text(status)}, each said to be measured before tuning on it."
    )
    n_now, n_old, n_history = len(status.current), len(status.outdated), len(status.from_history)
    parts = []
    if n_now:
        parts.append(f"{n_now} recorded for the rule's files as they are now ({status.version_now})")
    if n_history:
        parts.append(
            f"{n_history} recorded from the project's history on an unknown version of the rule"
            " (before this card existed)"
        )
    if n_old:
        parts.append(
            f"{n_old} recorded for another version: the rule's files changed since"
            f" (now {status.version_now})"
        )
    tail = "Sets: " + "; ".join(parts) + "."
    if status.state != "current":
        tail += (
            " `keyaudit test-rule RULE --cases FILE --card` records a set measured on this version"
            " (a set not tuned on)."
        )
    return [head, tail]


def card_quote(status: CardStatus | None, show: Show = as_is) -> str:
    """The card's figure as a quote, for a sentence saying the error here is unmeasured."""
    if status is None or not status.entries:
        return f"{show(status.rule) if status else 'the rule'} has no validation card"
    error_low, error_high = 1 - status.interval[1], 1 - status.interval[0]
    n = len(status.entries)
    if status.state == "current":
        state = ""
    elif status.state == "history":
        everyone = len(status.from_history) == n
        state = (
            f", {'all' if everyone else 'partly'} recorded before the card existed (on an unknown"
            " version of the rule)"
        )
    else:
        state = ", partly measured on earlier versions of its files"
    return (
        f"its validation card claims (its author's record, not measured here)"
        f" {pct(status.agreement)} agreement on {status.cases:,} labelled cases it was not tuned"
        f" on{state}, an error of {pct(1 - status.agreement)} ({pct(error_low)}–{pct(error_high)})"
        " on phrasings it had not seen"
    )
