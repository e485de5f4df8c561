"""``--force`` never loses data, and dpaudit touches only its own files in ``--out``
(dpaudit/audit/storage/staging.py, dpaudit/audit/storage/outdir.py): the old audit stays
byte-identical until the new one has stored its first batch (a plug-in failing in
``fit``, a SIGKILL at any step of the swap), a user's ``trace/`` and other files are
never moved or removed, and relative output paths survive a working directory that
changes during the run."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.two_world import game as run_module
from dpaudit.audit.run import run_audit
from dpaudit.audit.storage import staging
from dpaudit.audit.storage.store import ResultStore
from dpaudit.audit.storage.traces import trace_digest, write_trace
from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError

REPO = Path(__file__).resolve().parents[2]

FAILING = """
class Gen:
    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        raise ValueError("cannot fit this table")

    def sample(self, n, *, seed):
        return None
"""


SLEEPY = """
import time


class Gen:
    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        time.sleep(600)

    def sample(self, n, *, seed):
        return None
"""


def rr(epsilon: float = 2.0, **kw: Any) -> AuditConfig:
    """A randomized-response audit (no training: fast)."""
    base: dict[str, Any] = dict(
        generator="randomized-response",
        epsilon=epsilon,
        rounds=20,
        batch_size=10,
        jobs=1,
        synthetic_rows=10,
    )
    base.update(kw)
    return AuditConfig(**base)


RR_ARGS = ["--generator", "randomized-response", "--rounds", "20", "--quiet"]


def snapshot(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` (hidden ones included) -> its SHA-256."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _leftovers(out: Path) -> list[str]:
    return sorted(
        p.name
        for p in out.iterdir()
        if p.name.startswith(staging.STAGING_PREFIX) or p.name == "audit.lock"
    )


# ------------------------------------------------------ a failing new run


@pytest.mark.slow
def test_force_with_a_plugin_failing_in_fit_keeps_the_old_audit(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "failing.py").write_text(FAILING)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    out = tmp_path / "audit"
    assert main(["audit", *RR_ARGS, "--out", str(out)]) == 0
    before = snapshot(out)
    assert {"result.json", "audit.sqlite"} <= set(before)
    capsys.readouterr()
    code = main(
        [
            *("audit", "--generator", "failing:Gen", "--rounds", "5", "--jobs", "1"),
            *("--quiet", "--force", "--out", str(out)),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "cannot fit this table" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert snapshot(out) == before  # result.json and audit.sqlite byte-identical
    assert _leftovers(out) == []
    assert main(["report", str(out), "--out", "-"]) == 0


def test_force_with_an_exception_after_staging_keeps_the_old_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "a"
    run_audit(rr(), out_dir=out)
    before = snapshot(out)

    def fails(*args: Any, **kwargs: Any) -> Any:
        assert any(out.glob(f"{staging.STAGING_PREFIX}*/audit.sqlite"))
        raise MemoryError("first batch")

    monkeypatch.setattr(run_module, "train_batch", fails)
    with pytest.raises(MemoryError):
        run_audit(rr(epsilon=3.0), out_dir=out, force=True)
    assert snapshot(out) == before and _leftovers(out) == []


def test_force_replaces_the_audit_once_it_has_a_batch(tmp_path: Path) -> None:
    out = tmp_path / "a"
    run_audit(rr(), out_dir=out)
    old = snapshot(out)
    result = run_audit(rr(epsilon=3.0), out_dir=out, force=True)
    assert result.eps_claimed == 3.0 and result.source == out / "result.json"
    assert snapshot(out)["result.json"] != old["result.json"]
    with ResultStore(out) as store:
        assert store.count_rounds() == 40
        assert store.get_meta("config")["epsilon"] == 3.0
    assert _leftovers(out) == []


# --------------------------------------------------- a kill at any step


def _two_audits(tmp_path: Path) -> tuple[Path, Path]:
    """A finished audit (with a trace of its own and a stale journal) and the store
    of a new one, staged; both as a forced run leaves them at its first batch."""
    old = tmp_path / "old"
    run_audit(rr(), out_dir=old)
    write_trace(old / "trace", {"epsilon": 2.0, "trace": {}}, num_teachers=0)
    (old / "audit.sqlite-journal").write_bytes(b"")
    new = tmp_path / "new"
    run_audit(rr(epsilon=3.0), out_dir=new)
    return old, new


def _state(out: Path, old: dict[str, str], new: dict[str, str]) -> str:
    now = snapshot(out)
    if now == old:
        return "old"
    if now.get("audit.sqlite") == new["audit.sqlite"] and "result.json" not in now:
        return "new"
    return f"mixed: {sorted(now)}"


@pytest.mark.parametrize("trace", [True, False])
def test_a_kill_at_any_step_of_the_swap_leaves_one_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace: bool
) -> None:
    """A SIGKILL between two steps of :func:`swap_in` is a swap stopped after ``k``
    renames; the next run's :func:`recover` leaves the old audit (before the commit
    point) or the new one (after it), never a mix, and no staging folder."""
    old_dir, new_dir = _two_audits(tmp_path)
    old, new = snapshot(old_dir), snapshot(new_dir)
    real = os.replace
    seen = []
    for kill_after in range(6):
        out = tmp_path / f"out{kill_after}"
        shutil.copytree(old_dir, out)
        stage = staging.new_staging(out)
        shutil.copy(new_dir / "audit.sqlite", stage / "audit.sqlite")
        if trace:
            write_trace(stage / "trace", {"epsilon": 3.0, "trace": {}}, num_teachers=0)
        calls = []

        def killed(
            src: Any, dst: Any, _calls: list[int] = calls, _after: int = kill_after
        ) -> None:
            if len(_calls) == _after:
                raise KeyboardInterrupt  # the process ends here, nothing cleaned up
            _calls.append(1)
            real(src, dst)

        monkeypatch.setattr(staging.os, "replace", killed)
        with contextlib.suppress(KeyboardInterrupt):
            staging.swap_in(stage, out, replace_trace=True)
        monkeypatch.setattr(staging.os, "replace", real)
        staging.recover(out)
        state = _state(out, old, new)
        seen.append(state)
        assert state in ("old", "new"), (kill_after, state)
        assert _leftovers(out) == []
        if state == "new":
            assert (out / "trace").is_dir() == trace
    # Killed up to the fourth rename (the store, the commit point): old; after: new.
    assert seen == ["old"] * 4 + ["new"] * 2


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_forced_run_killed_in_fit_keeps_the_old_audit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, signum: int
) -> None:
    """SIGKILL (or SIGTERM) of ``dpaudit audit --force`` while its plug-in is in
    ``fit`` (the new store staged, no batch yet): the old audit is byte-identical
    and still reports, and the next forced run clears the staging folder a SIGKILL
    left (SIGTERM: the run removes it itself and says the audit is unchanged)."""
    (tmp_path / "sleepy.py").write_text(SLEEPY)
    out = tmp_path / "a"
    run_audit(rr(), out_dir=out)
    before = snapshot(out)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    argv = ["--generator", "sleepy:Gen", "--rounds", "5", "--jobs", "1", "--quiet"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpaudit", "audit", *argv, "--force", "--out", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None:
            if any(out.glob(f"{staging.STAGING_PREFIX}*/audit.sqlite")):
                break
            time.sleep(0.1)
        time.sleep(1.0)  # in fit, for good
        assert proc.poll() is None
        proc.send_signal(signum)
        code = proc.wait(timeout=120)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    staged = [p for p in out.iterdir() if p.name.startswith(staging.STAGING_PREFIX)]
    if signum == signal.SIGKILL:
        assert staged and code == -signal.SIGKILL
    else:
        assert code == 143 and not staged and not (out / "audit.lock").exists()
        assert err.strip().splitlines() == [
            f"dpaudit: terminated (SIGTERM); the audit in {out} is unchanged (--force "
            "replaces it only once the new audit has stored its first batch)"
        ]
    kept = {
        k: v
        for k, v in snapshot(out).items()
        if not k.startswith(staging.STAGING_PREFIX) and k != "audit.lock"
    }
    assert kept == before
    capsys.readouterr()
    assert main(["report", str(out), "--out", "-"]) == 0
    assert main(["report", str(tmp_path), "--out", "-"]) == 0
    assert "without a result" not in capsys.readouterr().err  # staging: no audit
    result = run_audit(rr(epsilon=3.0), out_dir=out, force=True)
    assert result.eps_claimed == 3.0 and _leftovers(out) == []


# --------------------------------------------- files dpaudit did not write


def test_force_in_the_current_folder_keeps_the_users_files(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "table.csv").write_text("a\n1\n")
    assert main(["audit", *RR_ARGS, "--out", "."]) == 0
    mine = {
        k: v for k, v in snapshot(tmp_path).items() if k.startswith(("notes", "data"))
    }
    assert main(["audit", *RR_ARGS, "--epsilon", "3", "--force", "--out", "."]) == 0
    after = snapshot(tmp_path)
    assert {k: after[k] for k in mine} == mine
    assert sorted(after) == sorted([*mine, "audit.sqlite", "result.json"])
    # A trace/ of the user's: refused at start, with one line; nothing changes.
    (tmp_path / "trace").mkdir()
    (tmp_path / "trace" / "trace.json").write_text('{"epsilon": 99}\n')
    before = snapshot(tmp_path)
    capsys.readouterr()
    assert main(["audit", *RR_ARGS, "--force", "--out", "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trace/ folder that this audit did not write" in err
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["notes.txt", "data", "trace", "audit.sqlite", "result.json"]
    )


def test_a_trace_folder_in_out_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    out = tmp_path / "a"
    write_trace(out / "trace", {"epsilon": 5.0, "trace": {}}, num_teachers=0)
    before = snapshot(out)
    with pytest.raises(InvalidParameterError, match="trace/ folder that this audit"):
        run_audit(rr(), out_dir=out)
    assert snapshot(out) == before and sorted(p.name for p in out.iterdir()) == [
        "trace"
    ]


def test_force_keeps_a_trace_of_the_old_audit_that_was_changed(
    tmp_path: Path,
) -> None:
    """The old audit's own trace goes with it; once edited (the store's digest no
    longer matches) it is the user's and --force refuses to remove it."""
    out = tmp_path / "a"
    run_audit(rr(), out_dir=out)
    with ResultStore(out) as store:
        assert store.get_meta("trace") == {"digest": None}  # rr writes no trace
        write_trace(
            out / "trace",
            {"epsilon": 2.0, "trace": {}},
            num_teachers=0,
            record=lambda d: store.set_meta("trace", {"digest": d}),
        )
        assert store.get_meta("trace") == {"digest": trace_digest(out / "trace")}
    run_audit(rr(epsilon=3.0), out_dir=out, force=True)  # its own: replaced
    assert not (out / "trace").exists() and _leftovers(out) == []
    with sqlite3.connect(out / "audit.sqlite") as conn:
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES ('trace', ?)",
            ('{"digest": "%s"}' % ("0" * 64),),
        )
    conn.close()
    write_trace(out / "trace", {"epsilon": 2.0, "trace": {}}, num_teachers=0)
    before = snapshot(out)
    with pytest.raises(InvalidParameterError, match="or that was changed since"):
        run_audit(rr(), out_dir=out, force=True)
    assert snapshot(out) == before


