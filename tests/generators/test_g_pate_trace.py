"""G-PATE's training trace: per-iteration epsilon and the records each teacher holds."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpaudit.data import Column, Domain
from dpaudit.generators.g_pate import GPate, GPateConfig
from dpaudit.generators.registry import get_spec, trace_options
from dpaudit.rng import Rngs

CFG = GPateConfig(
    epsilon=20.0,
    delta=1e-5,
    num_teachers=4,
    batch_size=6,
    sigma1=20.0,
    sigma2=10.0,
    projection_dim=2,
    max_iterations=4,
    device="cpu",
)
DOMAIN = Domain(
    (
        Column(name="a", kind="continuous", lower=0.0, upper=10.0),
        Column(name="b", kind="binary"),
    )
)


def test_record_trace_adds_records_seen_per_teacher() -> None:
    gen = np.random.default_rng(0)
    data = pd.DataFrame({"a": gen.uniform(0, 10, 40), "b": gen.integers(0, 2, 40)})
    traced = GPate(dataclasses.replace(CFG, record_trace=True)).fit(
        data, domain=DOMAIN, rng=Rngs.from_seed(1)
    )
    plain = GPate(CFG).fit(data, domain=DOMAIN, rng=Rngs.from_seed(1))
    seen = traced.privacy_claim_.trace["records_seen"]
    assert len(seen) == 4 and sum(seen) == 40  # every row belongs to one teacher
    assert "records_seen" not in plain.privacy_claim_.trace
    # Tracing changes nothing else.
    assert traced.privacy_claim_.epsilon == plain.privacy_claim_.epsilon
    assert (
        len(traced.privacy_claim_.trace["epsilon"]) == traced.privacy_claim_.iterations
    )
    assert traced.num_teachers_ == 4


def test_registry_declares_the_gpate_trace() -> None:
    assert get_spec("gpate").records_trace
    assert trace_options("gpate", iterations=7) == {
        "record_trace": True,
        "max_iterations": 7,
    }


@pytest.mark.slow
def test_dpaudit_trace_gpate_writes_the_trace(tmp_path: Path) -> None:
    out = tmp_path / "trace"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpaudit",
            "trace",
            "--generator",
            "gpate",
            "--iterations",
            "2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = (out / "records_seen.csv").read_text().splitlines()
    assert rows[0] == "model,teacher,records_seen" and len(rows) > 2
    assert len((out / "epsilon.csv").read_text().splitlines()) >= 2
