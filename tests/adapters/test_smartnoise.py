"""The smartnoise-synth adapters, run against the real library.

They run where ``snsynth`` is importable by this interpreter, or by the interpreter
that ``DPAUDIT_SMARTNOISE_PYTHON`` names, or by the one ``dpaudit env smartnoise``
builds (``$DPAUDIT_ENV_HOME/smartnoise``, by default ``~/.cache/dpaudit/envs``), and
are skipped otherwise. Each test runs the adapter classes directly in
a subprocess of that interpreter (the library's global random state and its start-up
stay out of the test process) and reads back JSON.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from dpaudit.generators import accountants as acc

pytestmark = pytest.mark.slow


def classic(curve: dict[str, list[float]], delta: float) -> float:
    return float(
        acc.epsilon_from_rdp(
            curve["epsilons"], delta=delta, orders=curve["orders"], conversion="classic"
        )
    )


SCRIPT = r"""
import json, sys
import numpy as np, pandas as pd
from dpaudit.adapters.smartnoise import adapter as sn

def worst(n, cols="abc"):
    data = pd.DataFrame(np.zeros((n, len(cols)), dtype=np.int64), columns=list(cols))
    data.iloc[-1] = 1
    return data, {"columns": [{"name": c, "kind": "binary"} for c in cols]}

def release(cls, data, domain, seed, public_seed=None, **options):
    g = getattr(sn, cls)(epsilon=1.0, delta=1e-5, **options)
    g.fit(data, domain=domain, seed=seed, public_seed=public_seed)
    out = g.sample(len(data), seed=seed + 1, public_seed=public_seed)
    return g, out

def describe(g, out):
    return {"claim": g.privacy_claim, "shape": list(out.shape),
            "columns": list(out.columns), "dtypes": [str(t) for t in out.dtypes],
            "values": sorted({str(v) for v in out.to_numpy().ravel().tolist()}),
            "digest": int(pd.util.hash_pandas_object(out, index=False).sum() % (2**61))}

case = sys.argv[1]
result = {}
if case == "pategan":
    data, domain = worst(1000)
    g, out = release("SmartnoisePATEGAN", data, domain, seed=3, public_seed=11)
    result["first"] = describe(g, out)
    g, out = release("SmartnoisePATEGAN", data, domain, seed=3, public_seed=11)
    result["again"] = describe(g, out)
    try:
        release("SmartnoisePATEGAN", *worst(999), seed=3)
    except ValueError as err:
        result["small"] = str(err)
elif case == "categories":
    # Category "z" is in the public domain but in no record.
    data = pd.DataFrame({"c": ["x"] * 30 + ["y"] * 30, "b": [0, 1] * 30})
    domain = {"columns": [{"name": "c", "kind": "categorical", "categories": ["x", "y", "z"]},
                          {"name": "b", "kind": "binary"}]}
    for prep in ("public", "library"):
        g, out = release("SmartnoiseMST", data, domain, seed=5, preprocessing=prep)
        result[prep] = {**describe(g, out),
                        "cardinality": [int(c) for c in g.model_._transformer.cardinality]}
elif case == "bounds":
    # Continuous columns through the library's own path: it spends preprocessor_eps
    # on bounds and trains PATEGAN on the rest of the budget.
    data = pd.DataFrame(np.zeros((1000, 2)), columns=["u", "v"])
    data.iloc[-1] = 1.0
    domain = {"columns": [{"name": c, "kind": "continuous", "lower": 0.0, "upper": 1.0}
                          for c in ("u", "v")]}
    g, out = release("SmartnoisePATEGAN", data, domain, seed=3,
                     preprocessing="library", preprocessor_eps=0.25)
    result["claim"] = g.privacy_claim
    result["training_budget"] = float(g.model_.epsilon)
elif case == "profile":
    # DPCTGAN (two short epochs) fitted; MST's and AIM's rho read as their fit
    # leaves it (a fit of each takes minutes; their rho depends on the budget only).
    g, out = release("SmartnoiseDPCTGAN", *worst(100), seed=3, epochs=2, batch_size=50)
    result["dpctgan"] = g.privacy_claim
    result["mst"] = sn.SmartnoiseMST(epsilon=1.0, delta=1e-5)._profile(None)
    aim = sn.SmartnoiseAIM(epsilon=1.0, delta=1e-5)
    result["aim"] = aim._profile(type("Fitted", (), {"rho": 0.0306})())
elif case == "pacsynth":
    # pac-synth leaves cells empty; the public encoders decode them (they raised
    # TypeError at 2,000 released rows before).
    data, domain = worst(2000)
    for prep in ("public", "library"):
        g, out = release("SmartnoisePACSynth", data, domain, seed=2, preprocessing=prep)
        result[prep] = describe(g, out)
