"""The dpmm adapters: their public encoding (here, without dpmm) and, against the real
library, the worst case's all-constant world that dpmm's own binner cannot fit.

The library tests run where ``dpmm`` is importable by this interpreter, or by the
interpreter that ``DPAUDIT_DPMM_PYTHON`` names, or by the one ``dpaudit env dpmm``
builds (``$DPAUDIT_ENV_HOME/dpmm``, by default ``~/.cache/dpaudit/envs``), and are
skipped otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpaudit.adapters._common import AdapterInputError
from dpaudit.adapters.dpmm.adapter import DpmmAIM, DpmmMST, _PublicCodec

BINARY = {"columns": [{"name": c, "kind": "binary"} for c in "abc"]}


def test_public_codec_takes_the_categories_from_the_domain_not_the_records() -> None:
    # World D of the worst case: every column holds one value.
    data = pd.DataFrame(np.zeros((5, 3), dtype=np.int64), columns=list("abc"))
    codec = _PublicCodec.fit(data, domain=BINARY, proc_epsilon=0.1, rnd=None)
    assert codec.sizes == {"a": 2, "b": 2, "c": 2}
    assert codec.spent_epsilon == 0.0 and codec.binners == {}
    codes = codec.encode(data)
    assert codes.to_numpy().tolist() == [[0, 0, 0]] * 5
    # A released code decodes to its public category, also one no record holds.
    back = codec.decode(pd.DataFrame({"a": [1, 0], "b": [0, 1], "c": [1, 1]}))
    assert back.to_numpy().tolist() == [[1, 0, 1], [0, 1, 1]]
    # Categories in any order and of any type keep their positions.
    domain = {
        "columns": [{"name": "s", "kind": "categorical", "categories": ["y", "x"]}]
    }
    words = pd.DataFrame({"s": ["x", "x", "y"]})
    codec = _PublicCodec.fit(words, domain=domain, proc_epsilon=None, rnd=None)
    assert codec.encode(words)["s"].tolist() == [1, 1, 0]
    assert codec.decode(pd.DataFrame({"s": [0, 1]}))["s"].tolist() == ["y", "x"]


def test_public_codec_refuses_values_outside_the_domain_and_missing_values() -> None:
    data = pd.DataFrame({"a": [0, 2], "b": [0, 1], "c": [1, 1]})
    codec = _PublicCodec.fit(data, domain=BINARY, proc_epsilon=0.1, rnd=None)
    with pytest.raises(AdapterInputError, match="'a' holds a value outside"):
        codec.encode(data)
    holed = pd.DataFrame({"a": [0.0, np.nan], "b": [0, 1], "c": [1, 1]})
    with pytest.raises(AdapterInputError, match="'a' has missing values"):
        _PublicCodec.fit(holed, domain=BINARY, proc_epsilon=0.1, rnd=None)


def test_the_binner_and_n_bins_options_are_checked() -> None:
    with pytest.raises(AdapterInputError, match="`binner` must be one of"):
        DpmmMST(epsilon=1.0, binner="mine")
    with pytest.raises(AdapterInputError, match="needs preprocessing=public"):
        DpmmAIM(epsilon=1.0, preprocessing="library", binner="dpmm")
    assert DpmmMST(epsilon=1.0, preprocessing="public", binner="dpmm").binner == "dpmm"
    for bad in (0, -3, 2.5, True, "many"):
        with pytest.raises(AdapterInputError, match="`n_bins` must be"):
            DpmmMST(epsilon=1.0, n_bins=bad)
    assert DpmmMST(epsilon=1.0, n_bins=8).n_bins == 8


SCRIPT = r"""
import json, sys
import numpy as np, pandas as pd
from dpaudit.adapters.dpmm import adapter as dm

domain = {"columns": [{"name": c, "kind": "binary"} for c in "abc"]}
world_d = pd.DataFrame(np.zeros((4, 3), dtype=np.int64), columns=list("abc"))
result = {}
case = sys.argv[1]
if case == "constant":
    # n_iters=100: the test's time (the audited configuration is dpmm's 5,000).
    g = dm.DpmmPrivBayes(epsilon=1.0, delta=1e-2, n_iters=100)
    g.fit(world_d, domain=domain, seed=3)
    out = g.sample(500, seed=4)
    result["claim"] = g.privacy_claim
    result["shape"] = list(out.shape)
    result["dtypes"] = [str(t) for t in out.dtypes]
    result["values"] = sorted({int(v) for v in out.to_numpy().ravel()})
    # MST's claim (one column: no marginal selection, a fit of seconds).
    one = {"columns": domain["columns"][:1]}
    mst = dm.DpmmMST(epsilon=1.0, delta=1e-2, n_iters=100)
    result["mst"] = mst.fit(world_d[["a"]], domain=one, seed=3).privacy_claim
    for name, options in (("dpmm", {"binner": "dpmm"}),
                          ("library", {"preprocessing": "library"})):
        try:
            dm.DpmmMST(epsilon=1.0, delta=1e-2, n_iters=100, **options).fit(
                world_d, domain=domain, seed=3)
            result[name] = "fitted"
        except ValueError as err:
            result[name] = str(err)
