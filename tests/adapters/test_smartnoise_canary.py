"""Canary teachers inside smartnoise-synth's PATEGAN and PATECTGAN (``--teachers
canary``).

Run under the interpreter that has smartnoise-synth (tests/adapters/conftest.py),
skipped where none has it. Fits PATEGAN at epsilon 1 on the 2,000-row binary worst
case (the target (1, 1, 1) last, every other row (0, 0, 0)) and without its target
(1,999 rows), in a subprocess, and checks here:

- the library's partition holds the target in one teacher's data: every query's clean
  vote is 1 with the target and 0 without;
- the library's accountant and stop run as shipped: the claim (epsilon, iterations,
  queries) equals the same fit's without canary teachers;
- skipping the teachers' training changes nothing of the transcript (bit for bit, same
  seed): their loop draws only from torch, the vote noise from numpy;
- with the same seed (the same draws) the target moves every noisy count by exactly 1;
- the noisy counts minus the clean ones are Laplace at the stated scale, 1 / lambda =
  1000 (KS test, rejecting with probability ``ALPHA`` = 0.001 when the library adds
  what it states; the control, a quarter of the noise, is rejected with probability
  above 0.999 at 10,560 answers: the test can fail).

PATECTGAN's test below does the same for its teachers, which are one model. The file
fails by chance with probability at most 0.002 (two KS tests at 0.001).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json
import numpy as np, pandas as pd
from dpaudit.adapters.smartnoise import adapter as sn

n = 2000
full = pd.DataFrame({c: [0] * (n - 1) + [1] for c in "abc"})
domain = {"columns": [{"name": c, "kind": "binary"} for c in "abc"]}
target = {"a": 1, "b": 1, "c": 1}

def fit(data, **options):
    g = sn.SmartnoisePATEGAN(epsilon=1.0, delta=1e-5, **options)
    g.fit(data, domain=domain, seed=3)
    claim = {k: v for k, v in g.privacy_claim.items() if k != "rdp"}
    return {"transcript": getattr(g, "privacy_transcript", None), "claim": claim}

print(json.dumps({
    "with": fit(full, canary=target),
    "trained": fit(full, canary=target, train_teachers=True),
    "without": fit(full.iloc[:-1], canary=target),
    "shipped": fit(full),
}))
"""


def test_canary_teachers_run_inside_the_library_as_shipped(
    run_smartnoise: Callable[..., Any], transcripts: Any
) -> None:
    out = run_smartnoise(SCRIPT)
    with_t, without, shipped = out["with"], out["without"], out["shipped"]
    assert shipped["transcript"] is None  # no canary: the library's fit, no transcript
    for fit in (with_t, without):
        (record,) = fit["transcript"]
        assert record["columns"] == ["a", "b", "c"] and record["cells"] == [[1, 1, 1]]
        assert record["noise"] == {"laplace": 1000.0}
        assert len(record["noisy"]) == fit["claim"]["queries"] == 10560
    assert with_t["claim"]["canary_clean_votes"] == [1]
    assert without["claim"]["canary_clean_votes"] == [0]
    assert (
        with_t["claim"]["canary_copies"] == 1 and without["claim"]["num_teachers"] == 1
    )
    assert with_t["claim"]["num_teachers"] == 2
    for key in ("epsilon", "library_epsilon", "iterations", "queries"):
        assert with_t["claim"][key] == shipped["claim"][key], key
    assert out["trained"]["transcript"] == with_t["transcript"]
    # Same seed, same draws: the target moves every noisy count by 1 (to float
    # rounding of 1 + noise: 1e-9 against a noise of scale 1000).
    noisy = np.asarray(with_t["transcript"][0]["noisy"])
    moved = noisy - np.asarray(without["transcript"][0]["noisy"])
    np.testing.assert_allclose(moved, 1.0, rtol=0, atol=1e-9)
    residuals = (noisy - 1.0) / 1000.0
    assert transcripts.ks_pvalue("laplace", residuals) > transcripts.ALPHA
    assert transcripts.ks_pvalue("laplace", 4 * residuals) < transcripts.ALPHA


PATECTGAN = r"""
import json
import pandas as pd
from dpaudit.adapters.smartnoise.adapter import SmartnoisePATECTGAN

rows = pd.DataFrame({c: [0] * 2000 + [1] for c in "abc"})  # the target last
columns = [{"name": c, "kind": "binary"} for c in "abc"]
out = {}
for name, options in (("canary", {"canary": {"a": 1, "b": 1, "c": 1}}), ("shipped", {})):
    g = SmartnoisePATECTGAN(epsilon=1.0, delta=1e-5, epochs=2, **options)
    g.fit(rows, domain={"columns": columns}, seed=5)
    out[name] = {"transcript": getattr(g, "privacy_transcript", None),
                 "claim": {k: v for k, v in g.privacy_claim.items() if k != "rdp"}}
print(json.dumps(out))
"""


def test_patectgan_teachers_are_one_model_and_vote_together(
    run_smartnoise: Callable[..., Any], transcripts: Any
) -> None:
    """PATECTGAN's teachers are one discriminator (patectgan.py:255): on 2,001 rows
    its three teachers all hold the target, each query's clean vote is 3, stated as
    one count at a third of the library's scale; the accountant and its stop are
    the shipped fit's (same seed); the stated noise is Laplace at the stated scale
    (KS at ``ALPHA``, with its control)."""
    out = run_smartnoise(PATECTGAN)
    canary, shipped = out["canary"], out["shipped"]
    assert shipped["transcript"] is None
    claim = canary["claim"]
    assert claim["canary_clean_votes"] == [3] and claim["canary_teachers_per_row"] == 3
    for key in ("epsilon", "queries", "accountant_updates"):
        assert claim[key] == shipped["claim"][key], key
    (record,) = canary["transcript"]
    assert record["noise"] == {"laplace": pytest.approx(1000.0 / 3, rel=1e-12)}
    assert len(record["noisy"]) == claim["queries"]
    residuals = (np.asarray(record["noisy"]) - 1.0) / record["noise"]["laplace"]
    assert transcripts.ks_pvalue("laplace", residuals) > transcripts.ALPHA
    assert transcripts.ks_pvalue("laplace", 4 * residuals) < transcripts.ALPHA
