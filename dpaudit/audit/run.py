"""Running an audit: train in batches (in parallel), store, resume, analyse.

:func:`run_audit` is the library entry point the CLI and ``dpaudit check`` call. An
audit writes one directory: ``audit.sqlite`` (rounds, bits, claims and attack features,
committed batch by batch) and ``result.json``. A killed audit resumes with
``resume=True`` and gets the result an uninterrupted run would have: rounds are
batched by index, each round's randomness comes from its own stream, and finished
batches are never recomputed.

State rules (docs/design.md):

* One run at a time per directory: the run holds :class:`StoreLock` from before it
  looks at the directory until ``result.json`` is written; a second run is refused.
* A failed or interrupted run leaves either nothing (when it stopped before its first
  batch was committed: the store and any folder it created are removed) or a store
  that the same command continues (a store of the same audit, unfinished, is
  continued without ``--resume``; rounds are never recomputed and the result equals
  an uninterrupted run's). A SIGKILL cannot be cleaned up after, so "leave nothing"
  alone could not be kept; "the same command continues" always can.
* A stored configuration is data: :func:`resume_config` validates it and imports no
  plug-in module and contacts no Dask scheduler that the caller did not name again.
* Workers never outlive the run: on any exception (SIGTERM turned into one by the
  CLI, Ctrl-C) the loky workers are killed, and each worker exits by itself when its
  parent process dies (:func:`watch_parent`, for a SIGKILL of the parent). Threads
  (the default backend) start no new batch and are waited for (:func:`_run_threads`).
* The training trace is that of the audit's first with-target round
  (:func:`~dpaudit.audit.rounds.trace_round`), recorded while the audit trains it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import dpaudit
from dpaudit.audit.analysis import analyse
from dpaudit.audit.config import AuditConfig
from dpaudit.audit.execution import cpu_cores, plan_for_setup
from dpaudit.audit.result import AuditResult
from dpaudit.audit.rounds import trace_round, train_batch
from dpaudit.audit.selection import resolve_public_seed, resolve_target
from dpaudit.audit.setup import AuditSetup, build_setup, cached_round_rngs
from dpaudit.audit.store import ResultStore, StoreLock
from dpaudit.audit.traces import write_trace
from dpaudit.errors import InvalidParameterError, StoreError
from dpaudit.generators.registry import builtin_generators
from dpaudit.io import write_atomic

RESULT = "result.json"
TRACE = "trace"
RESUME_SETTINGS = ("jobs", "backend", "scheduler", "device", "batch_size")
"""The keys a resumed audit may change: where and how fast it runs, never what it
computes (every round depends on its index and the seed alone)."""

_WATCH_SECONDS = 0.5


def watch_parent(parent_pid: int) -> None:
    """Worker initializer: exits this worker as soon as ``parent_pid`` is no longer
    its parent (the audit's main process died, even by SIGKILL, and the worker was
    re-parented). A daemon thread polls :func:`os.getppid` every half second."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="dpaudit-parent-watch", daemon=True).start()


def shutdown_workers() -> None:
    """Kills the loky worker processes of this process's reusable executor, if any."""
    from joblib.externals.loky import reusable_executor

    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        with contextlib.suppress(Exception):
            executor.shutdown(wait=True, kill_workers=True)


@contextlib.contextmanager
def _backend(config: AuditConfig) -> Iterator[None]:
    import joblib

    if config.backend == "dask":
        try:
            from distributed import Client
        except ImportError as err:
            raise InvalidParameterError(
                "`--backend dask` needs the dask extra: pip install 'dpaudit[dask]'."
            ) from err
        client = Client(config.scheduler)  # type: ignore[no-untyped-call]
        with client, joblib.parallel_backend("dask"):
            yield
        return
    watch: dict[str, Any] = {}
    if config.backend == "loky":
        watch = {"initializer": watch_parent, "initargs": (os.getpid(),)}
    try:
        with joblib.parallel_backend(config.backend, n_jobs=config.jobs, **watch):
            yield
    except BaseException:
        if config.backend == "loky":
            shutdown_workers()
        raise


