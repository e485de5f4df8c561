"""Teacher partitions by exact enumeration (docs/soundness.md).

The reference assigns each record to a teacher independently and uniformly from the
public stream, so adding a record (appended last) never moves another record: one
record changes exactly one teacher's data, the sensitivity-1 premise of the moments
accountant. Under the ``balanced_partition`` defect (array_split of a permutation,
held fixed as public randomness) the new record lands in a uniformly random position
of the permutation; only when it lands in teacher ``r``'s new slice (``n = qk + r``;
``q + 1`` of ``n + 1`` positions) does one teacher change: otherwise the slice bounds
shift and ``1 + |j - r|`` teachers change (``j``: the teacher whose slice receives it),
up to ``k``. So more than one teacher changes with probability ``(n - q) / (n + 1)``
(0.40 for n = 4, k = 2; 549/687 = 0.80 on Cervical Cancer with 5 teachers).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from dpaudit.generators.pate_gan import PateGanConfig
from dpaudit.generators.pate_gan.claim import reference_epsilon
from dpaudit.generators.pate_gan.state import TrainerState


class _Draws:
    """A public stream stub whose one uniform draw is ``u[M, n_max]`` (prefixes)."""

    def __init__(self, u: torch.Tensor) -> None:
        self.u = u

    def rand(self, shape, *, dtype=None) -> torch.Tensor:
        (n,) = shape
        return self.u[:, :n].to(dtype or torch.float64)


def _teacher_sets(
    u: torch.Tensor, n: int, k: int, **flags: bool
) -> list[list[frozenset[int]]]:
    """Each model's teachers' record sets for the first ``n`` records, from the
    trainer's own ``partition``."""
    m = u.shape[0]
    state = SimpleNamespace(
        cfg=PateGanConfig(device="cpu", **flags),
        k=k,
        device=torch.device("cpu"),
        batch=SimpleNamespace(
            data=torch.zeros(m, n, 1), n_rows=torch.full((m,), n, dtype=torch.long)
        ),
        public=_Draws(u),
    )
    perm, start, size = TrainerState.partition(state)  # type: ignore[arg-type]
    out = []
    for i in range(m):
        out.append(
            [
                frozenset(
                    perm[i, int(start[i, j]) : int(start[i, j] + size[i, j])].tolist()
                )
                for j in range(k)
            ]
        )
    return out


def _changed_teachers(before: list[frozenset[int]], after: list[frozenset[int]]) -> int:
    return sum(a != b for a, b in zip(before, after, strict=True))


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("n", range(1, 7))
def test_adding_a_record_changes_exactly_one_teacher(n: int, k: int) -> None:
    """Every assignment of the n + 1 records (k^(n+1) of them, as the public draws
    that produce them): the teachers of D and D + {x} differ in exactly one teacher,
    the one that receives x."""
    cells = list(itertools.product(range(k), repeat=n + 1))
    u = (torch.tensor(cells, dtype=torch.float64) + 0.5) / k
    small = _teacher_sets(u, n, k)
    big = _teacher_sets(u, n + 1, k)
    for cell, before, after in zip(cells, small, big, strict=True):
        assert _changed_teachers(before, after) == 1
        assert after[cell[-1]] == before[cell[-1]] | {n}


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("n", range(1, 7))
def test_balanced_partition_moves_other_teachers(n: int, k: int) -> None:
    """Every ordering of the n + 1 sort keys ((n+1)! of them, equally likely): the
    share of orderings where more than one teacher's data change is exactly
    ``(n - q) / (n + 1)`` (``n = qk + r``), and where it lands in teacher ``j``'s
    slice, ``1 + |j - r|`` teachers change."""
    orders = list(itertools.permutations(range(n + 1)))
    u = (torch.tensor(orders, dtype=torch.float64) + 0.5) / (n + 1)
    small = _teacher_sets(u, n, k, balanced_partition=True)
    big = _teacher_sets(u, n + 1, k, balanced_partition=True)
    changed = [_changed_teachers(b, a) for b, a in zip(small, big, strict=True)]
    q, r = divmod(n, k)
    for after, count in zip(big, changed, strict=True):
        j = next(t for t in range(k) if n in after[t])
        assert count == 1 + abs(j - r)
    expected = Fraction(n - q, n + 1)
    assert Fraction(sum(c > 1 for c in changed), math.factorial(n + 1)) == expected


def test_balanced_partition_reference_charges_sensitivity_k() -> None:
    """The reference accountant charges a balanced split as vote sensitivity k (up to
    k teachers change, above): the data-independent bound at k lambda, more than
    sensitivity 1 on the same ledger."""
    ledger = np.array([[0, 0, 0, 0, 0, 500]], dtype=float)
    right, _ = reference_epsilon(PateGanConfig(), 5, ledger)
    split, note = reference_epsilon(PateGanConfig(balanced_partition=True), 5, ledger)
    assert right is not None and split is not None
    assert split[0] > right[0]
    assert "sensitivity k" in note
