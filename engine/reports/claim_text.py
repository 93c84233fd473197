"""A claim of the claim layer in one line: what ``test-rule --explain`` prints for each claim it
read, and what the HTML page shows when a verdict is opened (the same words in both
places, so an author reads one form)."""

from __future__ import annotations


def claim_line(claim: dict) -> str:
    """``kind  'words'  polarity [hedged] [retracted]  value=...  subject=... (target|context)
    role: ...``, from a claim's ``describe()``; the role says why a claim counts or not."""
    subject = claim["subject"] or "-"
    about = "target" if claim["about_target"] else "context"
    flags = [claim["polarity"]]
    if claim["hedged"]:
        flags.append("hedged")
    if claim["retracted"]:
        flags.append("retracted")
    role = claim.get("role")  # the discourse role (issue 33); older records have none
    return (
        f"{claim['kind']:<10} {claim['words']!r}  {' '.join(flags)}  "
        f"value={claim['value']!r}  subject={subject} ({about})"
        + (f"  role: {role}" if role else "")
    )


