"""Device-aware execution: the plan per device, and out-of-memory halving."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import torch

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games import execution
from dpaudit.audit.games.execution import (
    MAX_CUDA_BATCH,
    estimate_model_bytes,
    plan_execution,
    plan_for_setup,
    run_halving,
)
from dpaudit.audit.games.setup import build_setup
from dpaudit.audit.games.two_world import rounds
from dpaudit.errors import InvalidParameterError


@pytest.fixture(autouse=True)
def _fresh_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execution, "_LIMITS", {})


def oom() -> torch.cuda.OutOfMemoryError:
    return torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")


# ------------------------------------------------------------------------ plans


def test_cpu_plan_keeps_the_process_fan_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execution, "cpu_cores", lambda: 2)
    # About two batches a worker, between 128 and 512 rounds, in whole training
    # groups of 128 rounds.
    plan = plan_execution(AuditConfig(), n_rounds=2000, device="cpu")
    assert (plan.jobs, plan.batch_size) == (-1, 512)
    assert plan_execution(AuditConfig(), n_rounds=200, device="cpu").batch_size == 128
    assert (
        plan_execution(AuditConfig(), n_rounds=20_000, device="cpu").batch_size == 512
    )
    assert (
        plan_execution(AuditConfig(jobs=1), n_rounds=800, device="cpu").batch_size
        == 512
    )
    plan = plan_execution(
        AuditConfig(jobs=3, batch_size=40), n_rounds=2000, device="cpu"
    )
    assert (plan.jobs, plan.batch_size) == (3, 128)
    assert "training groups" in plan.reason
    plan = plan_execution(
        AuditConfig(jobs=3, batch_size=300), n_rounds=2000, device="cpu"
    )
    assert plan.batch_size == 384
    # A generator fitted model by model (a plug-in) keeps the batch size given.
    plan = plan_execution(
        AuditConfig(jobs=3, batch_size=40), n_rounds=2000, device="cpu", batched=False
    )
    assert plan.batch_size == 40


def test_cuda_plan_is_one_process_with_a_batch_sized_by_memory() -> None:
    config = AuditConfig()
    # 10 GiB free, 1 MiB a model: half the memory holds 5,120 models, capped.
    plan = plan_execution(
        config, n_rounds=2000, device="cuda", model_bytes=2**20, free_bytes=10 * 2**30
    )
    assert (plan.jobs, plan.batch_size) == (1, 2000)
    plan = plan_execution(
        config, n_rounds=20_000, device="cuda", model_bytes=2**20, free_bytes=10 * 2**30
    )
    assert plan.batch_size == MAX_CUDA_BATCH
    plan = plan_execution(
        config, n_rounds=2000, device="cuda", model_bytes=2**20, free_bytes=2**30
    )
    assert plan.batch_size == 512 and "depends on this GPU's memory" in plan.reason
    plan = plan_execution(
        config, n_rounds=5000, device="cuda", model_bytes=2**20, free_bytes=5 * 2**30
    )
    assert plan.batch_size == 2048  # 2,560 fit: whole training groups of 1,024
    # Less than one model's memory free: one round at a time, never zero.
    plan = plan_execution(
        config, n_rounds=2000, device="cuda", model_bytes=2**30, free_bytes=2**20
    )
    assert plan.batch_size == 1


def test_cuda_plan_keeps_what_the_user_set() -> None:
    plan = plan_execution(
        AuditConfig(batch_size=64),
        n_rounds=2000,
        device="cuda",
        model_bytes=2**20,
        free_bytes=10 * 2**30,
    )
    assert (plan.jobs, plan.batch_size) == (1, 64) and "depends on it" in plan.reason
    plan = plan_execution(
        AuditConfig(jobs=2),
        n_rounds=2000,
        device="cuda",
        model_bytes=2**20,
        free_bytes=10 * 2**30,
    )
    # Two processes: each gets half the rounds.
    assert (plan.jobs, plan.batch_size) == (2, 1000)


def test_model_size_estimate_grows_with_the_data() -> None:
    small = build_setup(AuditConfig(rounds=5))
    wide = build_setup(AuditConfig(rounds=5, dataset="cervical_cancer", target=0))
    assert 0 < estimate_model_bytes(small) < estimate_model_bytes(wide)
    assert plan_for_setup(small).batch_size >= 1


# ----------------------------------------------------------------------- halving


def test_halving_on_out_of_memory_gives_every_result_in_order() -> None:
    calls: list[int] = []

    def work(part: list[int]) -> list[int]:
        calls.append(len(part))
        if len(part) > 3:
            raise oom()
        return [10 * r for r in part]

    assert run_halving(range(10), work, key="a") == [10 * r for r in range(10)]
    # 10 -> 5 -> 2 fits; the rest of the batch and later batches start at 2.
    assert calls == [10, 5, 2, 2, 2, 2, 2]
    assert execution.learned_limit("a") == 2
    calls.clear()
    assert run_halving(range(10, 14), work, key="a") == [10 * r for r in range(10, 14)]
    assert calls == [2, 2]
    assert execution.learned_limit("other") is None


def test_halving_reraises_other_errors_and_an_oom_of_one_round() -> None:
    def broken(part: list[int]) -> list[int]:
        raise ValueError("not memory")

    with pytest.raises(ValueError, match="not memory"):
        run_halving(range(4), broken, key="b")

    def never_fits(part: list[int]) -> list[int]:
        raise RuntimeError("CUDA error: out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        run_halving(range(4), never_fits, key="c")

    with pytest.raises(
        InvalidParameterError, match="`work` must be one result per round"
    ):
        run_halving(range(4), lambda part: [], key="d")


def test_a_halved_batch_trains_and_releases_the_same_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An injected out-of-memory error halves the batch; the rounds' claims and
    features equal those of the unhalved batch (each model uses its own streams)."""
    config = AuditConfig(
        rounds=5,
        randomness="independent",
        jobs=1,
        dataset="worst-case",
        generator_options={"max_iterations": 2},
    )
    config_json = json.dumps(config.to_json(), sort_keys=True)
    todo = list(range(8))
    whole = rounds.train_batch(config_json, todo)
    from dpaudit.audit.games import releases

    original = releases.train_and_release
    sizes: list[int] = []

    def fails_above_three(*args: Any, **kwargs: Any) -> Any:
        sizes.append(len(args[1]))
        if len(args[1]) > 3:
            raise oom()
        return original(*args, **kwargs)

    monkeypatch.setattr(releases, "train_and_release", fails_above_three)
    halved = rounds.train_batch(config_json, todo)
    assert sizes == [8, 4, 2, 2, 2, 2]
    assert [r["round"] for r in halved] == todo
    for a, b in zip(whole, halved):
        assert a["claim"] == b["claim"]
        np.testing.assert_array_equal(
            a["features"]["querybased"], b["features"]["querybased"]
        )
    # The rounds differ from one another: the comparison could fail.
    vectors = {tuple(r["features"]["querybased"]) for r in whole}
    assert len(vectors) > 1


