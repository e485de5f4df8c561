"""One model's memory in training, by generator: the functions the registry's entries
declare (``GeneratorSpec.model_memory``).

Each is ``f(generator, *, rows, width, released) -> bytes``: ``generator`` the built
generator object (``None`` for a plug-in, which this process never builds), ``rows``
the training rows (``D u {target}``), ``width`` the encoded width ``p``, ``released``
the rows one release holds. The audit's two plans ask the registry for this figure
and nothing else: the memory plan (:mod:`dpaudit.audit.games.memory`, the host's
memory on the CPU) and the execution plan (:mod:`dpaudit.audit.games.execution`, the
rounds per CUDA batch). Estimates, not measurements: benchmarks/memory_plan.py
compares them with measured peaks.

>>> table_model_bytes(None, rows=100, width=3, released=10)
4140
"""

from __future__ import annotations

#: The margin on one model's estimate (measured PATE-GAN models: 20 MiB a model on
#: 1e5 rows with 800 teachers against 18 MiB unmargined; benchmarks/memory_plan.py).
MARGIN = 1.5
#: The bug flags whose teachers draw from all rows (pate_gan/seen.py): ``k`` sets of
#: ``n`` rows seen instead of one partition.
ALL_ROWS_FLAGS = ("shared_sampling", "repartition_every_iteration")


def _positive(value: object, default: int) -> int:
    return int(value) if isinstance(value, int) and value > 0 else default


def teachers_of(generator: object, rows: int) -> int:
    """The generator's teachers ``k`` (its config's ``num_teachers``), else
    ``max(1, rows // 100)``."""
    cfg = getattr(generator, "config", None)
    return _positive(getattr(cfg, "num_teachers", None), max(1, rows // 100))


def ensemble_bytes(
    *,
    rows: int,
    width: int,
    teachers: int,
    batch: int,
    steps: int,
    released: int,
) -> int:
    """A teacher-ensemble GAN's model, with a margin of :data:`MARGIN`.

    ``n`` rows, ``p`` encoded width, ``k`` teachers, ``b`` the batch, ``s`` the
    teacher steps: the encoded data and its copy with a ones column (``2 x 4 n p``),
    the networks of width ``h = max(p, 16)`` (three of three layers and ``k``
    teachers of one) with gradients and two Adam moments (``16 (8 + k)(p + 1) h``),
    one iteration's teacher row indices (``8 k s b``), one teacher step's rows and
    activations (``12 k b (p + h)``), the rows-seen ledger (``9 n``) and the release
    (``3 x 4 rows x p``).
    """
    n, p, k = rows, max(1, width), max(1, teachers)
    hidden = max(p, 16)
    data = 2 * 4 * n * p
    params = 16 * (8 + k) * (p + 1) * hidden
    indices = 8 * k * steps * batch  # every step's rows, drawn at once
    activations = 12 * k * batch * (p + hidden)  # one step through every teacher
    seen = 9 * n
    release = 3 * 4 * released * p
    return int(MARGIN * (data + params + indices + activations + seen + release))


def teacher_model_bytes(
    generator: object, *, rows: int, width: int, released: int
) -> int:
    """PATE-GAN's and G-PATE's model (:func:`ensemble_bytes` with the config's
    ``num_teachers``, ``batch_size`` and ``teacher_steps``; defaults ``rows // 100``,
    64 and 1), plus ``k n`` unmargined for the bug flags whose teachers draw from all
    rows (:data:`ALL_ROWS_FLAGS`)."""
    cfg = getattr(generator, "config", None)
    k = teachers_of(generator, rows)
    out = ensemble_bytes(
        rows=rows,
        width=width,
        teachers=k,
        batch=_positive(getattr(cfg, "batch_size", None), 64),
        steps=_positive(getattr(cfg, "teacher_steps", None), 1),
        released=released,
    )
    if any(getattr(cfg, flag, False) is True for flag in ALL_ROWS_FLAGS):
        out += k * rows
    return out


def table_model_bytes(
    generator: object, *, rows: int, width: int, released: int
) -> int:
    """A generator without networks (the toys): the data it keeps and its copy
    (``2 x 4 n p``) and the release (``3 x 4 rows x p``), with a margin of
    :data:`MARGIN`."""
    p = max(1, width)
    return int(MARGIN * (2 * 4 * rows * p + 3 * 4 * released * p))


def release_bytes(generator: object, *, rows: int, width: int, released: int) -> int:
    """A plug-in's or adapter's model, as this process holds it: the release only
    (``3 x 4 rows x p``; the model lives in the foreign worker, which ``--max-memory``
    bounds)."""
    return 3 * 4 * released * max(1, width)


__all__ = [
    "ALL_ROWS_FLAGS",
    "MARGIN",
    "ensemble_bytes",
    "release_bytes",
    "table_model_bytes",
    "teacher_model_bytes",
    "teachers_of",
]
