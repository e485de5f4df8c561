"""Running an audit: train in batches (in parallel), store, resume, analyse.

:func:`run_audit` is the library entry point the CLI and ``dpaudit check`` call. An
audit writes one directory: ``audit.sqlite`` (rounds, bits, claims and attack features,
committed batch by batch) and ``result.json``. A killed audit resumes with
``resume=True`` and gets the result an uninterrupted run would have: rounds are
batched by index, each round's randomness comes from its own stream, and finished
batches are never recomputed.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import dpaudit
from dpaudit.audit.analysis import analyse
from dpaudit.audit.config import AuditConfig
from dpaudit.audit.result import AuditResult
from dpaudit.audit.rounds import train_batch
from dpaudit.audit.selection import resolve_target
from dpaudit.audit.setup import AuditSetup, build_setup
from dpaudit.audit.store import ResultStore
from dpaudit.audit.streams import Streams
from dpaudit.errors import InvalidParameterError, StoreError
from dpaudit.generators.registry import generator_factory, get_spec
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
    else:
        with joblib.parallel_backend(config.backend, n_jobs=config.jobs):
            yield


def _train_all(setup: AuditSetup, store: ResultStore, *, progress: bool) -> None:
    import joblib
    from tqdm import tqdm

    config = setup.config
    done = store.done_rounds()
    n = setup.plan.n_rounds
    batches = [list(range(s, min(s + config.batch_size, n)))
               for s in range(0, n, config.batch_size)]
    todo = [b for b in batches if not set(b) <= done]
    config_json = json.dumps(config.to_json(), sort_keys=True)
    bar = tqdm(total=n, initial=n - sum(len(b) for b in todo), unit="model",
               desc="audit (models, both worlds)", disable=not progress, file=None)
    try:
        with _backend(config):
            jobs = config.jobs if config.backend != "dask" else -1
            parallel = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")
            for rows in parallel(joblib.delayed(train_batch)(config_json, b) for b in todo):
                store.commit_batch(rows)
                bar.update(len(rows))
    finally:
        bar.close()


Ranking = tuple[tuple[int, float], ...]


def _prepare_directory(out_dir: Path, config: AuditConfig, *, resume: bool,
                       force: bool) -> tuple[AuditConfig, Ranking | None]:
    """Checks what ``out_dir`` holds; returns the config to run and its target
    ranking (the stored ones when resuming)."""
    store_path = out_dir / ResultStore.FILENAME
    if resume:
        if not store_path.exists():
            raise InvalidParameterError(
                f"--resume: {str(out_dir)!r} holds no audit to resume (no audit.sqlite)."
            )
        with ResultStore(out_dir) as store:
            stored = store.get_meta("config")
            selection = store.get_meta("target_selection")
        if stored is None:
            raise StoreError(f"{str(store_path)!r} has no configuration; start over with --force.")
        ranking = None if selection is None else tuple(
            (int(r), float(a)) for r, a in selection)
        return AuditConfig.from_mapping(stored), ranking
    if store_path.exists() or (out_dir / "result.json").exists():
        existing = None
        if store_path.exists():
            with ResultStore(out_dir) as store:
                existing = store.get_meta("identity")
        if not force:
            same = existing == config.identity()
            hint = ("it holds this same audit: pass --resume to continue it"
                    if same else "it holds a different audit")
            raise InvalidParameterError(
                f"output directory {str(out_dir)!r} is not empty: {hint}, or pass "
                "--force to overwrite it, or choose another --out."
            )
        store_path.unlink(missing_ok=True)
        (out_dir / "result.json").unlink(missing_ok=True)
        trace = out_dir / "trace"
        if trace.is_dir():
            shutil.rmtree(trace)
    return config, None


def _write_training_trace(setup: AuditSetup, out: Path) -> None:
    """One extra fit on ``D ∪ {target}`` with per-iteration traces, for the report
    (records seen per teacher, teacher losses, epsilon over iterations), where the
    generator records traces (the registry says which). Its stream is
    :meth:`Streams.trace`, apart from the rounds' and the attacks'; it is not part of
    the game."""
    spec = get_spec(setup.config.generator)
    if spec.trace_switch is None:
        return
    from dpaudit.audit.traces import write_trace

    options = {**setup.generator_options, spec.trace_switch: True}
    generator = generator_factory(setup.config.generator)(
        epsilon=setup.config.epsilon, delta=setup.config.delta, **options)
    rng = Streams(setup.config.seed).trace()
    model = generator.fit(setup.with_target, domain=setup.domain, rng=rng)
    write_trace(out / "trace", model.privacy_claim_.to_json(),
                num_teachers=int(getattr(model, "num_teachers_", 0)))


def run_audit(config: AuditConfig, *, out_dir: Path | str, resume: bool = False,
              force: bool = False, progress: bool = False) -> AuditResult:
    """Runs (or resumes) an audit, writes ``out_dir`` and returns its typed result
    (what ``result.json`` holds: :meth:`AuditResult.to_json` writes it).

    ``target = "auto"`` is resolved first (:func:`resolve_target`, in memory); the
    stored configuration then names the chosen row, so a resumed audit trains the
    same target without selecting again.

    Bad input raises :class:`InvalidParameterError` before anything is written.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`--out` {str(out)!r} exists and is not a directory.")
    if resume and not out.exists():
        raise InvalidParameterError(f"--resume: {str(out)!r} does not exist.")
    selection: Ranking | None = None
    if out.exists():
        config, selection = _prepare_directory(out, config, resume=resume, force=force)
    started = time.perf_counter()
    config, ranking = resolve_target(config, progress=progress)
    selection = ranking if ranking is not None else selection
    setup = build_setup(config, target_selection=selection)
    out.mkdir(parents=True, exist_ok=True)
    with ResultStore(out) as store:
        store.set_meta("config", config.to_json())
        store.set_meta("identity", config.identity())
        store.set_meta("version", dpaudit.__version__)
        if selection is not None:
            store.set_meta("target_selection", [[r, a] for r, a in selection])
        _train_all(setup, store, progress=progress)
        trained = time.perf_counter() - started
        result = analyse(setup, store)
    _write_training_trace(setup, out)
    result["timing"] = {"train_seconds": trained,
                        "total_seconds": time.perf_counter() - started}
    typed = AuditResult.from_json(result, source=out / "result.json")
    write_atomic(out / "result.json",
                 json.dumps(typed.to_json(), indent=2, allow_nan=False) + "\n")
    return typed
