"""Forest plot of each model's L(hi)−L(lo) difference with its bootstrap CI, before and after —
or, where no domain has both compared levels (a one-level benchmark), each model's overall score
before and after with the interval of its change.

matplotlib is an optional extra (``pip install 'keyaudit[plot]'``); it is imported only here and
only when a plot is asked for, with the non-interactive Agg backend. SVG output carries no date and
a fixed hash salt, so the same audit gives the same file.

The plot uses matplotlib's own defaults only. matplotlib reads a ``matplotlibrc`` from the current
folder first, and the current folder may be a downloaded benchmark: ``savefig.dpi 20000`` ran
out of memory, ``text.usetex`` failed without LaTeX, a bad line printed warnings. So matplotlib is
imported from an empty private folder (it never sees the current folder's file), and the figure is
drawn inside ``rc_context`` after ``rcdefaults()`` (no user, environment or earlier setting counts).

matplotlib's own log is kept below errors: on a new machine it builds a font cache and said so on
stderr, and where the cache cannot be saved (a full disk, a file-size limit) it printed a warning
before keyaudit's one-line error. The cache is matplotlib's business; the plot is drawn without it.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import UsageError
from ..load.output_file import write_output
from .findings import Audit

FORMATS = (".png", ".svg")
INSTALL_HINT = "pip install 'keyaudit[plot]'"


def check_plot_target(path: str | Path) -> Path:
    """Validate the output format and that matplotlib is importable, before any work is done."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise UsageError(f"--plot {path}: the file must end in .png or .svg")
    if not _installed("matplotlib"):
        raise UsageError(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}")
    return path


def _installed(name: str) -> bool:
    """Whether ``name`` can be imported, found without importing it (see :func:`_matplotlib`)."""
    import importlib.util
    import sys

    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def forest_plot(audit: Audit, path: str | Path) -> Path:
    """Write the forest plot to ``path`` (.png or .svg) and return the path."""
    path = check_plot_target(path)
    matplotlib = _matplotlib()
    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # matplotlib's own settings: no matplotlibrc of anyone's
        return _plot(audit, path, matplotlib)


def _matplotlib():
    """matplotlib, imported where no ``matplotlibrc`` of the current folder can be read."""
    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    with _in_empty_folder():
        import matplotlib
    matplotlib.use("Agg", force=True)
    return matplotlib


@contextlib.contextmanager
def _in_empty_folder() -> Iterator[None]:
    """The block runs with a fresh empty folder as the current one; the current folder is back
    afterwards, through its descriptor (a renamed path cannot change where it comes back)."""
    here = os.open(".", os.O_RDONLY)
    try:
        with tempfile.TemporaryDirectory(prefix="keyaudit-plot-") as empty:
            os.chdir(empty)
            try:
                yield
            finally:
                os.fchdir(here)
    finally:
        os.close(here)


def _plot(audit: Audit, path: Path, matplotlib) -> Path:
    import matplotlib.pyplot as plt

    lo, hi = audit.settings.levels
    if (lo < 0 or not any(a.n_paired for a in audit.aggregates)) and audit.design is not None:
        return _before_after_plot(audit, path, matplotlib, plt)
    lo, hi = audit.settings.levels
    conf = f"{100 * audit.settings.confidence:g}%"
    aggs = list(audit.aggregates)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(aggs) + 1.6))
    try:
        for row, a in enumerate(reversed(aggs)):
            for offset, diff, colour, label in (
                (0.15, a.diff_before, "#888888", "before (strict)"),
                (-0.15, a.diff_after, "#1f77b4", "after (rule)"),
            ):
                if math.isnan(diff.estimate):
                    continue
                y = row + offset
                if not math.isnan(diff.ci_low):
                    ax.plot(
                        [100 * diff.ci_low, 100 * diff.ci_high], [y, y], color=colour, linewidth=2
                    )
                ax.plot(
                    [100 * diff.estimate],
                    [y],
                    "o",
                    color=colour,
                    label=label if row == 0 else None,
                )
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(aggs)))
        ax.set_yticklabels([a.model for a in reversed(aggs)])
        ax.set_xlabel(f"Adjusted L{hi}−L{lo} (percentage points), {conf} bootstrap CI")
        ax.set_title(f"{audit.scope.benchmark}: L{hi}−L{lo} before and after")
        _save(fig, ax, path, matplotlib)
    finally:
        plt.close(fig)
    return path


def _before_after_plot(audit: Audit, path: Path, matplotlib, plt) -> Path:
    """What exists where no domain has both compared levels (a one-level benchmark): each model's
    overall score before (strict) and after (the rules), with the interval of its change."""
    design = audit.design
    conf = f"{100 * design.confidence:g}%"
    order = sorted(range(len(design.models)), key=lambda j: (design.rank_after[j], design.models[j]))
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(order) + 1.6))
    try:
        for row, j in enumerate(reversed(order)):
            before, after = design.overall_before[j], design.overall_after[j]
            change = design.overall_change[j]
            ax.plot([100 * before], [row + 0.15], "o", color="#888888", label="before (strict)" if row == 0 else None)
            ax.plot([100 * after], [row - 0.15], "o", color="#1f77b4", label="after (rule)" if row == 0 else None)
            if not math.isnan(change.low):  # the change's interval, drawn from the before score
                ax.plot([100 * (before + change.low), 100 * (before + change.high)], [row - 0.15] * 2,
                        color="#1f77b4", linewidth=2)
        ax.set_yticks(range(len(order)))
        ax.set_yticklabels([design.models[j] for j in reversed(order)])
        ax.set_xlabel(f"Overall adjusted score (percent); the line: before + the change's {conf} interval")
        ax.set_title(f"{audit.scope.benchmark}: before and after")
        _save(fig, ax, path, matplotlib)
    finally:
        plt.close(fig)
    return path


def _save(fig, ax, path: Path, matplotlib) -> None:
    """Legend, layout and a reproducible file: SVG without a date and with a fixed hash salt."""
    ax.legend(loc="best", frameon=False)
    fig.tight_layout()
    kind = path.suffix.lower().lstrip(".")
    metadata = {"Date": None} if kind == "svg" else {}
    image = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "keyaudit"}):
        fig.savefig(image, format=kind, metadata=metadata)
    write_output(path, image.getvalue())
