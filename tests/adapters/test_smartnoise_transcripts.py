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

import json
from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys
import numpy as np, pandas as pd
from dpaudit.adapters import smartnoise as sn
from dpaudit.adapters._common import AdapterInputError

exec(sys.argv[4])  # the table: data, domain
cls, fits = sys.argv[1], int(sys.argv[2])
options = json.loads(sys.argv[3])
out = {"rows": json.loads(data.to_json(orient="records")), "domain": domain,
       "transcripts": [], "claims": []}
for seed in range(fits):
    g = getattr(sn, cls)(epsilon=4.0, **options)
    g.fit(data, domain=domain, seed=seed)
    out["transcripts"].append(g.privacy_transcript)
    out["claims"].append({k: v for k, v in g.privacy_claim.items()
                          if k.startswith("transcript") or k == "measure_only"})
    if options.get("measure_only"):
        try:
            g.sample(5, seed=seed)
        except AdapterInputError as err:
            out["sample"] = str(err)
if options.pop("measure_only", False):  # and one fit to the end, as shipped
    g = getattr(sn, cls)(epsilon=4.0, **options)
    g.fit(data, domain=domain, seed=fits)
    out["full"] = {"transcript": g.privacy_transcript,
                   "claim": g.privacy_claim["measure_only"],
                   "rows": len(g.sample(5, seed=0))}
print(json.dumps(out))
"""


def run(
    run_smartnoise: Callable[..., Any], table: str, cls: str, fits: int, **options: Any
) -> dict[str, Any]:
    """``fits`` fits of ``cls`` on the table (seeds 0, 1, ...), read back."""
    return dict(run_smartnoise(SCRIPT, cls, str(fits), json.dumps(options), table))


def test_mst_records_its_gaussian_marginals_in_public_values(
    run_smartnoise: Callable[..., Any], transcripts: Any
) -> None:
    result = run(
        run_smartnoise,
        transcripts.TABLE,
        "SmartnoiseMST",
        6,
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
    result = run(
        run_smartnoise,
        transcripts.TABLE,
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
    result = run(run_smartnoise, transcripts.TABLE, "SmartnoiseMWEM", 3)
    transcripts.check_noise(result, "laplace")


def test_measure_only_is_refused_where_a_fit_cannot_stop(
    run_smartnoise: Callable[..., Any],
) -> None:
    script = r"""
import json
from dpaudit.adapters import smartnoise as sn
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
