"""The Python of a foreign generator's worker is the result's (``python``), never
the claim's: no ``worker_python`` in a round's claim or in result.json's claim."""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.run import run_audit
from dpaudit.audit.storage.store import ResultStore
from dpaudit.reports.claimview import reproduce_rows

REPO = Path(__file__).resolve().parents[2]
TOY = "dpaudit.generators.toy_plugins:NoisyMarginals"


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    return tmp_path


@pytest.mark.parametrize("python", [None, sys.executable])
def test_the_worker_python_is_the_results_not_the_claims(
    plugin_path: Path, python: str | None
) -> None:
    """Without ``--python`` the worker runs the audit's interpreter: ``python`` is
    its version. With ``--python`` (here the same interpreter, named): ``python``
    names both, and the versions line the worker's."""
    out = plugin_path / "audit"
    result = run_audit(
        AuditConfig(
            generator=TOY,
            dataset="worst-case",
            release="transcript",
            rounds=5,
            jobs=1,
            python=python,
        ),
        out_dir=out,
    )
    with ResultStore(out) as store:
        claims = store.claims()
    assert claims and all("worker_python" not in c["extra"] for c in claims.values())
    doc = json.loads((out / "result.json").read_text())
    assert "worker_python" not in json.dumps(doc["claim"])
    version = platform.python_version()
    if python is None:
        assert doc["python"] == version
    else:
        assert doc["python"] == {"audit": version, "worker": version}
    versions = dict(reproduce_rows(result))["versions"]
    assert f"Python {version}" in versions
