"""dpmm's MST, AIM and PrivBayes record their measurements as transcripts.

Run under the interpreter that has dpmm (tests/adapters/conftest.py), skipped where
none has it. Each test fits one model several times on a fixed table in a subprocess
and checks the transcripts here: the cells are the public domain's values, and the
standardized residuals against the table's exact counts are the stated noise (a KS
test; each rejects with probability ``ALPHA`` = 0.001 when the library adds what the
transcript states, so the file fails by chance with probability at most 0.003).
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
from dpaudit.adapters import dpmm as dm
from dpaudit.adapters._common import AdapterInputError

exec(sys.argv[4])  # the table: data, domain
cls, fits = sys.argv[1], int(sys.argv[2])
options = json.loads(sys.argv[3])
out = {"rows": json.loads(data.to_json(orient="records")), "domain": domain,
       "transcripts": [], "claims": []}
for seed in range(fits):
    g = getattr(dm, cls)(epsilon=4.0, **options)
    g.fit(data, domain=domain, seed=seed)
    out["transcripts"].append(g.privacy_transcript)
    out["claims"].append({k: v for k, v in g.privacy_claim.items()
                          if k.startswith("transcript") or k == "measure_only"})
    if options.get("measure_only"):
        try:
            g.sample(5, seed=seed)
        except AdapterInputError as err:
            out["sample"] = str(err)
print(json.dumps(out))
"""


def run(
    run_dpmm: Callable[..., Any], table: str, cls: str, fits: int, **options: Any
) -> dict[str, Any]:
    """``fits`` fits of ``cls`` on the table (seeds 0, 1, ...), read back."""
    return dict(run_dpmm(SCRIPT, cls, str(fits), json.dumps(options), table))


def test_mst_records_its_marginals_at_the_scale_it_draws(
    run_dpmm: Callable[..., Any], transcripts: Any
) -> None:
    result = run(run_dpmm, transcripts.TABLE, "DpmmMST", 5, measure_only=True)
    transcripts.check_noise(result, "gaussian")
    for transcript, claim in zip(result["transcripts"], result["claims"], strict=True):
        assert [len(r["columns"]) for r in transcript] == [1, 1, 1, 1, 2, 2, 2]
        # dpmm weighs every measurement by the number of one-way cliques (4): the
        # scale drawn is sigma * sqrt(4), in both rounds (mechanism.py:171-174).
        scales = {r["noise"]["gaussian"] for r in transcript}
        assert len(scales) == 1
        assert claim["measure_only"] is True
    merged = [r for t in result["transcripts"] for r in t if "sets" in r]
    assert merged and all("c" in r["columns"] for r in merged)
    assert "measure_only=true" in result["sample"]


def test_privbayes_records_its_conditional_marginals(
    run_dpmm: Callable[..., Any], transcripts: Any
) -> None:
    result = run(run_dpmm, transcripts.TABLE, "DpmmPrivBayes", 6, measure_only=True)
    transcripts.check_noise(result, "gaussian")


def test_aim_records_every_measurement(
    run_dpmm: Callable[..., Any], transcripts: Any
) -> None:
    result = run(run_dpmm, transcripts.TABLE, "DpmmAIM", 2)
    transcripts.check_noise(result, "gaussian", control=False)
    for claim in result["claims"]:
        assert claim["measure_only"] is False and claim["transcript_left_out"] == 0
