"""The two-world game (the distinguishing game): many fits with and without the
target, trained in batches in parallel, stored, resumed and analysed.

:data:`GAME` is the game's declared part (:mod:`dpaudit.audit.games.registry`);
:func:`~dpaudit.audit.run.run_audit` runs the prologue every game shares (the
output folder, the lock, the cleanup) and calls :meth:`TwoWorldGame.run` under the
lock. State rules (docs/design.md, "The audit's state"):

* One run at a time per directory (the lock is the prologue's).
* A failed or interrupted run leaves either nothing (when it stopped before its first
  batch was committed) or a store that the same command continues; rounds are
  never recomputed and the result equals an uninterrupted run's.
* ``force=True`` never loses the audit it replaces: the new audit is written into a
  staging folder inside ``out_dir`` and swapped in only once its first batch is
  committed (:mod:`dpaudit.audit.storage.staging`).
* Workers never outlive the run: on any exception the loky workers are killed, and
  each worker exits by itself when its parent process dies
  (:func:`~dpaudit.audit.games.execution.watch_parent`). Threads (the default
  backend) start no new batch and are waited for (:func:`_run_threads`).
* The training trace is that of the audit's first with-target round
  (:func:`~dpaudit.audit.games.two_world.rounds.trace_round`), recorded while the
  audit trains it.
* Progress (``progress=True``): one tqdm bar per phase on stderr
  (:func:`~dpaudit.audit.games.progress.progress_bar`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import dpaudit
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.serial import to_json
from dpaudit.audit.games.execution import (
    cpu_cores,
    plan_for_setup,
    shutdown_workers,
    watch_parent,
)
from dpaudit.audit.games.looks import audit_looks
from dpaudit.audit.games.memory import MemoryPlan, check_memory
from dpaudit.audit.games.progress import acknowledged, progress_bar
from dpaudit.audit.games.resolved import ResolvedAudit, lookup, resolve
from dpaudit.audit.games.setup import (
    AuditSetup,
    build_setup,
    cached_round_rngs,
    check_generator,
    draft_setup,
    load_audit_data,
    register_resolved,
)
from dpaudit.audit.games.two_world.analysis import analyse, with_looks
from dpaudit.audit.games.two_world.rounds import trace_round, train_batch
from dpaudit.audit.games.two_world.selection import (
    read_public_ranking,
    resolve_public_seed,
    resolve_target,
)
from dpaudit.audit.result.model import AuditResult, Timing, Verdict
from dpaudit.audit.storage.outdir import (
    RESULT,
    TRACE,
    TRACE_KEY,
    Ranking,
    Session,
    check_replaceable,
    check_trace,
    prepare_directory,
    stored_public_selection,
    stored_timing,
)
from dpaudit.audit.storage.staging import new_staging, swap_in
from dpaudit.audit.storage.store import ResultStore
from dpaudit.audit.storage.traces import write_trace
from dpaudit.errors import InvalidParameterError
from dpaudit.io import write_atomic


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


class _Output:
    """Where a run writes its audit, and its open store.

    Normally ``out`` itself. A forced run replacing an audit (``staging``) writes
    into its staging folder until its first batch is committed, then swaps it in
    (:func:`~dpaudit.audit.storage.staging.swap_in`) and goes on in ``out``.
    """

    def __init__(self, out: Path, *, staging: Path | None, replace_trace: bool):
        self.out = out
        self.staging = staging
        self.replace_trace = replace_trace
        self.store = ResultStore(self.folder)

    @property
    def folder(self) -> Path:
        return self.staging if self.staging is not None else self.out

    def write_trace(self, trace: dict[str, Any]) -> None:
        """Writes the audit's trace into ``trace/`` (absent: checked at start), its
        digest recorded in the store before the folder appears."""

        def record(digest: str) -> None:
            self.store.set_meta(TRACE_KEY, {"digest": digest})

        write_trace(
            self.folder / TRACE,
            trace["claim"],
            num_teachers=trace["num_teachers"],
            record=record,
        )

    def commit(self, rows: list[dict[str, Any]]) -> None:
        self.store.commit_batch(rows)
        for row in rows:
            if "trace" in row:
                self.write_trace(row["trace"])
        self.settle()

    def settle(self) -> None:
        """Swaps a staged audit in (after its first batch: see the class)."""
        if self.staging is not None:
            self.store.close()  # closed: its journal must not stay behind
            swap_in(self.staging, self.out, replace_trace=self.replace_trace)
            self.staging = None
            self.store = ResultStore(self.out)

    def close(self) -> None:
        self.store.close()


def _train_all(
    setup: AuditSetup,
    output: _Output,
    *,
    progress: bool,
    upto: int | None = None,
) -> int:
    """Trains every round not yet stored (of the first ``upto`` rounds: a
    sequential look's); returns how many rounds it trained.

    Batches are the plan's ``--batch-size`` runs of indices, cut at ``upto`` (and at
    the look before: a look trains only its own block), so the rounds trained
    together depend on the plan alone, not on where a run was stopped.

    The batch holding :func:`trace_round` trains that round with the trace switch
    on, and its trace is written to ``trace/`` here (unless one is there: a
    resumed audit keeps the trace it wrote)."""
    import joblib

    config = setup.config
    execution = plan_for_setup(setup)  # jobs and batch size for this device
    done = output.store.done_rounds()
    n = setup.plan.n_rounds if upto is None else upto
    start = max((2 * w for w in setup.plan.looks if 2 * w < n), default=0)
    size = execution.batch_size
    batches = [
        list(range(max(s, start), min(s + size, n)))
        for s in range(0, n, size)
        if s + size > start
    ]
    todo = [b for b in batches if not set(b) <= done]
    config_json = json.dumps(config.to_json(), sort_keys=True)
    traced = trace_round(setup)
    if traced is not None and os.path.lexists(output.folder / TRACE):
        traced = None
    if todo and config.backend == "threading":
        cached_round_rngs(config_json)  # built once here, not by every thread at once
    bar = progress_bar(
        "audit (models, both worlds)",
        n,
        unit="model",
        enabled=progress,
        initial=n - sum(len(b) for b in todo) if upto is None else len(done),
    )

    def work(batch: list[int]) -> list[dict[str, Any]]:
        return train_batch(config_json, batch, trace=traced)

    def commit(rows: list[dict[str, Any]]) -> None:
        output.commit(rows)
        bar.update(len(rows))

    try:
        if config.backend == "threading":
            workers = cpu_cores() if execution.jobs == -1 else execution.jobs
            _run_threads(work, todo, workers=workers, commit=commit)
        else:
            with _backend(config):
                jobs = execution.jobs if config.backend != "dask" else -1
                parallel = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")
                outputs = parallel(
                    joblib.delayed(train_batch)(config_json, b, trace=traced)
                    for b in todo
                )
                try:
                    for rows in outputs:
                        commit(rows)
                finally:
                    # After an exception joblib aborts the pending batches; its
                    # warning that it did is no news to a stopped run (one line).
                    with warnings.catch_warnings():
                        warnings.filterwarnings(
                            "ignore",
                            message=r".*still being processed by the workers",
                            category=UserWarning,
                        )
                        outputs.close()
    finally:
        bar.close()
    return sum(len(b) for b in todo)


def _run_threads(
    work: Callable[[list[int]], list[dict[str, Any]]],
    batches: list[list[int]],
    *,
    workers: int,
    commit: Callable[[list[dict[str, Any]]], None],
) -> None:
    """``work`` on every batch in ``workers`` threads (in this thread for one),
    committing each batch's rows in this thread as it finishes.

    On any exception here (SIGTERM turned into one, Ctrl-C) no new batch starts and
    the running ones are waited for before it propagates: a thread inside torch
    when the interpreter exits would abort the process (``std::terminate``) instead
    of letting it exit with its code. dpaudit's batched generators check the stop
    request between training steps (:mod:`dpaudit.generators.stop`) and their running
    batches are discarded at the next one, so this waits about one training step
    (other generators: at most one batch). A batch's rows are committed whole or
    not at all.
    """
    if workers <= 1 or len(batches) <= 1:
        for batch in batches:
            commit(work(batch))
        return
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    from dpaudit.generators import stop

    stop.forget_steps()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dpaudit-batch")
    started, took = time.monotonic(), []
    try:
        pending = {pool.submit(work, batch) for batch in batches}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                took.append(time.monotonic() - started)  # a batch finished
                commit(future.result())
    except BaseException as err:
        # Batches waiting on a plug-in's worker process (a hang, a long fit) end at
        # once when their workers are stopped, and no queued batch starts a new one.
        from dpaudit.generators.foreign.pool import stopping

        with (
            stop.requested(),
            stopping(),
            acknowledged(err, took, workers=workers),
        ):
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _write_training_trace(setup: AuditSetup, output: _Output) -> None:
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
    if traced is None or os.path.lexists(output.folder / TRACE):
        return
    config_json = json.dumps(setup.config.to_json(), sort_keys=True)
    (row,) = train_batch(config_json, [traced], trace=traced)
    output.write_trace(row["trace"])


def run_looks(
    setup: AuditSetup, output: _Output, *, progress: bool
) -> tuple[AuditResult, int, float]:
    """A sequential audit (:mod:`dpaudit.audit.games.looks`): trains each look's block,
    analyses the look's game at its level, and stops at the first VIOLATION.

    Every look depends on the plan and the stored rounds alone, so a resumed audit
    (killed during any look, or finished and analysed again) passes through the
    same looks and stops at the same one. Returns ``(result, rounds trained in this
    session, seconds spent training them)`` (the looks' analyses not counted); the
    result holds the looks (``sequential``)."""
    looks = audit_looks(setup.config)
    trained_rounds = 0
    trained = 0.0
    reached: list[AuditResult] = []
    n_attacks = len(setup.attacks)
    for k, (per_world, level) in enumerate(zip(looks.per_world, looks.alphas)):
        t0 = time.perf_counter()
        trained_rounds += _train_all(
            setup, output, progress=progress, upto=2 * per_world
        )
        output.settle()  # no-op after the first batch: committed and swapped in
        trained += time.perf_counter() - t0
        with progress_bar(
            f"analysis (attacks), look {k + 1} of {len(looks.per_world)} "
            f"({per_world} rounds per world)",
            n_attacks,
            unit="attack",
            enabled=progress,
        ) as bar:
            reached.append(
                analyse(
                    replace(setup, plan=setup.plan.at_look(k)),
                    output.store,
                    on_attack=lambda name: bar.update(1),
                    level=level,
                )
            )
        if reached[-1].verdict is Verdict.VIOLATION:
            break
    return (
        with_looks(reached, looks, n_attacks=n_attacks),
        trained_rounds,
        trained,
    )


def run_locked(
    config: AuditConfig,
    out: Path,
    session: Session,
    *,
    draft: AuditSetup,
    resume: bool,
    force: bool,
    progress: bool,
) -> AuditResult:
    started = time.perf_counter()
    dataset = draft.dataset
    overwrite = force and not resume
    selection: Ranking | None = None
    continued = False
    replace_trace = False
    if overwrite:
        replace_trace = check_replaceable(out)
    else:
        config, selection, continued = prepare_directory(out, config, resume=resume)
        check_trace(out, continued=continued)
    # The generator's checks (a plug-in's import and contract, its options: its
    # first worker) before the selections train anything; the checks that need no
    # worker ran in prepare, before this.
    check_generator(draft)
    resolved = draft.resolved
    config, ranking = resolve_target(
        config, progress=progress, dataset=dataset, resolved=resolved
    )
    selection = ranking if ranking is not None else selection
    config, public_ranking = resolve_public_seed(
        config, progress=progress, dataset=dataset, resolved=resolved
    )
    chose_public = public_ranking is not None  # this session trained its pools
    if public_ranking is None and continued:
        public_ranking = read_public_ranking(
            stored_public_selection(out), out / ResultStore.FILENAME
        )
    setup = build_setup(
        config,
        target_selection=selection,
        public_selection=public_ranking,
        dataset=dataset,
        resolved=resolved,
    )
    # The rounds' setups (worker threads) read this resolution, not the registry.
    register_resolved(json.dumps(config.to_json(), sort_keys=True), resolved)
    # Only now is anything written: bad input never costs the audit it would
    # replace, and a forced run replaces it only once its first batch is stored.
    staging = new_staging(out) if overwrite else None
    session.fresh_store = not continued and not overwrite
    output = _Output(out, staging=staging, replace_trace=replace_trace)
    try:
        store = output.store
        stored_before = store.count_rounds() if continued else 0
        timing = stored_timing(store, out) if continued else {}
        store.set_meta("config", config.to_json())
        store.set_meta("identity", config.identity())
        store.set_meta("version", dpaudit.__version__)
        if not continued:
            store.set_meta(TRACE_KEY, {"digest": None})
        if selection is not None:
            store.set_meta("target_selection", [[r, a] for r, a in selection])
        if public_ranking is not None:
            store.set_meta("public_selection", [to_json(c) for c in public_ranking])
        if config.sequential:
            before = time.perf_counter() - started  # the start, as below
            result, trained_rounds, trained = run_looks(
                setup, output, progress=progress
            )
            trained += before
        else:
            trained_rounds = _train_all(setup, output, progress=progress)
            output.settle()  # no-op: a new audit has a batch, committed, swapped in
            trained = time.perf_counter() - started
            with progress_bar(
                "analysis (attacks)",
                len(setup.attacks),
                unit="attack",
                enabled=progress,
            ) as bar:
                result = analyse(
                    setup, output.store, on_attack=lambda name: bar.update(1)
                )
        _write_training_trace(setup, output)
        if trained_rounds or ranking is not None or chose_public or not timing:
            # This session trained: its time is added. A session that only
            # analysed a finished audit again keeps the audit's timing.
            timing = {
                "train_seconds": timing.get("train_seconds", 0.0) + trained,
                "total_seconds": timing.get("total_seconds", 0.0)
                + time.perf_counter()
                - started,
                "sessions": timing.get("sessions", 0.0) + 1,
            }
        output.store.set_meta("timing", timing)
    finally:
        output.close()
    typed = replace(
        result,
        source=out / RESULT,
        timing=Timing(
            train_seconds=timing["train_seconds"],
            total_seconds=timing["total_seconds"],
            sessions=int(timing["sessions"]),
            resumed=continued,
            rounds_stored_before=stored_before,
        ),
    )
    write_atomic(
        out / RESULT, json.dumps(typed.to_json(), indent=2, allow_nan=False) + "\n"
    )
    return typed


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """A two-world audit before anything is written: its configuration and its
    setup drafted from the table, loaded once (:func:`draft_setup`: every check
    that needs no worker process has passed)."""

    config: AuditConfig
    draft: AuditSetup
    memory: MemoryPlan | None = None

    @property
    def resolved(self) -> ResolvedAudit:
        """What the audit runs, resolved once."""
        return self.draft.resolved


class TwoWorldGame:
    """The distinguishing game as a declared part (:class:`~dpaudit.audit.games.base.Game`)."""

    name = "two-world"

    def check(self, config: AuditConfig, *, resume: bool) -> None:
        """Nothing beyond the key table's refusals."""

    def prepare(self, config: AuditConfig) -> Prepared:
        """The memory plan and the setup's checks, refused before anything is
        written and before any worker process starts (a plug-in's first starts in
        :meth:`run`); the table, loaded once for the plan, the selections and the
        setup."""
        load = functools.cache(lambda: load_audit_data(config))
        spec = lookup(config)  # the audit's one look into the generator registry
        resolved = functools.cache(lambda: resolve(config, dataset=load(), spec=spec))
        memory = check_memory(config, resolver=resolved, spec=spec)
        draft = draft_setup(config, dataset=load(), resolved=resolved())
        return Prepared(config=config, draft=draft, memory=memory)

    def run(
        self,
        prepared: Prepared,
        out: Path,
        session: Session,
        *,
        resume: bool,
        force: bool,
        progress: bool,
    ) -> AuditResult:
        """Trains, stores and analyses the audit in ``out`` (under the lock)."""
        return run_locked(
            prepared.config,
            out,
            session,
            draft=prepared.draft,
            resume=resume,
            force=force,
            progress=progress,
        )


GAME = TwoWorldGame()
"""The two-world game (:data:`dpaudit.audit.games.registry.GAME_SPECS`)."""