# ------------------------------------------------------------------------- CUDA


@pytest.mark.gpu
def test_cuda_plan_and_a_real_out_of_memory_error_is_halved() -> None:
    setup = build_setup(AuditConfig(rounds=5, device="cuda"))
    plan = plan_for_setup(setup)
    assert plan.jobs == 1 and 1 <= plan.batch_size <= setup.plan.n_rounds
    free = execution.cuda_free_bytes()

    def work(part: list[int]) -> list[int]:
        if len(part) > 2:
            # More than the GPU holds: a real allocator error.
            torch.empty(int(free * 4), dtype=torch.uint8, device="cuda")
        return list(part)

    # 8 -> 4 -> 2 fits (floor halving, as on the CPU above).
    assert run_halving(range(8), work, key="gpu") == list(range(8))
    assert execution.learned_limit("gpu") == 2


def test_cpu_default_is_threads_and_explicit_backends_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(execution, "cpu_cores", lambda: 2)
    plan = plan_execution(AuditConfig(), n_rounds=2000, device="cpu")
    assert AuditConfig().backend == "threading" and "threading" in plan.reason
    plan = plan_execution(
        AuditConfig(backend="loky", jobs=2), n_rounds=2000, device="cpu"
    )
    assert (plan.jobs, plan.batch_size) == (2, 512) and "loky" in plan.reason


def test_a_stopped_threaded_run_waits_for_its_running_batches() -> None:
    """An exception in the committing thread (SIGTERM, Ctrl-C) starts no new batch
    and returns only once the running ones are done: no thread is left inside
    torch when the process exits."""
    import threading
    import time

    from dpaudit.audit.games.two_world.game import _run_threads

    started: list[int] = []
    finished: list[int] = []
    lock = threading.Lock()

    def work(batch: list[int]) -> list[dict[str, Any]]:
        with lock:
            started.append(batch[0])
        time.sleep(0.2)
        with lock:
            finished.append(batch[0])
        return [{"round": batch[0]}]

    def commit(rows: list[dict[str, Any]]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run_threads(work, [[i] for i in range(10)], workers=2, commit=commit)
    assert sorted(started) == sorted(finished) and len(started) < 10
    assert not [t for t in threading.enumerate() if t.name.startswith("dpaudit-batch")]
    done: list[int] = []
    _run_threads(
        work,
        [[i] for i in range(5)],
        workers=2,
        commit=lambda rows: done.append(rows[0]["round"]),
    )
    assert sorted(done) == list(range(5))
