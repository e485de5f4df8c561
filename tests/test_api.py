"""The Python API (dpaudit.api) as the public surface of the package.

What it promises, each checked against the command line itself: the settings are the
key table's; an audit writes the same ``result.json`` as ``dpaudit audit`` with the
same settings; bad input raises one exception type whose message is the command's
line; the result's views (``to_dict``, ``to_frame``, ``report``, ``_repr_html_``);
plug-in classes run in a worker or in this process with the same result; Ctrl-C
leaves a store that ``resume`` continues to the uninterrupted result; and the API
pages of the docs site document every public name.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import dpaudit
from dpaudit.api.commandline import show_progress as _show_progress
from dpaudit.audit.config import AUDIT_KEYS, FLAG_ONLY
from dpaudit.cli import main
from dpaudit.generators.toy_plugins import PublicSeedRandomizedResponse

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = {
    "SETTINGS",
    "AuditResult",
    "BadInputError",
    "FitResult",
    "__version__",
    "audit",
    "check",
    "fit",
    "load",
    "to_frame",
}
HEAVY = ("torch", "pandas", "scipy", "sklearn")


def _same_result(a: Path, b: Path) -> None:
    """Two result.json files equal but for their timings (and the Python a plug-in's
    worker ran, which only a worker records)."""
    docs = [json.loads((d / "result.json").read_text()) for d in (a, b)]
    for doc in docs:
        doc.pop("timing")
        doc["claim"].get("extra", {}).pop("worker_python", None)
    assert docs[0] == docs[1]


# ------------------------------------------------------------ the surface
def test_public_names_are_all_and_resolve() -> None:
    assert set(dpaudit.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(dpaudit, name) is not None
        assert name in dir(dpaudit)
    assert callable(dpaudit.audit)
    # dpaudit.audit is still the package of the audit's machinery.
    assert dpaudit.audit.run_audit is not None
    assert issubclass(dpaudit.BadInputError, ValueError)


def test_settings_are_the_key_tables() -> None:
    """The settings are derived from AUDIT_KEYS (and --config, --resume), and each
    is a flag of `dpaudit audit`."""
    assert (*(k.name for k in AUDIT_KEYS), *FLAG_ONLY) == dpaudit.SETTINGS
    from dpaudit.cli import build_parser

    sub = next(
        a for a in build_parser()._actions if hasattr(a, "choices") and a.choices
    )
    flags = {s for a in sub.choices["audit"]._actions for s in a.option_strings}
    assert {"--" + name.replace("_", "-") for name in dpaudit.SETTINGS} <= flags


@pytest.mark.parametrize(
    "code",
    [
        "import dpaudit",
        "import dpaudit; dpaudit.SETTINGS; dpaudit.BadInputError",
        "import runpy, sys\nsys.argv = ['dpaudit', '--help']\n"
        "try:\n    runpy.run_module('dpaudit', run_name='__main__')\n"
        "except SystemExit:\n    pass",
    ],
    ids=["import", "names", "python-m-dpaudit-help"],
)
def test_import_is_cheap(code: str) -> None:
    """`import dpaudit`, its light names and `python -m dpaudit --help` import
    neither torch, pandas, scipy nor scikit-learn."""
    probe = (
        f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]"


# ------------------------------------------------------------ bad input
BAD: list[tuple[dict[str, Any], list[str]]] = [
    ({"rounds": 3}, ["--rounds", "3"]),
    ({"game": "x"}, ["--game", "x"]),
    ({"epsilon": -1.0}, ["--epsilon", "-1.0"]),
    ({"rounds": "many"}, ["--rounds", "many"]),
    ({"split": (0.5, 0.5)}, ["--split", "0.5,0.5"]),
    ({"option": ["lam"]}, ["--option", "lam"]),
    ({"option": {"epsilon": 2}}, ["--option", "epsilon=2"]),
    ({"teachers": "canary"}, ["--teachers", "canary"]),
    ({"dataset": "no-such-dataset"}, ["--dataset", "no-such-dataset"]),
    ({"generator": "no-such-generator"}, ["--generator", "no-such-generator"]),
    ({"config": "missing.toml"}, ["--config", "missing.toml"]),
    ({"resume": "missing-dir"}, ["--resume", "missing-dir"]),
    ({"resume": "dir", "rounds": 50}, ["--resume", "dir", "--rounds", "50"]),
]


@pytest.mark.parametrize(("settings", "argv"), BAD, ids=lambda v: str(v)[:40])
def test_bad_settings_raise_the_command_lines_error(
    settings: dict[str, Any],
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One exception type, whose line is what `dpaudit audit` prints (exit 2);
    nothing is written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir").mkdir()
    settings = {"out": "a", **settings}
    with pytest.raises(dpaudit.BadInputError) as caught:
        dpaudit.audit(**settings)
    capsys.readouterr()
    assert main(["audit", "--out", "a", *argv]) == 2
    line = capsys.readouterr().err.strip()
    assert caught.value.line == line
    assert line.endswith(str(caught.value))
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("name", ["roundz", "round", "generatr"])
def test_unknown_settings_are_refused_never_abbreviated(name: str) -> None:
    """argparse would take `--round` for `--rounds`; the API takes exact names."""
    with pytest.raises(dpaudit.BadInputError, match=f"'{name}' is not a setting"):
        dpaudit.audit(**{name: 100})


def test_a_class_a_worker_cannot_import_is_refused_unless_in_process() -> None:
    local = types.new_class("Local", exec_body=lambda ns: ns.update(_plugin_body()))
    local.__module__ = "__main__"
    with pytest.raises(dpaudit.BadInputError, match="in_process=True"):
        dpaudit.audit(generator=local, out="never")
    with pytest.raises(dpaudit.BadInputError, match="starts other processes"):
        dpaudit.audit(generator=local, in_process=True, backend="loky", out="never")
    with pytest.raises(dpaudit.BadInputError, match="breaks the plug-in contract"):
        dpaudit.audit(generator=int, out="never")


def _plugin_body() -> dict[str, Any]:
    return {
        "fit": PublicSeedRandomizedResponse.fit,
        "sample": PublicSeedRandomizedResponse.sample,
        "__init__": PublicSeedRandomizedResponse.__init__,
    }


def test_progress_in_a_notebook_or_on_a_terminal_never_on_a_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert not _show_progress(quiet=False)  # pytest's stderr is no terminal
    kernel = types.SimpleNamespace(config={"IPKernelApp": {}})
    fake = types.SimpleNamespace(get_ipython=lambda: kernel)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    assert _show_progress(quiet=False)
    assert not _show_progress(quiet=True)
    kernel.config = {}  # IPython in a terminal: as the terminal says
    assert not _show_progress(quiet=False)


# ------------------------------------------------------------ one audit
@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """The issue's call (there with 100 rounds per world; 30 here: the two results
    are equal at any size), and the command with the same settings."""
    root = tmp_path_factory.mktemp("api")
    settings = {"generator": "randomized-response", "dataset": "worst-case"}
    result = dpaudit.audit(**settings, rounds=30, out=str(root / "a"))
    argv = [f"--{k}={v}" for k, v in settings.items()]
    code = main(["audit", *argv, "--rounds", "30", "--out", str(root / "b")])
    assert code == 0
    return result, root


@pytest.mark.slow
def test_audit_writes_the_commands_result_json(audited: tuple[Any, Path]) -> None:
    result, root = audited
    _same_result(root / "a", root / "b")
    assert result.to_dict() == json.loads((root / "a" / "result.json").read_text())
    assert result.verdict.value in ("CONSISTENT", "VIOLATION", "INCONCLUSIVE")
    assert result.eps_emp is not None


@pytest.mark.slow
def test_result_views(audited: tuple[Any, Path]) -> None:
    result, root = audited
    shown = result._repr_html_()
    assert result.verdict.value in shown
    assert shown.count("<svg") >= 3  # the epsilon chart, the trade-off plot, the ROC
    assert "trade-off plot" in shown
    assert "<html" not in shown.lower() and "<body" not in shown  # a fragment
    loaded = dpaudit.load(root / "a")
    assert loaded.to_dict() == result.to_dict()
    frame = dpaudit.to_frame([result, loaded])
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["verdict"]) == [result.verdict.value] * 2
    assert frame["eps_emp"].iloc[0] == result.eps_emp
    assert list(result.to_frame().columns) == list(frame.columns)
    for fmt, name in (("html", "r.html"), ("md", "r.md"), ("json", "r.json")):
        written = result.report(root / name, format=fmt)
        assert result.verdict.value in written.read_text()
    with pytest.raises(dpaudit.BadInputError):
        dpaudit.load(root / "nothing-here")


# ------------------------------------------------------------ plug-ins
class _Interrupting(PublicSeedRandomizedResponse):
    """Raises KeyboardInterrupt at the fit numbered ``stop`` (Ctrl-C in a cell)."""

    counter = itertools.count()
    stop: int | None = None

    def fit(self, data: Any, **kwargs: Any) -> Any:
        if next(type(self).counter) == type(self).stop:
            raise KeyboardInterrupt
        return super().fit(data, **kwargs)


@pytest.mark.slow
def test_plugin_in_a_worker_and_in_process_agree(tmp_path: Path) -> None:
    common = {"dataset": "worst-case", "rounds": 20, "attack": "querybased"}
    # An instance stands for its class and its constructor arguments.
    plugin = PublicSeedRandomizedResponse(epsilon=2.0, delta=1e-5)
    worker = dpaudit.audit(generator=plugin, out=str(tmp_path / "w"), **common)
    here = dpaudit.audit(
        generator=PublicSeedRandomizedResponse,
        epsilon=2.0,
        in_process=True,
        out=str(tmp_path / "p"),
        **common,
    )
    assert worker.generator == here.generator
    _same_result(tmp_path / "w", tmp_path / "p")


@pytest.mark.slow
def test_ctrl_c_leaves_a_store_that_resume_finishes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An interrupted audit raises KeyboardInterrupt, logs how to continue, and
    `resume` finishes it with the result of an uninterrupted run."""
    common = {
        "generator": _Interrupting,
        "in_process": True,
        "dataset": "worst-case",
        "rounds": 20,
        "attack": "querybased",
        "batch_size": 5,
        "jobs": 1,
    }
    _Interrupting.stop = None
    dpaudit.audit(out=str(tmp_path / "whole"), **common)
    _Interrupting.counter = itertools.count()
    _Interrupting.stop = 25  # after the first batches were stored
    with (
        caplog.at_level(logging.WARNING, logger="dpaudit"),
        pytest.raises(KeyboardInterrupt),
    ):
        dpaudit.audit(out=str(tmp_path / "cut"), **common)
    assert "interrupted; continue it with: dpaudit.audit(resume=" in caplog.text
    assert (tmp_path / "cut" / "audit.sqlite").exists()
    assert not (tmp_path / "cut" / "result.json").exists()
    _Interrupting.stop = None
    resumed = dpaudit.audit(
        resume=str(tmp_path / "cut"), generator=_Interrupting, in_process=True
    )
    assert resumed.timing.resumed
    _same_result(tmp_path / "whole", tmp_path / "cut")


