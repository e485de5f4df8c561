"""smartnoise-synth's MST, AIM and MWEM record their measurements as transcripts.

Run under the interpreter that has smartnoise-synth (tests/adapters/conftest.py),
skipped where none has it. Each test fits one synthesizer several times on a fixed
table in a subprocess, reads back the transcripts, and checks them here: the cells
are the public domain's values, and the standardized residuals against the table's
exact counts are the stated noise (a KS test; each rejects with probability
``ALPHA`` = 0.001 when the library adds what it states, so the file fails by chance
with probability at most 0.003).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def test_mst_records_its_gaussian_marginals_in_public_values(
    run_smartnoise: Callable[..., Any], transcripts: Any
) -> None:
    result = transcripts.fit(
        run_smartnoise,
        "smartnoise",
        "SmartnoiseMST",
        6,
        full=True,
        delta=1e-5,
        measure_only=True,
    )
    transcripts.check_noise(result, "gaussian")
    for transcript, claim in zip(result["transcripts"], result["claims"], strict=True):
        # Three one-way marginals, then the tree's two two-way ones.
        assert [len(r["columns"]) for r in transcript] == [1, 1, 1, 1, 2, 2, 2]
        assert claim.pop("transcript_omits").startswith(
            "the exponential-mechanism selection of the tree's edges"
        )
        assert claim == {
            "transcript_records": 7,
            "transcript_left_out": 0,
            "measure_only": True,
        }
    # "w" and "v" (no record has them) are merged into one answer somewhere.
    merged = [r for t in result["transcripts"] for r in t if "sets" in r]
    assert merged and all("c" in r["columns"] for r in merged)
    assert "measure_only=true" in result["sample"]
    # A fit to the end records the same measurements and samples.
    full = result["full"]
    transcripts.check_values([full["transcript"]], result["domain"])
    assert [len(r["columns"]) for r in full["transcript"]] == [1, 1, 1, 1, 2, 2, 2]
    assert full["claim"] is False and full["rows"] == 5


def test_aim_records_every_measurement(
    run_smartnoise: Callable[..., Any], transcripts: Any
) -> None:
    result = transcripts.fit(
        run_smartnoise,
        "smartnoise",
        "SmartnoiseAIM",
        2,
        delta=1e-5,
        degree=3,
        rounds=12,
    )
    transcripts.check_noise(result, "gaussian", control=False)
    for transcript in result["transcripts"]:
        # The one-way marginals first (in the library's order), then one per round.
        assert sorted(r["columns"] for r in transcript[:4]) == [
            ["a"],
            ["b"],
            ["c"],
            ["d"],
        ]


def test_mwem_records_its_laplace_answers(
    run_smartnoise: Callable[..., Any], transcripts: Any
) -> None:
    result = transcripts.fit(run_smartnoise, "smartnoise", "SmartnoiseMWEM", 3)
    transcripts.check_noise(result, "laplace")


def test_measure_only_is_refused_where_a_fit_cannot_stop(
    run_smartnoise: Callable[..., Any],
) -> None:
    script = r"""
import json
from dpaudit.adapters.smartnoise import adapter as sn
from dpaudit.adapters._common import AdapterInputError
out = {}
for cls in ("SmartnoiseAIM", "SmartnoiseMWEM", "SmartnoiseDPCTGAN"):
    try:
        getattr(sn, cls)(epsilon=1.0, measure_only=True)
    except AdapterInputError as err:
        out[cls] = str(err)
print(json.dumps(out))
"""
    out = run_smartnoise(script)
    assert "interleave" in out["SmartnoiseAIM"]
    assert "interleave" in out["SmartnoiseMWEM"]
    assert "no measurement transcript" in out["SmartnoiseDPCTGAN"]
