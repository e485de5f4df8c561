"""The audit's memory plan: its peak estimated before anything is allocated or written.

:func:`check_memory` runs first in :func:`~dpaudit.audit.run.run_audit`, before the
output folder, the store, the game's plan or any model exists. It refuses an audit
whose estimated peak exceeds the limit with one line naming the input that drives it
(``rounds``, the table's rows, the domain's width, ``--batch-size`` / ``--jobs``)
and the limit.

The limit: ``--max-memory`` (MiB) where given and the generator runs in dpaudit's
process (the user's word: it may exceed what is free now); for a foreign generator
``--max-memory`` bounds each of its worker processes instead
(:mod:`dpaudit.generators.foreign`), and the plan's limit is the memory free now.
Otherwise the memory free now: ``MemAvailable`` of ``/proc/meminfo``, or the cgroup's
limit less its usage where that is lower. Where neither can be read (not Linux), no
audit is refused.

The process's own limits bound every one of these (:func:`rlimit_available`): an
address-space limit (``ulimit -v``, ``RLIMIT_AS``, common on shared clusters) or a
data limit (``ulimit -d``, ``RLIMIT_DATA``), less what the process already maps
beyond ``BASE`` (``VmSize`` or ``VmData`` of ``/proc/self/status``; ``BASE`` is in
the estimate). The lowest limit is the one used, and every refusal names it.

The model of the peak, in bytes (``n`` rows of ``D``, ``c`` columns, ``p`` encoded
width, ``k`` teachers, ``b`` the generator's batch and ``s`` its teacher steps, ``R``
rounds per world; estimates, not measurements):

- ``BASE`` (450 MiB): the interpreter with torch, pandas and dpaudit imported.
- the table: ``D``, ``D u {target}`` and the loaded table as frames (``24 n c``) and
  their encodings (``2 x 8 n p``); checked first from the file's size (three times the
  CSV's bytes) before the file is read.
- the models trained at once: ``min(2R, workers x batch)`` (the execution plan of
  :mod:`dpaudit.audit.games.execution`; on the CPU a batch is whole training groups of
  ``TRAINING_GROUP`` rounds, so one group is the least), each
  :func:`~dpaudit.audit.games.execution.model_bytes`: the function the generator's
  registry entry declares
  (``GeneratorSpec.model_memory``, :mod:`dpaudit.generators.model_memory`; the
  execution plan sizes a CUDA batch from the same figure). PATE-GAN and G-PATE: the
  encoded data and its copy with a ones column (``2 x 4 n p``), the networks of width
  ``h = max(p, 16)`` (three of three layers and ``k`` teachers of one) with
  gradients and two Adam moments (``16 (8 + k)(p + 1) h``), one iteration's teacher
  row indices (``8 k s b``), one teacher step's rows and activations (``12 k b (p +
  h)``), the rows-seen ledger (``9 n``) and the release (``3 x 4 rows x p``), all
  times ``MARGIN`` (1.5); ``k n`` more for the two bug variants whose teachers draw
  from all rows (``shared_sampling``, ``repartition_every_iteration``:
  pate_gan/seen.py). The toys: the data and the release, times ``MARGIN``. Under
  ``--release transcript`` three times as many: the likelihood-ratio attack replays
  a group's ``G`` transcripts in both worlds (``2G`` more models) while the group's
  own are held. With a trace (PATE-GAN,
  the audit's traced round) ``TRACE_BYTES`` more. A foreign generator's models live
  in its worker processes (each bounded by ``max_memory``): only the release counts
  here. On CUDA the models are on the GPU (the execution plan sizes the batch from
  its free memory): only the data of one batch, filled on the host, counts.
- the rounds: ``ROUND_BYTES`` a round (its random stream, about 2.6 KiB measured,
  and its place in the plan) plus ``FEATURE_BYTES`` per attack (its feature vector
  in the analysis), for ``2R`` rounds and, with ``target = "auto"``, the selection
  pools (``2 x selection_rounds`` more, and as many models trained at once).
- other: with ``--backend loky`` every worker process holds its own ``BASE`` and
  table; the traced round's ``TRACE_BYTES``.

The one-run game's plan (:func:`plan_one_run`): the design's table, one model at a
time (its fits run one after the other) on the base and every canary, and each
fit's canaries; ``--max-memory`` bounds it as the two-world game's.

benchmarks/memory_plan.py compares the estimate with the measured peak (``VmHWM``)
of real audits; the estimate is meant to be above it, not exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.resolved import ResolvedAudit, lookup, resolve
from dpaudit.data import Dataset
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.model_memory import ensemble_bytes, teachers_of

if TYPE_CHECKING:
    from dpaudit.generators.registry import GeneratorSpec

MIB = 2**20
GIB = 2**30
#: The interpreter with torch, pandas and dpaudit imported (measured: about 400 MiB).
BASE_BYTES = 450 * MIB
#: Per round: its stream (measured 2.6 KiB) and its place in the plan and the store.
ROUND_BYTES = 4096
#: Per round and attack: the feature vector the analysis holds (up to 1,000 floats).
FEATURE_BYTES = 8192
#: The traced round's teacher losses (about ``LOSS_CHUNK`` rows x teachers at once,
#: dpaudit/generators/pate_gan/teachers.py; measured 138 MiB on 1e5 rows).
TRACE_BYTES = 192 * MIB


@dataclass(frozen=True, kw_only=True, slots=True)
class Limit:
    """The memory an audit may use: ``bytes`` and where the figure comes from."""

    bytes: int
    source: str


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryPlan:
    """The estimated peak of an audit, in bytes, by part (see the module)."""

    base: int
    table: int
    models: int
    rounds: int
    other: int
    model_bytes: int
    models_at_once: int
    least_models_at_once: int
    rows: int
    encoded_width: int
    teachers: int
    #: The attacks and the rows released a model: the resolved audit's, as the
    #: setup's (tests/audit/test_resolved.py holds them equal).
    attacks: tuple[str, ...] = ()
    synthetic_rows: int = 0

    @property
    def total(self) -> int:
        return self.base + self.table + self.models + self.rounds + self.other


def meminfo_available(path: str = "/proc/meminfo") -> int | None:
    """``MemAvailable`` in bytes, or None where it cannot be read."""
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def cgroup_available(root: str = "/sys/fs/cgroup") -> int | None:
    """The cgroup's memory limit less its usage (v2, then v1), or None."""
    for limit_name, usage_name in (
        ("memory.max", "memory.current"),
        ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes"),
    ):
        try:
            limit_text = Path(root, limit_name).read_text().strip()
            usage = int(Path(root, usage_name).read_text().strip())
        except (OSError, ValueError):
            continue
        if not limit_text.isdigit() or int(limit_text) >= 2**60:
            return None  # "max" or v1's "unlimited" sentinel
        return max(0, int(limit_text) - usage)
    return None


