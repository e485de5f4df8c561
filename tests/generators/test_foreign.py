"""Plug-ins run in foreign worker processes: whatever a plug-in does in ``fit``,
``sample`` or at its module's import (``sys.exit(0)``, ``sys.exit(1)``, any
``BaseException``, ``os._exit``, a crash, a hang, unbounded allocation) ends
``dpaudit audit`` and ``dpaudit check`` with exit 2 and one line naming the plug-in
and what it did, with no result.json and no worker process left."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpaudit.cli import main
from dpaudit.data import worst_case_domain
from dpaudit.errors import PluginError
from dpaudit.generators.foreign import pool
from dpaudit.generators.foreign.generator import ForeignGenerator
from dpaudit.generators.foreign.options import WorkerOptions
from dpaudit.generators.foreign.wire import decode_frame, encode_frame
from dpaudit.rng import Rngs

REPO = Path(__file__).resolve().parents[2]

GOOD_FIT = """
    self.data = data
    self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                          "accountant": "hostile"}
    return self
"""
GOOD_SAMPLE = """
    return self.data.sample(n, replace=True, random_state=seed % 2**32
                            ).reset_index(drop=True)
"""
TEMPLATE = """
import os, sys, time

class Boom(BaseException):
    pass

{top}

class Gen:
    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
{fit}
    def sample(self, n, *, seed):
{sample}
"""

#: What the plug-in does -> (the code, the words the one line must hold).
BEHAVIOURS = {
    "exit0": ("sys.exit(0)", "called sys.exit(0)"),
    "exit1": ("sys.exit(1)", "called sys.exit(1)"),
    "base_exception": ("raise Boom('no')", "raised Boom: no"),
    "os_exit": ("os._exit(3)", "exited with code 3"),
    "crash": ("import ctypes; ctypes.string_at(0)", "killed by SIGSEGV"),
    "hang": ("time.sleep(600)", "did not finish within --fit-timeout 1.5 s"),
    "memory": (
        "x = [b'x' * (50 * 2**20) for _ in range(400)]; time.sleep(60)",
        "used more than --max-memory 200 MiB",
    ),
}


def _plugin(tmp_path: Path, name: str, *, where: str, code: str) -> str:
    body = {"top": "", "fit": GOOD_FIT, "sample": GOOD_SAMPLE}
    if where == "import":
        body["top"] = code
    else:
        body[where] = textwrap.indent(code, "    ") + "\n"
    body["fit"] = textwrap.indent(textwrap.dedent(body["fit"]), "        ")
    body["sample"] = textwrap.indent(textwrap.dedent(body["sample"]), "        ")
    (tmp_path / f"{name}.py").write_text(TEMPLATE.format(**body))
    return f"{name}:Gen"


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` importable by the workers (PYTHONPATH)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    return tmp_path


def _audit_args(generator: str, out: Path) -> list[str]:
    return [
        "audit",
        "--generator",
        generator,
        "--rounds",
        "5",
        "--attack",
        "querybased",
        "--jobs",
        "1",
        "--fit-timeout",
        "1.5",
        "--max-memory",
        "200",
        "--quiet",
        "--out",
        str(out),
    ]


CASES = [(kind, where) for kind in BEHAVIOURS for where in ("fit", "sample")] + [
    ("exit0", "import"),
    ("base_exception", "import"),
    ("os_exit", "import"),
]


@pytest.mark.parametrize(("kind", "where"), CASES)
def test_audit_exits_2_with_one_line(
    capsys, plugin_path: Path, kind: str, where: str
) -> None:
    code, words = BEHAVIOURS[kind]
    generator = _plugin(plugin_path, f"hostile_{kind}_{where}", where=where, code=code)
    out = plugin_path / "audit"
    before = set(pool.live_worker_pids())
    started = time.monotonic()
    assert main(_audit_args(generator, out)) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert generator in lines[0] and words in lines[0], lines[0]
    if where == "import":
        assert "importing its module" in lines[0]
    else:
        assert f"`{where}`" in lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert not (out / "result.json").exists()
    assert time.monotonic() - started < 60
    # A worker that failed was killed and reaped; at most one healthy worker (one
    # whose plug-in raised, caught in the worker) stays idle for the next fit.
    new = set(pool.live_worker_pids()) - before
    assert len(new) <= 1
    for pid in new:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state != "Z"


@pytest.mark.parametrize("kind", ["exit0", "exit1", "hang"])
def test_check_exits_2_naming_the_plugin(capsys, plugin_path: Path, kind: str) -> None:
    code, words = BEHAVIOURS[kind]
    generator = _plugin(plugin_path, f"hostile_check_{kind}", where="fit", code=code)
    policy = plugin_path / "policy.toml"
    policy.write_text(
        textwrap.dedent(f'''
        [[audit]]
        name = "hostile"
        generator = "{generator}"
        rounds = 5
        attack = "querybased"
        jobs = 1
        fit_timeout = 1.5
    ''')
    )
    assert (
        main(
            [
                "check",
                "--policy",
                str(policy),
                "--out",
                str(plugin_path / "check"),
                "--quiet",
            ]
        )
        == 2
    )
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert len(captured.err.strip().splitlines()) == 1, captured.err
    logged = [
        ln for ln in captured.out.splitlines() if "hostile" in ln and "ERROR" in ln
    ]
    assert len(logged) == 1 and words in logged[0] and generator in logged[0]
    assert not (plugin_path / "check" / "hostile" / "result.json").exists()


def test_a_killed_worker_is_gone_and_replaced(plugin_path: Path) -> None:
    generator = _plugin(
        plugin_path,
        "crash_once",
        where="fit",
        code="import ctypes; ctypes.string_at(0)",
    )
    options = WorkerOptions(fit_timeout=30)
    gen = ForeignGenerator(generator, generator, worker=options, epsilon=1.0, delta=0.0)
    data = pd.DataFrame(np.zeros((4, 3), dtype=np.int64), columns=["a", "b", "c"])
    worker = pool.worker_for_thread(options)
    with pytest.raises(PluginError, match="killed by SIGSEGV"):
        gen.fit(data, domain=worst_case_domain(), rng=Rngs.from_seed(0))
    assert not worker.alive and worker.process.returncode is not None
    assert pool.worker_for_thread(options) is not worker


def test_tables_cross_without_pickle() -> None:
    frame = pd.DataFrame(
        {
            "i": np.arange(3, dtype=np.int64),
            "f": [0.5, np.nan, 2.0],
            "b": [True, False, True],
            "s": ["x", None, "z"],
        }
    )
    spec, blobs = encode_frame(frame)
    back = decode_frame(spec, blobs)
    pd.testing.assert_frame_equal(back, frame)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["audit", "check"])
def test_no_process_left_after_a_failed_command(
    plugin_path: Path, command: str
) -> None:
    """In a real process: the command exits 2 and none of its workers survives it."""
    generator = _plugin(
        plugin_path, f"hostile_proc_{command}", where="fit", code="time.sleep(600)"
    )
    out = plugin_path / "out"
    if command == "audit":
        argv = [
            "audit",
            "--generator",
            generator,
            "--rounds",
            "5",
            "--attack",
            "querybased",
            "--jobs",
            "2",
            "--fit-timeout",
            "3",
            "--quiet",
            "--out",
            str(out),
        ]
    else:
        policy = plugin_path / "policy.toml"
        policy.write_text(
            f'[[audit]]\nname = "h"\ngenerator = "{generator}"\n'
            'rounds = 5\nattack = "querybased"\nfit_timeout = 3\n'
        )
        argv = ["check", "--policy", str(policy), "--out", str(out), "--quiet"]
    marker = f"dpaudit-test-{command}-{os.getpid()}"
    env = {**os.environ, "DPAUDIT_TEST_MARKER": marker}
    done = subprocess.run(
        [sys.executable, "-m", "dpaudit", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "did not finish within --fit-timeout 3 s" in done.stdout + done.stderr
    time.sleep(0.5)
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if marker.encode() in environ:
                left.append(entry.name)
    assert left == []


def test_adapters_are_registered_as_foreign_plugins(
    monkeypatch: pytest.MonkeyPatch, plugin_path: Path, capsys
) -> None:
    """A name of ``dpaudit.adapters.FOREIGN_ADAPTERS`` is listed (marked as needing
    its library), runs in a worker, and takes its options as plug-in kwargs."""
    import dpaudit.adapters
    from dpaudit.generators import registry

    (plugin_path / "adapted_lib.py").write_text(
        textwrap.dedent("""
        class Gen:
            def __init__(self, *, epsilon, delta, width=1):
                self.epsilon, self.delta, self.width = epsilon, delta, width

            def fit(self, data, *, domain, seed):
                self.data = data
                self.privacy_claim = {"epsilon": self.epsilon, "accountant": "lib",
                                      "width": self.width}
                return self

            def sample(self, n, *, seed):
                return self.data.head(n)
    """)
    )
    monkeypatch.setattr(
        dpaudit.adapters, "FOREIGN_ADAPTERS", {"lib-gen": "adapted_lib:Gen"}
    )
    assert "needs its library" in registry.registered_generators()["lib-gen"]
    assert main(["list", "generators"]) == 0
    assert "lib-gen" in capsys.readouterr().out
    spec = registry.get_spec("lib-gen")
    assert spec.plugin and spec.factory == "adapted_lib:Gen" and not spec.batched
    gen = registry.generator_factory("lib-gen")(epsilon=2.0, delta=0.0, width=3)
    assert isinstance(gen, ForeignGenerator)
    data = pd.DataFrame(np.zeros((4, 3), dtype=np.int64), columns=["a", "b", "c"])
    gen.fit(data, domain=worst_case_domain(), rng=Rngs.from_seed(0))
    # The claim is the plug-in's alone (the worker's Python is the result's).
    assert gen.privacy_claim_.extra == {"width": 3}
    assert "adapted_lib" not in sys.modules, (
        "the adapter never runs in dpaudit's process"
    )
