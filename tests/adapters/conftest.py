"""The interpreter that has a real library, and a script run under it.

A library adapter's tests run under the interpreter that has the library: this one
where the library is importable, else the one an environment variable names (a
separate virtual environment, e.g. ``DPAUDIT_SMARTNOISE_PYTHON``), else the one of the
environment ``dpaudit env NAME`` builds where it puts it by default
(``$DPAUDIT_ENV_HOME/NAME``, else ``~/.cache/dpaudit/envs/NAME``); where none has it,
the tests that ask for it are skipped. Scripts run in a subprocess of that
interpreter (the library's global random state and its start-up stay out of the test
process) and print their result as JSON on the last line.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpaudit.adapters import LIBRARIES as DECLARED
from dpaudit.adapters.envs import env_python

ROOT = Path(__file__).resolve().parents[2]

# module -> (the environment variable that names an interpreter which has it, the
# `dpaudit env` recipe that builds one), from the libraries' declarations
LIBRARIES = {
    library.module: (library.variable, library.name) for library in DECLARED.values()
}

RunScript = Callable[..., Any]


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


def _interpreter(module: str) -> str:
    if _importable(module):
        return sys.executable
    variable, recipe = LIBRARIES[module]
    named = os.environ.get(variable)
    if named and Path(named).exists():
        return named
    built = env_python(recipe)
    if built.exists():
        return str(built)
    pytest.skip(
        f"{module} is not importable here, {variable} names no interpreter that has "
        f"it and `dpaudit env {recipe}` has not built {built}"
    )


def _runner(python: str) -> RunScript:
    def run(script: str, *args: str) -> Any:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        done = subprocess.run(
            [python, "-c", script, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run


@pytest.fixture(scope="session")
def run_smartnoise() -> RunScript:
    """Runs a script under the interpreter that has smartnoise-synth."""
    return _runner(_interpreter("snsynth"))


@pytest.fixture(scope="session")
def run_synthcity() -> RunScript:
    """Runs a script under the interpreter that has synthcity."""
    return _runner(_interpreter("synthcity"))


@pytest.fixture(scope="session")
def synthcity_python() -> str:
    """The interpreter that has synthcity (for ``--python``)."""
    return _interpreter("synthcity")


@pytest.fixture(scope="session")
def run_dpmm() -> RunScript:
    """Runs a script under the interpreter that has dpmm."""
    return _runner(_interpreter("dpmm"))


@pytest.fixture(scope="session")
def run_opendp() -> RunScript:
    """Runs a script under the interpreter that has OpenDP's ``mbi`` extra."""
    return _runner(_interpreter("opendp.extras.mbi"))


# -- checks of recorded measurement transcripts (docs/adapters.md, "White-box
# transcripts"), shared by the adapters' transcript tests through `transcripts`.
#
# A transcript record states ``noisy[i] = count(cells of answer i) + noise`` with the
# noise's kind and scale. Over several fits on a fixed table, the standardized
# residuals ``(noisy[i] - exact count) / scale`` are independent draws of the stated
# noise (each answer's noise is fresh; which marginal a library measures next, and at
# what scale, depends only on what it drew before, so every residual is independent
# of the ones before it): a one-sample Kolmogorov-Smirnov test of them against
# N(0, 1) or Laplace(0, 1) rejects with probability ``ALPHA`` when the library adds
# what it states.

ALPHA = 1e-3
"""Each KS test's false-rejection probability."""

NOISE = {"gaussian": stats.norm, "laplace": stats.laplace}


def exact_counts(record: dict[str, Any], rows: list[dict[str, Any]]) -> list[int]:
    """Per answer of ``record``, the number of ``rows`` whose values on its columns
    equal one of the answer's cells."""
    columns = record["columns"]
    cells = [tuple(c) for c in record["cells"]]
    sets = record.get("sets") or [[i] for i in range(len(cells))]
    keys = [tuple(row[c] for c in columns) for row in rows]
    return [sum(key in {cells[j] for j in answer} for key in keys) for answer in sets]


def residuals(
    transcripts: list[list[dict[str, Any]]], rows: list[dict[str, Any]]
) -> dict[str, np.ndarray]:
    """Per noise kind, the standardized residuals of every answer of every
    transcript (all fitted on ``rows``)."""
    out: dict[str, list[float]] = {}
    for transcript in transcripts:
        for record in transcript:
            ((kind, scale),) = record["noise"].items()
            exact = np.asarray(exact_counts(record, rows), dtype=float)
            noisy = np.asarray(record["noisy"], dtype=float)
            out.setdefault(kind, []).extend(((noisy - exact) / scale).tolist())
    return {kind: np.asarray(v) for kind, v in out.items()}


