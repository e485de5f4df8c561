"""No worker survives its parent: SIGTERM, SIGINT and SIGKILL of a ``dpaudit audit
--jobs 2`` process, then every process it started must be gone. SIGTERM and SIGINT
print one line with the resume hint and exit 143 and 130."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SLOW = '''
import time

class Slow:
    """Copies its data after a pause (a stand-in for training)."""

    def __init__(self, *, epsilon, delta, pause=0.2):
        self.epsilon, self.delta, self.pause = epsilon, delta, pause

    def fit(self, data, *, domain, seed):
        time.sleep(self.pause)
        self.data = data
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "slow"}
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
'''


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (psutil where installed, else /proc)."""
    try:
        import psutil
    except ImportError:
        found: list[int] = []
        frontier = [pid]
        while frontier:
            parent = frontier.pop()
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == parent:
                    found.append(int(entry.name))
                    frontier.append(int(entry.name))
        return found
    return [p.pid for p in psutil.Process(pid).children(recursive=True)]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _stored_rounds(out: Path) -> int:
    try:
        with sqlite3.connect(out / "audit.sqlite") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM rounds").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_no_worker_survives_its_parent(tmp_path: Path, signum: int) -> None:
    (tmp_path / "slow_plugin.py").write_text(SLOW)
    out = tmp_path / "audit"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpaudit", "audit", "--generator", "slow_plugin:Slow",
         "--rounds", "200", "--batch-size", "2", "--jobs", "2", "--backend", "loky",
         "--quiet", "--out",
         str(out)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 240
        # Both workers are up and have trained batches: the signal finds them busy.
        while time.time() < deadline and proc.poll() is None and _stored_rounds(out) < 8:
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        workers = _children(proc.pid)
        assert len(workers) >= 2
        os.kill(proc.pid, signum)
        code = proc.wait(timeout=120)
        stopped = time.time()
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    survivors = [pid for pid in workers if _alive(pid)]
    while survivors and time.time() - stopped < 30:
        time.sleep(0.2)
        survivors = [pid for pid in workers if _alive(pid)]
    assert survivors == []
    if signum == signal.SIGKILL:
        assert code == -signal.SIGKILL
        return
    assert code == {signal.SIGTERM: 143, signal.SIGINT: 130}[signum]
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"dpaudit audit --resume {out}" in lines[0]
    assert not (out / "audit.lock").exists()
    assert not (out / "result.json").exists()
