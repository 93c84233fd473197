"""The ``keyaudit`` command line: thin wiring of engine functions to typer commands.

Every user error is a :class:`KeyauditError`; :func:`main` prints its one-line message and exits
with code 2, so no traceback ever reaches the user. Heavy modules (numba) are imported only by
the commands that need them, so ``keyaudit --help`` and ``keyaudit score`` start fast.
"""

from __future__ import annotations

import contextlib
import os
import sys

import typer

from keyaudit.engine.errors import KeyauditError

from .authoring import new_rule, test_rule
from .check import check
from .keys import flag, keys
from .review import review
from .score import score

app = typer.Typer(
    name="keyaudit",
    help="Audit sentence-valued answer keys and re-score stored responses with declarative rules, offline.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(check)
app.command()(score)
app.command()(keys)
app.command()(flag)
app.command("new-rule")(new_rule)
app.command("test-rule")(test_rule)
app.command()(review)


def _register_bench() -> None:
    from .bench import app as bench_app

    app.add_typer(bench_app, name="bench")


_register_bench()


def main() -> None:
    """Run the app; every failure is one line on stderr and an exit code (``run`` wraps it).

    2: a user error (:class:`KeyauditError`, bad options); 1: a rule failed its examples or keys
    check; 3: an internal error (a bug; ``KEYAUDIT_DEBUG=1`` shows the traceback).
    """
    from .common import report_error, tolerant_streams

    tolerant_streams()
    try:
        # Without standalone mode click returns a command's exit code instead of exiting.
        code = app(standalone_mode=False)
    except KeyauditError as error:
        report_error(error)
        sys.exit(error.exit_code)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.exit(130)
    except BrokenPipeError:  # `keyaudit ... | head`: the reader left; nothing to report
        _reader_left()
    except SystemExit as done:
        # click answers a closed stdout (EPIPE) by swapping in PacifyFlushWrapper and exit 1.
        if done.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _reader_left()
        raise
    except Exception as error:
        # Usage errors (click's UsageError, vendored by typer): one line, like every error.
        if callable(getattr(error, "format_message", None)) and isinstance(
            getattr(error, "exit_code", None), int
        ):
            if type(error).__name__ == "NoArgsIsHelpError":  # `keyaudit` alone: the help
                error.show()
                sys.exit(error.exit_code)
            context = getattr(error, "ctx", None)
            command = getattr(context, "command_path", None) or "keyaudit"
            report_error(f"{error.format_message()} (see '{command} --help')")
            sys.exit(error.exit_code)
        if os.environ.get("KEYAUDIT_DEBUG"):
            raise
        # A bug in keyaudit, not a user error: still one line, and the way to see the details.
        report_error(
            f"{type(error).__name__}: {str(error) or type(error).__name__} "
            "(rerun with KEYAUDIT_DEBUG=1 for the traceback, and please report it)",
            internal=True,
        )
        sys.exit(3)
    sys.exit(code if isinstance(code, int) else 0)


def _reader_left() -> None:
    """The reader of stdout went away (``| head``): stop quietly, exit 0."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - nothing more may reach the pipe
    sys.exit(0)


def run() -> None:
    """The ``keyaudit`` console script: :func:`main`, then exit without tearing the heap down.

    A loaded benchmark is a few hundred thousand small objects; freeing them one by one at
    interpreter exit costs ~0.25 s on every run, for nothing. Output streams are flushed first
    (every file keyaudit writes is already closed by then), then the process exits with main's
    code. Tests call :func:`main` directly.
    """
    code = 0
    try:
        main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if isinstance(done.code, str):
            sys.stderr.write(done.code + "\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing to save
            stream.flush()
    os._exit(code)
