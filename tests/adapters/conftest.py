"""The interpreter that has a real library, and a script run under it.

A library adapter's tests run under the interpreter that has the library: this one
where the library is importable, else the one an environment variable names (a
separate virtual environment, e.g. ``DPAUDIT_SMARTNOISE_PYTHON``); where neither has
it, the tests that ask for it are skipped. Scripts run in a subprocess of that
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

import pytest

ROOT = Path(__file__).resolve().parents[2]

# module -> the environment variable that names an interpreter which has it
LIBRARIES = {
    "snsynth": "DPAUDIT_SMARTNOISE_PYTHON",
    "synthcity": "DPAUDIT_SYNTHCITY_PYTHON",
    "dpmm": "DPAUDIT_DPMM_PYTHON",
}

RunScript = Callable[..., Any]


def _interpreter(module: str) -> str:
    if importlib.util.find_spec(module) is not None:
        return sys.executable
    env = LIBRARIES[module]
    named = os.environ.get(env)
    if named and Path(named).exists():
        return named
    pytest.skip(
        f"{module} is not importable here and {env} names no interpreter that has it"
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
def run_dpmm() -> RunScript:
    """Runs a script under the interpreter that has dpmm."""
    return _runner(_interpreter("dpmm"))
