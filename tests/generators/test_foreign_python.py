"""``--python PATH``: the foreign worker runs under another interpreter that needs only
numpy, pandas and the generator's library; the worker imports none of dpaudit's other
dependencies (checked under this interpreter with an import blocker, and under a bare
virtual environment where one exists)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpaudit.adapters.envs import env_python
from dpaudit.audit.config.model import AuditConfig
from dpaudit.cli import main
from dpaudit.data import worst_case_domain
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.foreign import pool
from dpaudit.generators.foreign.generator import ForeignGenerator
from dpaudit.generators.foreign.options import WorkerOptions
from dpaudit.rng import Rngs

REPO = Path(__file__).resolve().parents[2]
BLOCKED = (
    "torch",
    "scipy",
    "sklearn",
    "joblib",
    "tqdm",
    "dpaudit.rng",
    "dpaudit.data",
    "dpaudit.generators.plugins",
    "dpaudit.generators.base",
    "dpaudit.audit",
)

#: Installed as ``sitecustomize`` in the worker: importing any blocked module fails.
BLOCKER = f"""
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in {BLOCKED!r}):
            raise ImportError(f"blocked in the worker: {{name}}")
        return None

sys.meta_path.insert(0, Blocker())
"""

PLUGIN = """
import numpy as np

class Gen:
    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "bare"}
        return self

    def sample(self, n, *, seed):
        rows = np.random.default_rng(seed).integers(0, len(self.data), n)
        return self.data.iloc[rows].reset_index(drop=True)
"""


def _fit_sample(options: WorkerOptions) -> tuple[pd.DataFrame, list[str]]:
    gen = ForeignGenerator(
        "bare_plugin:Gen", "bare_plugin:Gen", worker=options, epsilon=1.0, delta=0.0
    )
    data = pd.DataFrame(np.zeros((4, 3), dtype=np.int64), columns=["a", "b", "c"])
    gen.fit(data, domain=worst_case_domain(), rng=Rngs.from_seed(0))
    release = gen.sample(7, rng=Rngs.from_seed(1))
    reply, _ = gen.worker_.request(
        {"op": "ping"}, what="ping", name="ping", options=options
    )
    return release, list(reply["modules"])


def test_the_worker_imports_no_dpaudit_dependency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    (tmp_path / "bare_plugin.py").write_text(PLUGIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    release, modules = _fit_sample(WorkerOptions())
    assert len(release) == 7 and list(release.columns) == ["a", "b", "c"]
    assert "sitecustomize" in modules  # the blocker was active
    assert "dpaudit.generators.foreign.wire" in modules
    loaded = [
        m for m in modules if any(m == b or m.startswith(b + ".") for b in BLOCKED)
    ]
    assert loaded == []


def test_an_interpreter_without_numpy_is_refused_in_one_line(
    tmp_path: Path, capsys
) -> None:
    venv = tmp_path / "empty"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    for path, words in (
        (str(python), "cannot import numpy and pandas"),
        (str(tmp_path / "nope"), "is not an executable file"),
        ("/bin/false", "cannot import numpy and pandas"),
    ):
        code = main(
            [
                "audit",
                "--generator",
                "some_plugin:Gen",
                "--python",
                path,
                "--rounds",
                "5",
                "--quiet",
                "--out",
                str(tmp_path / "a"),
            ]
        )
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err
        assert f"`--python` {path!r} {words}" in err
    assert not (tmp_path / "a").exists()


def test_a_built_in_generator_takes_no_python() -> None:
    with pytest.raises(
        InvalidParameterError, match="`python` must be unset for a built-in"
    ):
        AuditConfig(generator="copy", python=sys.executable)


def _bare_python() -> str | None:
    path = os.environ.get("DPAUDIT_TEST_BARE_PYTHON") or str(env_python("bare"))
    if not Path(path).is_file():
        return None
    ok = (
        subprocess.run(
            [path, "-c", "import numpy, pandas"], capture_output=True, check=False
        ).returncode
        == 0
    )
    return path if ok else None


@pytest.mark.skipif(
    _bare_python() is None,
    reason="no bare interpreter with only numpy and pandas (set "
    "DPAUDIT_TEST_BARE_PYTHON, or create one at $DPAUDIT_ENV_HOME/bare, by default "
    "~/.cache/dpaudit/envs/bare: python -m venv DIR && DIR/bin/pip install numpy pandas)",
)
def test_an_audit_under_a_bare_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = _bare_python()
    assert python is not None
    (tmp_path / "bare_plugin.py").write_text(PLUGIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    probe = subprocess.run(
        [python, "-c", "import torch"], capture_output=True, check=False
    )
    assert probe.returncode != 0, "the bare interpreter must not have torch"
    release, modules = _fit_sample(WorkerOptions(python=python))
    assert len(release) == 7 and "torch" not in modules
    out = tmp_path / "audit"
    code = main(
        [
            "audit",
            "--generator",
            "bare_plugin:Gen",
            "--python",
            python,
            "--rounds",
            "10",
            "--attack",
            "querybased",
            "--jobs",
            "1",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert code == 0 and (out / "result.json").is_file()
    assert pool.worker_key(WorkerOptions(python=python))[0] == python
