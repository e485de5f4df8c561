"""benchmarks/fidelity.py and fidelity_synthcity.py run (their smoke modes: one round
of dpaudit's variant, a few iterations; the real libraries' side runs only with
--python, docs/bugs.md has its figures)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_fidelity_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    run = json.loads(benchmark_smoke("fidelity.py").read_text())
    assert run["args"]["python"] is None
    rows = {r["row"]: r for r in run["rows"]}
    assert set(rows) == {
        f"variant {mode} world {w}" for mode in ("public", "hints") for w in (0, 1)
    }
    # The audit fixes k from |D|; the real code's int(n / 1000) gives 1 and 2.
    assert rows["variant public world 0"]["teachers"] == 1
    assert rows["variant public world 1"]["teachers"] == 2
    # private_categories: no 1 is released without the target.
    assert rows["variant hints world 0"]["any_one_share"] == 0


def test_fidelity_synthcity_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("fidelity_synthcity.py").read_text())["rows"]
    assert [r["row"] for r in rows] == ["variant w0", "variant w1"]
    assert all(r["released"] == 200 and r["queries"] > 0 for r in rows)
    # The schema learned from the records: no 1 without the target.
    assert rows[0]["any_one_share"] == 0 < rows[1]["any_one_share"]
