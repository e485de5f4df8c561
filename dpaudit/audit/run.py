"""Running an audit: :func:`run_audit`, the prologue every game shares.

:func:`run_audit` is the library entry point the CLI and ``dpaudit check`` call. It
refuses what the key table refuses (:meth:`AuditConfig.check_settings`), checks the
output folder, lets the game prepare (the memory plan, the canaries' design: bad input
is refused before anything is written), takes the folder's lock, and hands the run to
the game declared for ``config.game`` (:data:`dpaudit.audit.games.registry.GAME_SPECS`);
after a failure it removes what this run created and turns a full or read-only disk
into one line. The games: :mod:`dpaudit.audit.games.two_world.game` (a store that
resumes) and :mod:`dpaudit.audit.games.one_run.game` (``result.json`` only).

* ``out_dir`` is made absolute at the start: a generator that changes the working
  directory does not move the audit's files.
* One run at a time per directory: the run holds :class:`StoreLock` from before it
  writes anything until it returns.
* A stored configuration is data: :func:`resume_config` validates it and imports no
  plug-in module and contacts no Dask scheduler that the caller did not name again.
"""

from __future__ import annotations

import os
from pathlib import Path

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.execution import shutdown_workers
from dpaudit.audit.games.registry import load_game
from dpaudit.audit.result.model import AuditResult
from dpaudit.audit.storage.exactcache import exact_cache
from dpaudit.audit.storage.outdir import (
    RESULT,
    RESUME_SETTINGS,
    TRACE,
    Session,
    discard_empty_store,
    load_stored,
    make_directory,
    remove_created,
    resume_config,
)
from dpaudit.audit.storage.staging import recover
from dpaudit.audit.storage.store import (
    ResultStore,
    StoreLock,
    check_store_path,
    store_failure,
)
from dpaudit.errors import InvalidParameterError

__all__ = [
    "RESULT",
    "RESUME_SETTINGS",
    "TRACE",
    "load_stored",
    "resume_config",
    "run_audit",
    "shutdown_workers",
]


def run_audit(
    config: AuditConfig,
    *,
    out_dir: Path | str,
    resume: bool = False,
    force: bool = False,
    progress: bool = False,
) -> AuditResult:
    """Runs (or continues) an audit, writes ``out_dir`` and returns its typed result
    (what ``result.json`` holds: :meth:`AuditResult.to_json` writes it).

    ``out_dir`` may hold the same audit unfinished (a killed or failed run): it is
    continued. ``resume=True`` insists that it holds one, finished or not (a
    finished audit is analysed again; its timing is kept); the run settings
    (:data:`RESUME_SETTINGS`) are ``config``'s. To continue a directory from its
    stored configuration alone, use :func:`resume_config` first.

    ``target = "auto"`` is resolved first (:func:`resolve_target`, in memory); the
    stored configuration then names the chosen row, so a continued audit trains the
    same target without selecting again.

    ``force=True`` replaces the audit ``out_dir`` holds, once the new one has stored
    its first batch (until then the old one is untouched, and kept if the run
    fails); it replaces only dpaudit's own files there.

    Raises:
        InvalidParameterError: bad input, before anything is written; or ``out_dir``
            holds another audit (pass ``force=True`` to replace it), a ``trace/``
            this audit did not write, or (with ``force``) a file that is not
            dpaudit's where its files go.
        StoreError: another run holds ``out_dir``, or its store is corrupt.
        RunFailedError: the disk filled or failed while the store was written (the
            committed rounds are kept: the same call continues).
    """
    # The exact test's calibrations are read from and kept on disk while the audit
    # runs (dpaudit.audit.storage.exactcache; DPAUDIT_CACHE_DIR=off: not).
    with exact_cache():
        return _run(
            config,
            out_dir=out_dir,
            resume=resume,
            force=force,
            progress=progress,
        )


def _run(
    config: AuditConfig,
    *,
    out_dir: Path | str,
    resume: bool,
    force: bool,
    progress: bool,
) -> AuditResult:
    """:func:`run_audit`'s body."""
    if not resume:
        # Before anything is loaded or written: every setting the chosen game does
        # not use, or whose requirement is unmet, is refused in one line.
        config.check_settings()
    game = load_game(config.game)
    game.check(config, resume=resume)
    # Absolute from the start: code that changes the working directory during the
    # run (a generator's library, a plug-in run in this process) moves nothing.
    out = Path(os.path.abspath(out_dir))
    check_store_path(out, str(out_dir))  # first: beyond PATH_MAX, stat fails too
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(
            f"`--out` {str(out_dir)!r} exists and is not a directory."
        )
    if resume and not out.is_dir():
        raise InvalidParameterError(f"--resume: {str(out_dir)!r} does not exist.")
    if out.is_dir():
        # Another run writing there: refused now, not after the memory plan (which
        # loads the table), so a run started meanwhile is never taken for a free
        # directory once the other has finished (StoreLock.check_free).
        StoreLock(out).check_free()
    prepared = game.prepare(config)  # refused before anything is written
    session = Session(created=make_directory(out))
    lock = StoreLock(out)
    try:
        lock.acquire()
    except BaseException:
        remove_created(session.created)
        raise
    try:
        try:
            recover(out)  # a staging folder a killed --force run left
            return game.run(
                prepared, out, session, resume=resume, force=force, progress=progress
            )
        except BaseException as err:
            recover(out)  # this run's staging: removed, or its swap finished
            discard_empty_store(out, session)
            # A read-only store, a full disk: one line saying so, not a bug report.
            failure = store_failure(err, out / ResultStore.FILENAME)
            if failure is None:
                raise
            raise failure from err
    finally:
        lock.release()
        if not (out / ResultStore.FILENAME).exists() and not (out / RESULT).exists():
            remove_created(session.created)
