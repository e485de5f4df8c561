"""The OpenDP MST and AIM adapters, run against the real library.

OpenDP 0.16 with its ``mbi`` extra runs in its own environment (``dpaudit env
opendp``); the tests run under that interpreter (or one ``DPAUDIT_OPENDP_PYTHON``
names, or this one where it has OpenDP's ``mbi``) and are skipped otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys
import numpy as np, pandas as pd
from dpaudit.adapters._common import AdapterInputError
from dpaudit.adapters.opendp.adapter import OpenDPAIM, OpenDPMST

binary = pd.DataFrame(np.zeros((200, 3), dtype=np.int64), columns=list("abc"))
binary.iloc[-1] = 1
bdomain = {"columns": [{"name": c, "kind": "binary"} for c in "abc"]}
mixed = pd.DataFrame({"x": np.linspace(0, 1, 200), "k": ["u", "v"] * 100})
mdomain = {"columns": [
    {"name": "x", "kind": "continuous", "lower": 0.0, "upper": 1.0},
    {"name": "k", "kind": "categorical", "categories": ["u", "v", "w"]},
]}
out = {}
for name, cls, pre, data, domain, opts in [
    ("mst_public", OpenDPMST, "public", binary, bdomain, {}),
    ("mst_library", OpenDPMST, "library", binary, bdomain, {}),
    ("aim_mixed", OpenDPAIM, "public", mixed, mdomain, {"rounds": 2, "bins": 4}),
]:
    g = cls(epsilon=1.0, delta=1e-5, preprocessing=pre, **opts)
    g.fit(data, domain=domain, seed=1)
    first = g.sample(50, seed=2, public_seed=3)
    again = g.sample(50, seed=9, public_seed=3)
    out[name] = {"claim": g.privacy_claim, "shape": list(first.shape),
                 "columns": list(first.columns), "dtypes": [str(t) for t in first.dtypes],
                 "same": first.equals(again),
                 "values": sorted(set(map(str, first.iloc[:, -1])))}
try:
    OpenDPMST(epsilon=1.0, delta=1e-5, nosuch=1).fit(binary, domain=bdomain, seed=1)
except AdapterInputError as err:
    out["bad_option"] = str(err)
try:
    OpenDPMST(epsilon=1.0, delta=0.0)
except AdapterInputError as err:
    out["no_delta"] = str(err)
json.dump(out, sys.stdout)
"""


def test_claims_releases_and_seeded_sampling(run_opendp: Callable[..., Any]) -> None:
    out = run_opendp(SCRIPT)
    public = out["mst_public"]["claim"]
    # Pure zCDP with every column's keys public; OpenDP's own conversion of its
    # measurement is the budget (to rounding).
    assert public["zcdp_rho"] == public["rho"] > 0
    assert public["epsilon"] == pytest.approx(1.0, abs=1e-6)
    assert public["delta"] == 1e-5 and public["library"].startswith("opendp 0.16")
    library = out["mst_library"]["claim"]
    # Key discovery: approximate zCDP, half the delta, a threshold; no pure profile.
    assert "zcdp_rho" not in library and library["rho_delta"] == pytest.approx(5e-6)
    assert library["oneway_threshold"] > 0 and library["epsilon"] <= 1.0 + 1e-9
    for name in ("mst_public", "mst_library"):
        run = out[name]
        assert run["shape"] == [50, 3] and run["dtypes"] == ["int64"] * 3
        assert run["same"], "same public_seed, same sample"
    mixed = out["aim_mixed"]
    assert mixed["columns"] == ["x", "k"] and mixed["dtypes"][0] == "float64"
    assert set(mixed["values"]) <= {"u", "v", "w"} and mixed["same"]
    assert "no option 'nosuch'" in out["bad_option"]
    assert "`delta` must be in (0, 1)" in out["no_delta"]
