"""Writing files atomically (nothing half-written is ever left on disk), and reading
a small input file (a configuration, a domain, a policy) of bounded size."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from dpaudit.errors import InvalidParameterError

__all__ = ["INPUT_BYTES", "read_input", "write_atomic"]

INPUT_BYTES = 64 * 2**20
"""The most a small input file (a configuration, a domain, a policy) may hold."""

_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def read_input(
    path: str | os.PathLike[str], *, what: str, limit: int = INPUT_BYTES
) -> bytes:
    """The bytes of a small input file: a regular file (or a pipe, such as
    ``<(...)``) of at most ``limit`` bytes. A device (``/dev/zero``,
    ``/dev/urandom``), a socket or anything larger is refused, never read into
    memory.

    Args:
        path: The file.
        what: How the message names it (``--config``).
        limit: The most bytes it may hold.

    Raises:
        InvalidParameterError: ``path`` is a device, a socket or larger than
            ``limit``; naming ``what`` and the fix.
        OSError: ``path`` cannot be opened (missing, not allowed, a directory): the
            caller's message names it.
    """
    fix = f"pass a regular file of at most {limit // 2**20} MiB"
    with open(path, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        for test, kind in _KINDS:
            if test(mode):
                raise InvalidParameterError(
                    f"{what} {os.fspath(path)!r} is {kind}, not a file; {fix}."
                )
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InvalidParameterError(
            f"{what} {os.fspath(path)!r} holds more than {limit // 2**20} MiB; {fix}."
        )
    return data


def write_atomic(path: Path | str, text: str) -> Path:
    """Writes ``text`` (UTF-8) to ``path`` so readers never see a partial file.

    The text goes to a temporary file in the same directory, which then replaces
    ``path`` (:func:`os.replace` is atomic on POSIX and Windows). Parent directories
    are created.

    Args:
        path: The destination.
        text: The content.

    Returns:
        The destination path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