def test_force_refuses_a_store_of_another_application(tmp_path: Path) -> None:
    out = tmp_path / "a"
    out.mkdir()
    with sqlite3.connect(out / "audit.sqlite") as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.close()
    (out / "result.json").write_text('{"mine": true}\n')
    before = snapshot(out)
    with pytest.raises(InvalidParameterError, match="not a dpaudit"):
        run_audit(rr(), out_dir=out, force=True)
    (out / "audit.sqlite").unlink()
    with pytest.raises(
        InvalidParameterError, match=r"result\.json.*not a dpaudit result"
    ):
        run_audit(rr(), out_dir=out, force=True)
    assert snapshot(out) == {"result.json": before["result.json"]}


def test_write_trace_replaces_only_a_trace_folder(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "thesis.tex").write_text("x")
    with pytest.raises(InvalidParameterError, match="not a trace"):
        write_trace(folder, {"epsilon": 1.0, "trace": {}}, num_teachers=0)
    assert [p.name for p in folder.iterdir()] == ["thesis.tex"]
    # `dpaudit trace --out` refuses it before training, with one line.
    assert main(["trace", "--iterations", "1", "--out", str(folder)]) == 2
    assert [p.name for p in folder.iterdir()] == ["thesis.tex"]
    other = tmp_path / "u"
    write_trace(other, {"epsilon": 1.0, "trace": {}}, num_teachers=0)
    write_trace(other, {"epsilon": 2.0, "trace": {}}, num_teachers=0)  # its own
    assert '"epsilon": 2.0' in (other / "trace.json").read_text()


