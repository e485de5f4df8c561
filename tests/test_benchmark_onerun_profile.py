"""benchmarks/onerun_profile.py: the smoke run decides every audit three ways from
the same guesses, and the claim's rho curve detects an overclaim at least as often
as its lines alone (its h is never larger)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def test_smoke_rows(benchmark_smoke: Callable[[str], Path]) -> None:
    run = json.loads(benchmark_smoke("onerun_profile.py").read_text())
    rows = {(r["release"], r["test"]): r for r in run["rows_detail"]}
    assert {t for _, t in rows} == {"lines", "rho curve", "mu curve"}
    assert {r for r, _ in rows} == {"true", "1.5x", "2x"}
    for release in ("true", "1.5x", "2x"):
        lines = rows[release, "lines"]["violations"]
        assert rows[release, "rho curve"]["violations"] >= lines
    assert run["audits"] == 40 and run["200/per_side"] > 0
