"""Shared fixtures: the statistical-test seed and small datasets."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dpaudit.rng import Rngs

ROOT = Path(__file__).resolve().parents[1]


def _seeds() -> list[int]:
    raw = os.environ.get("AUDIT_TEST_SEED", "0")
    if raw == "all":
        return list(range(20))
    return [int(raw)]


@pytest.fixture(params=_seeds())
def seed(request: pytest.FixtureRequest) -> int:
    """Seed of statistical tests: ``AUDIT_TEST_SEED`` (default 0; ``all`` -> 0..19)."""
    return int(request.param)


@pytest.fixture
def rngs(seed: int) -> Rngs:
    return Rngs.from_seed(seed)


@pytest.fixture(autouse=True, scope="session")
def _exact_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The exact test's disk cache (dpaudit.audit.storage.exactcache) in a folder of
    this session, never the user's: audits and CLI subprocesses share it."""
    os.environ["DPAUDIT_CACHE_DIR"] = str(tmp_path_factory.mktemp("exact-cache"))


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread() -> None:
    """Tiny batched matmuls gain nothing from intra-op threads on 2 cores, and
    threads oversubscribe the machine when anything else runs."""
    import torch

    torch.set_num_threads(1)


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """`gpu` tests run wherever CUDA is present and are skipped (never deselected)
    where it is absent, so a GPU machine runs them with the README's command."""
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def benchmark_smoke(tmp_path: Path) -> Callable[[str], Path]:
    """Runs ``benchmarks/NAME --smoke --out FILE`` in a fresh interpreter (the
    checkout on ``PYTHONPATH``, one thread), asserts it exited 0 and returns FILE."""

    def run(name: str) -> Path:
        out = tmp_path / f"{Path(name).stem}.json"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        done = subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmarks" / name),
                "--smoke",
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return out

    return run
