"""The advisory lock one run holds on its audit directory (``audit.lock``)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from dpaudit.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

__all__ = ["StoreLock"]


class StoreLock:
    """An exclusive advisory lock on an audit directory, held for a whole run.

    ``flock`` on ``audit.lock`` in the directory: the kernel drops it when the
    holding process dies (even by SIGKILL), so a killed run never leaves a stale
    lock. A second run into the same directory is refused at once, not queued. The
    lock file is removed on :meth:`release`; a run that opened the old file before
    the removal sees that the path changed and tries again, so two runs can never
    both hold it. (Where ``fcntl`` is missing, on Windows, nothing is locked.)
    """

    FILENAME = "audit.lock"

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / self.FILENAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Takes the lock.

        Raises:
            StoreError: another process holds it.
        """
        if fcntl is None:  # pragma: no cover
            return
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as err:
                raise StoreError(
                    f"cannot lock {str(self.path.parent)!r} ({err.strerror}): choose a "
                    "writable --out."
                ) from err
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as err:
                os.close(fd)
                raise self._busy() from err
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                self._fd = fd
                return
            os.close(fd)  # released and removed meanwhile: lock the new file

    def check_free(self) -> None:
        """Refuses now, as :meth:`acquire` would, a directory whose lock another
        process holds; takes nothing and creates nothing (a run checks this first,
        before its memory plan, and takes the lock later).

        Raises:
            StoreError: another process holds the lock.
        """
        if fcntl is None:  # pragma: no cover
            return
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return  # no lock file: nobody holds it (acquire reports other errors)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as err:
            raise self._busy() from err
        finally:
            os.close(fd)

    def _busy(self) -> StoreError:
        return StoreError(
            f"{str(self.path.parent)!r} is in use by another dpaudit run"
            f"{self._holder()}: wait for it to finish, or choose another --out."
        )

    def _holder(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            return f" (pid {int(self.path.read_text().strip())})"
        return ""

    def release(self) -> None:
        """Removes the lock file and drops the lock (unlink first: see above)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)  # closing the last descriptor drops the flock
        self._fd = None

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