def _train_all(setup: AuditSetup, store: ResultStore, out: Path, *,
               progress: bool) -> int:
    """Trains every round not yet stored; returns how many rounds it trained.

    The batch holding :func:`trace_round` trains that round with the trace switch
    on, and its trace is written to ``out/trace`` here (unless one is there: a
    resumed audit keeps the trace it wrote)."""
    import joblib
    from tqdm import tqdm

    config = setup.config
    execution = plan_for_setup(setup)  # jobs and batch size for this device
    done = store.done_rounds()
    n = setup.plan.n_rounds
    batches = [list(range(s, min(s + execution.batch_size, n)))
               for s in range(0, n, execution.batch_size)]
    todo = [b for b in batches if not set(b) <= done]
    config_json = json.dumps(config.to_json(), sort_keys=True)
    traced = trace_round(setup)
    if traced is not None and (out / TRACE / "trace.json").is_file():
        traced = None
    if todo and config.backend == "threading":
        cached_round_rngs(config_json)  # built once here, not by every thread at once
    bar = tqdm(total=n, initial=n - sum(len(b) for b in todo), unit="model",
               desc="audit (models, both worlds)", disable=not progress, file=None)

    def work(batch: list[int]) -> list[dict[str, Any]]:
        return train_batch(config_json, batch, trace=traced)

    def commit(rows: list[dict[str, Any]]) -> None:
        store.commit_batch(rows)
        for row in rows:
            if "trace" in row:
                write_trace(out / TRACE, row["trace"]["claim"],
                            num_teachers=row["trace"]["num_teachers"])
        bar.update(len(rows))

    try:
        if config.backend == "threading":
            workers = cpu_cores() if execution.jobs == -1 else execution.jobs
            _run_threads(work, todo, workers=workers, commit=commit)
        else:
            with _backend(config):
                jobs = execution.jobs if config.backend != "dask" else -1
                parallel = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")
                outputs = parallel(joblib.delayed(train_batch)(config_json, b, trace=traced)
                                   for b in todo)
                try:
                    for rows in outputs:
                        commit(rows)
                finally:
                    # After an exception joblib aborts the pending batches; its
                    # warning that it did is no news to a stopped run (one line).
                    with warnings.catch_warnings():
                        warnings.filterwarnings(
                            "ignore", message=r".*still being processed by the workers",
                            category=UserWarning)
                        outputs.close()
    finally:
        bar.close()
    return sum(len(b) for b in todo)


def _run_threads(work: Callable[[list[int]], list[dict[str, Any]]],
                 batches: list[list[int]], *, workers: int,
                 commit: Callable[[list[dict[str, Any]]], None]) -> None:
    """``work`` on every batch in ``workers`` threads (in this thread for one),
    committing each batch's rows in this thread as it finishes.

    On any exception here (SIGTERM turned into one, Ctrl-C) no new batch starts and
    the running ones are waited for before it propagates: a thread inside torch
    when the interpreter exits would abort the process (``std::terminate``) instead
    of letting it exit with its code. A batch's training cannot be interrupted, so
    this waits at most one batch.
    """
    if workers <= 1 or len(batches) <= 1:
        for batch in batches:
            commit(work(batch))
        return
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dpaudit-batch")
    try:
        pending = {pool.submit(work, batch) for batch in batches}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                commit(future.result())
    except BaseException:
        # Batches waiting on a plug-in's worker process (a hang, a long fit) end at
        # once when their workers are stopped, so the wait below is short.
        from dpaudit.generators.foreign.pool import stop_all

        stop_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


Ranking = tuple[tuple[int, float], ...]


def _ranking(value: Any, where: Path) -> Ranking | None:
    if value is None:
        return None
    try:
        return tuple((int(r), float(a)) for r, a in value)
    except (TypeError, ValueError) as err:
        raise StoreError(f"{str(where)!r} holds an invalid target selection ({err}); "
                         "start over with --force.") from err


def load_stored(out_dir: Path | str) -> tuple[AuditConfig, Ranking | None]:
    """The configuration and target ranking stored in ``out_dir``, validated as data
    (the :class:`AuditConfig` checks, and the recorded identity must match): nothing
    it names is imported, opened or contacted here.

    Raises:
        InvalidParameterError: ``out_dir`` holds no store.
        StoreError: the store is not a dpaudit store or its configuration is invalid.
    """
    out = Path(out_dir)
    path = out / ResultStore.FILENAME
    if not path.is_file():
        raise InvalidParameterError(
            f"--resume: {str(out)!r} holds no audit to resume (no {ResultStore.FILENAME})."
        )
    fix = "start over with --force, or choose another --out"
    try:
        with ResultStore(out) as store:
            stored = store.get_meta("config")
            identity = store.get_meta("identity")
            selection = store.get_meta("target_selection")
    except (sqlite3.Error, ValueError) as err:
        raise StoreError(f"{str(path)!r} is not a readable dpaudit store ({err}); {fix}."
                         ) from err
    if not isinstance(stored, dict):
        raise StoreError(f"{str(path)!r} holds no audit configuration; {fix}.")
    try:
        config = AuditConfig.from_mapping(stored)
    except (InvalidParameterError, TypeError, ValueError) as err:
        raise StoreError(f"{str(path)!r} holds an invalid configuration ({err}); {fix}."
                         ) from err
    if identity != config.identity():
        raise StoreError(f"{str(path)!r}: the stored configuration does not match its "
                         f"recorded identity (edited or corrupt); {fix}.")
    return config, _ranking(selection, path)


