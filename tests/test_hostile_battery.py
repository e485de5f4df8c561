"""Hostile input on the surfaces added since the last battery (issue 51, part 2): the
one-run game's canaries and guesses at their extremes, ``--release transcript`` from
a worker that dies, changes its transcript's shape or writes to standard output,
``dpaudit env`` without a network, on a full disk, interrupted, over a folder that
holds something else, with pins that no longer resolve (pip faked: no network, no
real environment), the exact test's cache directory, ``--public-seed auto`` whose
candidates all fail, and reports of results from an older schema version.

Checked as tests/test_input_battery.py checks: one line, exit 2 or 3, no traceback,
never "unexpected ... report it", nothing half-written.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.cli import main

REPO = Path(__file__).resolve().parents[1]


def _one_line(capsys: pytest.CaptureFixture[str], code: int, codes=(2,)) -> str:
    err = capsys.readouterr().err
    assert code in codes, err
    assert "Traceback" not in err and "unexpected" not in err, err
    assert "report it" not in err and err.count("\n") == 1, err
    return err


# ------------------------------------------------ the one-run game's extremes

ONE_RUN = ["audit", "--game", "one-run", "--generator", "randomized-response"]


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--canaries", "0"], "`canaries` must be an integer >= 2. Got 0."),
        (["--canaries", "1"], "`canaries` must be an integer >= 2. Got 1."),
        (["--canaries", "10", "--guesses", "11"], "must be at most 10"),
        (["--canaries", "10", "--guesses-out", "11"], "must be at most 10"),
        (["--canaries", "10", "--guesses", "6", "--guesses-out", "5"], "at most 10"),
        (["--canaries", "10", "--guesses", "0"], "`guesses` must be an integer"),
        (["--canaries", "10", "--fits", "0"], "`fits` must be an integer >= 1"),
    ],
)
def test_one_run_counts_out_of_range(
    capsys, tmp_path: Path, flags: list[str], words: str
) -> None:
    out = tmp_path / "out"
    code = main([*ONE_RUN, *flags, "--quiet", "--out", str(out)])
    assert words in _one_line(capsys, code)
    assert not out.exists()


def test_one_run_more_canaries_than_memory_is_one_line(capsys, tmp_path: Path) -> None:
    """A trillion canaries: the design's grid cannot be allocated; exit 3 with one
    line (out of memory), nothing written."""
    out = tmp_path / "out"
    argv = [*ONE_RUN, "--dataset", "worst-case-continuous", "--canaries", "10**12"]
    argv[-1] = str(10**12)
    code = main([*argv, "--quiet", "--out", str(out)])
    assert "out of memory" in _one_line(capsys, code, codes=(2, 3))
    assert not out.exists()


# ----------------------------------- --release transcript from a worker

WORKER_PLUGIN = """
import os, sys
import numpy as np

class Gen:
    def __init__(self, *, epsilon, delta, mode="die"):
        self.mode = mode

    def fit(self, data, *, domain, seed):
        self.data, self.seed = data, seed
        self.privacy_claim = {"epsilon": 1.0, "delta": 1e-5}
        if self.mode == "stdout":
            print("a plug-in writing to standard output")
            sys.stdout.flush()
            os.write(1, b"raw bytes on file descriptor 1\\n")
        return self

    @property
    def privacy_transcript(self):
        count = float((self.data["a"] == 1).sum())
        noise = np.random.default_rng(self.seed).normal(0, 4.0, size=2)
        if self.mode == "die" and self.seed % 3 == 0:
            os._exit(7)  # mid-transcript: the worker is gone
        if self.mode == "shape" and self.seed % 2 == 0:
            return [{"columns": ["a", "b"], "cells": [[1, 1], [0, 0]],
                     "noisy": noise.tolist(), "noise": {"laplace": 4.0}}]
        return [{"columns": ["a"], "cells": [[1]], "noisy": [count + noise[0]],
                 "noise": {"gaussian": 4.0}}]

    def sample(self, n, *, seed):
        return self.data.head(n)
"""


@pytest.fixture
def worker_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "worker_plugin.py").write_text(WORKER_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _transcript(mode: str) -> list[str]:
    return [
        "audit",
        "--generator",
        "worker_plugin:Gen",
        "--dataset",
        "worst-case",
        "--release",
        "transcript",
        "--option",
        f"mode={mode}",
        "--rounds",
        "6",
        "--jobs",
        "1",
        "--quiet",
        "--out",
        "out",
    ]


def test_a_worker_that_dies_mid_transcript(capsys, worker_plugin: Path) -> None:
    code = main(_transcript("die"))
    err = _one_line(capsys, code)
    assert "its `privacy_transcript` ended its worker process" in err
    assert "exited with code 7" in err
    assert not (worker_plugin / "out" / "result.json").exists()


@pytest.mark.parametrize("mode", ["shape", "stdout"])
def test_a_worker_that_changes_shape_or_writes_to_stdout_is_audited(
    capsys, worker_plugin: Path, mode: str
) -> None:
    """A transcript of another shape each round (other columns, other noise) is
    scored round by round; a plug-in's standard output goes to its worker's log,
    never into the protocol's pipe or dpaudit's output."""
    code = main(_transcript(mode))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "standard output" not in out + err and "raw bytes" not in out + err
    doc = json.loads((worker_plugin / "out" / "result.json").read_text())
    m = doc["measurements"]
    if mode == "shape":
        assert (m["gaussian_answers"], m["laplace_answers"]) == (1, 2)


# ------------------------------------------------------------- dpaudit env

FAKE_BASE = """#!/bin/sh
# A stand-in for CPython 3.11: answers the probe, and `-m venv DIR` makes DIR a
# "virtual environment" whose python fakes pip as $FAKE_PIP says.
case "$1" in
  -c) echo "cpython 3 11"; exit 0 ;;
  -m) mkdir -p "$3/bin"; cp "$(dirname "$0")/fake_env_python" "$3/bin/python"
      chmod +x "$3/bin/python"; exit 0 ;;
