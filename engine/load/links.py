"""Where a symbolic link in a benchmark folder may lead.

A downloaded benchmark is a folder of someone else's files. A link in ``responses/`` or
``keys/`` (or ``responses/`` itself a link) to ``~/.ssh/config`` made keyaudit read a file of the
user's without a word, and answer lines are printed verbatim in the report. So a link that a
benchmark holds, in whatever it reads on its own account (its keys, ``responses/``,
``[[responses]]`` and ``[keys]`` paths), must lead to one of:

* the benchmark folder itself (links followed: a folder reached through a link counts where it
  really is);
* the object store of the git repository the benchmark lies in, ``.git/annex/objects`` (git-annex
  keeps every large file there behind a link), for a worktree the main repository's;
* that repository's DVC cache, ``.dvc/cache`` (DVC's ``symlink`` cache type).

Anything else is refused with one line naming the link and where it leads, unless the user said
otherwise: ``--follow-links`` (:attr:`LinkPolicy.follow`) lets a link lead anywhere. A source named
on the command line (``--responses``) is the user's own choice and is not confined at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataError, located, printable

__all__ = ["LinkPolicy"]

ANNEX_OBJECTS = ("annex", "objects")
DVC_CACHE = (".dvc", "cache")


def _real(path: str | Path) -> str:
    return os.path.realpath(path)


def _under(real: str, base: str) -> bool:
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class LinkPolicy:
    """Where links inside the benchmark at :attr:`root` may lead (all paths resolved)."""

    #: The benchmark folder, resolved.
    root: str
    #: The enclosing repository's git-annex object store and DVC cache, resolved, where present.
    stores: tuple[str, ...] = ()
    #: ``--follow-links``: a link may lead anywhere.
    follow: bool = False

    @classmethod
    def for_benchmark(cls, root: Path, follow: bool = False) -> LinkPolicy:
        return cls(_real(root), _stores_above(Path(_real(root))), follow)

    def allows(self, path: str | Path) -> bool:
        """Whether ``path``, links followed, lies where a benchmark's link may lead."""
        if self.follow:
            return True
        real = _real(path)
        return _under(real, self.root) or any(_under(real, store) for store in self.stores)

    def check(self, path: Path, what: str = "") -> None:
        """Nothing if ``path`` (a file or folder the benchmark reads) may be read; else a
        :class:`DataError` naming the first link on the way that leads out, and where."""
        if self.allows(path):
            return
        link = self._outward_link(path)
        target = _real(link)
        raise DataError(
            located(
                link,
                None,
                None,
                f"{what + ' ' if what else ''}a symbolic link to {printable(target)}, outside the"
                " benchmark folder (and its repository's git-annex or DVC store): a link the"
                " benchmark holds must stay inside it; --follow-links reads it anyway",
            )
        )

    def _outward_link(self, path: Path) -> Path:
        """The first part of ``path`` that is a link leading out (``path`` itself if none is
        found, as for a path that does not lie under the benchmark's own name)."""
        parts = path.parts
        for end in range(1, len(parts) + 1):
            prefix = Path(*parts[:end])
            if prefix.is_symlink() and not self.allows(prefix):
                return prefix
        return path


def _stores_above(root: Path) -> tuple[str, ...]:
    """The git-annex object store and DVC cache of the repository that holds ``root``: the
    nearest folder at or above it with a ``.git``; a ``.dvc`` folder on the way counts too."""
    stores: list[str] = []
    for folder in (root, *root.parents):
        dvc = folder.joinpath(*DVC_CACHE)
        if dvc.parent.is_dir():
            stores.append(_real(dvc))
        git = folder / ".git"
        if git.is_dir():
            stores.append(_real(git.joinpath(*ANNEX_OBJECTS)))
            break
        if git.is_file():  # a worktree or submodule: "gitdir: PATH"; its common dir holds annex
            common = _git_common_dir(git)
            if common is not None:
                stores.append(_real(common.joinpath(*ANNEX_OBJECTS)))
            break
    return tuple(stores)


def _git_common_dir(pointer: Path) -> Path | None:
    try:
        with open(pointer, encoding="utf-8", errors="replace") as stream:
            text = stream.read(4096)
    except OSError:
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    gitdir = Path(first[len("gitdir:") :].strip())
    if not gitdir.is_absolute():
        gitdir = pointer.parent / gitdir
    try:
        with open(gitdir / "commondir", encoding="utf-8", errors="replace") as stream:
            common = stream.read(4096).strip()
    except OSError:
        return gitdir
    return (gitdir / common) if not os.path.isabs(common) else Path(common)
