"""Teacher partitions: each record assigned to a teacher independently and uniformly.

Why not a balanced split (a random permutation cut into ``k`` equal parts, as the
published code does): adding one record to a balanced split moves the boundaries
between parts, so a second teacher's data changes with positive probability
(``(k - r - 1) q / (n + 1)`` for ``n = qk + r``; 0.40 for ``n = 4, k = 2``), and one
record then moves two teachers' votes while the accountant charges one.

Here record ``i`` draws ``(u_i, v_i)``, two uniforms from the public stream, in row
order, and goes to teacher ``floor(k u_i)``; ``v_i`` orders the records of a teacher
(its batch cycle). The draws of record ``i`` are the ``i``-th pair of one sequential
stream, so they do not depend on the number of rows: for a fixed public stream,
appending a record to the data (the game's ``D u {target}``, target last) leaves every
other record with its teacher and its key, and changes exactly one teacher's data (the
target's). Hence, conditioned on the public stream, every vote histogram of
``D u {target}`` differs from that of ``D`` by one teacher's vote at most, the
sensitivity Confident-GNMax's accountant charges (add/remove neighbours;
docs/soundness.md): only the target's teacher sees different data, every other
teacher's state is a function of its own (unchanged) rows and of answers already
released. That holds for every fixed public stream when the record differing is the
last row, the game's relation. For a record at any other position the draws of the
later rows shift, and the guarantee holds over the public stream's randomness
instead: assignments are i.i.d., so the partitions of ``D`` and ``D - {x}`` can be
coupled to keep every common record with its teacher, and a mixture (same weights)
of pairs that are each ``(epsilon, delta)``-indistinguishable is
``(epsilon, delta)``-indistinguishable. A teacher may receive no record; it then
trains on generated rows only (its real-data loss is weighted 0).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor

from dpaudit.rng import Rngs


def assign_teachers(
    n: int, k: int, *, rng: Rngs
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each record's teacher and its order key, from ``rng`` (a public stream).

    Draws come from a fresh NumPy generator seeded with ``rng``'s seed sequence, two
    uniforms per record in row order, so a record's assignment does not depend on
    ``n`` (the first ``n`` assignments of ``n + 1`` records are those of ``n``).

    >>> t, _ = assign_teachers(5, 3, rng=Rngs.from_seed(0))
    >>> t2, _ = assign_teachers(6, 3, rng=Rngs.from_seed(0))
    >>> bool((t2[:5] == t).all())
    True

    Returns:
        ``teacher[n]`` in ``0 .. k-1`` and ``key[n]`` in ``[0, 1)``.
    """
    u = np.random.default_rng(rng.seed_sequence).random((n, 2))
    teacher = np.minimum(np.floor(u[:, 0] * k), k - 1).astype(np.int64)
    return teacher, u[:, 1]


def teacher_table(
    teacher: NDArray[np.int64], key: NDArray[np.float64], k: int, width: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every teacher's rows, in key order, as a padded table.

    Returns:
        ``rows[k, width]`` (row indices; padding repeats a valid row and is never
        read) and ``sizes[k]`` (the number of rows of each teacher, possibly 0).
    """
    order = np.lexsort((key, teacher))
    sizes = np.bincount(teacher, minlength=k).astype(np.int64)
    starts = np.cumsum(sizes) - sizes
    offset = np.arange(width, dtype=np.int64)[None, :]
    pos = np.where(offset < sizes[:, None], starts[:, None] + offset, 0)
    return order[pos].astype(np.int64), sizes


def partition_rows(
    assignments: Sequence[tuple[NDArray[np.int64], NDArray[np.float64]]],
    k: int,
    stride: int,
    device: torch.device,
) -> tuple[Tensor, Tensor]:
    """Row indices (into the stacked, padded data of ``M`` models) of every
    teacher's partition: model ``m``'s rows sit at ``m * stride ..``.

    Returns:
        The padded index table ``[M * k, width]`` and the part sizes ``[M * k]``.
    """
    width = max(1, *(int(np.bincount(t, minlength=k).max()) for t, _ in assignments))
    tables, sizes = [], []
    for m, (teacher, key) in enumerate(assignments):
        rows, size = teacher_table(teacher, key, k, width)
        tables.append(rows + m * stride)
        sizes.append(size)
    return (
        torch.from_numpy(np.concatenate(tables)).to(device),
        torch.from_numpy(np.concatenate(sizes)).to(device),
    )
