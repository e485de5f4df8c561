"""Bad input to a plug-in audit is refused before any worker process starts, where
the check needs none (the target, the table, the plan: :func:`draft_setup`, in the
game's ``prepare``), and by the first worker, before anything trains, where it needs
one (the import, the contract, an option the plug-in's ``__init__`` does not take).

The tests watch the pool itself (:class:`dpaudit.generators.foreign.pool.Worker`),
not the clock: a refusal that needs no worker must construct none."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.foreign import pool
from dpaudit.generators.foreign.contract import init_keywords
from dpaudit.generators.foreign.generator import check_keywords

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
import numpy as np
import pandas as pd


class Copy:
    """Releases rows of its data (no privacy: the tests stop before any fit)."""

    def __init__(self, *, epsilon, delta, width=1):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta}
        return self

    def sample(self, n, *, seed):
        rows = np.random.default_rng(seed).integers(len(self.data), size=n)
        return self.data.iloc[rows].reset_index(drop=True)
'''


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the plug-in (``early:Copy``), a binary CSV and its domain,
    importable by the workers; the working directory."""
    (tmp_path / "early.py").write_text(PLUGIN, encoding="utf-8")
    (tmp_path / "some.csv").write_text("a,b,c\n0,0,0\n1,1,1\n0,1,0\n1,0,0\n")
    kinds = ", ".join(f'{{"name": "{c}", "kind": "binary"}}' for c in "abc")
    (tmp_path / "some.domain.json").write_text(f'{{"columns": [{kinds}]}}')
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def no_worker(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fails any worker process the audit would start (before it is spawned)."""
    started: list[Any] = []

    def refuse(self: Any, key: Any) -> None:
        started.append(key)
        raise AssertionError("a worker process was started")

    monkeypatch.setattr(pool.Worker, "__init__", refuse)
    return started


CSV = ["--dataset", "some.csv", "--domain", "some.domain.json"]

#: Bad input that needs no worker -> the words of its one line.
REFUSED = {
    "csv-without-target": (CSV, "needs a target: pass --target ROW"),
    "target-out-of-range": ([*CSV, "--target", "99"], "row index below 4"),
    "target-record-columns": (
        ["--dataset", "worst-case", "--target-record", '{"a": 1, "zz": 1}'],
        "columns do not match the domain",
    ),
    # Before, `--target auto` trained its selection's models (workers) first.
    "auto-target-empty-split": (
        [*CSV, "--target", "auto", "--rounds", "5", "--split", "0.9,0.05,0.05"],
        "leaves an empty split",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_before_any_worker_starts(
    capsys: pytest.CaptureFixture[str], folder: Path, no_worker: list[Any], case: str
) -> None:
    args, words = REFUSED[case]
    out = folder / "audit"
    code = main(["audit", "--generator", "early:Copy", *args, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert no_worker == []
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], err
    assert not out.exists()


def test_an_option_the_plugin_does_not_take_is_refused_before_any_fit(
    capsys: pytest.CaptureFixture[str],
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One worker (the import's) answers; no fit is asked of it."""
    asked: list[str] = []
    request = pool.Worker.request

    def record(self: pool.Worker, header: dict[str, Any], *a: Any, **k: Any) -> Any:
        asked.append(header["op"])
        return request(self, header, *a, **k)

    monkeypatch.setattr(pool.Worker, "request", record)
    out = folder / "audit"
    args = ["audit", "--generator", "early:Copy", "--dataset", "worst-case"]
    code = main([*args, "--option", "hidden=64", "--rounds", "5", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert asked == ["describe"]
    line = err.strip()
    assert "takes no option 'hidden'" in line and "accepts `width`" in line, line
    assert "Remove --option hidden=..." in line
    assert not out.exists()


def test_init_keywords() -> None:
    class Named:
        def __init__(self, *, epsilon: float, delta: float, width: int = 1) -> None:
            pass

    class Open:
        def __init__(self, *, epsilon: float, **options: Any) -> None:
            pass

    assert init_keywords(Named) == ["epsilon", "delta", "width"]
    assert init_keywords(Open) is None


def test_check_keywords() -> None:
    budget = {"epsilon": 1.0, "delta": 0.0}
    check_keywords("g", {**budget, "width": 2}, ["epsilon", "delta", "width"])
    check_keywords("g", {**budget, "anything": 2}, None)  # **options: all taken
    # `delta` is the contract's (refused where the contract is read), not an option.
    check_keywords("g", budget, ["epsilon"])
    with pytest.raises(InvalidParameterError, match="takes no option 'x', 'y'"):
        check_keywords("g", {**budget, "x": 1, "y": 2}, ["epsilon", "delta"])