def _status_bytes(field: str, path: str = "/proc/self/status") -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmSize``, ``VmData``) in bytes."""
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


#: The process limits the plan reads: (resource name, ``ulimit`` flag, the
#: ``/proc/self/status`` field of what the process uses of it).
_RLIMITS = (("RLIMIT_AS", "-v", "VmSize"), ("RLIMIT_DATA", "-d", "VmData"))


def rlimit_available() -> Limit | None:
    """The lowest of the process's address-space and data limits (``RLIMIT_AS``,
    ``RLIMIT_DATA``), less what the process already uses of it beyond
    :data:`BASE_BYTES` (which the estimate counts); None where neither is set.

    >>> rlimit_available() is None or "RLIMIT" in rlimit_available().source
    True
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    best: Limit | None = None
    for name, flag, field in _RLIMITS:
        soft, _ = resource.getrlimit(getattr(resource, name))
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        beyond = max(0, (_status_bytes(field) or 0) - BASE_BYTES)
        room = max(0, int(soft) - beyond)
        if best is None or room < best.bytes:
            less = f" less {_fmt(beyond)} this process already uses" if beyond else ""
            best = Limit(
                bytes=room,
                source=f"the {name} limit (ulimit {flag}) of {_fmt(soft)}{less}",
            )
    return best


