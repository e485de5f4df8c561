"""Same seed, same result, for a plug-in that draws from GLOBAL random state
(``random`` and ``numpy.random``), with the default backend (threads) and two jobs:
each thread's worker process seeds the global generators from the round's privacy
stream before every ``fit`` and ``sample``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dpaudit.cli import main

REPO = Path(__file__).resolve().parents[2]

GLOBAL = '''
import random

import numpy as np


class Global:
    """Ignores its seeds: the fit's noise and the release come from global state."""

    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        self.data = data
        self.shift = random.random() < 0.5
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "global"}
        return self

    def sample(self, n, *, seed):
        rows = np.random.randint(0, len(self.data), size=n)
        out = self.data.iloc[rows].reset_index(drop=True)
        if self.shift:
            out.iloc[: n // 2] = 1 - out.iloc[: n // 2]
        return out
'''


def _audit(out: Path, capsys) -> dict[str, Any]:
    code = main(
        [
            "audit",
            "--generator",
            "global_plugin:Global",
            "--rounds",
            "20",
            "--batch-size",
            "5",
            "--jobs",
            "2",
            "--attack",
            "querybased",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    result = json.loads((out / "result.json").read_text())
    result.pop("timing")
    return dict(result)


def test_same_seed_same_result_with_threads(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "global_plugin.py").write_text(GLOBAL)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    first = _audit(tmp_path / "a", capsys)
    second = _audit(tmp_path / "b", capsys)
    assert first == second
    # The global draws matter: the non-members' test scores differ from round to
    # round (the release and the shift come from global state alone).
    assert len(set(first["attacks"]["querybased"]["scores"]["non_member"])) > 1
