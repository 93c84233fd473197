"""Shared CLI plumbing: option types, the console, JSON output targets, error handling."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from keyaudit.engine.errors import KeyauditError, UsageError, one_line, printable
from keyaudit.engine.load.benchmark import input_files, load_benchmark
from keyaudit.engine.load.filekind import exists_at_all, folder_problem
from keyaudit.engine.load.locate import (
    bundled_grammars_dir,
    bundled_rules_dir,
    example_benchmark_dir,
)
from keyaudit.engine.load.output_file import write_output
from keyaudit.engine.load.responses.records import FORMATS, ResponseSource
from keyaudit.engine.load.responses.sources import glob_matches

#: Width when output is not a terminal (a pipe, a file) and ``COLUMNS`` does not say: tables fold
#: their values to it, whole (never cut with "…"), and a file of the output reads in an editor.
PIPE_WIDTH = 100
#: The widest ``COLUMNS`` taken (a larger or malformed value is ignored).
MAX_WIDTH = 10_000

class LiteralConsole(Console):
    """A console that prints text as written: no markup, no emoji codes, no control characters.

    Benchmark data, model names, rule text and paths reach the terminal; none of it may be read
    as rich markup (a model named ``[/]`` crashed rich after partial output), as an emoji code (a
    path with ``:x:`` in it became ❌) or as a terminal escape sequence. keyaudit's own styling
    goes through :func:`styled`.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(highlight=False, markup=False, emoji=False, **kwargs)
        if "width" not in kwargs:
            # rich fixes the width from COLUMNS as it was when the console was made (an import);
            # :attr:`size` reads it at every call instead
            self._width = None

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size; when the output is not a terminal (a pipe, a file, a test), the
        width ``COLUMNS`` names, else :data:`PIPE_WIDTH` (rich would take the width of whatever
        terminal stdin or stderr is, or 80). Read on every call, so the environment of the run
        decides. Tables fold to it (:class:`FoldingTable`); ``soft_wrap`` lines stay whole."""
        size = super().size
        if self._width is not None or self.is_terminal:
            return size
        columns = self._environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() and 0 < int(columns) <= MAX_WIDTH else PIPE_WIDTH
        return ConsoleDimensions(width, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    def render_str(self, text: str, **kwargs: Any) -> Text:  # type: ignore[override]
        kwargs["markup"] = False
        kwargs["emoji"] = False
        return super().render_str(visible(text), **kwargs)


def visible(text: str) -> str:
    """``text`` with control characters other than newline and tab escaped (``\\x1b``...)."""
    if text.isprintable() or all(c.isprintable() or c in "\n\t" for c in text):
        return text
    return "\n".join(printable(part) for part in text.split("\n"))


def styled(template: str, *values: object) -> Text:
    """keyaudit's own styled text: ``template`` is rich markup written here, and each ``{}`` is
    filled with a value that is printed literally (its markup escaped, its control characters
    too)."""
    return Text.from_markup(template.format(*(escape(printable(str(v))) for v in values)))


console = LiteralConsole()
err_console = LiteralConsole(stderr=True)


def report_error(error: object, *, internal: bool = False) -> None:
    """Print ``keyaudit: error: <one line>`` on stderr: whitespace collapsed, every unprintable
    character escaped (a newline in a file name cannot split the line). Here, not in ``app``:
    the commands that catch their own errors (``check``, ``review``) report them the same way,
    and ``app`` imports the commands."""
    kind = "internal error" if internal else "error"
    with contextlib.suppress(OSError, ValueError):  # stderr closed: nothing more can be said
        err_console.print(f"keyaudit: {kind}: {one_line(str(error))}", soft_wrap=True)


def section(out: Console, title: str | Text) -> None:
    """A section rule (a bold title, printed literally), as wide as the output."""
    heading = title if isinstance(title, Text) else Text(printable(title), style="bold")
    out.print(Rule(heading))


class FoldingTable(Table):
    """A rich table whose columns fold a value too long for them onto further lines instead of
    cutting it with "…" (rich's default): every key, id and answer stays whole at any width, the
    terminal's or :data:`PIPE_WIDTH`. A column may still ask for another overflow."""

    def add_column(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        kwargs.setdefault("overflow", "fold")
        super().add_column(*args, **kwargs)


BenchOption = Annotated[
    Path | None,
    typer.Option(
        "--bench", help="Benchmark directory (default: the embedded GRIP-Benchmark-34 example)."
    ),
]
JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        help="Processes that score the responses (default: the cores this process may use; 1: "
        "score in this process). The output is the same for any number.",
        min=1,
        max=1024,
    ),
]