def _lowest(*limits: Limit | None) -> Limit | None:
    found = [limit for limit in limits if limit is not None]
    return min(found, key=lambda limit: limit.bytes) if found else None


def memory_limit(config: AuditConfig, *, foreign: bool = False) -> Limit | None:
    """The limit in force for ``config`` (module docstring), or None. ``foreign``:
    the generator runs in worker processes, which ``--max-memory`` bounds instead.
    The process's limits (:func:`rlimit_available`) bound ``--max-memory`` too."""
    if config.max_memory is not None and not foreign:
        asked = Limit(bytes=int(config.max_memory) * MIB, source="--max-memory")
        return _lowest(asked, rlimit_available())
    return system_limit()


def system_limit() -> Limit | None:
    """The memory available now: MemAvailable, or the cgroup's limit less its usage
    where that is lower, or the process's own limit where that is lower still
    (:func:`rlimit_available`); None where none can be read."""
    free = meminfo_available()
    group = cgroup_available()
    own = rlimit_available()
    if group is not None and (free is None or group < free):
        return _lowest(
            Limit(bytes=group, source="the cgroup's memory limit less its usage"), own
        )
    if free is None:
        return own
    return _lowest(Limit(bytes=free, source="MemAvailable in /proc/meminfo"), own)


def _fmt(nbytes: float) -> str:
    if nbytes >= 1024 * GIB:
        return f"{nbytes / (1024 * GIB):.1f} TiB"
    if nbytes >= GIB:
        return f"{nbytes / GIB:.1f} GiB"
    return f"{nbytes / MIB:.0f} MiB"


def _limit_text(limit: Limit) -> str:
    verb = "is allowed" if limit.source == "--max-memory" else "is available"
    return f"{_fmt(limit.bytes)} {verb} ({limit.source})"


def _rounds_bytes(config: AuditConfig, attacks: int) -> int:
    rounds = 2 * int(config.rounds)
    if config.target == "auto":
        rounds += 2 * int(config.selection_rounds)
    return rounds * (ROUND_BYTES + FEATURE_BYTES * max(1, attacks))


def _resolve(
    config: AuditConfig,
    load: Callable[[], Dataset] | None,
    spec: GeneratorSpec | None = None,
) -> ResolvedAudit:
    """``config`` resolved on the table ``load`` gives (default: ``config``'s)."""
    from dpaudit.audit.games.setup import load_audit_data

    dataset = load() if load is not None else load_audit_data(config)
    return resolve(config, dataset=dataset, spec=spec)


def _file_bytes(config: AuditConfig) -> int | None:
    path = Path(config.dataset)
    try:
        return path.stat().st_size if path.is_file() else None
    except OSError:
        return None


def plan_memory(
    config: AuditConfig,
    *,
    load: Callable[[], Dataset] | None = None,
    resolved: ResolvedAudit | None = None,
) -> MemoryPlan:
    """The estimated peak of ``config``'s audit (module docstring), from the audit
    as resolved once (``resolved``: the rows, attacks, options and capabilities the
    setup reads; resolved here from ``load``'s table where not given). Builds a
    generator that runs in this process, as the setup will; trains nothing."""
    from dpaudit.audit.games.execution import (
        TRAINING_GROUP,
        cpu_cores,
        plan_execution,
        resolve_device,
    )

    if resolved is None:
        resolved = _resolve(config, load)
    n, p = resolved.train_rows, resolved.width
    c = max(1, resolved.columns)
    table = 24 * n * c + 2 * 8 * n * p
    # A foreign generator is not built here: that would start its worker and import
    # the plug-in (the setup does, after this check).
    foreign = resolved.foreign
    generator: object = None if foreign else resolved.build()
    k = teachers_of(generator, n)
    released = resolved.synthetic_rows
    batched = resolved.batched
    device = resolve_device(config.device)
    n_rounds = 2 * int(config.rounds)
    if config.target == "auto":
        n_rounds = max(n_rounds, 2 * int(config.selection_rounds))
    execution = plan_execution(config, n_rounds=n_rounds, device="cpu", batched=batched)
    workers = cpu_cores() if execution.jobs == -1 else max(1, execution.jobs)
    if config.backend == "dask":
        workers = 1  # the workers are elsewhere; this process holds one batch
    at_once = min(n_rounds, workers * execution.batch_size)
    least = min(n_rounds, TRAINING_GROUP["cpu"] if batched else 1)
    if foreign:
        # Its worker holds the model: the spec counts what comes back.
        per_model = resolved.spec.model_bytes(None, rows=n, width=p, released=released)
    elif device == "cuda":
        per_model = 4 * n * p  # the batch's data, filled on the host
        at_once = least = min(n_rounds, execution.batch_size)
    else:
        per_model = resolved.model_bytes(generator, rows=n, width=p, released=released)
    extra = (workers - 1) * (BASE_BYTES + table) if config.backend == "loky" else 0
    if not foreign and device != "cuda" and resolved.trace_switch is not None:
        extra += TRACE_BYTES
    return MemoryPlan(
        base=BASE_BYTES,
        table=table,
        models=at_once * per_model,
        rounds=_rounds_bytes(config, len(resolved.attacks)),
        other=extra,
        model_bytes=per_model,
        models_at_once=at_once,
        least_models_at_once=least,
        rows=n,
        encoded_width=p,
        teachers=k,
        attacks=resolved.attacks,
        synthetic_rows=released,
    )


