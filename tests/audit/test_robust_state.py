"""Robust audit state: one writer per directory, a validated ``--resume``, failed runs
that leave nothing or a store the same command continues, timing kept on resume,
readable traces. (Signals and workers: test_robust_signals.py.)"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit import AuditConfig
from dpaudit.audit import run_audit as run_typed_audit
from dpaudit.audit.storage.store import ResultStore, StoreLock
from dpaudit.audit.storage.traces import write_trace
from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError, StoreError

REPO = Path(__file__).resolve().parents[2]


def rr(epsilon: float = 2.0, **kw: Any) -> AuditConfig:
    """A randomized-response audit (exact epsilon, no training: fast)."""
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


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _strip(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "timing"}


def _edit_stored_config(out: Path, fix_identity: bool = True, **changes: Any) -> None:
    """Rewrites the stored configuration (as an attacker or a bad disk would)."""
    with sqlite3.connect(out / ResultStore.FILENAME) as conn:
        config = json.loads(
            conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0]
        )
        config.update(changes)
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'config'",
            (json.dumps(config, sort_keys=True),),
        )
        if fix_identity:
            identity = AuditConfig.from_mapping(config).identity()
            conn.execute(
                "UPDATE meta SET value = ? WHERE key = 'identity'",
                (json.dumps(identity),),
            )


# ------------------------------------------------------------ one writer


def test_second_writer_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "a"
    out.mkdir()
    with StoreLock(out):
        with pytest.raises(
            StoreError, match=r"in use by another dpaudit run \(pid \d+\)"
        ):
            run_typed_audit(rr(), out_dir=out)
        assert sorted(p.name for p in out.iterdir()) == [StoreLock.FILENAME]
    assert list(out.iterdir()) == []  # the lock file goes with the lock
    run_typed_audit(rr(), out_dir=out)  # the lock released: runs


def test_lock_is_refused_across_processes(tmp_path: Path) -> None:
    """A lock held by another process refuses this one; once that process exits
    (without releasing: killed), the kernel drops the lock."""
    out = tmp_path / "a"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from dpaudit.audit.storage.store import StoreLock
            StoreLock({str(out)!r}).acquire()
            print("held", flush=True)
            sys.stdin.readline()
        """),
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match=f"pid {holder.pid}"):
            StoreLock(out).acquire()
    finally:
        holder.kill()
        holder.wait()
    lock = StoreLock(out)
    lock.acquire()
    lock.release()


