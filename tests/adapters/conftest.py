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

import pytest

from dpaudit.adapters.envs import env_python

ROOT = Path(__file__).resolve().parents[2]

# module -> (the environment variable that names an interpreter which has it, the
# `dpaudit env` recipe that builds one)
LIBRARIES = {
    "snsynth": ("DPAUDIT_SMARTNOISE_PYTHON", "smartnoise"),
    "synthcity": ("DPAUDIT_SYNTHCITY_PYTHON", "synthcity"),
    "dpmm": ("DPAUDIT_DPMM_PYTHON", "dpmm"),
    "opendp.extras.mbi": ("DPAUDIT_OPENDP_PYTHON", "opendp"),
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
def run_dpmm() -> RunScript:
    """Runs a script under the interpreter that has dpmm."""
    return _runner(_interpreter("dpmm"))


@pytest.fixture(scope="session")
def run_opendp() -> RunScript:
    """Runs a script under the interpreter that has OpenDP's ``mbi`` extra."""
    return _runner(_interpreter("opendp.extras.mbi"))
