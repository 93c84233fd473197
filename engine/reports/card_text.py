"""A rule's validation card in words: the lines ``check`` prints for each rule (terminal and
Markdown alike), the card's figure quoted where a report's extraction error is unmeasured, and
the one-line figure of the Python API.

A card is a file that comes with the rule: its figures are what the rule's author recorded, and
keyaudit measures none of them in the run that prints them. Anyone can write "1,000,000 of
1,000,000 agreed" and the right version hash into one. So every sentence here gives a card's
figure as the card's claim, never as keyaudit's measurement; the version hash says only which
files the record is about.

The figure quoted is always the card's **headline**: the lowest per-set figure among the sets
declared written independently of the rule, naming the set (never a pooled figure, which the
largest sets' style dominates). A card with no independent set says so wherever it is quoted.
"""

from __future__ import annotations

from ..stats.validation_card import ALL_ROWS, UNKNOWN, CardEntry, CardStatus
from .formatting import Show, as_is, pct

#: How each declaration reads in a sentence.
WRITTEN_BY = {
    "independent": "written independently of the rule",
    "rule-author": "written by the rule's author",
    UNKNOWN: "of unknown authorship",
}
TUNING = {
    "before": "measured before tuning on it",
    "after": "measured after tuning on it, so optimistic",
    UNKNOWN: "whether before tuning on it not declared",
}
RECORD = (
    "`keyaudit test-rule RULE --cases FILE --card --written-by independent|rule-author|unknown"
    " --before-tuning|--after-tuning`"
)


def set_label(entry: CardEntry, show: Show = as_is) -> str:
    """``physical_stability_r4a.jsonl``, or ``the holdout rows of physical_stability_r4a.jsonl``."""
    if entry.rows == ALL_ROWS:
        return show(entry.set)
    return f"the {show(entry.rows)} rows of {show(entry.set)}"


def _version_state(entry: CardEntry, status: CardStatus) -> str:
    if entry.version == status.version_now:
        return ""
    if entry.version == UNKNOWN:
        return ", on an unknown version of the rule (before cards existed)"
    return ", on an earlier version of its files"


def _figure(entry: CardEntry, show: Show) -> str:
    """``87.50% accept agreement on the holdout rows of S (28/32, Wilson 95% 71.93%–95.03%)``."""
    low, high = entry.interval
    return (
        f"{pct(entry.agreement)} accept agreement on {set_label(entry, show)} ({entry.agree:,}/"
        f"{entry.cases:,}, Wilson 95% {pct(low)}–{pct(high)})"
    )


def _authors(status: CardStatus) -> str:
    """``2 on sets written by the rule's author and 1 on a set of unknown authorship``."""
    counts = {w: sum(e.written_by == w for e in status.entries) for w in WRITTEN_BY}
    parts = [
        f"{n} on {'a set' if n == 1 else 'sets'} {WRITTEN_BY[w]}" for w, n in counts.items() if n
    ]
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def _figures(n: int) -> str:
    return "its one figure" if n == 1 else f"its {n} figures"


def _which(status: CardStatus) -> str:
    """``the lowest of its 15 figures on sets written independently of the rule``."""
    n = len(status.independent)
    if n == 1:
        return "its one figure on a set written independently of the rule"
    return f"the lowest of its {n} figures on sets written independently of the rule"


def headline_text(status: CardStatus, show: Show = as_is) -> str:
    """The card's figure in one clause: the lowest independent set's, named, or that there is
    none (then its lowest set's figure, as its author's own)."""
    head = status.headline
    if head is not None:
        return f"{_figure(head, show)}, {_which(status)}, {TUNING[head.tuning]}{_version_state(head, status)}"
    low = status.lowest
    assert low is not None
    return (
        f"no set on it is declared written independently of the rule ({_figures(len(status.entries))}:"
        f" {_authors(status)}), so it does not measure the rule on wording its author did not"
        f" write; its lowest figure is {_figure(low, show)}"
    )


def figure_text(status: CardStatus, show: Show = as_is) -> str:
    """The one-line figure of the Python API (``Card.figure``)."""
    if not status.entries:
        return "no validation card" if not status.exists else "no labelled set recorded"
    return headline_text(status, show)


def entry_text(entry: CardEntry, show: Show = as_is) -> str:
    low, high = entry.interval
    return (
        f"{set_label(entry, show)}: {entry.agree}/{entry.cases} = {pct(entry.agreement)}"
        f" ({pct(low)}–{pct(high)}), {WRITTEN_BY[entry.written_by]}, {TUNING[entry.tuning]},"
        f" {show(str(entry.date))}, version {show(entry.version)}"
    )


def _format_note(status: CardStatus) -> str:
    if status.format != 1:
        return ""
    return (
        " It is a card of format 1, which does not say who wrote its sets or whether the rule was"
        f" tuned on them: re-record each set with {RECORD}."
    )


def card_lines(status: CardStatus, show: Show = as_is) -> list[str]:
    """What a report says of a rule's card: its headline figure, how its sets were written and
    tuned on, and plainly whether the figures are on the rule's files as they are now."""
    if not status.entries:
        where = "" if status.exists else f" ({show(str(status.path))} does not exist)"
        return [
            f"Validation card of {show(status.rule)}: none{where}. The rule's agreement on labelled sets"
            f" it was not tuned on is not recorded; {RECORD} records it."
        ]
    head = (
        f"Validation card of {show(status.rule)} ({show(str(status.path))}), as its author"
        f" recorded it (a claim that comes with the rule, not measured by keyaudit here):"
        f" {headline_text(status, show)}.{_format_note(status)}"
    )
    independent = status.independent
    before = sum(e.tuning == "before" for e in independent)
    sets = (
        f"{_figures(len(status.entries)).capitalize()}, one per set or split of a set:"
        f" {_authors(status)}"
        + (f"; {before} of those {len(independent)} measured before tuning on them" if independent else "")
        + ". Each is in the card with its own interval; no pooled figure is quoted, as the"
        " largest sets' style would dominate it."
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
    tail = "Versions: " + "; ".join(parts) + "."
    if status.state != "current":
        tail += f" {RECORD} records a set measured on this version."
    return [head, sets + " " + tail]


def card_quote(status: CardStatus | None, show: Show = as_is) -> str:
    """The card's headline as a quote, for the sentence saying the error on these responses is
    unmeasured: the lowest independent figure, named, or that the card has none."""
    if status is None or not status.entries:
        return f"{show(status.rule) if status else 'the rule'} has no validation card"
    head = status.headline
    if head is None:
        low = status.lowest
        assert low is not None
        return (
            "its validation card holds no set declared written independently of the rule"
            f" ({_figures(len(status.entries))}: {_authors(status)}), so nothing on it"
            " measures the rule's error on wording its author did not write (its lowest figure,"
            f" its author's record: {_figure(low, show)})"
        )
    error_low, error_high = 1 - head.interval[1], 1 - head.interval[0]
    return (
        f"its validation card claims (its author's record, not measured here) {_figure(head, show)},"
        f" {_which(status)}, {TUNING[head.tuning]}"
        f"{_version_state(head, status)}: an error of {pct(1 - head.agreement)}"
        f" ({pct(error_low)}–{pct(error_high)}) on that set's wording"
    )