# ------------------------------------------------ a working directory that moves


@pytest.mark.slow
def test_a_relative_out_survives_a_changed_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code run during the audit (a generator's library) changes the working
    directory: the audit and the check still write where the command line said."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(home)
    real = run_module.train_batch

    def moving(*args: Any, **kwargs: Any) -> Any:
        os.chdir(elsewhere)
        return real(*args, **kwargs)

    monkeypatch.setattr(run_module, "train_batch", moving)
    assert main(["audit", *RR_ARGS, "--out", "rel"]) == 0
    assert (home / "rel" / "result.json").is_file()
    os.chdir(home)
    (home / "p.toml").write_text(
        '[[audit]]\nname = "one"\ngenerator = "randomized-response"\nrounds = 20\n'
    )
    code = main(
        ["check", "--policy", "p.toml", "--out", "co", "--junit", "j.xml", "--quiet"]
    )
    assert code in (0, 4)
    assert (home / "co" / "one" / "result.json").is_file()
    assert (home / "co" / "one" / "report.html").is_file()
    assert (home / "j.xml").is_file()
    assert sorted(p.name for p in elsewhere.iterdir()) == []


CHDIR = """
import os


class Gen:
    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        os.chdir(os.environ["ELSEWHERE"])
        self.data = data
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "none"}
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
"""


@pytest.mark.slow
def test_a_plugin_changing_directory_in_fit_keeps_a_relative_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    (tmp_path / "chdirgen.py").write_text(CHDIR)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    monkeypatch.setenv("ELSEWHERE", str(elsewhere))
    monkeypatch.chdir(home)
    argv = ["--generator", "chdirgen:Gen", "--rounds", "5", "--attack", "querybased"]
    assert main(["audit", *argv, "--jobs", "1", "--quiet", "--out", "rel"]) == 0
    assert (home / "rel" / "result.json").is_file()
    assert list(elsewhere.iterdir()) == []
