"""Writing files atomically: nothing half-written is ever left on disk."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


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
