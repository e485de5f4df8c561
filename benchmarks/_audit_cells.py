"""What benchmarks/adapters_decided.py and benchmarks/libraries.py share: a cell's
``dpaudit audit`` command and its run in a fresh interpreter.

A command is ``python -m dpaudit audit FLAGS --out OUT --force --quiet``, then one
``--option`` per cell option, then the benchmark's own flags (``tail``);
:func:`library_flags` are the flags of an adapter's library run (the worst case's
size, the release's size, the library's interpreter).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def audit_command(
    *flags: str,
    out: Path,
    options: Sequence[str] = (),
    tail: Sequence[str] = (),
) -> list[str]:
    """``dpaudit audit`` with ``flags``, writing ``out`` afresh and quietly, each of
    ``options`` as an ``--option``, then ``tail``."""
    cmd = [sys.executable, "-m", "dpaudit", "audit", *flags]
    cmd += ["--out", str(out), "--force", "--quiet"]
    for option in options:
        cmd += ["--option", option]
    return [*cmd, *tail]


def library_flags(
    *, rows: int | None, synthetic_rows: int, python: str | None
) -> list[str]:
    """``--dataset-rows ROWS --synthetic-rows N`` (none where ``rows`` is None: a
    smoke run keeps the dataset's size) and ``--python PYTHON`` where given."""
    flags: list[str] = []
    if rows is not None:
        flags += ["--dataset-rows", str(rows), "--synthetic-rows", str(synthetic_rows)]
    if python:
        flags += ["--python", python]
    return flags


def run_command(cmd: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Runs ``cmd`` from the repository with this checkout's dpaudit and one OpenMP
    thread; its completed process and wall seconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    done = subprocess.run(
        cmd, env=env, cwd=ROOT, check=False, capture_output=True, text=True
    )
    return done, time.perf_counter() - start