def ks_pvalue(kind: str, values: np.ndarray) -> float:
    """The KS p-value of ``values`` against the standard ``kind`` noise."""
    return float(stats.kstest(values, NOISE[kind].cdf).pvalue)


def check_values(
    transcripts: list[list[dict[str, Any]]], domain: dict[str, Any]
) -> None:
    """Every record names the domain's columns and writes its cells in the domain's
    values (the same Python types: 0 and 1 for binary, the categories as given)."""
    public: dict[str, list[Any]] = {}
    for col in domain["columns"]:
        if col["kind"] == "binary":
            public[col["name"]] = [0, 1]
        elif col["kind"] == "categorical":
            public[col["name"]] = list(col["categories"])
        else:
            public[col["name"]] = list(range(col["lower"], col["upper"] + 1))
    for transcript in transcripts:
        for record in transcript:
            assert set(record) <= {"columns", "cells", "sets", "noisy", "noise"}
            assert record["columns"] and set(record["columns"]) <= set(public)
            for cell in record["cells"]:
                for name, value in zip(record["columns"], cell, strict=True):
                    assert any(
                        value == v and type(value) is type(v) for v in public[name]
                    ), (name, value)
            answers = len(record.get("sets") or record["cells"])
            assert len(record["noisy"]) == answers


def check_noise(result: dict[str, Any], kind: str, *, control: bool = True) -> None:
    """``result`` (``rows``, ``domain``, ``transcripts`` of fits on ``rows``): the
    cells are public values and the residuals look like ``kind`` noise at the stated
    scale (KS; rejects with probability ``ALPHA`` when the library adds what it
    states).

    The same residuals read as if a quarter of the stated noise had been added
    (times 4) are rejected: the test can fail. That control needs ``CONTROL[kind]``
    residuals: there the KS distance between the stated law and four times it (0.29
    Gaussian, 0.24 Laplace) exceeds the test's critical value by a margin whose
    miss probability the DKW inequality bounds below 1e-3. ``control=False`` (a
    library too slow to fit that often in a test: AIM) checks at least 50 residuals
    and leaves the control to the other tests of the same check."""
    check_values(result["transcripts"], result["domain"])
    found = residuals(result["transcripts"], result["rows"])
    assert set(found) == {kind}
    values = found[kind]
    assert values.size >= (CONTROL[kind] if control else 50), values.size
    assert ks_pvalue(kind, values) > ALPHA
    if control:
        assert ks_pvalue(kind, 4 * values) < ALPHA


CONTROL = {"gaussian": 200, "laplace": 400}

TABLE = r"""
import numpy as np, pandas as pd
# 150 rows; categories "w" and "v" of c are public but in no record (MST merges them
# into one answer: a "sets" record); b is an integer column 0..2.
rng = np.random.default_rng(0)
rows = 150
data = pd.DataFrame({
    "a": rng.integers(0, 2, rows),
    "c": rng.choice(["x", "y", "z"], rows),
    "b": rng.integers(0, 3, rows),
    "d": rng.choice(["p", "q", "r", "s"], rows),
})
domain = {"columns": [
    {"name": "a", "kind": "binary"},
    {"name": "c", "kind": "categorical", "categories": ["x", "y", "z", "w", "v"]},
    {"name": "b", "kind": "integer", "lower": 0, "upper": 2},
    {"name": "d", "kind": "categorical", "categories": ["p", "q", "r", "s"]},
]}
"""
"""The table the transcript tests fit (Python source that defines ``data`` and
``domain``; the scripts run it first)."""