esac
exit 9
"""
FAKE_ENV_PYTHON = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "pip" ] && [ "$3" = "install" ]; then
  case "$FAKE_PIP" in
    network) echo "WARNING: Retrying after connection broken by NewConnectionError"
             echo "ERROR: Could not find a version that satisfies the requirement x"
             exit 1 ;;
    unresolved) echo "ERROR: No matching distribution found for dpmm==0.1.9"
                exit 1 ;;
    full) echo "ERROR: Could not install packages due to an OSError: [Errno 28]"
          exit 1 ;;
    interrupt) kill -INT "$PPID"; sleep 5; exit 1 ;;
  esac
  echo "Successfully installed a-1 b-2"
fi
exit 0
"""


@pytest.fixture
def fake_base(tmp_path: Path) -> Path:
    base = tmp_path / "fake_base"
    base.write_text(FAKE_BASE)
    (tmp_path / "fake_env_python").write_text(FAKE_ENV_PYTHON)
    base.chmod(0o755)
    return base


@pytest.mark.parametrize(
    ("fake", "step"),
    [
        ("network", "step 2/4 (install the pins"),
        ("unresolved", "step 2/4 (install the pins"),
        ("full", "step 2/4 (install the pins"),
    ],
)
def test_env_build_that_pip_cannot_finish_is_one_line_and_rebuilt_after(
    capsys, tmp_path: Path, fake_base: Path, monkeypatch, fake: str, step: str
) -> None:
    """No network, pins that no longer resolve, a full disk: pip fails; exit 3,
    one line naming the step and the log; the folder is marked unfinished, and the
    same command builds it again once pip works."""
    out = tmp_path / "env"
    monkeypatch.setenv("FAKE_PIP", fake)
    code = main(["env", "dpmm", "--out", str(out), "--base-python", str(fake_base)])
    err = _one_line(capsys, code, codes=(3,))
    assert step in err and "failed with exit code 1" in err and "dpaudit-env.log" in err
    marker = json.loads((out / "dpaudit-env.json").read_text())
    assert marker["status"] == "building"
    monkeypatch.setenv("FAKE_PIP", "ok")
    code = main(["env", "dpmm", "--out", str(out), "--base-python", str(fake_base)])
    assert code == 0, capsys.readouterr().err
    assert json.loads((out / "dpaudit-env.json").read_text())["status"] == "complete"


