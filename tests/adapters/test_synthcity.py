"""The synthcity PATE-GAN adapter, run against the real library.

synthcity 0.2.12 cannot share dpaudit's environment (torch < 2.3, numpy < 2): the
test runs where ``DPAUDIT_SYNTHCITY_PYTHON`` names an interpreter that has it
(``python -m venv /work/venvs/synthcity && .../pip install synthcity==0.2.12
opacus==1.4.1``), or where this interpreter has it, and is skipped otherwise. The
adapter runs in a subprocess of that interpreter; results come back as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dpaudit.generators import accountants as acc

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys
import numpy as np, pandas as pd
from dpaudit.adapters.synthcity import SynthcityPATEGAN

data = pd.DataFrame(np.zeros((200, 3), dtype=np.int64), columns=list("abc"))
data.iloc[-1] = 1
domain = {"columns": [{"name": c, "kind": "binary"} for c in "abc"]}
runs = []
for _ in range(2):
    g = SynthcityPATEGAN(epsilon=1.0, delta=1e-5, n_iter=3, n_teachers=2,
                         teacher_template="linear")
    g.fit(data, domain=domain, seed=4, public_seed=9)
    out = g.sample(50, seed=5, public_seed=9)
    runs.append({"claim": g.privacy_claim, "shape": list(out.shape),
                 "columns": list(out.columns), "dtypes": [str(t) for t in out.dtypes],
                 "rows": out.to_numpy().tolist()})
json.dump(runs, sys.stdout)
"""


def test_claim_release_and_same_seed_same_release(
    run_synthcity: Callable[..., Any],
) -> None:
    first, again = run_synthcity(SCRIPT)
    claim = first["claim"]
    for key in (
        "epsilon",
        "delta",
        "accountant",
        "library_epsilon",
        "nominal_epsilon",
        "requested_delta",
        "num_teachers",
    ):
        assert key in claim, key
    # synthcity uses delta = 1 / (n sqrt(n)) whatever it is given.
    assert claim["delta"] == pytest.approx(1 / (200 * 200**0.5))
    assert claim["epsilon"] == claim["library_epsilon"] >= 0
    # The claim's profile: its moments as RDP (alpha(l) / l at order l + 1), whose
    # classic conversion is the library's epsilon.
    curve = claim["rdp"]
    assert curve["orders"][0] == 2.0 and "rdp_orders_left_out" not in claim
    eps = acc.epsilon_from_rdp(
        curve["epsilons"],
        delta=claim["delta"],
        orders=curve["orders"],
        conversion="classic",
    )
    assert float(eps) == pytest.approx(claim["epsilon"], rel=1e-9)
    assert first["shape"] == [50, 3] and first["columns"] == ["a", "b", "c"]
    assert first["dtypes"] == ["int64"] * 3
    assert again == first