def resume_config(out_dir: Path | str, *,
                  overrides: Mapping[str, Any] | None = None) -> AuditConfig:
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
        StoreError: the stored configuration is invalid.
    """
    out = Path(out_dir)
    if not out.is_dir():
        raise InvalidParameterError(f"--resume: {str(out)!r} does not exist.")
    config, _ = load_stored(out)
    settings = dict(overrides or {})
    changes = sorted(set(settings) - {*RESUME_SETTINGS, "generator"})
    if changes:
        raise InvalidParameterError(
            f"--resume continues the stored audit and cannot change {changes}; start "
            "a new audit with another --out instead.")
    named = settings.pop("generator", None)
    if named is not None and named != config.generator:
        raise InvalidParameterError(
            f"--resume: `--generator` {named!r} is not the stored audit's generator "
            f"{config.generator!r}.")
    if named is None and config.generator not in builtin_generators():
        raise InvalidParameterError(
            f"--resume: the stored audit uses the plug-in generator {config.generator!r}; "
            "dpaudit imports no module that this command line does not name: pass "
            f"--generator {config.generator} to continue it.")
    backend = settings.get("backend", config.backend)
    if backend == "dask" and "scheduler" not in settings:
        raise InvalidParameterError(
            "--resume: the stored audit ran on the Dask scheduler "
            f"{config.scheduler!r}; dpaudit contacts no scheduler that this command line "
            "does not name: pass --backend dask --scheduler ADDRESS, or --backend loky "
            "to continue on this machine.")
    if backend != "dask":
        settings["scheduler"] = None
    return replace(config, **settings)


def _run_key(config: AuditConfig) -> str:
    """The identity of what an audit computes (not where or in which batches)."""
    return replace(config, batch_size=1, jobs=1, backend="loky", scheduler=None,
                   device="auto").identity()


def _clear(out: Path) -> None:
    for name in (ResultStore.FILENAME, f"{ResultStore.FILENAME}-journal", RESULT):
        (out / name).unlink(missing_ok=True)
    if (out / TRACE).is_dir():
        shutil.rmtree(out / TRACE)


def _prepare_directory(out_dir: Path, config: AuditConfig, *,
                       resume: bool) -> tuple[AuditConfig, Ranking | None, bool]:
    """Checks what ``out_dir`` holds (under the lock); returns the config to run, its
    target ranking (the stored ones when continuing) and whether it continues a
    stored audit."""
    store_path = out_dir / ResultStore.FILENAME
    finished = (out_dir / RESULT).exists()
    if resume and not store_path.exists():
        raise InvalidParameterError(
            f"--resume: {str(out_dir)!r} holds no audit to resume (no audit.sqlite).")
    if not store_path.exists():
        if finished:
            raise InvalidParameterError(
                f"output directory {str(out_dir)!r} is not empty: it holds a result.json "
                "without its store; pass --force to overwrite it, or choose another --out.")
        return config, None, False
    stored, ranking = load_stored(out_dir)
    wanted = config
    if config.target == "auto" and ranking is not None:
        wanted = replace(config, target=stored.target)
    if config.public_seed == "auto" and stored.public_seed != "auto":
        # A stored audit holds the candidate its selection chose.
        wanted = replace(wanted, public_seed=stored.public_seed)
    if _run_key(stored) != _run_key(wanted):
        raise InvalidParameterError(
            f"output directory {str(out_dir)!r} is not empty: it holds a different audit; "
            "pass --force to overwrite it, or choose another --out.")
    if finished and not resume:
        raise InvalidParameterError(
            f"output directory {str(out_dir)!r} is not empty: it holds this audit, "
            "finished; pass --resume to analyse it again, or --force to run it again, "
            "or choose another --out.")
    run = replace(stored, **{k: getattr(config, k) for k in RESUME_SETTINGS})
    return run, ranking, True


def _write_training_trace(setup: AuditSetup, out: Path) -> None:
    """The training trace of :func:`trace_round`'s model (records seen per teacher,
    teacher losses, epsilon over iterations), for the report, where the generator
    records traces (the registry says which).

    Normally written while the audit trains that round (:func:`_train_all`). This
    is the fallback for a store whose batch was finished without it (an audit
    stopped between the commit and the trace, or stored by an older dpaudit): the
    round is trained again with the switch on, from its own streams, so it is the
    stored round's model. Nothing is recomputed in the store.
    """
    traced = trace_round(setup)
    if traced is None:
        return
    config_json = json.dumps(setup.config.to_json(), sort_keys=True)
    (row,) = train_batch(config_json, [traced], trace=traced)
    write_trace(out / TRACE, row["trace"]["claim"],
                num_teachers=row["trace"]["num_teachers"])


@dataclass
class _Session:
    """What one run did to its directory, for the cleanup after a failure."""

    created: list[Path]
    fresh_store: bool = False


def _make_directory(out: Path) -> list[Path]:
    """Creates ``out`` (and missing parents); returns the folders created, outermost
    first."""
    missing = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        _remove_created(missing[::-1])
        raise InvalidParameterError(
            f"`--out` must be a folder that can be created ({err.strerror}). "
            f"Got {str(out)!r}.") from err
    return missing[::-1]


def _discard(out: Path, session: _Session) -> None:
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


def _remove_created(created: list[Path]) -> None:
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only if empty: another run may have begun there


def run_audit(config: AuditConfig, *, out_dir: Path | str, resume: bool = False,
              force: bool = False, progress: bool = False) -> AuditResult:
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

    Raises:
        InvalidParameterError: bad input, before anything is written; or ``out_dir``
            holds another audit (pass ``force=True`` to overwrite it).
        StoreError: another run holds ``out_dir``, or its store is corrupt.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`--out` {str(out)!r} exists and is not a directory.")
    if resume and not out.is_dir():
        raise InvalidParameterError(f"--resume: {str(out)!r} does not exist.")
    session = _Session(created=_make_directory(out))
    lock = StoreLock(out)
    try:
        lock.acquire()
    except BaseException:
        _remove_created(session.created)
        raise
    try:
        try:
            return _run_locked(config, out, session, resume=resume, force=force,
                               progress=progress)
        except BaseException:
            _discard(out, session)
            raise
    finally:
        lock.release()
        if not (out / ResultStore.FILENAME).exists():
            _remove_created(session.created)


def _stored_public_selection(out: Path) -> Ranking | None:
    """The public seed ranking a continued audit's store holds (None: none)."""
    with ResultStore(out) as store:
        value = store.get_meta("public_selection")
    return _ranking(value, out / ResultStore.FILENAME)