def _refuse_below_base(limit: Limit) -> None:
    if limit.bytes < BASE_BYTES:
        raise InvalidParameterError(
            f"dpaudit itself needs about {_fmt(BASE_BYTES)} (Python with torch and "
            f"pandas loaded) but {_limit_text(limit)}; raise --max-memory or free "
            "memory."
        )


def _early_refusal(config: AuditConfig, limit: Limit) -> None:
    """Refuses from the configuration alone, before the table is read: the rounds,
    a worst case's rows, a CSV's size."""
    from dpaudit.datasets.names import WORST_CASE_NAMES

    worst_case = config.dataset in WORST_CASE_NAMES
    _refuse_below_base(limit)
    rounds = _rounds_bytes(config, 1)
    if BASE_BYTES + rounds > limit.bytes:
        count = 2 * int(config.rounds)
        name, value = "rounds", config.rounds
        if config.target == "auto":
            count += 2 * int(config.selection_rounds)
            if config.selection_rounds > config.rounds:
                name, value = "selection_rounds", config.selection_rounds
        raise InvalidParameterError(
            f"`{name}` = {value} needs about {_fmt(rounds)} for the rounds "
            f"alone ({count} rounds, about {ROUND_BYTES // 1024} KiB "
            f"each before the attacks' features) but {_limit_text(limit)}; use fewer "
            f"{'selection rounds' if name == 'selection_rounds' else 'rounds'}."
        )
    if config.synthetic_rows is not None:
        # A release of one encoded column per row, three float32 copies: the least.
        need = BASE_BYTES + 3 * 4 * int(config.synthetic_rows)
        if need > limit.bytes:
            raise InvalidParameterError(
                f"`synthetic_rows` = {config.synthetic_rows} needs about {_fmt(need)} "
                f"for one release alone but {_limit_text(limit)}; release fewer rows."
            )
    if worst_case and config.dataset_rows is not None:
        need = BASE_BYTES + 3 * 24 * 4 * int(config.dataset_rows)
        if need > limit.bytes:
            raise InvalidParameterError(
                f"`--dataset-rows` = {config.dataset_rows} needs about {_fmt(need)} "
                f"for the table alone but {_limit_text(limit)}; use fewer rows."
            )
    size = _file_bytes(config)
    if size is not None and BASE_BYTES + 3 * size > limit.bytes:
        raise InvalidParameterError(
            f"`--dataset` {config.dataset!r} ({_fmt(size)}) needs about "
            f"{_fmt(BASE_BYTES + 3 * size)} to load but {_limit_text(limit)}; use a "
            "smaller table."
        )


