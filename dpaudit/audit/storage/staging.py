"""Replacing a stored audit (``--force``) without ever losing it.

A forced run writes its new audit into a staging folder that dpaudit creates inside
``--out`` (``.dpaudit-new-<hex>``: on the same file system as ``--out`` even when
``--out`` is a mount point or ``.``, and writable wherever ``--out`` is), and swaps it
in only once the new audit has committed its first batch (:func:`swap_in`). Until
then the old audit is untouched; a run that fails before removes its staging folder
(:func:`remove_staging`).

The swap is a few renames of dpaudit's own files, in an order that a SIGKILL between
any two of them cannot turn into a mix of the two audits:

1. ``swap`` is written into the staging folder (the swap has begun);
2. the old ``result.json``, the old store's ``audit.sqlite-journal`` (left by a
   killed run, it belongs to the old store) and the old audit's own ``trace/`` move
   into the staging folder (as ``replaced.*``);
3. the new ``audit.sqlite`` replaces the old one (one :func:`os.replace`: the
   commit point);
4. the new ``trace/`` (when its round was in the first batch) moves into ``--out``;
5. the staging folder is removed.

A staging folder left by a killed run is finished on the next run into ``--out``,
under the directory's lock (:func:`recover`): before the commit point it is rolled
back (the old files return; the old audit is as it was), after it rolled forward
(the new, unfinished audit, which the same command continues). A killed run never
leaves anything that blocks the next one, and ``dpaudit report`` ignores hidden
folders.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from pathlib import Path

from dpaudit.audit.config.names import RESULT_FILE
from dpaudit.audit.storage.store import ResultStore

__all__ = ["STAGING_PREFIX", "new_staging", "recover", "remove_staging", "swap_in"]

STAGING_PREFIX = ".dpaudit-new-"
"""The name of a staging folder inside ``--out``: this prefix and 12 hex digits."""
_STAGING = re.compile(re.escape(STAGING_PREFIX) + r"[0-9a-f]{12}")
_SWAP = "swap"
_RESULT = RESULT_FILE
_TRACE = "trace"
_JOURNAL = f"{ResultStore.FILENAME}-journal"
#: What the swap moves aside: (name in --out, name in the staging folder).
_REPLACED = (
    (_RESULT, f"replaced.{_RESULT}"),
    (_JOURNAL, f"replaced.{_JOURNAL}"),
    (_TRACE, f"replaced.{_TRACE}"),
)


def new_staging(out: Path) -> Path:
    """A new empty staging folder inside ``out`` (the umask's permissions)."""
    while True:
        staging = out / f"{STAGING_PREFIX}{secrets.token_hex(6)}"
        try:
            staging.mkdir(mode=0o777)
        except FileExistsError:
            continue
        return staging


def remove_staging(staging: Path) -> None:
    """Removes a staging folder and everything in it (all of it dpaudit's). The swap
    marker goes first: a removal stopped half-way leaves a folder that the next
    :func:`recover` removes, never one it would roll forward."""
    if _STAGING.fullmatch(staging.name) and staging.is_dir():
        with contextlib.suppress(OSError):
            (staging / _SWAP).unlink()
        shutil.rmtree(staging, ignore_errors=True)


def swap_in(staging: Path, out: Path, *, replace_trace: bool) -> None:
    """Puts the audit of ``staging`` (its closed ``audit.sqlite``, its ``trace/`` if
    written) in place of the audit in ``out``; ``replace_trace``: ``out/trace`` is
    the old audit's own and goes with it (otherwise it is not touched)."""
    (staging / _SWAP).touch()
    for name, aside in _REPLACED:
        if name == _TRACE and not replace_trace:
            continue
        with contextlib.suppress(FileNotFoundError):
            os.replace(out / name, staging / aside)
    os.replace(staging / ResultStore.FILENAME, out / ResultStore.FILENAME)
    _finish(staging, out)


def _finish(staging: Path, out: Path) -> None:
    """After the commit point: the new trace into ``out``, the staging folder gone."""
    if (staging / _TRACE).is_dir() and not os.path.lexists(out / _TRACE):
        os.replace(staging / _TRACE, out / _TRACE)
    remove_staging(staging)


def recover(out: Path) -> None:
    """Finishes the staging folders a killed run left in ``out`` (call it holding
    the directory's lock, so no run is using them): rolled back before the swap's
    commit point, forward after it, removed either way."""
    with contextlib.suppress(OSError):
        stale = [p for p in out.iterdir() if _STAGING.fullmatch(p.name)]
        for staging in stale:
            if not staging.is_dir() or staging.is_symlink():
                continue
            if not (staging / _SWAP).exists():
                remove_staging(staging)  # never swapped: the old audit is untouched
            elif (staging / ResultStore.FILENAME).exists():
                for name, aside in _REPLACED:  # before the commit point: roll back
                    if os.path.lexists(staging / aside) and not os.path.lexists(
                        out / name
                    ):
                        os.replace(staging / aside, out / name)
                remove_staging(staging)
            else:
                _finish(staging, out)
