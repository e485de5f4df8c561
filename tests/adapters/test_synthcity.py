"""The synthcity adapters, run against the real library.

synthcity 0.2.12 cannot share dpaudit's environment (torch < 2.3, numpy < 2): the
tests run under the interpreter of ``dpaudit env synthcity`` (or one
``DPAUDIT_SYNTHCITY_PYTHON`` names, or this one where it has synthcity), and are
skipped otherwise. The adapters run in a subprocess of that interpreter; results come
back as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpaudit.cli import main
from dpaudit.generators import accountants as acc

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys
import numpy as np, pandas as pd
from dpaudit.adapters.synthcity.adapter import SynthcityPATEGAN

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


OTHERS = r"""
import json, sys
import numpy as np, pandas as pd
from dpaudit.adapters._common import AdapterInputError
from dpaudit.adapters.synthcity.adapter import SynthcityDPGAN, SynthcityPrivBayes

data = pd.DataFrame(np.zeros((200, 3), dtype=np.int64), columns=list("abc"))
data.iloc[-1] = 1
domain = {"columns": [{"name": c, "kind": "binary"} for c in "abc"]}
small = {"n_iter": 1, "generator_n_units_hidden": 20,
         "discriminator_n_units_hidden": 20, "batch_size": 50}
out = {}
for name, make in [
    ("privbayes", lambda: SynthcityPrivBayes(epsilon=1.0)),
    ("dpgan_public", lambda: SynthcityDPGAN(epsilon=1.0, delta=1e-5,
                                            preprocessing="public", **small)),
]:
    rows = []
    for _ in range(2):
        g = make().fit(data, domain=domain, seed=4)
        release = g.sample(60, seed=5, public_seed=9)
        rows.append(release.to_numpy().tolist())
    out[name] = {"claim": g.privacy_claim, "shape": list(release.shape),
                 "dtypes": [str(t) for t in release.dtypes], "same": rows[0] == rows[1]}
for bad in [
    lambda: SynthcityPrivBayes(epsilon=1.0, preprocessing="public"),
    lambda: SynthcityDPGAN(epsilon=1.0, delta=1e-5, random_state=3),
    lambda: SynthcityDPGAN(epsilon=1.0, delta=0.0).fit(data, domain=domain, seed=1),
]:
    try:
        bad()
    except AdapterInputError as err:
        out.setdefault("errors", []).append(str(err))
json.dump(out, sys.stdout)
"""


def test_privbayes_and_dpgan(run_synthcity: Callable[..., Any]) -> None:
    out = run_synthcity(OTHERS)
    privbayes = out["privbayes"]
    assert privbayes["claim"]["epsilon"] == 1.0 and privbayes["claim"]["delta"] == 0
    assert privbayes["shape"] == [60, 3] and privbayes["same"]
    dpgan = out["dpgan_public"]
    claim = dpgan["claim"]
    # Opacus's epsilon for the steps taken, at the budget's delta (not synthcity's
    # 1 / len(train split)); its RDP profile converts to no less.
    assert 0 < claim["epsilon"] <= 1.0 + 1e-6 and claim["delta"] == 1e-5
    assert claim["steps"] > 0 and claim["poisson_sampling"] is False
    eps = acc.epsilon_from_rdp(
        claim["rdp"]["epsilons"], delta=1e-5, orders=claim["rdp"]["orders"]
    )
    assert float(eps) >= claim["epsilon"] - 1e-6
    assert claim["preprocessing"] == "public" and dpgan["shape"] == [60, 3]
    assert dpgan["dtypes"] == ["int64"] * 3 and dpgan["same"]
    first, second, third = out["errors"]
    assert "supports only `preprocessing=library`" in first
    assert "`random_state` is set by dpaudit" in second
    assert "needs `delta` in (0, 1)" in third


def test_count_scale_refuses_an_unknown_value() -> None:
    """``count_scale`` (docs/findings.md, 9) takes ``library`` or ``corrected`` only,
    checked before synthcity is imported (no synthcity needed here)."""
    from dpaudit.adapters._common import AdapterInputError
    from dpaudit.adapters.synthcity.adapter import SynthcityPrivBayes

    with pytest.raises(AdapterInputError, match="count_scale"):
        SynthcityPrivBayes(epsilon=1.0, count_scale="fixed")
    assert SynthcityPrivBayes(epsilon=1.0).count_scale == "library"


def test_a_table_too_small_for_privbayes_is_bad_input(
    synthcity_python: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """synthcity's own ValueError on the 4-row worst case (its encoder's KMeans wants
    10 rows) is the user's to fix: exit 2, one line naming the table and
    ``--dataset-rows``, nothing written (it was "unexpected AdapterError", exit 3)."""
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "audit",
            "--generator",
            "synthcity-privbayes",
            "--dataset",
            "worst-case",
            "--release",
            "transcript",
            "--rounds",
            "5",
            "--python",
            synthcity_python,
            "--quiet",
            "--out",
            "run",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert "the library refused a training table of 4 rows" in err
    assert "n_clusters=10" in err and "--dataset-rows N" in err
    assert "unexpected" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()