FITS_SCRIPT = r"""
import importlib, json, sys
import numpy as np, pandas as pd
from dpaudit.adapters._common import AdapterInputError

adapters = importlib.import_module("dpaudit.adapters." + sys.argv[1] + ".adapter")
cls, fits = sys.argv[2], int(sys.argv[3])
options = json.loads(sys.argv[4])
exec(sys.argv[5])  # the table: data, domain
full = sys.argv[6] == "full"
out = {"rows": json.loads(data.to_json(orient="records")), "domain": domain,
       "transcripts": [], "claims": []}
for seed in range(fits):
    g = getattr(adapters, cls)(epsilon=4.0, **options)
    g.fit(data, domain=domain, seed=seed)
    out["transcripts"].append(g.privacy_transcript)
    out["claims"].append({k: v for k, v in g.privacy_claim.items()
                          if k.startswith("transcript") or k == "measure_only"})
    if options.get("measure_only"):
        try:
            g.sample(5, seed=seed)
        except AdapterInputError as err:
            out["sample"] = str(err)
if full and options.pop("measure_only", False):  # and one fit to the end, as shipped
    g = getattr(adapters, cls)(epsilon=4.0, **options)
    g.fit(data, domain=domain, seed=fits)
    out["full"] = {"transcript": g.privacy_transcript,
                   "claim": g.privacy_claim["measure_only"],
                   "rows": len(g.sample(5, seed=0))}
print(json.dumps(out))
"""
"""The adapters' transcript tests' script, run under the library's interpreter:
``fits`` fits (seeds 0, 1, ...) of one adapter class on :data:`TABLE` at epsilon 4,
their transcripts and claims (with ``measure_only``, what ``sample`` then says; with
``full``, one more fit to the end)."""


def fit_transcripts(
    run_script: RunScript,
    module: str,
    cls: str,
    fits: int,
    *,
    full: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """``fits`` fits of ``dpaudit.adapters.<module>.adapter.<cls>`` on :data:`TABLE` under
    ``run_script`` (:data:`FITS_SCRIPT`), read back."""
    done = run_script(
        FITS_SCRIPT,
        module,
        cls,
        str(fits),
        json.dumps(options),
        TABLE,
        "full" if full else "measured",
    )
    return dict(done)


def _discrete_gaussian_cdf(r: int, sigma: float) -> float:
    """P(X <= r) for the discrete Gaussian with scale ``sigma``: summed over
    +-(12 sigma + 2) for sigma <= 10; above, the continuous CDF at ``r + 1/2`` (the
    midpoint rule of the Gaussian integral, exact to ``exp(-2 pi^2 sigma^2)`` by
    Poisson summation)."""
    if sigma > 10:
        return float(stats.norm.cdf((r + 0.5) / sigma))
    width = int(12 * sigma) + 2
    support = np.arange(-width, width + 1)
    pmf = np.exp(-(support.astype(float) ** 2) / (2 * sigma**2))
    return float(pmf[support <= r].sum() / pmf.sum())


def discrete_gaussian_uniforms(
    result: dict[str, Any], *, factor: float = 1.0
) -> np.ndarray:
    """OpenDP adds discrete Gaussian noise to integer counts (its ``then_noise`` on
    an i32 vector): each integer residual ``r`` at scale ``sigma`` (read at
    ``sigma / factor``) mapped to ``F(r - 1) + V (F(r) - F(r - 1))`` with ``F`` the
    discrete Gaussian's CDF and ``V`` uniform (a fixed generator): exactly uniform
    on [0, 1] when the noise is what is stated (the randomized probability integral
    transform)."""
    rng = np.random.default_rng(0)
    out: list[float] = []
    for transcript in result["transcripts"]:
        for record in transcript:
            ((kind, scale),) = record["noise"].items()
            assert kind == "gaussian"
            sigma = scale / factor
            exact = np.asarray(exact_counts(record, result["rows"]), dtype=float)
            noisy = np.asarray(record["noisy"], dtype=float)
            assert np.all(noisy == np.rint(noisy))  # integers: discrete noise
            for r in (noisy - exact).astype(int):
                lo, hi = (
                    _discrete_gaussian_cdf(r - 1, sigma),
                    _discrete_gaussian_cdf(r, sigma),
                )
                out.append(float(lo + rng.uniform() * (hi - lo)))
    return np.asarray(out)


@pytest.fixture(scope="session")
def transcripts() -> Any:
    """The transcript checks above, for the adapters' transcript tests."""
    import types

    return types.SimpleNamespace(
        ALPHA=ALPHA,
        check_values=check_values,
        exact_counts=exact_counts,
        ks_pvalue=ks_pvalue,
        residuals=residuals,
        check_noise=check_noise,
        TABLE=TABLE,
        fit=fit_transcripts,
        discrete_gaussian_uniforms=discrete_gaussian_uniforms,
    )
