"""``records_seen`` and ``records_unused`` of PATE-GAN's trace, linear in the rows.

The trace once came from a ``[M * k, n]`` matrix of rows seen (``k`` grows with
``n``: quadratic). These tests keep that matrix beside the new ledger (the former
``mark_seen``, verbatim, wrapped around the new one) and compare the trace with it,
for every variant and for batches of tables of different lengths.
"""

from __future__ import annotations

import pytest
import torch

from dpaudit.data import load_cervical_cancer
from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.generators.pate_gan import state as pg_state
from dpaudit.generators.pate_gan.seen import SeenRows
from dpaudit.rng import Rngs

VARIANTS = (
    None,
    "original",
    "updated",
    "synthcity",
    "turing",
    "borealis",
    "smartnoise",
)


@pytest.fixture(scope="module")
def cervical():
    return load_cervical_cancer()


@pytest.fixture
def old_way(monkeypatch):
    """Records, per trainer, the former ``[M * k, n_max]`` matrix of rows seen."""
    states: list[pg_state.TrainerState] = []
    new_mark = pg_state.TrainerState.mark_seen

    def mark_seen(self, idx, active_t):
        if not hasattr(self, "old_seen"):
            n_max = self.batch.data.shape[1]
            self.old_seen = torch.zeros(self.m * self.k, n_max, dtype=torch.bool)
            states.append(self)
        hit = torch.zeros_like(self.old_seen)
        hit.scatter_(1, idx, True)
        self.old_seen |= hit & active_t[:, None]
        new_mark(self, idx, active_t)

    monkeypatch.setattr(pg_state.TrainerState, "mark_seen", mark_seen)
    return states


def old_trace(state) -> tuple[list[list[int]], list[int]]:
    seen_rows = state.old_seen.reshape(state.m, state.k, -1)
    seen = seen_rows.sum(dim=2).tolist()
    unused = (state.batch.n_rows - seen_rows.any(dim=1).sum(dim=1)).tolist()
    return seen, unused


@pytest.mark.parametrize("variant", VARIANTS)
def test_trace_matches_the_teachers_x_rows_matrix(cervical, old_way, variant) -> None:
    """Three models on tables of 40, 90 and 61 rows (padding, empty teachers with
    k = 9 on 40 rows), a few iterations each: identical counts."""
    options = {"variant": variant} if variant else {}
    cfg = config_from_options(
        epsilon=1e9,
        delta=1e-5,
        device="cpu",
        num_teachers=9,
        max_iterations=3,
        fixed_iterations=3,
        **options,
    )
    train = cervical.train
    tables = [train.iloc[:40], train.iloc[40:130], train.iloc[200:261]]
    models = PateGan(cfg).fit_many(
        tables,
        domain=cervical.domain,
        rngs=[Rngs.from_seed(s) for s in (1, 2, 3)],
    )
    assert len(old_way) == 1
    seen, unused = old_trace(old_way[0])
    for i, model in enumerate(models):
        trace = model.privacy_claim_.trace
        assert trace["records_seen"] == seen[i]
        assert trace["records_unused"] == unused[i]
    # The comparison is not between two empty ledgers.
    assert sum(map(sum, seen)) > 0


def test_ledger_is_linear_in_the_rows() -> None:
    """Disjoint partitions of 100,000 rows among 800 teachers: the ledger holds about
    one bit per row (plus the inverse permutation), not 800 x 100,000."""
    n, k = 100_000, 800
    teacher = torch.arange(n) % k
    perm = torch.argsort(teacher * n + torch.arange(n))[None, :]
    size = torch.bincount(teacher, minlength=k)[None, :]
    start = torch.cumsum(size, dim=1) - size
    ledger = SeenRows(perm, start, size, mode="disjoint")
    assert ledger.seen.numel() <= n + 2 * k
    assert ledger.nbytes() < 2 * 8 * n
    idx = perm.reshape(k, -1)[:, :3]  # the first 3 rows of each teacher
    ledger.mark(idx, torch.ones(k, dtype=torch.bool))
    assert ledger.counts().tolist() == [[3] * k]
    assert ledger.union().tolist() == [3 * k]


def test_teacher_losses_in_row_chunks_equal_one_pass(cervical, monkeypatch) -> None:
    """The trace's teacher losses, evaluated a few rows at a time (bounded memory),
    equal the single pass over all rows to float32 rounding."""
    from dpaudit.generators.pate_gan import teachers

    cfg = config_from_options(
        epsilon=1e9,
        delta=1e-5,
        device="cpu",
        num_teachers=4,
        max_iterations=2,
        fixed_iterations=2,
        record_trace=True,
    )
    tables = [cervical.train.iloc[:120], cervical.train.iloc[120:210]]

    def losses(chunk: int) -> list[dict[str, object]]:
        monkeypatch.setattr(teachers, "LOSS_CHUNK", chunk)
        models = PateGan(cfg).fit_many(
            tables,
            domain=cervical.domain,
            rngs=[Rngs.from_seed(s) for s in (5, 6)],
        )
        return [m.privacy_claim_.trace["teacher_losses"] for m in models]

    one_pass, chunked = losses(2**30), losses(8 * 7)  # 7 rows a chunk
    assert len(one_pass[0]) == 2
    for a, b in zip(one_pass, chunked):
        for x, y in zip(a, b):
            assert x["iteration"] == y["iteration"]
            assert x["own"] == pytest.approx(y["own"], rel=1e-5)
            assert x["other"] == pytest.approx(y["other"], rel=1e-5)
