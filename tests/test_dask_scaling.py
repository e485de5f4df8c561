"""benchmarks/dask_scaling.py runs (its smoke mode: one Dask process, tiny fits).

No timing is asserted (the benchmark prints them; docs/scale.md has the figures)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "dask_scaling.py"


@pytest.mark.slow  # a local Dask cluster starts: about 10 s on 2 busy cores
def test_dask_scaling_smoke(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    spec = importlib.util.spec_from_file_location("dask_scaling", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "dask_scaling", module)  # for its dataclass
    spec.loader.exec_module(module)
    results = module.main(["--smoke"])
    (run,) = results["busy"]
    assert run.processes == 1 and run.fits == 10
    assert run.rate > 0 and math.isfinite(run.rate)
    out = capsys.readouterr().out
    assert "busy: 1 process(es): 10 fits" in out and "load" in out