@pytest.mark.slow
def test_two_audits_started_together_never_mix(tmp_path: Path) -> None:
    """The issue's `--seed 0 & --seed 1` into one --out: one audit runs, the other
    is refused with exit 2 (busy, or the directory then holds a different audit);
    the result is one seed's alone."""
    out = tmp_path / "d"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dpaudit",
                "audit",
                "--generator",
                "randomized-response",
                "--rounds",
                "100",
                "--synthetic-rows",
                "10",
                "--jobs",
                "1",
                "--quiet",
                "--seed",
                str(seed),
                "--out",
                str(out),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (0, 1)
    ]
    results = [
        (p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs
    ]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    refused = next(err for code, err in results if code == 2)
    assert refused.count("\n") == 1
    assert "in use by another dpaudit run" in refused or "different audit" in refused
    doc = json.loads((out / "result.json").read_text())
    winner = doc["seed"]
    with ResultStore(out) as store:
        assert store.count_rounds() == 200
        assert store.get_meta("config")["seed"] == winner
    assert not (out / StoreLock.FILENAME).exists()


# ---------------------------------------------------------------- resume


def test_resume_refuses_conflicting_flags_naming_them(capsys, tmp_path: Path) -> None:
    out = tmp_path / "a"
    run_typed_audit(rr(), out_dir=out)
    before = (out / "result.json").read_text()
    for flags, named in (
        (["--rounds", "50"], "--rounds"),
        (["--epsilon", "9", "--seed", "3"], "--epsilon, --seed"),
        (["--out", str(tmp_path / "b")], "--out"),
        (["--force"], "--force"),
        (["--option", "lam=1"], "--option"),
        (["--config", str(tmp_path / "x.toml")], "--config"),
    ):
        code, _, err = cli(capsys, "audit", "--resume", str(out), *flags)
        assert code == 2, flags
        assert named in err and err.count("\n") == 1, err
    assert (out / "result.json").read_text() == before
    assert not (tmp_path / "b").exists()
    # The run settings may change; the same generator may be named again.
    code, text, err = cli(
        capsys,
        "audit",
        "--resume",
        str(out),
        "--jobs",
        "1",
        "--batch-size",
        "7",
        "--fit-timeout",
        "60",
        "--max-memory",
        "4096",
        "--generator",
        "randomized-response",
        "--quiet",
    )
    assert code == 0, err
    assert "resumed" in text
    after = json.loads((out / "result.json").read_text())
    assert (
        after["config"]["fit_timeout"] == 60 and after["config"]["max_memory"] == 4096
    )
    assert after["eps_emp"] == json.loads(before)["eps_emp"]
    code, _, err = cli(capsys, "audit", "--resume", str(out), "--generator", "copy")
    assert code == 2 and "not the stored audit's generator" in err


EVIL = """
import pathlib
pathlib.Path({marker!r}).write_text("imported")

class Gen:
    def __init__(self, *, epsilon, delta):
        pass
"""


def test_resume_imports_no_stored_plugin_module(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "a"
    run_typed_audit(rr(), out_dir=out)
    marker = tmp_path / "imported"
    (tmp_path / "evil_mod.py").write_text(EVIL.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    _edit_stored_config(out, generator="evil_mod:Gen")
    code, _, err = cli(capsys, "audit", "--resume", str(out), "--quiet")
    assert code == 2
    assert "pass --generator evil_mod:Gen" in err and err.count("\n") == 1
    assert not marker.exists()
    assert "evil_mod" not in sys.modules


def test_resume_contacts_no_stored_scheduler(capsys, tmp_path: Path) -> None:
    out = tmp_path / "a"
    run_typed_audit(rr(), out_dir=out)
    timing = json.loads((out / "result.json").read_text())["timing"]
    _edit_stored_config(out, backend="dask", scheduler="tcp://192.0.2.1:8786")
    code, _, err = cli(capsys, "audit", "--resume", str(out), "--quiet")
    assert code == 2
    assert "contacts no scheduler" in err and "--backend dask --scheduler" in err
    # Naming a local backend continues here (the finished audit is analysed again).
    code, _, err = cli(
        capsys,
        "audit",
        "--resume",
        str(out),
        "--backend",
        "loky",
        "--jobs",
        "1",
        "--quiet",
    )
    assert code == 0, err
    again = json.loads((out / "result.json").read_text())
    assert again["config"]["backend"] == "loky"
    assert again["config"]["scheduler"] is None
    assert again["timing"]["train_seconds"] == timing["train_seconds"]


@pytest.mark.parametrize(
    "damage", ["edited", "not a table", "bad type", "garbage file"]
)
def test_resume_validates_the_store_as_data(
    capsys, tmp_path: Path, damage: str
) -> None:
    out = tmp_path / "a"
    run_typed_audit(rr(), out_dir=out)
    path = out / ResultStore.FILENAME
    if damage == "edited":
        _edit_stored_config(out, fix_identity=False, rounds=10)
        expect = "does not match its recorded identity"
    elif damage == "not a table":
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE meta SET value = '[1, 2]' WHERE key = 'config'")
        expect = "holds no audit configuration"
    elif damage == "bad type":
        _edit_stored_config(out, fix_identity=False, epsilon="abc")
        expect = "holds an invalid configuration"
    else:
        path.write_bytes(b"\x00not sqlite at all" * 100)
        expect = "not"
    code, _, err = cli(capsys, "audit", "--resume", str(out), "--quiet")
    assert code == 2
    assert expect in err and err.count("\n") == 1, err
    assert "--force" in err


def test_resume_on_finished_audit_keeps_its_timing(tmp_path: Path) -> None:
    out = tmp_path / "a"
    first = run_typed_audit(rr(), out_dir=out).to_json()
    assert first["timing"]["resumed"] is False
    assert first["timing"]["sessions"] == 1
    again = run_typed_audit(rr(), out_dir=out, resume=True).to_json()
    assert again["timing"]["train_seconds"] == first["timing"]["train_seconds"]
    assert again["timing"]["total_seconds"] == first["timing"]["total_seconds"]
    assert again["timing"]["sessions"] == 1
    assert again["timing"]["resumed"] is True
    assert again["timing"]["rounds_stored_before"] == 40
    assert _strip(again) == _strip(first)


# ---------------------------------------------------- failed runs, leftovers

FLAKY = '''
import pathlib

import pandas as pd

HERE = pathlib.Path(__file__).parent


class Flaky:
    """Fails from its FAIL_AT-th fit on (counted in the file `fits`; FAIL_AT read
    from the file `fail_at`, absent: never), else copies. The plug-in runs in a
    foreign worker process, so the test steers it through files."""

    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        counter = HERE / "fits"
        fits = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(fits))
        fail_at = HERE / "fail_at"
        if fail_at.exists() and fits >= int(fail_at.read_text()):
            raise RuntimeError("flaky fit")
        self.data = data
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "flaky"}
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
'''


class FlakyControl:
    """Steers the Flaky plug-in in its worker: ``FAIL_AT`` and ``fits``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def FAIL_AT(self) -> int | None:
        path = self.folder / "fail_at"
        return int(path.read_text()) if path.exists() else None

    @FAIL_AT.setter
    def FAIL_AT(self, value: int | None) -> None:
        (self.folder / "fail_at").unlink(missing_ok=True)
        if value is not None:
            (self.folder / "fail_at").write_text(str(value))

    @property
    def fits(self) -> int:
        path = self.folder / "fits"
        return int(path.read_text()) if path.exists() else 0

    @fits.setter
    def fits(self, value: int) -> None:
        (self.folder / "fits").write_text(str(value))


@pytest.fixture
def flaky(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "flaky_plugin.py").write_text(FLAKY)
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(folder), str(repo)]))
    return FlakyControl(folder)


def test_failure_before_first_batch_leaves_nothing(flaky: Any, tmp_path: Path) -> None:
    config = AuditConfig(
        generator="flaky_plugin:Flaky", rounds=10, batch_size=5, jobs=1
    )
    flaky.FAIL_AT = 1
    out = tmp_path / "new" / "audit"
    with pytest.raises(Exception, match="flaky fit"):
        run_typed_audit(config, out_dir=out)
    assert not (tmp_path / "new").exists()
    existing = tmp_path / "kept"
    existing.mkdir()
    (existing / "notes.txt").write_text("mine")
    flaky.fits = 0
    with pytest.raises(Exception, match="flaky fit"):
        run_typed_audit(config, out_dir=existing)
    assert sorted(p.name for p in existing.iterdir()) == ["notes.txt"]


def test_failed_run_is_continued_by_the_same_command(
    flaky: Any, tmp_path: Path
) -> None:
    """A run that failed after committing batches leaves a store that the same
    command (no --resume) continues, to the result of an uninterrupted run."""
    config = AuditConfig(
        generator="flaky_plugin:Flaky", rounds=10, batch_size=5, jobs=1
    )
    flaky.FAIL_AT = 8  # inside the second batch of five models (fits 6 to 10)
    out = tmp_path / "a"
    with pytest.raises(Exception, match="flaky fit"):
        run_typed_audit(config, out_dir=out)
    with ResultStore(out) as store:
        assert store.count_rounds() == 5
    assert not (out / "result.json").exists()
    assert not (out / StoreLock.FILENAME).exists()
    flaky.FAIL_AT = None
    continued = run_typed_audit(config, out_dir=out).to_json()
    assert continued["timing"]["resumed"] is True
    assert continued["timing"]["rounds_stored_before"] == 5
    clean = run_typed_audit(config, out_dir=tmp_path / "clean").to_json()
    assert _strip(continued) == _strip(clean)
    # A different audit is still refused, and a finished one is not run again.
    with pytest.raises(InvalidParameterError, match="different audit"):
        run_typed_audit(replace(config, seed=9), out_dir=out)
    with pytest.raises(InvalidParameterError, match=r"finished.*--resume.*--force"):
        run_typed_audit(config, out_dir=out)


# ------------------------------------------------------------------ trace


def test_trace_folder_is_readable_by_others(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_trace(tmp_path / "trace", {"epsilon": 1.0, "trace": {}}, num_teachers=0)
    finally:
        os.umask(umask)
    mode = stat.S_IMODE((tmp_path / "trace").stat().st_mode)
    assert mode == 0o755
    for f in (tmp_path / "trace").iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["trace"]


def test_unwritable_out_is_one_line(capsys, tmp_path: Path) -> None:
    """A folder dpaudit may not write into: a mode-555 folder for an ordinary user;
    as root (who writes anywhere, as CI runs), sysfs, which refuses even root."""
    if os.geteuid() != 0:
        locked = tmp_path / "ro"
        locked.mkdir(mode=0o555)
    else:
        locked = Path("/sys")
        if not locked.is_dir():
            pytest.skip("no /sys here: no folder refuses root")
    before = sorted(p.name for p in locked.iterdir())
    for out in (locked / "dpaudit-test", locked / "dpaudit-test" / "sub"):
        code, _, err = cli(
            capsys,
            "audit",
            "--generator",
            "randomized-response",
            "--rounds",
            "5",
            "--out",
            str(out),
            "--quiet",
        )
        assert code == 2 and err.count("\n") == 1, err
    assert sorted(p.name for p in locked.iterdir()) == before


def test_out_under_a_file_is_one_line(capsys, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    code, _, err = cli(
        capsys,
        "audit",
        "--generator",
        "randomized-response",
        "--rounds",
        "5",
        "--out",
        str(tmp_path / "file" / "sub"),
        "--quiet",
    )
    assert code == 2 and "can be created" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_force_with_bad_input_keeps_the_old_audit(tmp_path: Path) -> None:
    out = tmp_path / "a"
    run_typed_audit(rr(), out_dir=out)
    before = (out / "result.json").read_text()
    with pytest.raises(InvalidParameterError, match="neither a known dataset"):
        run_typed_audit(rr(dataset="no-such-data"), out_dir=out, force=True)
    assert (out / "result.json").read_text() == before
    with ResultStore(out) as store:
        assert store.count_rounds() == 40
