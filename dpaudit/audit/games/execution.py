"""Where and how an audit's rounds run: processes, batch size, out-of-memory retries.

On the CPU the rounds fan out over ``--jobs`` workers (default one per core): threads
by default (``--backend threading``: the training runs in torch kernels that release
the GIL, so threads use the cores without each worker process importing torch first;
on 2 cores they were faster end to end than ``loky`` processes on the default audit
and on GroundHog on Cervical Cancer: ``benchmarks/end_to_end.py --compare-backends``),
in batches of ``--batch-size`` rounds (default: about two batches a worker, 128 to
512 rounds each). On CUDA one process trains as many rounds per ``fit_many`` as the
GPU's free memory holds, estimated from the model sizes
(:func:`estimate_model_bytes`): worker processes would each initialise CUDA and share
one GPU. An explicit ``--jobs`` or ``--batch-size`` wins on either device.

Training groups. Every model draws only from its own streams (docs/soundness.md),
but floating-point kernels round differently with a model's place in a batched
tensor program (a transcendental activation's vectorised body and scalar tail, a
matmul's blocking): a model trained beside others agrees with its single fit to
float32 rounding (measured: at most 6e-8 in any parameter after 50 iterations), not
bit for bit. So the models trained together are fixed by the plan, not by the
execution: rounds ``r`` with the same ``r // TRAINING_GROUP[device]`` form one group
and are always trained as one ``fit_many``, and a batch (``--batch-size``, the unit of
work a worker takes and commits) is a whole number of groups. The result (every
stored feature, ``result.json``, the verdict) is then the same for any
``--batch-size``, ``--jobs`` and backend on one machine and device (tested); across
CPUs (Intel, AMD) and devices the training's rounding differs, and GAN training
carries such differences into different models, so audits on two devices agree in
distribution, not value (tests/audit/test_audit_cuda.py: the AUCs within sampling
error; measured on an H100 against this project's CPU, the default audit's headline
AUC 0.542 vs 0.507, both CONSISTENT: docs/scale.md "On a GPU").

A batch that runs out of GPU memory is halved and retried (:func:`run_halving`),
down to one round, and later batches of the process start at the size that fit. A
halved group is the one case where the result depends on the execution (this
device's memory); it is rare on the CPU, and the plan avoids it on CUDA where the
memory estimate allows (a CUDA batch smaller than a group is named in the plan's
reason).
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.setup import AuditSetup
from dpaudit.validation import require

T = TypeVar("T")

#: The most rounds one CUDA ``fit_many`` trains (4,096 PATE-GANs were measured to fit
#: an H100 with room to spare; larger batches gain little and commit less often).
MAX_CUDA_BATCH = 4096
#: The most rounds one CPU ``fit_many`` trains by default: larger batches spend less
#: Python time per model (512 rounds took 20% less CPU time than 4 x 128 on the
#: worst case) but commit to the store less often and balance the workers worse.
MAX_CPU_BATCH = 512
#: Rounds per training group, by device: the rounds trained together as one
#: ``fit_many`` (module docstring). 128 on the CPU (larger groups gain little there:
#: 512 rounds took 20% less CPU time than 4 x 128), 1,024 on CUDA.
TRAINING_GROUP = {"cpu": 128, "cuda": 1024}
#: The share of the GPU's free memory the batch is sized to fill (the rest is slack
#: for the estimate's error, the allocator's fragmentation and the attacks).
CUDA_MEMORY_SHARE = 0.5


def _default(name: str) -> Any:
    return next(f.default for f in fields(AuditConfig) if f.name == name)


DEFAULT_JOBS: int = _default("jobs")
DEFAULT_BATCH_SIZE: int = _default("batch_size")


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecutionPlan:
    """How the rounds run.

    Attributes:
        device: ``cpu`` or ``cuda`` (``auto`` resolved).
        jobs: workers, threads or processes by the backend (``-1``: one per CPU
            core).
        batch_size: rounds per ``fit_many``.
        reason: one sentence saying why, for logs and benchmarks.
    """

    device: str
    jobs: int
    batch_size: int
    reason: str


def training_group(device: str) -> int:
    """Rounds per training group on ``device`` (``auto`` resolved first)."""
    return TRAINING_GROUP[resolve_device(device)]


def in_groups(indices: Sequence[int], size: int) -> list[list[int]]:
    """``indices`` (ascending) split into their training groups: runs of indices
    with the same ``index // size``.

    >>> in_groups([0, 1, 2, 5, 6, 9], 3)
    [[0, 1, 2], [5], [6], [9]]
    """
    require(size >= 1, "size", "an integer >= 1", size)
    out: list[list[int]] = []
    for i in indices:
        if out and out[-1][-1] // size == i // size:
            out[-1].append(int(i))
        else:
            out.append([int(i)])
    return out


def whole_groups(rounds: int, group: int) -> int:
    """``rounds`` rounded up to a whole number of training groups of ``group``."""
    return max(1, math.ceil(rounds / group)) * group


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` where CUDA is available, else ``cpu``; ``cuda`` where
    CUDA is not available is refused (bad input, before anything runs)."""
    if device == "cpu":
        return device
    import torch

    available = torch.cuda.is_available()
    require(
        device != "cuda" or available,
        "device",
        "cpu or auto on this machine (CUDA is not available)",
        device,
    )
    return "cuda" if available else "cpu"


