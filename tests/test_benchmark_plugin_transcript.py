"""benchmarks/plugin_transcript.py runs (its smoke mode: 20 rounds per world); the
figures docs/plugins.md quotes come from its recorded run
(benchmarks/records/plugin_transcript.json, tests/test_doc_records.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.mark.slow
def test_plugin_transcript_smoke(benchmark_smoke: Callable[[str], Path]) -> None:
    rows = json.loads(benchmark_smoke("plugin_transcript.py").read_text())["rows"]
    assert [r["row"] for r in rows] == ["quarter", "honest"]
    assert all(r["rounds"] == 20 and r["verdict"] for r in rows)
