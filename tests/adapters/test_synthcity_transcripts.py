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
from dpaudit.adapters.synthcity import adapter as sc
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


SCALE_SCRIPT = r"""
import json
from dpaudit.adapters.synthcity import adapter as sc
import pandas as pd
data = pd.DataFrame([(0, 0, 0)] * 44 + [(1, 1, 1)] * 6, columns=["a", "b", "c"])
domain = {"columns": [{"name": n, "kind": "binary"} for n in "abc"]}
out = {}
for mode in ("library", "corrected"):
    g = sc.SynthcityPrivBayes(epsilon=1.0, count_scale=mode)
    g.fit(data, domain=domain, seed=0)
    scales = sorted({r["noise"]["laplace"] for r in g.privacy_transcript})
    out[mode] = {"scales": scales, "k": g.privacy_claim["degree_k"],
                 "stated": g.privacy_claim["count_scale"]}
from synthcity.plugins.privacy.plugin_privbayes import PrivBayes
out["restored"] = PrivBayes(epsilon=1.0)._laplace_noise_parameter(50, 3)
print(json.dumps(out))
"""


def test_count_scale_corrected_patches_only_the_scale(
    run_synthcity: Callable[..., Any],
) -> None:
    """``count_scale=corrected`` (docs/findings.md, 9): the library's count scale
    ``2 (d - K) / (n eps/2)`` becomes ``(d - K + 1) / (eps/2)`` for the fit, and the
    library's method is restored after it."""
    out = dict(run_synthcity(SCALE_SCRIPT))
    lib, cor = out["library"], out["corrected"]
    assert lib["k"] == cor["k"] == 1
    assert lib["scales"] == pytest.approx([2 * (3 - 1) / (50 * 0.5)])  # 0.16
    assert cor["scales"] == pytest.approx([(3 - 1 + 1) / 0.5])  # 6
    assert "patched" in cor["stated"] and lib["stated"] == "library"
    assert out["restored"] == pytest.approx(2 * 3 / (50 * 0.5))  # K = 0 unfitted
