"""What every response reader returns, and what a response source is configured with."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..links import LinkPolicy

#: Response formats a source may name (``auto``: detected from each file's content).
FORMATS = ("auto", "jsonl", "csv", "inspect", "lm-eval")


@dataclass(frozen=True)
class FieldNames:
    """JSON field (or CSV column) names used by the benchmark's own files, if not the defaults."""

    id: str = "id"
    answer: str = "answer"
    model: str = "model"
    response: str = "response"
    correct: str = "correct"


@dataclass(frozen=True)
class ResponseSource:
    """A place holding stored responses, and how to read them.

    ``path`` is a file or a folder of files. The other fields are optional; ``None`` means the
    format's default (see README, "Response sources"):

    * ``scorer`` — inspect: the scorer whose value is the current verdict (default: the first the
      log lists);
    * ``filter`` / ``metric`` — lm-eval: the filter whose metric is the current verdict (default:
      the first filter of the task's config, and its only or first metric);
    * ``id_field`` — where the benchmark id is: lm-eval, a field of ``doc`` (default ``id``, else
      ``question_id``); inspect, a field of the sample's ``metadata`` (default: the sample id);
    * ``model`` — the model's display name (default: what the log says: inspect ``eval.model``,
      lm-eval ``model_name``; keyaudit's own files carry it on every line);
    * ``confined`` — where links in the source may lead (:class:`~..links.LinkPolicy`: inside the
      benchmark, its repository's git-annex or DVC store, or anywhere with ``--follow-links``)
      when the benchmark names the source (``[[responses]]`` or its ``responses/`` folder);
      ``None`` for a source given on the command line (the user's choice).
    * ``task`` — lm-eval: read only the samples files of this task (``samples_<task>_<ts>``);
    * ``glob`` — ``path`` is a glob pattern (``logs/*.eval``, ``**`` for any depth): each file or
      folder it matches is read; matching nothing is an error.

    ``format`` other than ``auto`` names the format of a file named alone; in a folder (or among
    a glob's matches) it selects: only the files detected as that format are read.
    """

    path: Path
    format: str = "auto"
    scorer: str | None = None
    filter: str | None = None
    metric: str | None = None
    id_field: str | None = None
    model: str | None = None
    confined: LinkPolicy | None = None
    task: str | None = None
    glob: bool = False


@dataclass(frozen=True, slots=True)
class LoggedSample:
    """One stored response as a log holds it.

    ``correct`` is the stored verdict (``None``: the source has none and keyaudit's strict scorer
    computes it); ``target`` is the key the log itself was scored against (``None`` when it does
    not say), as one string or the tuple of accepted strings; ``where`` names the file and member
    or line, for messages.
    """

    id: str
    text: str
    correct: bool | None
    epoch: int
    target: str | tuple[str, ...] | None
    where: str


@dataclass(frozen=True)
class LoggedRun:
    """One model's samples from one file, and how they were read (reported with the results).

    ``details`` are ``(name, value)`` pairs such as ``("scorer", "answer_line")``.
    """

    path: Path
    format: str
    model: str
    samples: list[LoggedSample]
    details: tuple[tuple[str, str], ...] = field(default=())
    #: The run the file was written by (inspect: ``eval.eval_id``), and a digest of every
    #: sample as read (ids, epochs, verdicts, targets, whole texts): one run written twice
    #: (``.eval`` and ``.json``) is read once. ``None``: not known.
    identity: str | None = None
    fingerprint: str | None = None


@dataclass(frozen=True)
class RunInfo:
    """How one file of responses was read: reported with the results (``details`` as in
    :class:`LoggedRun`)."""

    path: str
    format: str
    model: str
    samples: int
    details: tuple[tuple[str, str], ...] = ()

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "format": self.format,
            "model": self.model,
            "samples": self.samples,
            **dict(self.details),
        }

    def describe(self) -> str:
        """One line: ``path (format; scorer answer_line, ...): model, N samples``."""
        extra = "".join(f"; {name} {value}" for name, value in self.details if value)
        return f"{self.path} ({self.format}{extra}): {self.model}, {self.samples:,} samples"


def renamed(source: ResponseSource, logged: str) -> tuple[tuple[str, str], ...]:
    """``(("log model", name),)`` when the source gives the model another display name."""
    return (("log model", logged),) if source.model and source.model != logged else ()
