"""Helpers for the hardening tests (issue 11): hostile inputs, and what a run may touch.

* :func:`run_keyaudit` runs the real console entry point (``keyaudit.cli.app:run``) in a child
  process and measures its wall time and peak memory (the child's own ``VmHWM``).
* :func:`opened_files` records every file the process opens (Python's ``open`` audit event), so a
  test can assert that nothing outside the allowed places was read or written.
* :func:`assert_one_line_error` checks the error contract: exit 2, one line on stderr,
  ``keyaudit: error: file:line[:col]: ...``, no traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ENTRY = "import sys; sys.argv[0] = 'keyaudit'; from keyaudit.cli.app import run; run()"
#: The entry point with the child's own peak memory (VmHWM) written to a file as it exits. Not
#: ``ru_maxrss`` from ``wait4``: Linux carries the parent's high-water mark through fork and
#: exec, so a child of a big pytest process would report pytest's size.
MEASURED_ENTRY = (
    "import os, sys\n"
    "real_exit = os._exit\n"
    "def _exit(code):\n"
    "    with open('/proc/self/status') as s, open(os.environ['KEYAUDIT_TEST_PEAK'], 'w') as o:\n"
    "        o.write(next(l for l in s if l.startswith('VmHWM')).split()[1])\n"
    "    real_exit(code)\n"
    "os._exit = _exit\n"
    "sys.argv[0] = 'keyaudit'\n"
    "from keyaudit.cli.app import run\n"
    "run()\n"
)


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float
    peak_mb: float


def run_keyaudit(
    *args: str, stdin: bytes | str | None = None, env: dict[str, str] | None = None, timeout=120
) -> Run:
    """``keyaudit ARGS`` through the console entry point in a child process, measured."""
    import tempfile

    environment = dict(os.environ)
    environment.update(env or {})
    handle, peak_file = tempfile.mkstemp(prefix="keyaudit-peak-")
    os.close(handle)
    environment["KEYAUDIT_TEST_PEAK"] = peak_file
    data = stdin.encode() if isinstance(stdin, str) else stdin
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-c", MEASURED_ENTRY, *args],
        stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    out, err = _communicate(child, data, timeout)
    code = child.wait(timeout)
    seconds = time.monotonic() - started
    try:
        peak_kb = int(Path(peak_file).read_text() or 0)
    finally:
        os.unlink(peak_file)
    return Run(
        code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), seconds, peak_kb / 1024
    )


def _communicate(child: subprocess.Popen, data: bytes | None, timeout: float):
    import threading

    chunks: dict[str, bytes] = {}

    def drain(name: str, stream) -> None:
        chunks[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=("out", child.stdout)),
        threading.Thread(target=drain, args=("err", child.stderr)),
    ]
    for reader in readers:
        reader.start()
    if data is not None:
        with contextlib.suppress(BrokenPipeError):
            child.stdin.write(data)
        child.stdin.close()
    for reader in readers:
        reader.join(timeout)
        if reader.is_alive():
            child.kill()
            raise AssertionError(f"keyaudit did not finish within {timeout} s")
    return chunks["out"], chunks["err"]


def assert_one_line_error(err: str, code: int, *fragments: str) -> str:
    """The error contract: exit 2 and exactly one line ``keyaudit: error: ...``; returns it."""
    lines = err.splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1, err
    assert lines[0].startswith("keyaudit: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


# ---- strings from data that try to be something else where they are printed

#: Model names (and other data strings) that forge a report where they are written as they are:
#: a row of figures no model earned, cells shifted by a pipe, a heading, a list item, a quote,
#: raw HTML, a code span left open, terminal escapes, and lookalikes (a right-to-left override,
#: a zero-width space) that print unmarked.
HOSTILE_TEXTS = [
    "Model B\n| Model C | 12 | 100.00% | **100.00%** | 0 | 0 | 0 | — |",
    "x | 50 | 100.00% | **100.00%** |",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "# Heading",
    "- item",
    "1. first",
    "> quote",
    "`tick``",
    "Ev\u202eli\u200bl",
    "esc \x1b]0;title\x07\x1b[31m red \x00",
    "[link](http://evil.example) www.evil.example",
    "  indented    code",
    "back\\|slash",
]


# ---- which files a block opens

_recording: list[list[str]] = []


def _hook(event: str, args: tuple) -> None:
    if _recording and event == "open":
        path, mode = args[0], args[1]
        if isinstance(path, (str, bytes, os.PathLike)):
            path = os.fsdecode(path)
            if not os.path.isabs(path):
                if mode is None:  # os.open relative to a folder descriptor (the caches)
                    return
                path = os.path.abspath(path)
            _recording[-1].append(path)


_installed = False


@contextlib.contextmanager
def opened_files() -> Iterator[list[str]]:
    """Record the absolute paths the block opens (Python's ``open`` audit event; relative ones
    are made absolute, except ``os.open`` relative to a folder descriptor, which the caches use
    and which the cache tests check on their own)."""
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
    found: list[str] = []
    _recording.append(found)
    try:
        yield found
    finally:
        _recording.pop()


def inside(path: str, *roots: Path) -> bool:
    """Whether ``path`` (resolved) lies in one of ``roots`` (resolved)."""
    resolved = Path(path).resolve()
    return any(resolved == r.resolve() or r.resolve() in resolved.parents for r in roots)


def status_rule(
    key_grammar: str = "k.lark", answer_grammar: str = "a.lark", name: str = "t", outputs: str = ""
) -> str:
    """The smallest rule the hostile tests need: a status read from the answer, compared with the
    key's; grammar names are written as given (TOML strings), ``outputs`` adds [output] lines."""
    return f"""[rule]
name = {json.dumps(name)}
cells = [{{domain = "dom", level = 5}}]
key_grammar = {json.dumps(key_grammar)}
answer_grammar = {json.dumps(answer_grammar)}
[key]
status = "key.status"
[[let]]
name = "said"
expr = "first([s.status for s in find(answer, 'status')])"
[[require]]
reason = "wrong"
check = "said == target.status"
[output]
status = "said"
{outputs}"""
