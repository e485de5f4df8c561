"""The output folder of an audit: what it holds (a stored audit to continue, a
finished one, another audit), the configuration and rankings stored there, the
folders a run creates and what is removed after a failure.

dpaudit's files in ``--out`` are ``audit.sqlite`` (with ``audit.sqlite-journal`` and
``audit.lock`` beside it), ``result.json``, ``trace/`` and the staging folder of a
forced run (:mod:`dpaudit.audit.storage.staging`). Nothing else in ``--out`` is read, moved or
removed. ``trace/`` is the audit's own only when it is the folder the audit wrote: the
store records its :func:`~dpaudit.audit.storage.traces.trace_digest` (meta key ``trace``)
before it appears (:func:`trace_owner`); a ``trace/`` that a new audit finds in
``--out`` is refused at start, so it is never reported as the audit's trace, and
``--force`` replaces only the old audit's own (:func:`check_replaceable`).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dpaudit.audit.config.keys import RUN_SETTINGS
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.names import RESULT_FILE
from dpaudit.audit.storage.store import (
    ResultStore,
    StoreLock,
    _check_foreign,
    store_failure,
)
from dpaudit.audit.storage.traces import only_trace_files, trace_digest
from dpaudit.errors import InvalidParameterError, StoreError
from dpaudit.generators.registry import builtin_generators

RESULT = RESULT_FILE
TRACE = "trace"
RESUME_SETTINGS = RUN_SETTINGS
"""The settings a continued audit may change: the run settings (where and how an
audit runs, not what it computes; no part of :meth:`AuditConfig.identity`)."""


Ranking = tuple[tuple[int, float], ...]


def _ranking(value: Any, where: Path) -> Ranking | None:
    if value is None:
        return None
    try:
        return tuple((int(r), float(a)) for r, a in value)
    except (TypeError, ValueError) as err:
        raise StoreError(
            f"{str(where)!r} holds an invalid target selection ({err}); "
            "start over with --force."
        ) from err


def load_stored(out_dir: Path | str) -> tuple[AuditConfig, Ranking | None]:
    """The configuration and target ranking stored in ``out_dir``, validated as data
    (the :class:`AuditConfig` checks, and the recorded identity must match): nothing
    it names is imported, opened or contacted here.

    Raises:
        InvalidParameterError: ``out_dir`` holds no store.
        StoreError: the store is not a dpaudit store or its configuration is invalid.
        RunFailedError: the store cannot be read (a disk I/O error).
    """
    out = Path(out_dir)
    path = out / ResultStore.FILENAME
    if not path.is_file():
        raise InvalidParameterError(
            f"--resume: {str(out)!r} holds no audit to resume (no {ResultStore.FILENAME})."
        )
    fix = "choose another --out, or start over with --force"
    try:
        with ResultStore(out) as store:
            stored = store.get_meta("config")
            identity = store.get_meta("identity")
            selection = store.get_meta("target_selection")
    except (sqlite3.Error, ValueError) as err:
        failure = store_failure(err, path)
        if failure is not None:
            raise failure from err
        raise StoreError(
            f"{str(path)!r} is not a readable dpaudit store ({err}); {fix}."
        ) from err
    if not isinstance(stored, dict):
        raise StoreError(f"{str(path)!r} holds no audit configuration; {fix}.")
    try:
        config = AuditConfig.from_mapping(stored)
    except (InvalidParameterError, TypeError, ValueError) as err:
        raise StoreError(
            f"{str(path)!r} holds an invalid configuration ({err}); {fix}."
        ) from err
    if not config.matches_identity(identity):
        raise StoreError(
            f"{str(path)!r}: the stored configuration does not match its "
            f"recorded identity (edited or corrupt); {fix}."
        )
    return config, _ranking(selection, path)


def resume_config(
    out_dir: Path | str, *, overrides: Mapping[str, Any] | None = None
) -> AuditConfig:
    """The audit stored in ``out_dir`` (validated by :func:`load_stored`) with the
    run settings of ``overrides`` (keys of :data:`RESUME_SETTINGS`, plus
    ``generator`` to name the stored generator again).

    The store is data. A plug-in generator (anything but a built-in) is used only
    when ``overrides["generator"]`` names it again, and a Dask scheduler only when
    ``overrides`` names ``backend = "dask"`` and the ``scheduler``: otherwise this
    refuses, saying what to pass.

    Raises:
        InvalidParameterError: ``out_dir`` holds no audit, or an override changes
            the audit or is missing (see above).
        StoreError: the stored configuration is invalid, or another run is
            writing ``out_dir`` (:meth:`StoreLock.check_free`).
    """
    out = Path(out_dir)
    if not out.is_dir():
        raise InvalidParameterError(f"--resume: {str(out)!r} does not exist.")
    StoreLock(out).check_free()  # another run writing there: refused at once
    config, _ = load_stored(out)
    settings = dict(overrides or {})
    changes = sorted(set(settings) - {*RESUME_SETTINGS, "generator"})
    if changes:
        raise InvalidParameterError(
            f"--resume continues the stored audit and cannot change {changes}; start "
            "a new audit with another --out instead."
        )
    named = settings.pop("generator", None)
    if named is not None and named != config.generator:
        raise InvalidParameterError(
            f"--resume: `--generator` {named!r} is not the stored audit's generator "
            f"{config.generator!r}."
        )
    if named is None and config.generator not in builtin_generators():
        raise InvalidParameterError(
            f"--resume: the stored audit uses the plug-in generator {config.generator!r}; "
            "dpaudit imports no module that this command line does not name: pass "
            f"--generator {config.generator} to continue it."
        )
    backend = settings.get("backend", config.backend)
    if backend == "dask" and "scheduler" not in settings:
        raise InvalidParameterError(
            "--resume: the stored audit ran on the Dask scheduler "
            f"{config.scheduler!r}; dpaudit contacts no scheduler that this command line "
            "does not name: pass --backend dask --scheduler ADDRESS, or --backend loky "
            "to continue on this machine."
        )
    if backend != "dask":
        settings["scheduler"] = None
    return replace(config, **settings)


TRACE_KEY = "trace"
"""Store meta key: ``{"digest": <trace_digest of the trace the audit wrote> | None}``
(absent in a store of an older dpaudit)."""
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _foreign_trace(out: Path) -> InvalidParameterError:
    return InvalidParameterError(
        f"`--out` {str(out)!r} holds a trace/ folder that this audit did not write "
        "(or that was changed since), and a report would show it as the audit's "
        "training trace; move it away or choose another --out."
    )


def trace_owner(out: Path, record: Any, *, audit_there: bool) -> bool | None:
    """Whether ``out/trace`` is the trace of the audit stored in ``out``: ``None``
    when there is none, ``True`` when it is the one the store records (``record``,
    the store's :data:`TRACE_KEY` value), ``False`` otherwise.

    A store of an older dpaudit records nothing (``record`` is ``None``): its trace
    is the folder when ``audit_there`` (a store or result.json of dpaudit is in
    ``out``) and the folder holds trace files alone."""
    folder = out / TRACE
    if not (folder.exists() or folder.is_symlink()):
        return None
    if isinstance(record, dict):
        digest = record.get("digest")
        if not isinstance(digest, str) or folder.is_symlink() or not folder.is_dir():
            return False
        try:
            return trace_digest(folder) == digest
        except OSError:
            return False
    return audit_there and only_trace_files(folder)


def stored_trace_record(out: Path) -> Any:
    """The store's :data:`TRACE_KEY` value, read only (``None`` when the store or the
    key is missing or cannot be read)."""
    path = out / ResultStore.FILENAME
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = conn.execute(
                "SELECT value FROM meta WHERE key = ?", (TRACE_KEY,)
            ).fetchone()
        finally:
            conn.close()
        return None if row is None else json.loads(row[0])
    except (sqlite3.Error, ValueError):
        return None


def check_trace(out: Path, *, continued: bool) -> None:
    """Refuses, before anything is written, a ``trace/`` in ``out`` that an audit
    starting there (``continued``: or continuing the store there) did not write.

    A new audit refuses any ``trace/``. A continued audit refuses one when its store
    records that it wrote none; the trace it wrote is kept as it is (a user's edit
    of it included: dpaudit never rewrites an existing ``trace/``).

    Raises:
        InvalidParameterError: naming ``out`` and the fix.
    """
    folder = out / TRACE
    if not (folder.exists() or folder.is_symlink()):
        return
    if not continued:
        raise _foreign_trace(out)
    record = stored_trace_record(out)
    if isinstance(record, dict) and record.get("digest") is None:
        raise _foreign_trace(out)


def check_replaceable(out: Path) -> bool:
    """Checks, reading only, that ``--force`` may replace what ``out`` holds: the
    store is dpaudit's (or empty, or a damaged SQLite file: the store of a killed
    run), ``result.json`` is a dpaudit result, and ``trace/`` is absent or the old
    audit's own. Returns whether ``trace/`` is to be replaced with it.

    Raises:
        InvalidParameterError: a file there is not dpaudit's (nothing is touched).
    """
    fix = "--force replaces only dpaudit's own files: move it away or choose another --out"
    store = out / ResultStore.FILENAME
    if store.is_symlink() or (store.exists() and not store.is_file()):
        raise InvalidParameterError(
            f"{str(store)!r} is not a dpaudit store (not a regular file); {fix}."
        )
    if store.is_file():
        try:
            _check_foreign(store)
        except StoreError as err:
            with open(store, "rb") as handle:
                head = handle.read(len(_SQLITE_MAGIC))
            damaged = head == _SQLITE_MAGIC and isinstance(
                err.__cause__, sqlite3.DatabaseError
            )
            if head and not damaged:
                raise InvalidParameterError(
                    f"{str(store)!r} is not a dpaudit store; {fix}."
                ) from err
    result = out / RESULT
    if result.exists() or result.is_symlink():
        try:
            doc = json.loads(result.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            doc = err
        if result.is_symlink() or not (
            isinstance(doc, dict) and "schema_version" in doc
        ):
            raise InvalidParameterError(
                f"{str(result)!r} is not a dpaudit result; {fix}."
            )
    audit_there = store.is_file() or result.is_file()
    owner = trace_owner(out, stored_trace_record(out), audit_there=audit_there)
    if owner is False:
        raise _foreign_trace(out)
    return owner is True


def prepare_directory(
    out_dir: Path, config: AuditConfig, *, resume: bool
) -> tuple[AuditConfig, Ranking | None, bool]:
    """Checks what ``out_dir`` holds (under the lock); returns the config to run, its
    target ranking (the stored ones when continuing) and whether it continues a
    stored audit."""
    store_path = out_dir / ResultStore.FILENAME
    finished = (out_dir / RESULT).exists()
    if resume and not store_path.exists():
        raise InvalidParameterError(
            f"--resume: {str(out_dir)!r} holds no audit to resume (no audit.sqlite)."
        )
    if not store_path.exists():
        if finished:
            raise InvalidParameterError(
                f"output directory {str(out_dir)!r} is not empty: it holds a result.json "
                "without its store; choose another --out, or pass --force to overwrite "
                "it."
            )
        return config, None, False
    stored, ranking = load_stored(out_dir)
    wanted = config
    if config.target == "auto" and ranking is not None:
        wanted = replace(config, target=stored.target)
    if config.public_seed == "auto" and stored.public_seed != "auto":
        # A stored audit holds the candidate its selection chose.
        wanted = replace(wanted, public_seed=stored.public_seed)
    if stored.identity() != wanted.identity():
        raise InvalidParameterError(
            f"output directory {str(out_dir)!r} is not empty: it holds a different audit; "
            "choose another --out, or pass --force to overwrite it (which deletes it)."
        )
    if finished and not resume:
        raise InvalidParameterError(
            f"output directory {str(out_dir)!r} is not empty: it holds this audit, "
            "finished; choose another --out, or pass --resume to analyse it again, or "
            "--force to run it again (which deletes it)."
        )
    run = replace(stored, **{k: getattr(config, k) for k in RESUME_SETTINGS})
    return run, ranking, True


@dataclass
class Session:
    """What one run did to its directory, for the cleanup after a failure."""

    created: list[Path]
    fresh_store: bool = False


def make_directory(out: Path) -> list[Path]:
    """Creates ``out`` (and missing parents); returns the folders created, outermost
    first."""
    missing = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        remove_created(missing[::-1])
        raise InvalidParameterError(
            f"`--out` must be a folder that can be created ({err.strerror}). "
            f"Got {str(out)!r}."
        ) from err
    return missing[::-1]


def discard_empty_store(out: Path, session: Session) -> None:
    """After a failure: removes a store this run created that holds no round (while
    the lock is held)."""
    path = out / ResultStore.FILENAME
    if not session.fresh_store or not path.exists():
        return
    try:
        with ResultStore(out) as store:
            empty = store.count_rounds() == 0
    except (sqlite3.Error, StoreError):
        return
    if empty:
        for name in (ResultStore.FILENAME, f"{ResultStore.FILENAME}-journal"):
            (out / name).unlink(missing_ok=True)


def remove_created(created: list[Path]) -> None:
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only if empty: another run may have begun there


def stored_public_selection(out: Path) -> list[Any] | None:
    """The public seed ranking a continued audit's store holds, as stored (a JSON
    list: ``[candidate, auc]`` pairs before exact rankings, else the entries of
    ``public_selection``; read by
    :func:`dpaudit.audit.games.two_world.selection.read_public_ranking`), or None."""
    with ResultStore(out) as store:
        value = store.get_meta("public_selection")
    if value is not None and not isinstance(value, list):
        raise StoreError(
            f"{str(out / ResultStore.FILENAME)!r} holds an invalid public seed "
            "selection (not a list); start over with --force."
        )
    return value


def stored_timing(store: ResultStore, out: Path) -> dict[str, float]:
    """The timing so far: the store's, else (a store older than this key) the
    ``result.json`` of a finished audit's, else none."""
    timing = store.get_meta("timing")
    if not isinstance(timing, dict) and (out / RESULT).is_file():
        with contextlib.suppress(OSError, ValueError, AttributeError):
            timing = json.loads((out / RESULT).read_text()).get("timing")
    if not isinstance(timing, dict):
        timing = {}
    out_timing: dict[str, float] = {}
    for key in ("train_seconds", "total_seconds", "sessions"):
        value = timing.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out_timing[key] = float(value)
    return out_timing