elif case == "continuous":
    # The worst case's continuous world D: one value in every column, binned by
    # dpmm's priv-tree within the public bounds.
    cont = {"columns": [{"name": c, "kind": "continuous", "lower": 0.0, "upper": 1.0}
                        for c in "uv"]}
    data = pd.DataFrame(np.zeros((200, 2)), columns=list("uv"))
    codec = dm._PublicCodec.fit(data, domain=cont, proc_epsilon=0.1,
                                rnd=np.random.RandomState(5))
    codes = codec.encode(data)
    back = codec.decode(pd.DataFrame({c: np.arange(codec.sizes[c]) for c in "u"}
                                     | {"v": np.zeros(codec.sizes["u"], dtype=int)}))
    result["spent"] = codec.spent_epsilon
    result["sizes"] = codec.sizes
    result["codes_in_range"] = bool(((codes >= 0) & (codes < pd.Series(codec.sizes))).all().all())
    result["range"] = [float(back.to_numpy().min()), float(back.to_numpy().max())]
    # Uniform bins: dpmm's "auto" counts the records (25 bins for 1,953, 26 for
    # 1,954); the adapter's public encoding uses a public count.
    one = {"columns": cont["columns"][:1]}
    for n in (1953, 1954):
        frame = pd.DataFrame({"u": np.zeros(n)})
        auto = dm._PublicCodec.fit(frame, domain=one, proc_epsilon=None, rnd=None)
        found = __import__("dpmm.processing", fromlist=["BINNER_DICT"]).BINNER_DICT
        theirs = found["uniform"](n_bins="auto", lower=0.0, upper=1.0)
        theirs.fit(frame["u"].to_numpy())
        result[f"uniform_{n}"] = [auto.sizes["u"], int(theirs.bin_domain)]
json.dump(result, sys.stdout)
"""


@pytest.mark.slow
def test_public_encoding_fits_a_table_whose_every_column_has_one_value(
    run_dpmm: Callable[..., Any],
) -> None:
    result = run_dpmm(SCRIPT, "constant")
    claim = result["claim"]
    assert claim["binner"] == "adapter (public domain)"
    assert claim["static_columns"] == [] and claim["preprocessor_epsilon"] == 0.0
    assert claim["epsilon"] == 1.0 and claim["delta"] == 0.01
    # PrivBayes' rho is its measurements' half only: no zCDP profile.
    assert claim["rho"] > 0 and "zcdp_rho" not in claim
    assert result["shape"] == [500, 3] and result["dtypes"] == ["int64"] * 3
    assert set(result["values"]) <= {0, 1}
    # MST's profile: its rho (cdp_rho(1, 1e-2), mu = sqrt(2 rho) = 0.455), no
    # binning to compose in.
    mst = result["mst"]
    assert mst["zcdp_rho"] == mst["rho"] == pytest.approx(0.10341, abs=1e-5)
    # dpmm 0.1.9's own binner, given the public domain or not, drops every static
    # column and has nothing left to model (docs/findings.md 5). When a dpmm release
    # fits this table, the finding and docs/adapters.md need revisiting.
    assert result["dpmm"] == "No objects to concatenate"
    assert result["library"] == "No objects to concatenate"


def test_public_encoding_bins_constant_numeric_columns_within_the_bounds(
    run_dpmm: Callable[..., Any],
) -> None:
    result = run_dpmm(SCRIPT, "continuous")
    # priv-tree spends proc_epsilon, split across the two numeric columns.
    assert result["spent"] == pytest.approx(0.1)
    assert result["sizes"]["u"] >= 1 and result["codes_in_range"]
    low, high = result["range"]
    assert 0.0 <= low <= high <= 1.0
    assert result["uniform_1953"] == [20, 25]
    assert result["uniform_1954"] == [20, 26]
