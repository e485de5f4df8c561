"""Canary teachers inside synthcity's PATE-GAN (``--teachers canary``).

Run under the interpreter that has synthcity (tests/adapters/conftest.py), skipped
where none has it. Fits PATE-GAN (one iteration, two generator epochs) at epsilon 1 on
the 2,000-row binary worst case (the target (1, 1, 1) last, every other row (0, 0, 0))
and without its target (1,999 rows), in a subprocess, and checks here:

- the library's partition (a fresh permutation cut into slices of ``int(n / 10)``
  rows) puts the target in exactly one teacher's data: every answered query's clean
  vote is 1 with the target and 0 without;
- the library's accountant ran as shipped on the queries it charged, each charged
  the data-independent bound ``2 lambda^2 (l + 1)(l + 2)`` (plugin_pategan.py:326-329;
  its claim recomputed from the charged count to a relative 1e-9), and it charged
  fewer queries than were answered (plugin_pategan.py:283-284);
- the noisy counts minus the clean ones are Laplace at the stated scale 1 / lambda =
  1000 (KS test, rejecting with probability ``ALPHA`` = 0.001 when the library adds
  what it states; the control, a quarter of the noise, is rejected with probability
  above 0.999 at 3,000 answers: the test can fail).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json
import numpy as np, pandas as pd
from dpaudit.adapters.synthcity.adapter import SynthcityPATEGAN

table = pd.DataFrame(np.zeros((2000, 3), dtype=np.int64), columns=["a", "b", "c"])
table.iloc[-1] = 1  # the target, last
out = {}
for world, rows in (("with", table), ("without", table.iloc[:-1])):
    g = SynthcityPATEGAN(epsilon=1.0, n_iter=1, generator_n_iter=2,
                         canary=dict(a=1, b=1, c=1))
    g.fit(rows, domain={"columns": [dict(name=c, kind="binary") for c in "abc"]},
          seed=3)
    out[world] = {"transcript": g.privacy_transcript,
                  "claim": {k: v for k, v in g.privacy_claim.items() if k != "rdp"}}
print(json.dumps(out))
"""


def _library_epsilon(charged: int, delta: float, lam: float = 1e-3) -> float:
    """synthcity's epsilon_hat (plugin_pategan.py:299-306) when every charged query's
    moment is its clip, ``2 lambda^2 (l + 1)(l + 2)`` at index ``l``."""
    return min(
        (charged * 2 * lam**2 * (j + 1) * (j + 2) - math.log(delta)) / (j + 1)
        for j in range(100)
    )


def test_canary_teachers_run_inside_the_library_as_shipped(
    run_synthcity: Callable[..., Any], transcripts: Any
) -> None:
    out = run_synthcity(SCRIPT)
    for world, clean in (("with", 1), ("without", 0)):
        fit = out[world]
        claim = fit["claim"]
        (record,) = fit["transcript"]
        assert record["columns"] == ["a", "b", "c"] and record["cells"] == [[1, 1, 1]]
        assert record["noise"] == {"laplace": 1000.0}
        assert len(record["noisy"]) == claim["canary_queries"] >= 3000
        assert claim["canary_clean_votes"] == [clean]
        assert claim["canary_copies"] == clean
        assert claim["canary_teachers_per_row"] == 1 and claim["num_teachers"] == 10
        charged = claim["canary_queries_charged"]
        assert 0 < charged < claim["canary_queries"]
        expected = _library_epsilon(charged, claim["delta"])
        assert claim["epsilon"] == pytest.approx(expected, rel=1e-9)
        residuals = (np.asarray(record["noisy"]) - clean) / 1000.0
        assert transcripts.ks_pvalue("laplace", residuals) > transcripts.ALPHA
        assert transcripts.ks_pvalue("laplace", 4 * residuals) < transcripts.ALPHA
