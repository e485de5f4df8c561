"""G-PATE's teacher partitions: adding a record changes exactly one teacher's data.

Each record goes to a teacher drawn independently and uniformly from the public
stream, so the accountant's sensitivity (one teacher's vote per histogram) holds for
add/remove neighbours (dpaudit.generators.g_pate.partition).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from dpaudit.data import Column, Domain
from dpaudit.generators.g_pate import GPate, GPateConfig, assign_teachers
from dpaudit.generators.g_pate.layout import Layout
from dpaudit.generators.g_pate.partition import teacher_table
from dpaudit.generators.g_pate.trainer import Trainer
from dpaudit.rng import Rngs


def teacher_lists(teacher: np.ndarray, key: np.ndarray, k: int) -> list[list[int]]:
    """Each teacher's rows, in its batch order, read from the code's padded table."""
    rows, sizes = teacher_table(
        teacher, key, k, max(1, int(np.bincount(teacher, minlength=k).max()))
    )
    return [rows[t, : sizes[t]].tolist() for t in range(k)]


def assert_one_teacher_gains_the_new_record(
    before: list[list[int]], after: list[list[int]], new: int
) -> None:
    changed = [t for t in range(len(before)) if before[t] != after[t]]
    assert len(changed) == 1
    t = changed[0]
    assert sorted(after[t]) == sorted([*before[t], new])
    # The teacher's other records keep their relative (batch) order.
    assert [r for r in after[t] if r != new] == before[t]


@pytest.mark.parametrize(
    ("n", "k"), [(1, 1), (1, 2), (2, 2), (3, 2), (3, 3), (4, 2), (4, 3)]
)
def test_exact_enumeration_adding_a_record_changes_exactly_one_teacher(
    n: int, k: int
) -> None:
    """Every assignment of ``n + 1`` records to ``k`` teachers and every order of
    their keys (all outcomes of the public draw, up to ties of probability 0): the
    partition of the first ``n`` records and that of all ``n + 1`` differ in exactly
    one teacher, which gains the new record."""
    for assignment in itertools.product(range(k), repeat=n + 1):
        teacher = np.array(assignment, dtype=np.int64)
        for order in itertools.permutations(range(n + 1)):
            key = np.array(order, dtype=np.float64) / (n + 1)
            before = teacher_lists(teacher[:n], key[:n], k)
            after = teacher_lists(teacher, key, k)
            assert_one_teacher_gains_the_new_record(before, after, n)


def test_balanced_split_would_move_a_second_teacher() -> None:
    """Why not a balanced split: by exact enumeration over the (n + 1)! permutations
    for n = 4, k = 2, cutting a random permutation into equal parts changes a second
    teacher's data in 40% of the outcomes (the issue's (k - r - 1) q / (n + 1))."""
    n, k = 4, 2
    moved = 0
    perms = list(itertools.permutations(range(n + 1)))
    for perm in perms:
        old = [set(p) for p in np.array_split([r for r in perm if r != n], k)]
        new = [set(p) for p in np.array_split(list(perm), k)]
        moved += sum(a != b for a, b in zip(old, new)) > 1
    assert moved / len(perms) == pytest.approx(0.40)


@pytest.mark.parametrize("n", [1, 7, 500, 5000])
def test_drawn_assignments_never_move_a_record_when_one_is_appended(n: int) -> None:
    for seed in range(20):
        rng = Rngs.from_seed(seed).spawn(3)[1]
        t0, key0 = assign_teachers(n, 5, rng=rng)
        t1, key1 = assign_teachers(n + 1, 5, rng=rng)
        np.testing.assert_array_equal(t1[:n], t0)
        np.testing.assert_array_equal(key1[:n], key0)
        assert_one_teacher_gains_the_new_record(
            teacher_lists(t0, key0, 5), teacher_lists(t1, key1, 5), n
        )


@pytest.mark.statistical
def test_assignment_is_uniform() -> None:
    """Chi-square goodness of fit of 60,000 assignments to 6 teachers against the
    uniform distribution; the test fails with probability 1e-6 when the code is
    right (p-value threshold 1e-6)."""
    teacher, key = assign_teachers(60_000, 6, rng=Rngs.from_seed(3))
    counts = np.bincount(teacher, minlength=6)
    assert teacher.min() >= 0 and teacher.max() <= 5
    assert stats.chisquare(counts).pvalue > 1e-6
    assert ((key >= 0) & (key < 1)).all()


def tiny_domain() -> Domain:
    return Domain(
        (
            Column(name="a", kind="continuous", lower=0.0, upper=1.0),
            Column(name="b", kind="binary"),
        )
    )


def tiny_table(n: int, seed: int) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame({"a": gen.uniform(0, 1, n), "b": gen.integers(0, 2, n)})


def test_trainer_partitions_of_d_and_d_plus_target_differ_in_one_teacher() -> None:
    """In the trainer itself, with one public stream for both worlds: the padded
    row tables of ``D`` and ``D u {target}`` agree on every teacher but one, which
    gains the target (the last row)."""
    cfg = GPateConfig(
        epsilon=5.0,
        delta=1e-5,
        num_teachers=4,
        batch_size=4,
        projection_dim=2,
        max_iterations=1,
        device="cpu",
    )
    dom = tiny_domain()
    data = tiny_table(21, 0)
    plus = pd.concat([data, tiny_table(1, 9)], ignore_index=True)
    for seed in range(10):
        public = Rngs.from_seed(seed)
        lists = []
        for table in (data, plus):
            trainer = Trainer(
                cfg,
                [Layout.build(dom, cfg)],
                [dom.encode(table)],
                [(public, Rngs.from_seed(100))],
                torch.device("cpu"),
            )
            rows = trainer.rows.numpy()
            sizes = (trainer.has_rows * trainer.part_sizes).long().numpy()
            lists.append(
                [rows[t, : sizes[t]].tolist() for t in range(cfg.num_teachers)]
            )
        assert_one_teacher_gains_the_new_record(lists[0], lists[1], len(data))


def test_partition_module_doctests() -> None:
    import doctest

    from dpaudit.generators.g_pate import partition

    assert doctest.testmod(partition).failed == 0


def test_teachers_without_rows_still_train() -> None:
    """With as many teachers as rows, some teachers receive no record (probability
    1 - 10!/10^10 > 0.999 per model); training runs and the claim stays within
    budget."""
    cfg = GPateConfig(
        epsilon=20.0,
        delta=1e-5,
        num_teachers=10,
        batch_size=4,
        sigma1=20.0,
        sigma2=10.0,
        projection_dim=2,
        max_iterations=5,
        device="cpu",
    )
    dom = tiny_domain()
    data = tiny_table(10, 1)
    trainer = Trainer(
        cfg,
        [Layout.build(dom, cfg)],
        [dom.encode(data)],
        [(Rngs.from_seed(2), Rngs.from_seed(3))],
        torch.device("cpu"),
    )
    assert (trainer.has_rows == 0).any()
    model = GPate(cfg).fit(
        data, domain=dom, rng=Rngs.from_seed(3), public_rng=Rngs.from_seed(2)
    )
    claim = model.privacy_claim_
    assert claim.iterations == 5
    assert claim.epsilon <= cfg.epsilon
    assert np.isfinite(model.sample(20, rng=Rngs.from_seed(4))["a"]).all()
