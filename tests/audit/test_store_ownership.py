"""dpaudit writes only into a store it created, and never analyses a store that was
changed after it wrote it (dpaudit/audit/storage/store.py)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.run import run_audit
from dpaudit.audit.storage.store import APPLICATION_ID, ResultStore
from dpaudit.errors import StoreError

REPO = Path(__file__).resolve().parents[2]


def _rr(**kw: object) -> AuditConfig:
    base: dict[str, object] = dict(
        generator="randomized-response",
        epsilon=1.0,
        rounds=40,
        jobs=1,
        synthetic_rows=20,
    )
    base.update(kw)
    return AuditConfig(**base)  # type: ignore[arg-type]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dpaudit", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )


def _foreign(path: Path) -> bytes:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
        conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    conn.close()
    return path.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["another application", "empty", "not a database"])
def test_a_file_dpaudit_did_not_create_is_refused_untouched(
    tmp_path: Path, kind: str
) -> None:
    out = tmp_path / "audit"
    out.mkdir()
    store = out / ResultStore.FILENAME
    if kind == "another application":
        before = _foreign(store)
    elif kind == "empty":
        store.touch()
        before = b""
    else:
        store.write_text("name,value\na,1\n")
        before = store.read_bytes()
    done = _cli(
        "audit",
        "--generator",
        "randomized-response",
        "--rounds",
        "20",
        "--quiet",
        "--out",
        str(out),
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "not a dpaudit store" in lines[0] and "--out" in lines[0]
    assert store.read_bytes() == before
    assert not (out / "result.json").exists()


def test_a_new_store_is_stamped(tmp_path: Path) -> None:
    run_audit(_rr(), out_dir=tmp_path)
    with sqlite3.connect(tmp_path / ResultStore.FILENAME) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


@pytest.mark.parametrize("change", ["feature", "claim", "removed round", "added round"])
def test_a_changed_store_is_refused_on_resume(tmp_path: Path, change: str) -> None:
    config = _rr()
    run_audit(config, out_dir=tmp_path)
    with sqlite3.connect(tmp_path / ResultStore.FILENAME) as conn:
        if change == "feature":
            (blob,) = conn.execute(
                "SELECT vector FROM features WHERE round = 3"
            ).fetchone()
            edited = bytes(blob[:-1]) + bytes([blob[-1] ^ 1])
            conn.execute("UPDATE features SET vector = ? WHERE round = 3", (edited,))
        elif change == "claim":
            conn.execute(
                "UPDATE rounds SET claim = replace(claim, '1.0', '9.0') WHERE round = 5"
            )
        elif change == "removed round":
            conn.execute("DELETE FROM rounds WHERE round = 7")
        else:
            conn.execute(
                "INSERT INTO rounds SELECT 999, bit, split, claim FROM rounds "
                "WHERE round = 0"
            )
    conn.close()
    with pytest.raises(StoreError, match="was changed after dpaudit wrote it"):
        run_audit(config, out_dir=tmp_path, resume=True)


def test_a_store_of_an_older_dpaudit_is_adopted(tmp_path: Path) -> None:
    """A store written before digests existed (no stamp, no digests table) is
    analysed as it is, and checked from then on."""
    config = _rr()
    first = run_audit(config, out_dir=tmp_path)
    path = tmp_path / ResultStore.FILENAME
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE digests")
        conn.execute("PRAGMA application_id = 0")
    conn.close()
    again = run_audit(config, out_dir=tmp_path, resume=True)
    assert again.eps_emp == first.eps_emp
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE rounds SET split = 1 - split WHERE round = 2")
    conn.close()
    with pytest.raises(StoreError, match="was changed"):
        run_audit(config, out_dir=tmp_path, resume=True)