def jobs_or_default(jobs: int | None) -> int:
    """``--jobs`` as given, else the cores this process may run on."""
    from keyaudit.engine.rule_language.scoring.batch import default_jobs

    return default_jobs() if jobs is None else jobs


JsonOption = Annotated[
    str | None,
    typer.Option("--json", help="Write every figure as JSON to this file, or '-' for stdout."),
]


def check_output(
    option: str, target: str | Path | None, protected: list[Path], *, folder: bool = False
) -> None:
    """Refuse, before any work, an output that could not be written or would land in the data.

    ``target`` (a file, or with ``folder`` a folder, as ``new-rule --out``) must be in an existing
    folder that can be written, must not be a directory (unless ``folder``), and, links
    followed, must lie outside every ``protected`` path (the benchmark directory, the response
    sources, the rule files): keyaudit never overwrites the data it audits. ``-`` is stdout.
    """
    if target is None or str(target) == "-":
        return
    text = str(target)
    shown = printable(text)
    if "\0" in text:
        raise UsageError(f"{option} {shown}: the path contains a NUL character")
    path = Path(text)
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError) as error:
        raise UsageError(f"{option} {shown}: cannot be resolved: {error}") from None
    try:
        existing = os.stat(resolved)
    except (OSError, ValueError):
        existing = None
    for root in protected:
        try:
            inner = root.resolve()
        except (OSError, RuntimeError):
            continue
        same = existing is not None and _same_file(existing, inner)  # a hard link too
        if same or resolved == inner:
            raise UsageError(
                f"{option} {shown}: is {printable(str(root))}, an input of this run, which "
                "keyaudit only reads; write the output somewhere else"
            )
        if inner in resolved.parents:
            raise UsageError(
                f"{option} {shown}: inside {printable(str(root))}, which keyaudit only reads; "
                "write the output somewhere else"
            )
    if folder:
        existing = path
        while not exists_at_all(existing) and existing.parent != existing:
            existing = existing.parent
        problem = folder_problem(existing)
        if problem is not None:
            raise UsageError(f"{option} {shown}: {printable(str(existing))} {problem}")
        if not os.access(existing, os.W_OK):
            raise UsageError(f"{option} {shown}: {printable(str(existing))} is not writable")
        return
    parent = path.parent
    problem = folder_problem(parent)
    if problem is not None:
        what = "does not exist" if problem == "does not exist" else problem
        raise UsageError(f"{option} {shown}: its folder {printable(str(parent))} {what}")
    if exists_at_all(path):
        if path.is_dir():
            raise UsageError(f"{option} {shown}: is a directory, expected a file")
        if not os.access(path, os.W_OK) and path.exists():
            raise UsageError(f"{option} {shown}: the file is not writable")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{option} {shown}: its folder is not writable")


def _same_file(existing: os.stat_result, path: Path) -> bool:
    try:
        other = os.stat(path)
    except (OSError, ValueError):
        return False
    return (existing.st_dev, existing.st_ino) == (other.st_dev, other.st_ino)


def protected_paths(
    bench: Path | None, options: ResponseOptions | None = None, inputs: tuple[Path, ...] = ()
) -> list[Path]:
    """What outputs must never land in or overwrite: every file the run reads — the benchmark
    directory and each key and response file it names (a link out of it, a hard link), the
    ``--responses`` sources (a folder, or a file), the command's other inputs (rule files, their
    grammars and validation cards, adjudications) and the bundled rules and grammars."""
    root = bench_dir(bench)
    paths = [root, *inputs, bundled_rules_dir(), bundled_grammars_dir()]
    for rule in inputs:  # a rule's grammars and their imports lie in its folder, its card below
        if rule.suffix == ".toml":
            from keyaudit.engine.stats.validation_card import card_path

            paths.append(card_path(rule))
            with contextlib.suppress(OSError):
                paths += sorted(rule.parent.glob("*.lark"))
    sources = None
    if options is not None and options.responses:
        with contextlib.suppress(KeyauditError):
            sources = options.sources()
        for source in sources or ():
            if not source.glob:
                paths.append(source.path)
            else:  # what the glob matches, folders too (an output must not land in one)
                with contextlib.suppress(KeyauditError, OSError):
                    paths += glob_matches(source)
    return paths + input_files(root, sources)