json.dump(result, sys.stdout)
"""


def test_pategan_claim_release_and_same_seed_same_release(
    run_smartnoise: Callable[..., Any],
) -> None:
    result = run_smartnoise(SCRIPT, "pategan")
    first, again = result["first"], result["again"]
    claim = first["claim"]
    for key in (
        "epsilon",
        "delta",
        "accountant",
        "iterations",
        "queries",
        "library_epsilon",
        "nominal_epsilon",
        "library",
        "num_teachers",
    ):
        assert key in claim, key
    # The library's own accountant stops just past the budget.
    assert 1.0 < claim["epsilon"] == claim["library_epsilon"] < 1.1
    assert claim["iterations"] > 0 and claim["num_teachers"] == 1
    assert claim["queries"] == claim["iterations"] * 5 * 64
    assert first["shape"] == [1000, 3] and first["columns"] == ["a", "b", "c"]
    assert first["dtypes"] == ["int64"] * 3 and set(first["values"]) <= {"0", "1"}
    # The claim's profile: the library's moments as RDP (alpha(l) / l at order
    # l + 1), whose classic conversion is the library's epsilon.
    curve = claim["rdp"]
    assert curve["orders"] == [float(order) for order in range(2, 102)]
    assert classic(curve, claim["delta"]) == pytest.approx(claim["epsilon"], rel=1e-9)
    # Fully seedable: the same seeds give the same model and release.
    assert again == first
    assert "at least 1,000 rows" in result["small"]


def test_public_preprocessing_encodes_the_domain_library_the_data(
    run_smartnoise: Callable[..., Any],
) -> None:
    result = run_smartnoise(SCRIPT, "categories")
    # Public: the encoder knows category "z" although no record has it.
    assert result["public"]["cardinality"] == [3, 2]
    # Library: it learned the categories from the private records.
    assert result["library"]["cardinality"] == [2, 2]
    for prep in ("public", "library"):
        out = result[prep]
        assert out["shape"] == [60, 2] and out["columns"] == ["c", "b"]
        assert set(out["values"]) <= {"x", "y", "z", "0", "1"}
        assert out["claim"]["epsilon"] == 1.0 and out["claim"]["rho"] > 0
        assert out["claim"]["preprocessing"] == prep


def test_pategan_claim_adds_the_budget_spent_on_private_bounds(
    run_smartnoise: Callable[..., Any],
) -> None:
    result = run_smartnoise(SCRIPT, "bounds")
    claim = result["claim"]
    # The library trained on 1 - 0.25 and its own accountant stopped just past that;
    # the claim is the composition with the 0.25 spent on the bounds.
    assert result["training_budget"] == 0.75
    assert claim["preprocessor_epsilon"] == 0.25
    assert 0.75 < claim["library_epsilon"] < 0.85
    assert claim["epsilon"] == claim["library_epsilon"] + 0.25


def test_the_claims_profile_is_what_the_library_computed(
    run_smartnoise: Callable[..., Any],
) -> None:
    result = run_smartnoise(SCRIPT, "profile")
    claim = result["dpctgan"]
    # Opacus's RDP at its orders for the steps of the library's last read, which is
    # the claim's epsilon (Opacus converts as Balle et al. 2020, without
    # dp-accounting's order cut-off; its orders start at 1.1).
    curve = claim["rdp"]
    assert curve["orders"][:2] == [1.1, 1.2] and len(curve["orders"]) == 151
    orders = np.array(curve["orders"])
    eps = np.min(
        np.array(curve["epsilons"])
        - (math.log(claim["delta"]) + np.log(orders)) / (orders - 1)
        + np.log((orders - 1) / orders)
    )
    assert eps == pytest.approx(claim["epsilon"], rel=1e-9)
    # smartnoise reads at the start of each epoch: the last epoch is not in it.
    assert claim["opacus_steps_at_claim"] < claim["opacus_steps"]
    assert result["mst"]["zcdp_rho"] == pytest.approx(0.030556595, rel=1e-6)
    assert result["aim"] == {"zcdp_rho": 0.0306}


def test_pacsynth_public_preprocessing_decodes_empty_cells(
    run_smartnoise: Callable[..., Any],
) -> None:
    result = run_smartnoise(SCRIPT, "pacsynth")
    for prep in ("public", "library"):
        out = result[prep]
        assert out["shape"] == [2000, 3] and out["dtypes"] == ["int64"] * 3
        assert set(out["values"]) <= {"0", "1"}
        assert out["claim"]["library"].startswith("smartnoise-synth ")
