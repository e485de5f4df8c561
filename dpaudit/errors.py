"""The dpaudit error hierarchy and the exit codes of the ``dpaudit`` command.

Every error dpaudit raises on purpose derives from :class:`AuditError`; the CLI turns
them into a one-line message and exit code 2 (bad input). :func:`exit_code_for`
is the one mapping from an error to an exit code, used by the CLI for a command that
stops and by ``dpaudit check`` for each audit that could not finish.
"""

from __future__ import annotations

import errno
from collections.abc import Iterable

EXIT_OK = 0
"""Success: the command did its work (``dpaudit check``: every audit CONSISTENT)."""
EXIT_VIOLATION = 1
"""``dpaudit check``: at least one audit is a VIOLATION (it dominates every other
outcome)."""
EXIT_BAD_INPUT = 2
"""Bad input: a usage error, a typo, a bad policy, configuration, dataset or path, a
plug-in that breaks its contract (:class:`AuditError`)."""
EXIT_FAILED = 3
"""A run that failed for another reason: an unexpected error (a bug), out of memory,
a full disk."""
EXIT_INCONCLUSIVE = 4
"""``dpaudit check``: an INCONCLUSIVE audit (too weak to refute its claim), and no
VIOLATION, bad input or failed run."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT)."""

#: ``OSError`` numbers that name a path the user gave (bad input, exit 2); any other
#: ``OSError`` (a full disk, an I/O error) is a failed run (exit 3).
_PATH_ERRNOS = frozenset(
    {
        errno.ENOENT,
        errno.EACCES,
        errno.EPERM,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.EEXIST,
        errno.EROFS,
        errno.ENAMETOOLONG,
        errno.ELOOP,
        errno.ENOTEMPTY,
    }
)


class AuditError(Exception):
    """Base class of every error dpaudit raises on purpose."""


class InvalidParameterError(AuditError, ValueError):
    """Raised when a parameter, a configuration value or a file is malformed.

    The message names the input, what it must be, and what was given.
    """


class DataError(InvalidParameterError):
    """Raised when a dataset does not fit its public domain (NaN, wrong columns,
    non-numeric values, values outside the bounds, too few rows)."""


class NotFittedError(AuditError, ValueError, AttributeError):
    """Raised when `sample` or `privacy_claim_` is used before `fit`."""


class UnsupportedEventError(AuditError):
    """Raised when an accountant is given a privacy event it does not support."""


class PluginError(AuditError):
    """Raised when a user's generator cannot be loaded or breaks the plug-in contract."""


class StoreError(AuditError):
    """Raised when an audit directory holds a different audit, or is corrupt."""


class BadInputError(AuditError, ValueError):
    """Bad input to the Python API (:mod:`dpaudit.api`): the one exception type of
    every refusal, whose message is the line the ``dpaudit`` command prints for the
    same input (without its ``dpaudit: error:`` prefix), exit code 2 there.

    Attributes:
        line: the command line's whole line (with its prefix).
        exit_code: the command's exit code for it (:data:`EXIT_BAD_INPUT`).
    """

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, line: str | None = None) -> None:
        super().__init__(message)
        self.line = line if line is not None else f"dpaudit: error: {message}"


class RunFailedError(Exception):
    """Raised when a run fails for a reason of its environment, not of its input and
    not a bug of dpaudit (a full disk, standard output closed): exit 3, with a message
    that says what happened and what to do (never "report it")."""


class DpauditWarning(UserWarning):
    """Category of dpaudit's warnings (for example, bounds read from private data)."""


def _chain(err: BaseException) -> list[BaseException]:
    """``err`` and the exceptions it was raised from (``__cause__``/``__context__``,
    as Python shows them: a context suppressed by ``raise ... from None`` is not
    followed; that is how a plug-in stopped at its own ``--max-memory`` limit, a
    fault of the plug-in, is told from a machine out of memory)."""
    out: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )
    return out


def is_out_of_memory(err: BaseException) -> bool:
    """Whether ``err`` (or an error it was raised from) is an out-of-memory error:
    :class:`MemoryError`, torch's ``OutOfMemoryError`` (CPU or CUDA), or the
    ``RuntimeError`` of torch's CPU allocator ("can't allocate memory").

    >>> is_out_of_memory(MemoryError()), is_out_of_memory(ValueError("x"))
    (True, False)
    """
    return any(
        isinstance(e, MemoryError)
        or type(e).__name__ == "OutOfMemoryError"
        # torch's CPU allocator raises a plain RuntimeError for a refused allocation
        or (isinstance(e, RuntimeError) and "can't allocate memory" in str(e))
        for e in _chain(err)
    )


def exit_code_for(err: BaseException) -> int:
    """The exit code of a command (or of one audit of ``dpaudit check``) that stopped
    with ``err``.

    * out of memory anywhere in the chain (even inside a plug-in): :data:`EXIT_FAILED`;
    * a :class:`RunFailedError` (the environment: a full disk): :data:`EXIT_FAILED`;
    * an :class:`AuditError` (bad input, a plug-in that breaks its contract, an
      audit directory that holds another audit): :data:`EXIT_BAD_INPUT`;
    * an ``OSError`` on a path (missing, not allowed, a directory): bad input; any
      other ``OSError`` (disk full, I/O error): :data:`EXIT_FAILED`;
    * anything else (a bug, a crash): :data:`EXIT_FAILED`.

    >>> exit_code_for(InvalidParameterError("x")), exit_code_for(RuntimeError("x"))
    (2, 3)
    >>> exit_code_for(FileNotFoundError(2, "no such file")), exit_code_for(OSError(28, "full"))
    (2, 3)
    """
    if is_out_of_memory(err) or isinstance(err, RunFailedError):
        return EXIT_FAILED
    if isinstance(err, AuditError):
        return EXIT_BAD_INPUT
    if isinstance(err, OSError):
        return (
            EXIT_BAD_INPUT
            if err.errno is None or err.errno in _PATH_ERRNOS
            else EXIT_FAILED
        )
    return EXIT_FAILED


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'pategan'?)`` for the closest of ``choices`` to a misspelt
    ``name`` (:func:`difflib.get_close_matches`), else ``""``: appended to a
    refusal's line.

    >>> did_you_mean("pategn", ["pategan", "dpgan"]), did_you_mean("zzz", ["a"])
    (" (did you mean 'pategan'?)", '')
    """
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