def test_env_build_interrupted_is_one_line_and_rebuilt_after(
    tmp_path: Path, fake_base: Path
) -> None:
    """Ctrl-C during pip (the fake pip interrupts its parent): exit 130, one line;
    the next run replaces the unfinished folder (in a subprocess: the signal goes
    to dpaudit, not to the test runner)."""
    out = tmp_path / "env"
    env = {**os.environ, "PYTHONPATH": str(REPO), "FAKE_PIP": "interrupt"}
    argv = [sys.executable, "-m", "dpaudit", "env", "dpmm", "--out", str(out)]
    argv += ["--base-python", str(fake_base)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "dpaudit: interrupted"
    assert "Traceback" not in proc.stderr
    assert json.loads((out / "dpaudit-env.json").read_text())["status"] == "building"
    env["FAKE_PIP"] = "ok"
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "dpaudit-env.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("holds", ["a-file", "a-marker-of-another-shape", "a-file-out"])
def test_env_out_that_holds_something_else(
    capsys, tmp_path: Path, fake_base: Path, holds: str
) -> None:
    out = tmp_path / "env"
    if holds == "a-file-out":
        out.write_text("mine")
        words = "is a file"
    else:
        out.mkdir()
        if holds == "a-file":
            (out / "notes.txt").write_text("mine")
        else:
            (out / "dpaudit-env.json").write_text("[1, 2]")
            (out / "notes.txt").write_text("mine")
        words = "was not built by `dpaudit env`"
    code = main(["env", "dpmm", "--out", str(out), "--base-python", str(fake_base)])
    assert words in _one_line(capsys, code)
    kept = out.read_text() if out.is_file() else (out / "notes.txt").read_text()
    assert kept == "mine"


# ------------------------------------------------- the exact test's cache

RR = [
    "audit",
    "--generator",
    "randomized-response",
    "--rounds",
    "5",
    "--synthetic-rows",
    "5",
    "--jobs",
    "1",
    "--quiet",
]


def _cache_audit(cache: Path, out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DPAUDIT_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "dpaudit", *RR, "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _verdict(out: Path) -> str:
    return str(json.loads((out / "result.json").read_text())["verdict"])


def _decided_or_one_line(proc: subprocess.CompletedProcess[str], out: Path) -> None:
    assert "Traceback" not in proc.stderr and "unexpected" not in proc.stderr
    if proc.returncode == 0:
        assert _verdict(out) in ("INCONCLUSIVE", "CONSISTENT")
    else:
        assert proc.returncode in (2, 3), proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("cache_kind", ["a-file", "not-writable"])
def test_exact_cache_folder_that_cannot_be_used(
    tmp_path: Path, cache_kind: str
) -> None:
    """A cache that is a file, or a folder that cannot be written (as root: still
    writable, so there the case checks the run only): the audit runs and decides as
    without a cache (the cache is an optimisation), or ends in one line; the file is
    left as it was."""
    cache = tmp_path / "cache"
    if cache_kind == "a-file":
        cache.write_text("mine")
    else:
        cache.mkdir()
        cache.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        _decided_or_one_line(_cache_audit(cache, tmp_path / "out"), tmp_path / "out")
        if cache_kind == "a-file":
            assert cache.read_text() == "mine"
    finally:
        if cache_kind == "not-writable":
            cache.chmod(stat.S_IRWXU)


@pytest.mark.slow
def test_exact_cache_entries_that_are_symlinks_out_of_it(tmp_path: Path) -> None:
    """Every entry of a filled cache replaced by a symlink to a file outside it:
    the next audit neither reads the outside file as a calibration nor writes
    through the link; it decides as the first (or ends in one line)."""
    cache = tmp_path / "cache"
    first = _cache_audit(cache, tmp_path / "o1")
    assert first.returncode == 0, first.stderr
    entries = sorted(cache.iterdir())
    assert entries
    for i, entry in enumerate(entries):
        victim = tmp_path / f"victim{i}"
        victim.write_text("not a calibration")
        entry.unlink()
        entry.symlink_to(victim)
    second = _cache_audit(cache, tmp_path / "o2")
    _decided_or_one_line(second, tmp_path / "o2")
    if second.returncode == 0:
        assert _verdict(tmp_path / "o2") == _verdict(tmp_path / "o1")
    for i in range(len(entries)):
        assert (tmp_path / f"victim{i}").read_text() == "not a calibration"


@pytest.mark.slow
def test_exact_cache_filled_by_two_audits_at_once(tmp_path: Path) -> None:
    """Two audits fill one empty cache at the same time: both finish with the same
    verdict as one alone."""
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(REPO), "DPAUDIT_CACHE_DIR": str(cache)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "dpaudit", *RR, "--out", str(tmp_path / f"o{i}")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    assert _verdict(tmp_path / "o0") == _verdict(tmp_path / "o1")


# ------------------------------------------------ --public-seed auto, all fail

FAILING_PLUGIN = """
class Gen:
    def __init__(self, *, epsilon, delta):
        pass

    def fit(self, data, *, domain, seed, public_seed):
        raise RuntimeError("every candidate fails")

    def sample(self, n, *, seed, public_seed):
        raise RuntimeError("never reached")
"""


def test_public_seed_auto_whose_candidates_all_fail(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "failing_plugin.py").write_text(FAILING_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    argv = ["audit", "--generator", "failing_plugin:Gen", "--public-seed", "auto"]
    argv += ["--public-candidates", "3", "--rounds", "5", "--jobs", "1", "--quiet"]
    code = main([*argv, "--out", str(out)])
    err = _one_line(capsys, code)
    assert "every candidate fails" in err
    assert not (out / "result.json").exists()


# ---------------------------------------------- results of older schemas


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("finished") / "audit"
    assert main([*RR, "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("version", [0, 1, 3, 99, -1, "2", None, 1.5])
@pytest.mark.parametrize("fmt", ["md", "json"])
def test_report_of_another_schema_version(
    capsys, tmp_path: Path, finished: Path, version: object, fmt: str
) -> None:
    """A result.json of an older (or unknown) schema version: reported as it is
    read, or refused in one line naming the file; nothing half-written."""
    audit = tmp_path / "audit"
    shutil.copytree(finished, audit)
    doc = json.loads((audit / "result.json").read_text())
    doc["schema_version"] = version
    if version in (0, 1):
        for key in ("power", "estimator", "game", "randomness"):
            doc.pop(key, None)
    (audit / "result.json").write_text(json.dumps(doc))
    report = tmp_path / f"report.{fmt}"
    code = main(["report", str(audit), "--format", fmt, "--out", str(report)])
    if code == 0:
        assert report.stat().st_size > 0
        capsys.readouterr()
    else:
        assert "result.json" in _one_line(capsys, code)
        assert not report.exists()
