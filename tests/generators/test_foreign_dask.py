"""A plug-in audit on Dask process workers (``--backend dask --scheduler ADDRESS``):
each Dask worker process runs its own foreign workers, and the result equals the
threaded audit's (every round depends on its index and the seed alone)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.run import run_audit

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
import numpy as np


class Noisy:
    """Flips each released cell with probability 0.3, drawn from its seeds."""

    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "noisy", "iterations": 1}
        return self

    def sample(self, n, *, seed):
        rng = np.random.default_rng(seed)
        out = self.data.iloc[rng.integers(0, len(self.data), n)].reset_index(drop=True)
        flip = rng.random(out.shape) < 0.3
        return out.where(~flip, 1 - out)
'''


def _strip(result: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(result.to_json()))
    doc.pop("timing")
    for key in ("backend", "scheduler", "jobs"):
        doc["config"].pop(key)
    return dict(doc)


@pytest.mark.slow
def test_dask_process_workers_equal_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed")
    (tmp_path / "noisy_plugin.py").write_text(PLUGIN)
    # The Dask worker processes import dpaudit, their foreign workers the plug-in.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    config = AuditConfig(
        generator="noisy_plugin:Noisy", rounds=20, batch_size=5, attack="querybased"
    )
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        on_dask = run_audit(
            AuditConfig(
                **{
                    **config.to_json(),
                    "backend": "dask",
                    "scheduler": cluster.scheduler_address,
                    "bugs": (),
                    "split": config.split,
                }
            ),
            out_dir=tmp_path / "dask",
        )
    threads = run_audit(config, out_dir=tmp_path / "threads")
    assert _strip(on_dask) == _strip(threads)
    assert on_dask.to_json()["config"]["backend"] == "dask"
