"""synthcity's PrivBayes records its noisy counts as a transcript.

Run under the interpreter that has synthcity (tests/adapters/conftest.py), skipped
where none has it. The test fits PrivBayes several times on a fixed table of integer
columns and checks
that the cells are public values and that the residuals are Laplace at the scale the
library passed (a KS test at alpha 0.001, so it fails by chance with probability at
most 0.001), beside the control that the same residuals read at a quarter of the
stated scale are rejected (400+ residuals; the DKW inequality bounds its miss below
0.001). The scale is what synthcity computes, not what its budget needs
(docs/findings.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys
from dpaudit.adapters import synthcity as sc
import numpy as np, pandas as pd
# Integer columns only: synthcity's loader hands PrivBayes its own codes of string
# columns, whose measurements the transcript leaves out.
rng = np.random.default_rng(0)
data = pd.DataFrame({f"x{i}": rng.integers(0, 3, 150) for i in range(6)})
domain = {"columns": [{"name": f"x{i}", "kind": "integer", "lower": 0, "upper": 2}
                      for i in range(6)]}
out = {"rows": json.loads(data.to_json(orient="records")), "domain": domain,
       "transcripts": [], "claims": []}
for seed in range(int(sys.argv[1])):
    g = sc.SynthcityPrivBayes(epsilon=1.0, preprocessing="library")
    g.fit(data, domain=domain, seed=seed)
    out["transcripts"].append(g.privacy_transcript)
    out["claims"].append({k: v for k, v in g.privacy_claim.items()
                          if k.startswith("transcript")})
print(json.dumps(out))
"""


def test_privbayes_records_its_laplace_counts(
    run_synthcity: Callable[..., Any], transcripts: Any
) -> None:
    result = dict(run_synthcity(SCRIPT, "12"))
    transcripts.check_noise(result, "laplace")
    for claim in result["claims"]:
        assert claim["transcript_records"] > 0 and claim["transcript_left_out"] == 0