def plan_execution(
    config: AuditConfig,
    *,
    n_rounds: int,
    model_bytes: int | None = None,
    free_bytes: int | None = None,
    device: str | None = None,
    batched: bool = True,
) -> ExecutionPlan:
    """The plan for ``n_rounds`` rounds of ``config``.

    Args:
        config: the audit; ``jobs`` other than -1 and ``batch_size`` other than the
            default (128) are the user's and are kept (an explicit 128 cannot be told
            from the default).
        n_rounds: rounds to run (both worlds).
        model_bytes: the estimated device memory of one model in training
            (:func:`estimate_model_bytes`); CUDA only.
        free_bytes: the GPU's free memory; CUDA only.
        device: the resolved device (default: ``config.device`` resolved).
        batched: whether the generator trains several models as one tensor program
            (``fit_many``); only then is a batch made of whole training groups (a
            generator fitted model by model gives the same models in any batch).
    """
    require(n_rounds >= 1, "n_rounds", "an integer >= 1", n_rounds)
    device = device or resolve_device(config.device)
    user_batch = config.batch_size != DEFAULT_BATCH_SIZE
    group = TRAINING_GROUP[device] if batched else 1
    if device != "cuda":
        # On the CPU a batch is always whole training groups (a group of models
        # fits any machine this runs on).
        if user_batch:
            batch = whole_groups(config.batch_size, group)
            return ExecutionPlan(
                device=device,
                jobs=config.jobs,
                batch_size=batch,
                reason=f"CPU: {config.backend} workers, the batch "
                f"size given in whole training groups of "
                f"{group} rounds",
            )
        workers = cpu_cores() if config.jobs == -1 else config.jobs
        batch = min(
            MAX_CPU_BATCH,
            max(DEFAULT_BATCH_SIZE, math.ceil(n_rounds / (2 * max(workers, 1)))),
        )
        return ExecutionPlan(
            device=device,
            jobs=config.jobs,
            batch_size=whole_groups(batch, group),
            reason=f"CPU: {workers} {config.backend} worker(s), about two batches each",
        )
    jobs = 1 if config.jobs == DEFAULT_JOBS else config.jobs
    if user_batch:
        if config.batch_size >= group:
            return ExecutionPlan(
                device=device,
                jobs=jobs,
                batch_size=config.batch_size // group * group,
                reason="CUDA: the batch size given, in whole "
                f"training groups of {group} rounds",
            )
        return ExecutionPlan(
            device=device,
            jobs=jobs,
            batch_size=config.batch_size,
            reason=f"CUDA: the batch size given, smaller than a "
            f"training group of {group} rounds: the result "
            "depends on it",
        )
    if model_bytes is None or free_bytes is None:
        batch = min(n_rounds, MAX_CUDA_BATCH)
        reason = "CUDA: every round in one batch (no memory estimate)"
    else:
        require(model_bytes >= 1, "model_bytes", "an integer >= 1", model_bytes)
        fit = int(CUDA_MEMORY_SHARE * max(free_bytes, 0) // model_bytes)
        batch = max(1, min(n_rounds, MAX_CUDA_BATCH, fit))
        reason = (
            f"CUDA: {batch} rounds per batch ({model_bytes / 2**20:.2f} MiB a "
            f"model, {free_bytes / 2**30:.1f} GiB free)"
        )
    # Several processes on one GPU split its memory.
    per_job = max(1, math.ceil(n_rounds / max(jobs, 1)))
    batch = min(batch, per_job)
    if batch >= n_rounds:
        pass  # every round in one batch: whole groups
    elif batch >= group:
        batch = batch // group * group
    else:
        reason += (
            f"; fewer rounds than a training group of {group} fit: the result "
            "depends on this GPU's memory"
        )
    return ExecutionPlan(device=device, jobs=jobs, batch_size=batch, reason=reason)


def cpu_cores() -> int:
    """CPU cores this process may use (what ``--jobs -1`` starts workers for)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def cuda_free_bytes() -> int:
    """Free memory of the current CUDA device, in bytes."""
    import torch

    free, _total = torch.cuda.mem_get_info()
    return int(free)


def estimate_model_bytes(setup: AuditSetup) -> int:
    """Device memory one model of ``setup``'s audit needs in training, estimated
    (:meth:`~dpaudit.audit.games.resolved.ResolvedAudit.model_bytes` of its
    generator on ``D u {target}``, releasing the audit's rows: the memory plan's
    figure). An underestimate costs an out-of-memory retry (:func:`run_halving`),
    an overestimate only a smaller batch."""
    resolved = setup.resolved
    return resolved.model_bytes(
        setup.make_generator(),
        rows=resolved.train_rows,
        width=resolved.width,
        released=resolved.synthetic_rows,
    )


def plan_for_setup(setup: AuditSetup) -> ExecutionPlan:
    """The plan for ``setup``'s audit on this machine (the hook of ``run_audit``)."""
    config = setup.config
    device = resolve_device(config.device)
    batched = setup.resolved.batched
    if device != "cuda":
        return plan_execution(
            config, n_rounds=setup.plan.n_rounds, device=device, batched=batched
        )
    return plan_execution(
        config,
        n_rounds=setup.plan.n_rounds,
        device=device,
        model_bytes=estimate_model_bytes(setup),
        free_bytes=cuda_free_bytes(),
        batched=batched,
    )


# --------------------------------------------------------------------------------
# Out-of-memory retries.

# The largest batch known to fit, per audit (its JSON config), in this process.
_LIMITS: dict[str, int] = {}


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is a device out-of-memory error (CUDA's, or an allocator's
    "out of memory" RuntimeError)."""
    import torch

    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def _release_cached_memory() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_halving(
    rounds: Sequence[int], work: Callable[[list[int]], list[T]], *, key: str
) -> list[T]:
    """``work`` over ``rounds`` in consecutive chunks; a chunk that runs out of device
    memory is halved and retried.

    Chunks start at the largest size known to fit for ``key`` in this process (all of
    ``rounds`` at first); after an out-of-memory error that size halves for the rest
    of the process, so one failure is not paid for on every batch. ``work`` must give
    each round's result independently of its chunk mates (the generators' per-model
    streams ensure it), so the results equal one unhalved call's.

    Args:
        rounds: the rounds, in order.
        work: trains and releases a chunk of rounds, one result per round, in order.
        key: the audit this process remembers the fitting size for.

    Returns:
        The results of every round, in the order of ``rounds``.

    Raises:
        The out-of-memory error itself when one round alone does not fit.
    """
    todo = list(rounds)
    out: list[T] = []
    while todo:
        size = min(len(todo), _LIMITS.get(key, len(todo)))
        chunk = todo[:size]
        try:
            results = work(chunk)
        except Exception as error:
            if not is_out_of_memory(error) or size == 1:
                raise
            _LIMITS[key] = max(1, size // 2)
            results = None
        if results is None:
            # Outside the handler: the failed attempt's tensors, held by the
            # traceback until now, can be freed.
            _release_cached_memory()
            continue
        require(
            len(results) == len(chunk),
            "work",
            "one result per round",
            f"{len(results)} for {len(chunk)} rounds",
        )
        out.extend(results)
        todo = todo[size:]
    return out


def learned_limit(key: str) -> int | None:
    """The batch size ``run_halving`` fell back to for ``key`` in this process."""
    return _LIMITS.get(key)


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
