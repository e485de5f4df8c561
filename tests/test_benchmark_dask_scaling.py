"""benchmarks/dask_scaling.py runs (its smoke mode: one Dask process, tiny fits).

No timing is asserted (the benchmark prints them; docs/scale.md has the figures)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.mark.slow  # a local Dask cluster starts: about 10 s on 2 busy cores
def test_dask_scaling_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    pytest.importorskip("distributed")
    (run,) = json.loads(benchmark_smoke("dask_scaling.py").read_text())["rows"]
    assert run["row"] == "busy 1" and run["processes"] == 1 and run["fits"] == 10
    assert run["rate"] > 0 and math.isfinite(run["rate"])