def check_memory(
    config: AuditConfig,
    *,
    load: Callable[[], Dataset] | None = None,
    resolver: Callable[[], ResolvedAudit] | None = None,
    spec: GeneratorSpec | None = None,
) -> MemoryPlan | None:
    """Refuses ``config``'s audit when its estimated peak exceeds the limit.

    Returns the plan (None where no limit can be read). The refusals from the
    configuration alone come first, before the table is read; then the audit is
    resolved (``resolver``: the audit's own resolver, called once, with ``spec``
    the registry entry it holds; else resolved here from the table ``load``
    gives) and planned (:func:`plan_memory`).

    Raises:
        InvalidParameterError: one line naming the input that drives the estimate
            and the limit.
    """
    spec = lookup(config) if spec is None else spec
    limit = memory_limit(config, foreign=spec.plugin)
    if limit is None:
        return None
    _early_refusal(config, limit)
    resolved = resolver() if resolver is not None else _resolve(config, load, spec)
    plan = plan_memory(config, resolved=resolved)
    refuse_over(config, plan, limit)
    return plan


def refuse_over(config: AuditConfig, plan: MemoryPlan, limit: Limit) -> None:
    """Refuses ``plan`` above ``limit``, naming the input that drives it.

    Raises:
        InvalidParameterError: one line naming that input and the limit.
    """
    if plan.total <= limit.bytes:
        return
    least = plan.total - plan.models + plan.least_models_at_once * plan.model_bytes
    if plan.rounds >= max(plan.models, plan.table):
        raise InvalidParameterError(
            f"`rounds` = {config.rounds} needs about {_fmt(plan.total)} in all "
            f"({_fmt(plan.rounds)} for the rounds) but {_limit_text(limit)}; use "
            "fewer rounds."
        )
    if least <= limit.bytes:
        raise InvalidParameterError(
            f"training {plan.models_at_once} models at once (`--jobs` x "
            f"`--batch-size`) needs about {_fmt(plan.total)} ({_fmt(plan.model_bytes)} "
            f"a model) but {_limit_text(limit)}; lower --jobs or --batch-size (down "
            f"to {plan.least_models_at_once} models at once fits)."
        )
    what = (
        f"`--domain` (encoded width {plan.encoded_width}: one column per category)"
        if plan.encoded_width * 8 >= plan.rows or plan.encoded_width >= 1000
        else f"`--dataset` ({plan.rows} rows, {plan.teachers} teachers)"
    )
    raise InvalidParameterError(
        f"{what} needs about {_fmt(plan.model_bytes)} a model and "
        f"{_fmt(least)} for the least batch ({plan.least_models_at_once} models) "
        f"but {_limit_text(limit)}; use a smaller table or domain, or raise "
        "--max-memory if the estimate is too high (docs/scale.md)."
    )


#: Per canary and fit of the one-run game: its row in the design, its bit, its
#: score and its place in the ranking.
CANARY_BYTES = 256


def plan_one_run(config: AuditConfig, *, resolved: ResolvedAudit) -> MemoryPlan:
    """The estimated peak of a one-run audit: the design's table (the base and
    every canary) and its encodings, one model at a time (the fits run one after
    the other; ``resolved.model_bytes``; a foreign generator's model lives in its
    worker: its release as a frame only) and, per fit, every canary's bit and score."""
    n, p = resolved.train_rows, resolved.width
    # Foreign: frames in and out (a transcript is checked after the fit), no encoding.
    c = max(1, resolved.columns)
    encoded = 0 if resolved.foreign else 2 * 8 * n * p
    table = 24 * n * c + encoded
    released = resolved.synthetic_rows
    generator: object = None if resolved.foreign else resolved.build()
    if resolved.foreign:
        per_model = 0 if config.release == "transcript" else 24 * released * c
    else:
        per_model = resolved.model_bytes(generator, rows=n, width=p, released=released)
    return MemoryPlan(
        base=BASE_BYTES,
        table=table,
        models=per_model,
        rounds=int(config.fits) * (ROUND_BYTES + CANARY_BYTES * int(config.canaries)),
        other=0,
        model_bytes=per_model,
        models_at_once=1,
        least_models_at_once=1,
        rows=n,
        encoded_width=p,
        teachers=teachers_of(generator, n),
        synthetic_rows=released,
    )