def bench_dir(bench: Path | None) -> Path:
    """The benchmark to use: ``--bench`` or the embedded example."""
    return bench if bench is not None else example_benchmark_dir()


def write_json(target: str, payload: Any) -> None:
    """Write ``payload`` as stable, sorted-key JSON to ``target`` (``-`` = stdout)."""
    write_json_text(target, json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def write_json_text(target: str, text: str) -> None:
    """JSON text to the file ``target``, or to stdout (``-``) in a form its encoding can hold:
    a character it cannot encode (``→`` with ``PYTHONIOENCODING=ascii``) is written as its JSON
    escape (``\\u2192``), which every reader decodes to the same string."""
    if target != "-":
        write_output(target, text)
        return
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        text = "".join(_json_char(c, encoding) for c in text)
    except LookupError:
        pass
    sys.stdout.write(text)


def _json_char(char: str, encoding: str) -> str:
    try:
        char.encode(encoding)
        return char
    except UnicodeEncodeError:  # only inside JSON strings: every non-ASCII character is
        return json.dumps(char)[1:-1]


def tolerant_streams() -> None:
    """Let stdout and stderr print any character: one their encoding cannot hold (a pipe with
    ``PYTHONIOENCODING=ascii`` and a ``→`` in a table) is written as an escape (``\\u2192``)
    instead of ending the run with ``UnicodeEncodeError``."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError, LookupError):
            stream.reconfigure(errors="backslashreplace")


# ---- response sources (check, keys, flag) -------------------------------------------------------

ResponsesOption = Annotated[
    list[str] | None,  # text, not Path: Path("") would be ".", and '' must be refused
    typer.Option(
        "--responses",
        help="Responses to audit, as a file or folder: keyaudit .jsonl/.csv files, inspect .eval/.json "
        "logs, lm-eval samples files (with their results file); the format is detected from the "
        "content. Repeatable; replaces the benchmark's own responses. Selections: "
        "[format=FORMAT:][task=TASK:]PATH. PATH may be a quoted glob ('logs/*.eval', "
        "'runs/**/*.json'); format= reads only the files of that format (inspect, lm-eval, "
        "jsonl, csv); task= only the lm-eval samples files of that task. A selection that "
        "matches nothing is an error.",
    ),
]
EpochsOption = Annotated[
    str,
    typer.Option(
        "--epochs",
        help="Several samples of one item for one model (inspect epochs, lm-eval repeats): 'first' "
        "scores the lowest epoch only, 'all' scores every one and averages per item.",
    ),
]
ScorerOption = Annotated[
    str | None,
    typer.Option(
        "--scorer",
        help="inspect logs: the scorer whose value is the current verdict (default: the first the "
        "log lists).",
    ),
]
FilterOption = Annotated[
    str | None,
    typer.Option(
        "--filter",
        help="lm-eval samples: the filter whose metric is the current verdict (default: the "
        "task's first filter).",
    ),
]
IdFieldOption = Annotated[
    str | None,
    typer.Option(
        "--id-field",
        help="Where the benchmark id is: lm-eval, a field of doc (default id, else question_id); "
        "inspect, a field of the sample's metadata (default: the sample id).",
    ),
]
FollowLinksOption = Annotated[
    bool,
    typer.Option(
        "--follow-links",
        help="Read the benchmark's files through symbolic links that lead anywhere (default: only "
        "inside the benchmark folder or its repository's git-annex or DVC store).",
    ),
]
ModelNameOption = Annotated[
    str | None,
    typer.Option(
        "--model-name",
        help="Display name of the model read from --responses (default: the name its log gives).",
    ),
]


@dataclass(frozen=True)
class ResponseOptions:
    """The response options of a command, as given."""

    responses: list[str] | None = None
    epochs: str = "first"
    scorer: str | None = None
    filter: str | None = None
    id_field: str | None = None
    model_name: str | None = None
    follow_links: bool = False

    def sources(self) -> tuple[ResponseSource, ...] | None:
        """``--responses`` as sources (``None``: the benchmark's own), in the sorted order of
        their text: the order they are given in does not change a figure (it decided the order of
        models, models found and worked examples)."""
        tuned = any(v is not None for v in (self.scorer, self.filter, self.id_field, self.model_name))
        if not self.responses:
            if tuned:
                raise UsageError(
                    "--scorer, --filter, --id-field and --model-name apply to --responses"
                )
            return None
        return tuple(
            replace(
                parse_selection(str(path)),
                scorer=self.scorer,
                filter=self.filter,
                id_field=self.id_field,
                model=self.model_name,
            )
            for path in sorted(self.responses)
        )


#: ``--responses`` selection prefixes, in the order they may be written.
SELECTORS = ("format=", "task=")
GLOB_CHARACTERS = "*?["


def parse_selection(value: str) -> ResponseSource:
    """``[format=FORMAT:][task=TASK:]PATH`` (README, "Response sources"): a source, its format
    and lm-eval task selected, its path a glob when it holds ``*``, ``?`` or ``[`` (write such
    a character in a file's name as ``[*]``, ``[?]``, ``[[]``). A path that itself starts with
    ``format=`` or ``task=`` is written with a folder before it (``/abs/format=...``)."""
    fmt, task, rest = "auto", None, value
    for prefix in SELECTORS:
        if not rest.startswith(prefix):
            continue
        chosen, colon, rest = rest[len(prefix) :].partition(":")
        if not colon or not rest:
            raise UsageError(
                f"--responses {printable(value)}: expected {prefix}VALUE:PATH (the selection, "
                "a colon, then the file, folder or glob)"
            )
        if prefix == "format=":
            if chosen not in FORMATS or chosen == "auto":
                known = ", ".join(f for f in FORMATS if f != "auto")
                raise UsageError(
                    f"--responses {printable(value)}: unknown format {printable(chosen)!r} "
                    f"(one of {known})"
                )
            fmt = chosen
        else:
            if not chosen:
                raise UsageError(f"--responses {printable(value)}: task= names no task")
            task = chosen
    for prefix in SELECTORS:
        if rest.startswith(prefix):
            raise UsageError(
                f"--responses {printable(value)}: write format= before task=, each once"
            )
    if not rest.strip():  # Path("") is the current folder: the whole tree would be read
        raise UsageError(
            f"--responses {printable(value)!r}: names no file or folder (write . for the current "
            "folder)"
        )
    is_glob = any(c in rest for c in GLOB_CHARACTERS)
    return ResponseSource(Path(rest), format=fmt, task=task, glob=is_glob)


def load_for_cli(
    bench: Path | None,
    options: ResponseOptions,
    *,
    with_responses: bool = True,
    rules: Sequence[Any] | None = None,
):
    """The benchmark of ``--bench`` (or the example) with the command's response options.

    With ``rules`` (every rule the command may score with), a response in a cell of one of them
    keeps only what their answer formats and the certainty check read
    (:mod:`keyaudit.engine.load.excerpt`), and a response in another cell keeps no text; without,
    every text is kept whole."""
    sources = options.sources()
    formats = cells = None
    if rules is not None:
        formats = [(r.answer_format.label, r.answer_format.which) for r in rules]
        cells = {(c.domain, c.level) for r in rules for c in r.cells}
    return load_benchmark(
        bench_dir(bench),
        with_responses=with_responses or sources is not None,
        responses=sources,
        epochs=options.epochs,
        answer_formats=formats,
        text_cells=cells,
        follow_links=options.follow_links,
    )


def describe_sources(out: Console, benchmark) -> None:
    """One line for the epochs policy and one per log read (what was read, and how)."""
    if not benchmark.sources:
        return
    if benchmark.epochs == "all":
        out.print(
            f"Samples: every epoch, averaged per item (--epochs all; up to {benchmark.n_epochs} per "
            "model and item).",
            markup=False,
        )
    else:
        out.print("Samples: the first epoch of each model and item (--epochs first).", markup=False)
    for info in benchmark.sources:
        if info.format not in ("jsonl", "csv"):
            out.print(f"Read from {info.describe()}", markup=False, soft_wrap=True)