def _stored_timing(store: ResultStore, out: Path) -> dict[str, float]:
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


def _run_locked(config: AuditConfig, out: Path, session: _Session, *, resume: bool,
                force: bool, progress: bool) -> AuditResult:
    started = time.perf_counter()
    overwrite = force and not resume
    selection: Ranking | None = None
    continued = False
    if not overwrite:
        config, selection, continued = _prepare_directory(out, config, resume=resume)
    config, ranking = resolve_target(config, progress=progress)
    selection = ranking if ranking is not None else selection
    config, public_ranking = resolve_public_seed(config)
    chose_public = public_ranking is not None  # this session trained its pools
    if public_ranking is None and continued:
        public_ranking = _stored_public_selection(out)
    setup = build_setup(config, target_selection=selection,
                        public_selection=public_ranking)
    if overwrite:
        _clear(out)  # only now: bad input never costs the audit it would replace
    session.fresh_store = not continued
    with ResultStore(out) as store:
        stored_before = store.count_rounds() if continued else 0
        timing = _stored_timing(store, out) if continued else {}
        store.set_meta("config", config.to_json())
        store.set_meta("identity", config.identity())
        store.set_meta("version", dpaudit.__version__)
        if selection is not None:
            store.set_meta("target_selection", [[r, a] for r, a in selection])
        if public_ranking is not None:
            store.set_meta("public_selection", [[c, a] for c, a in public_ranking])
        trained_rounds = _train_all(setup, store, out, progress=progress)
        trained = time.perf_counter() - started
        result = analyse(setup, store)
    if not (out / TRACE / "trace.json").is_file():
        _write_training_trace(setup, out)
    if trained_rounds or ranking is not None or chose_public or not timing:
        # This session trained: its time is added. A session that only analysed a
        # finished audit again keeps the audit's timing.
        timing = {"train_seconds": timing.get("train_seconds", 0.0) + trained,
                  "total_seconds": timing.get("total_seconds", 0.0)
                  + time.perf_counter() - started,
                  "sessions": timing.get("sessions", 0.0) + 1}
    with ResultStore(out) as store:
        store.set_meta("timing", timing)
    result["timing"] = {**timing, "sessions": int(timing["sessions"]),
                        "resumed": continued, "rounds_stored_before": stored_before}
    typed = AuditResult.from_json(result, source=out / RESULT)
    write_atomic(out / RESULT, json.dumps(typed.to_json(), indent=2, allow_nan=False) + "\n")
    return typed
