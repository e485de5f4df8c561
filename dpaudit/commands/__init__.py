"""The ``dpaudit`` sub-commands, one module each, and what they share.

Each module offers ``run(args) -> int`` (an exit code); ``dpaudit.cli`` parses the
arguments and dispatches. The commands name no generator: they ask
:mod:`dpaudit.generators.registry`.

Exit codes: :data:`EXIT_CODES_HELP` (the ``--help`` epilog; docs/ci.md and the README
state the same table); the constants live in :mod:`dpaudit.errors`.

Progress (one convention): on stderr, only when stderr is a terminal, hidden by
``--quiet`` (alias ``--no-progress``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dpaudit.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INCONCLUSIVE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATION,
    RunFailedError,
)
from dpaudit.generators.defaults import DEFAULT_DELTA, DEFAULT_EPSILON
from dpaudit.validation import check_no_budget_option, check_scalar, is_text, require

EXIT_ERROR = EXIT_BAD_INPUT
"""Bad input (exit 2); the name predates :data:`EXIT_FAILED`."""
EXIT_TERMINATED = 143
"""``dpaudit audit`` or ``check`` stopped by SIGTERM (128 + 15)."""

EXIT_CODES_HELP = f"""\
exit codes (every command):
  {EXIT_OK}    success; for `check`: every audit CONSISTENT
  {EXIT_VIOLATION}    `check`: an audit is a VIOLATION (eps_emp > claimed epsilon); a
       VIOLATION wins over every other outcome; `check-generator`: a check
       of the plug-in contract failed
  {EXIT_BAD_INPUT}    bad input: a usage error or typo, a bad policy, configuration, dataset
       or path, a plug-in that breaks its contract (one line names it)
  {EXIT_FAILED}    a run that failed for another reason: out of memory, a full disk,
       standard output closed (one line says what to do), or an unexpected
       error (rerun with --debug and report it)
  {EXIT_INCONCLUSIVE}    `check`: an audit is INCONCLUSIVE (too weak to refute its claim: give
       it more rounds), and no VIOLATION, bad input or failed run
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); `audit` and `check` {EXIT_TERMINATED} on SIGTERM
`audit` and `study` exit 0 whatever the verdicts (VIOLATION, CONSISTENT or
INCONCLUSIVE: the verdict is their output, printed and in result.json); `check` turns
verdicts into exit codes: with several outcomes 1 first, then 2, 3, 4, and 0 only if
every audit is CONSISTENT."""
"""The exit codes of every command, as ``--help`` shows them."""

__all__ = [
    "DEFAULT_DELTA",
    "DEFAULT_EPSILON",
    "EXIT_BAD_INPUT",
    "EXIT_CODES_HELP",
    "EXIT_ERROR",
    "EXIT_FAILED",
    "EXIT_INCONCLUSIVE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "EXIT_VIOLATION",
    "HelpFormatter",
    "budget",
    "check_writable_file",
    "nonempty_path",
    "parse_option",
    "parse_options",
    "progress_note",
    "show_progress",
    "standard_output",
]


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that text with line breaks of its own (the exit
    codes epilog) is kept as written; one-paragraph text is wrapped as usual."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def standard_output(what: str) -> Any:
    """``sys.stdout``, checked before the work: a command started with standard
    output closed (``>&-``) has none (Python sets it to ``None``).

    Raises:
        RunFailedError: standard output is closed (exit 3), naming ``what`` and the
            fix.
    """
    if sys.stdout is None:
        raise RunFailedError(
            f"standard output is closed, so {what} cannot be written to it; pass "
            "--out FILE, or run the command with standard output open."
        )
    return sys.stdout


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> ``(key, value)``: the value parsed as JSON when it is JSON
    (numbers, booleans, lists), else kept as text; dashes in the key become
    underscores.

    >>> parse_option("max-iterations=3")
    ('max_iterations', 3)

    Raises:
        InvalidParameterError: ``text`` has no ``=`` or no key.
    """
    key, sep, raw = text.partition("=")
    require(bool(sep and key), "--option", "KEY=VALUE", text)
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        value = raw
    # JSON's "\ud800" escape decodes to a lone surrogate, which would reach the
    # audit's result and break its report: refused here.
    require(
        is_text(json.dumps(value, ensure_ascii=False)),
        "--option",
        "KEY=VALUE of valid Unicode text (no lone surrogate escape such as \\ud800)",
        text,
    )
    return key.replace("-", "_"), value


def parse_options(texts: list[str] | None) -> dict[str, Any]:
    """Every ``--option KEY=VALUE`` as a dict (later keys win); ``epsilon`` and
    ``delta`` are refused (set with ``--epsilon`` and ``--delta``)."""
    options = dict(parse_option(text) for text in (texts or []))
    check_no_budget_option(options)
    return options


def budget(args: argparse.Namespace) -> tuple[float, float]:
    """``(epsilon, delta)`` of the command line, :data:`DEFAULT_EPSILON` and
    :data:`DEFAULT_DELTA` where unset.

    The same ranges as ``dpaudit audit`` (``AuditConfig``): epsilon a finite number
    > 0, delta in [0, 1). A generator whose accountant needs delta > 0 says so itself,
    the same way in every command.

    Raises:
        InvalidParameterError: epsilon or delta out of range (NaN and inf included).
    """
    epsilon = DEFAULT_EPSILON if args.epsilon is None else args.epsilon
    delta = DEFAULT_DELTA if args.delta is None else args.delta
    check_scalar(epsilon, "--epsilon", min_val=0, closed="neither")
    check_scalar(delta, "--delta", min_val=0, max_val=1, closed="left")
    return epsilon, delta


def nonempty_path(text: str) -> str:
    """An argparse ``type``: a path that is not the empty string.

    Raises:
        argparse.ArgumentTypeError: ``text`` is empty or blank.
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must be a non-empty path. Got {text!r}")
    return text


def check_writable_file(path: str | os.PathLike[str], name: str) -> Path:
    """Checks, before any work, that a file can be written at ``path``: not a
    directory, in an existing folder that this user can write.

    Raises:
        InvalidParameterError: naming ``name`` and the fix.
    """
    out = Path(path)
    require(not out.is_dir(), name, "a file path, not a directory", str(out))
    parent = out.parent if str(out.parent) else Path(".")
    require(
        parent.is_dir(),
        name,
        "in an existing folder (create the folder first)",
        str(out),
    )
    require(
        os.access(parent, os.W_OK) and (not out.exists() or os.access(out, os.W_OK)),
        name,
        "a path this user can write",
        str(out),
    )
    return out


def show_progress(args: argparse.Namespace) -> bool:
    """Whether to show progress: not ``--quiet``/``--no-progress`` and stderr is a
    terminal (never in a log or a pipe)."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


@contextlib.contextmanager
def progress_note(text: str, *, enabled: bool, every: float = 1.0) -> Iterator[None]:
    """Shows ``text`` with the elapsed seconds on stderr while the block runs (a long
    fit has no per-iteration bar), then clears the line; nothing when not ``enabled``."""
    if not enabled:
        yield
        return
    stop = threading.Event()
    started = time.perf_counter()

    def tick() -> None:
        while not stop.wait(every):
            print(
                f"\r{text} {time.perf_counter() - started:.0f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )

    print(f"{text}", end="", file=sys.stderr, flush=True)
    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        print(
            f"\r{text} done in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
            flush=True,
        )
