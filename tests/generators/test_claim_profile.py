"""Claims state their privacy profile (``gdp_mu``, ``zcdp_rho``, ``rdp``,
``reference_rdp``): the JSON keys, the plug-in contract's checks (one line naming the
key), and the curves dpaudit's own generators state (consistent with their epsilon)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.run import run_audit
from dpaudit.audit.storage.store import ResultStore
from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError, PluginError
from dpaudit.generators import accountants as acc
from dpaudit.generators.base import PrivacyClaim, RdpCurve
from dpaudit.generators.g_pate import GPate, GPateConfig
from dpaudit.generators.names import PATE_GAN_VARIANTS
from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.generators.pate_gan.claim import rdp_of_moments
from dpaudit.generators.plugins import check_claim
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)

REPO = Path(__file__).resolve().parents[2]


def dp_accounting_rdp(event: dp_accounting.DpEvent, orders: list[float]) -> np.ndarray:
    """dp-accounting's RDP of ``event`` at ``orders`` (its accountant's curve)."""
    accountant = rdp_privacy_accountant.RdpAccountant(orders)
    accountant.compose(event)
    return np.asarray(accountant._rdp, dtype=np.float64)


CURVE = {"orders": [1.5, 2.0, 8.0], "epsilons": [0.1, 0.2, 0.9]}


@pytest.fixture(scope="module")
def worst():
    ds = worst_case_dataset()
    d0, d1 = neighbouring_pair(ds.train, worst_case_target(ds.domain), domain=ds.domain)
    return ds.domain, d0, d1


# ------------------------------------------------------------------ the claim


def test_profile_keys_round_trip_and_default_to_null() -> None:
    claim = check_claim(
        {
            "epsilon": 1,
            "delta": 1e-5,
            "gdp_mu": 0.27,
            "zcdp_rho": 0.04,
            "rdp": CURVE,
            "reference_rdp": CURVE,
            "other": 3,
        },
        "my:Gen",
    )
    # Profile keys have fields of their own: never swallowed into `extra`.
    assert dict(claim.extra) == {"other": 3}
    assert claim.gdp_mu == 0.27 and claim.zcdp_rho == 0.04
    assert claim.rdp == RdpCurve(orders=(1.5, 2.0, 8.0), epsilons=(0.1, 0.2, 0.9))
    assert claim.reference_rdp == claim.rdp
    out = claim.to_json()
    assert out["rdp"] == CURVE and out["reference_rdp"] == CURVE
    assert (out["gdp_mu"], out["zcdp_rho"]) == (0.27, 0.04)
    assert PrivacyClaim.from_json(out) == claim
    plain = check_claim({"epsilon": 1}, "my:Gen").to_json()
    assert [plain[k] for k in ("gdp_mu", "zcdp_rho", "rdp", "reference_rdp")] == [
        None
    ] * 4
    # A claim stored before the keys existed reads as no profile.
    old = {k: v for k, v in out.items() if k not in ("gdp_mu", "rdp")}
    assert PrivacyClaim.from_json(old).rdp is None


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("gdp_mu", 0, "must be a finite number > 0"),
        ("gdp_mu", math.inf, "must be a finite number > 0"),
        ("zcdp_rho", -0.5, "must be a finite number > 0"),
        ("zcdp_rho", "0.5", "must be a finite number > 0"),
        ("gdp_mu", True, "must be a finite number > 0"),
        ("rdp", [1, 2], 'must be {"orders"'),
        ("rdp", {"orders": [2.0]}, 'must be {"orders"'),
        ("rdp", {"orders": [], "epsilons": []}, "`orders` a non-empty list"),
        ("rdp", {"orders": [1.0, 2.0], "epsilons": [0.1, 0.2]}, "every order > 1"),
        ("rdp", {"orders": [3.0, 2.0], "epsilons": [0.1, 0.2]}, "strictly increasing"),
        ("rdp", {"orders": [2.0, 2.0], "epsilons": [0.1, 0.2]}, "strictly increasing"),
        ("rdp", {"orders": [2.0, 3.0], "epsilons": [0.1]}, "one epsilon per order"),
        ("rdp", {"orders": [2.0], "epsilons": [-0.1]}, "every epsilon >= 0"),
        ("rdp", {"orders": [2.0], "epsilons": [None]}, "finite numbers"),
        ("reference_rdp", {"orders": [2.0], "epsilons": [math.inf]}, "finite numbers"),
        ("reference_rdp", {"orders": [math.nan], "epsilons": [1.0]}, "finite numbers"),
    ],
)
def test_bad_profile_values_name_the_key(key: str, value, words: str) -> None:
    with pytest.raises(PluginError, match="generator 'my:Gen'") as info:
        check_claim({"epsilon": 1, key: value}, "my:Gen")
    message = str(info.value)
    assert f"`privacy_claim['{key}']`" in message and words in message
    assert "\n" not in message


def test_the_claim_itself_refuses_a_bad_profile() -> None:
    with pytest.raises(InvalidParameterError, match="`gdp_mu` must be"):
        PrivacyClaim(epsilon=1.0, delta=0.0, accountant="x", gdp_mu=-1.0)
    with pytest.raises(InvalidParameterError, match="`rdp` must have every order"):
        RdpCurve(orders=(0.5,), epsilons=(0.1,))
    # An order with infinite RDP is left out.
    assert RdpCurve.of([2.0, 3.0], [0.5, math.inf]).to_json() == {
        "orders": [2.0],
        "epsilons": [0.5],
    }


PLUGIN = """
class Gen:
    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = {{"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "own", {extra}}}
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
"""


@pytest.fixture
def plugin_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))
    return tmp_path


def test_a_bad_profile_from_a_plugin_is_one_line_exit_2(
    plugin_path: Path, capsys
) -> None:
    (plugin_path / "bad_profile.py").write_text(
        PLUGIN.format(extra='"rdp": {"orders": [0.5], "epsilons": [1.0]}')
    )
    code = main(
        [
            "audit",
            "--generator",
            "bad_profile:Gen",
            "--rounds",
            "5",
            "--jobs",
            "1",
            "--attack",
            "querybased",
            "--quiet",
            "--out",
            str(plugin_path / "a"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "bad_profile:Gen" in err and "`privacy_claim['rdp']`" in err
    assert "every order > 1" in err and not (plugin_path / "a" / "result.json").exists()


def test_an_audit_stores_the_profile_with_each_round(plugin_path: Path) -> None:
    (plugin_path / "good_profile.py").write_text(
        PLUGIN.format(extra=f'"gdp_mu": 0.5, "rdp": {CURVE!r}')
    )
    out = plugin_path / "audit"
    run_audit(
        AuditConfig(
            generator="good_profile:Gen", rounds=5, attack="querybased", jobs=1
        ),
        out_dir=out,
    )
    with ResultStore(out) as store:
        claims = store.claims()
    assert len(claims) == 10
    for claim in claims.values():
        assert claim["gdp_mu"] == 0.5 and claim["rdp"] == CURVE
        # Nothing goes to ``extra`` (the worker's Python is the result's).
        assert claim["zcdp_rho"] is None
        assert claim["extra"] == {}


# --------------------------------------------------- moments are an RDP curve


def test_log_moments_are_rdp_at_order_l_plus_1_as_dp_accounting_reads_them() -> None:
    """The moments accountant's ``alpha(l)`` is ``(a - 1) RDP(a)`` at ``a = l + 1``:
    the data-independent log-moment of a pure ``2 lambda``-DP vote is the RDP bound
    ``a (2 lambda)^2 / 2`` (Bun and Steinke), which is above dp-accounting's exact RDP
    of the Laplace mechanism at the same epsilon, and dp-accounting's conversion of
    the curve is dpaudit's improved conversion of the moments."""
    lam, queries = 0.05, 40
    spec = acc.MomentsAccountantSpec(lam=lam, orders=30, data_dependent=False)
    alpha = queries * acc.data_independent_increment(lam=lam, orders=30)
    curve = rdp_of_moments(alpha)
    orders = np.array(curve.orders)
    np.testing.assert_allclose(
        curve.epsilons, queries * orders * (2 * lam) ** 2 / 2, rtol=1e-12
    )
    # dp-accounting's Laplace RDP (noise multiplier 1 / eps) at the same orders.
    laplace = dp_accounting_rdp(
        dp_accounting.LaplaceDpEvent(1 / (2 * lam)), orders.tolist()
    )
    assert np.all(queries * laplace <= np.array(curve.epsilons) + 1e-12)
    eps_da, _ = rdp_privacy_accountant.compute_epsilon(
        orders.tolist(), list(curve.epsilons), 1e-5
    )
    ours = acc.pate_gan_epsilon(
        np.array([queries] + [0] * 4), spec, delta=1e-5, conversion="improved"
    )
    assert float(ours) == pytest.approx(eps_da, rel=1e-9)


# ------------------------------------------- dpaudit's generators state curves


def _epsilon_of(curve: RdpCurve, delta: float, conversion: str) -> float:
    return float(
        acc.epsilon_from_rdp(
            list(curve.epsilons),
            delta=delta,
            orders=list(curve.orders),
            conversion=conversion,  # type: ignore[arg-type]
        )
    )


@pytest.mark.parametrize("variant", ["reference", *PATE_GAN_VARIANTS])
def test_every_pate_gan_variant_states_its_ledgers_curves(variant: str, worst) -> None:
    """``rdp`` converts, by the claimed accountant's own conversion, to its claimed
    epsilon (the claim is that curve's epsilon); ``reference_rdp`` to the reference
    epsilon (improved conversion); both are None exactly where the epsilon has no
    ledger behind it (a nominal claim; an unbounded reference)."""
    domain, d0, _ = worst
    options = {} if variant == "reference" else {"variant": variant}
    cfg = config_from_options(
        epsilon=1,
        delta=1e-5,
        device="cpu",
        max_iterations=3,
        num_teachers=2,
        **options,
    )
    claim = PateGan(cfg).fit(d0, domain=domain, rng=Rngs.from_seed(0)).privacy_claim_
    if claim.accountant.startswith("none"):
        assert claim.rdp is None
    else:
        assert claim.rdp is not None and len(claim.rdp.orders) == cfg.orders
        assert claim.rdp.orders[0] == 2.0
        eps = _epsilon_of(claim.rdp, claim.delta, cfg.conversion)
        assert eps == pytest.approx(claim.epsilon, rel=1e-9, abs=1e-12)
    if claim.reference_epsilon is None:
        assert claim.reference_rdp is None
    else:
        assert claim.reference_rdp is not None
        eps = _epsilon_of(claim.reference_rdp, cfg.delta, "improved")
        assert eps == pytest.approx(claim.reference_epsilon, rel=1e-9, abs=1e-12)
    assert PrivacyClaim.from_json(claim.to_json()).rdp == claim.rdp


@pytest.mark.parametrize(
    "options", [{}, {"unsanitised_data_dependent": True}], ids=["ref", "unsanitised"]
)
def test_g_pate_states_its_rdp_curve(options, worst) -> None:
    domain = worst[0]
    table = pd.DataFrame(
        np.random.default_rng(0).integers(0, 2, size=(60, 3)), columns=domain.names
    )
    cfg = GPateConfig(
        epsilon=20.0,
        delta=1e-5,
        num_teachers=5,
        batch_size=8,
        sigma1=20.0,
        sigma2=10.0,
        projection_dim=2,
        max_iterations=3,
        device="cpu",
        **options,
    )
    claim = GPate(cfg).fit(table, domain=domain, rng=Rngs.from_seed(0)).privacy_claim_
    assert claim.rdp is not None and claim.reference_rdp is not None
    assert len(claim.rdp.orders) == len(acc.RDP_ORDERS)
    eps = _epsilon_of(claim.rdp, claim.delta, "improved")
    assert eps == pytest.approx(claim.epsilon, rel=1e-9, abs=1e-12)
    ref = _epsilon_of(claim.reference_rdp, claim.delta, "improved")
    assert ref == pytest.approx(claim.reference_epsilon, rel=1e-9, abs=1e-12)
    if not options:
        assert claim.rdp == claim.reference_rdp
    else:
        assert claim.epsilon <= claim.reference_epsilon