def check_one_run_memory(
    config: AuditConfig, resolved: ResolvedAudit
) -> MemoryPlan | None:
    """Refuses a one-run audit whose estimated peak (:func:`plan_one_run`) exceeds
    the limit (``--max-memory`` for a generator in this process, else the memory
    available now; a foreign generator's workers are bounded by ``--max-memory``
    themselves), before any fit; the plan, or None where no limit can be read.

    Raises:
        InvalidParameterError: one line naming the input that drives the estimate
            (``--canaries``, ``--fits``, ``--synthetic-rows``, the table) and the
            limit.
    """
    limit = memory_limit(config, foreign=resolved.foreign)
    if limit is None:
        return None
    _refuse_below_base(limit)
    plan = plan_one_run(config, resolved=resolved)
    if plan.total <= limit.bytes:
        return plan
    if plan.rounds >= max(plan.models, plan.table):
        raise InvalidParameterError(
            f"`--canaries` = {config.canaries} over `--fits` = {config.fits} needs "
            f"about {_fmt(plan.total)} in all ({_fmt(plan.rounds)} for the canaries' "
            f"scores) but {_limit_text(limit)}; use fewer canaries or fits."
        )
    if config.synthetic_rows is not None and 3 * plan.synthetic_rows >= 2 * plan.rows:
        what = f"`--synthetic-rows` = {plan.synthetic_rows} (rows released a fit)"
        fix = "release fewer rows or use fewer canaries"
    else:
        what = f"`--canaries` = {config.canaries} ({plan.rows} rows a fit)"
        fix = "use fewer canaries"
    raise InvalidParameterError(
        f"{what} needs about {_fmt(plan.total)} ({_fmt(plan.model_bytes)} the model) "
        f"but {_limit_text(limit)}; {fix}, or raise --max-memory if the estimate is "
        "too high (docs/scale.md)."
    )


def check_fit_memory(*, rows: int, width: int, released: int) -> None:
    """``dpaudit fit``'s plan: one model on ``rows`` rows of encoded ``width``
    releasing ``released`` rows (a teacher ensemble's model with one teacher, the
    least: :func:`~dpaudit.generators.model_memory.ensemble_bytes`),
    refused above the memory available now.

    Raises:
        InvalidParameterError: naming ``--rows`` or the table, whichever dominates.
    """
    limit = system_limit()
    if limit is None:
        return
    p = max(1, width)
    need = BASE_BYTES + ensemble_bytes(
        rows=rows, width=p, teachers=1, batch=64, steps=1, released=released
    )
    if need <= limit.bytes:
        return
    if 3 * released >= 2 * rows:
        raise InvalidParameterError(
            f"`--rows` = {released} needs about {_fmt(need)} (encoded width {p}) but "
            f"{_limit_text(limit)}; release fewer rows."
        )
    raise InvalidParameterError(
        f"`--dataset` ({rows} rows, encoded width {p}) needs about {_fmt(need)} but "
        f"{_limit_text(limit)}; use a smaller table or domain."
    )


def describe(plan: MemoryPlan) -> str:
    """One line of the plan's parts (for benchmarks and logs)."""
    return (
        f"estimate {_fmt(plan.total)}: base {_fmt(plan.base)}, table "
        f"{_fmt(plan.table)}, models {plan.models_at_once} x "
        f"{_fmt(plan.model_bytes)}, rounds {_fmt(plan.rounds)}"
        + (f", other {_fmt(plan.other)}" if plan.other else "")
    )


__all__ = [
    "Limit",
    "MemoryPlan",
    "check_memory",
    "check_one_run_memory",
    "describe",
    "memory_limit",
    "plan_memory",
    "plan_one_run",
    "rlimit_available",
    "transcript_memory",
]


def transcript_memory(config: AuditConfig) -> int | None:
    """The memory the transcripts one worker holds at once may take (``None``: no
    limit can be read): the memory available now (:func:`system_limit`) less the
    interpreter's base, shared by the workers of ``config.jobs``."""
    from dpaudit.audit.games.execution import cpu_cores

    limit = system_limit()
    if limit is None:
        return None
    workers = cpu_cores() if config.jobs == -1 else max(1, int(config.jobs))
    return max(0, limit.bytes - BASE_BYTES) // workers