def test_fit_returns_the_release_and_writes_the_commands_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = {"generator": "randomized-response", "dataset": "worst-case"}
    fitted = dpaudit.fit(**settings, rows=7, seed=3, out=str(tmp_path / "a.csv"))
    assert len(fitted.synthetic) == 7
    assert fitted.claim.epsilon > 0
    argv = [f"--{k}={v}" for k, v in settings.items()]
    assert (
        main(
            [
                "fit",
                *argv,
                "--rows",
                "7",
                "--seed",
                "3",
                "--out",
                str(tmp_path / "b.csv"),
            ]
        )
        == 0
    )
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    capsys.readouterr()
    with pytest.raises(dpaudit.BadInputError) as caught:
        dpaudit.fit(rows=0)
    assert main(["fit", "--rows", "0"]) == 2
    assert caught.value.line == capsys.readouterr().err.strip()


def test_check_refuses_a_bad_policy_with_the_commands_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text('[[audit]]\nname = "a"\ngenerator = "copy"\nrounds = 3\n')
    out = tmp_path / "out"
    with pytest.raises(dpaudit.BadInputError, match="rounds") as caught:
        dpaudit.check(policy, out=out)
    capsys.readouterr()
    assert main(["check", "--policy", str(policy), "--out", str(out)]) == 2
    assert caught.value.line == capsys.readouterr().err.strip()
    assert not out.exists()
    with pytest.raises(dpaudit.BadInputError, match="not allowed with"):
        dpaudit.check(policy, force=True, resume=True)


# ------------------------------------------------------------ the docs
def _documented() -> set[str]:
    text = "".join(p.read_text() for p in (ROOT / "docs" / "api").glob("*.md"))
    return set(re.findall(r"^::: (\S+)", text, re.MULTILINE))


def _where(name: str) -> str:
    if name == "audit":
        return "dpaudit.api.audit"
    value = getattr(dpaudit, name)
    module = getattr(value, "__module__", None)
    if module is None or not hasattr(value, "__qualname__"):
        return f"dpaudit.api.{name}"
    return f"{module}.{value.__qualname__}"


def test_api_pages_document_every_public_name() -> None:
    """Each public name has its ``:::`` entry (mkdocstrings renders its docstring
    there); CI's ``mkdocs build --strict`` (.ci/run) builds the pages, failing on a
    broken link, a missing page or an object mkdocstrings cannot find."""
    documented = _documented()
    missing = [n for n in PUBLIC - {"__version__"} if _where(n) not in documented]
    assert not missing
