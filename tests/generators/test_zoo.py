"""The known-epsilon zoo (dpaudit.generators.zoo): the calibration, the exact profiles
against dp-accounting, the plug-in contract and the release encoding."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from dpaudit.data import worst_case_domain
from dpaudit.generators import accountants as acc
from dpaudit.generators import zoo
from dpaudit.generators.foreign.contract import contract_problem, supports_public_seed
from dpaudit.generators.plugins import PluginAdapter
from dpaudit.rng import Rngs

ORDERS = list(zoo.ZOO_ORDERS)
MECHANISMS = (zoo.ExactRandomizedResponse, zoo.ExactLaplace, zoo.ExactGaussian)


def dp_accounting_rdp(event: dp_accounting.DpEvent) -> np.ndarray:
    accountant = rdp_privacy_accountant.RdpAccountant(ORDERS)
    accountant.compose(event)
    return np.asarray(accountant._rdp, dtype=np.float64)


def test_the_module_imports_nothing_from_dpaudit() -> None:
    tree = ast.parse(Path(zoo.__file__).read_text())
    names = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert not [n for n in names if n and n.startswith("dpaudit")]


@pytest.mark.parametrize("cls", MECHANISMS)
def test_every_mechanism_keeps_the_contract_with_public_seed(cls: type) -> None:
    assert contract_problem(cls, cls.__name__) is None
    assert supports_public_seed(cls)


@pytest.mark.parametrize(
    ("epsilon", "mu"),
    [(4.0, 0.924930897666937), (2.0, 0.501551689169657), (1.0, 0.2680511232112946)],
)
def test_analytic_gaussian_calibration(epsilon: float, mu: float) -> None:
    """The issue's numbers (mu 0.925 for (4, 1e-5)), and delta(eps) of mu-GDP at the
    calibrated mu is the delta asked for."""
    got = zoo.analytic_gaussian_mu(epsilon, 1e-5)
    assert got == pytest.approx(mu, rel=1e-9)
    assert zoo.gdp_delta(epsilon, got) == pytest.approx(1e-5, rel=1e-6)
    # dp-accounting's PLD of the same Gaussian gives the same delta.
    pld = dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism(
        1.0 / got, value_discretization_interval=1e-4
    )
    assert pld.get_delta_for_epsilon(epsilon) == pytest.approx(1e-5, rel=2e-2)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_the_stated_curves_are_dp_accountings(epsilon: float) -> None:
    """Gaussian and Laplace: dp-accounting's RDP of the same mechanism; randomized
    response: the Renyi divergence of the two Bernoulli laws, summed directly."""
    mu = zoo.analytic_gaussian_mu(epsilon, 1e-5)
    np.testing.assert_allclose(
        [zoo.gaussian_rdp(mu, a) for a in ORDERS],
        dp_accounting_rdp(dp_accounting.GaussianDpEvent(1.0 / mu)),
        rtol=1e-9,
    )
    np.testing.assert_allclose(
        [zoo.laplace_rdp(epsilon, a) for a in ORDERS],
        dp_accounting_rdp(dp_accounting.LaplaceDpEvent(1.0 / epsilon)),
        rtol=1e-7,
    )
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    for a in ORDERS[:30]:  # the direct sum overflows at the largest orders
        direct = math.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a))
        assert zoo.rr_rdp(epsilon, a) == pytest.approx(direct / (a - 1), rel=1e-9)


@pytest.mark.parametrize("cls", MECHANISMS)
@pytest.mark.parametrize("profile", zoo.PROFILES)
def test_the_claim_states_the_claimed_mechanisms_profile(
    cls: type, profile: str
) -> None:
    domain = worst_case_domain()
    data = pd.DataFrame({"a": [0, 0, 1], "b": [0, 0, 1], "c": [0, 0, 1]})
    model = PluginAdapter(
        cls, cls.__name__, epsilon=1.0, delta=1e-5, true_epsilon=4.0, profile=profile
    ).fit(data, domain=domain, rng=Rngs.from_seed(0))
    claim = model.privacy_claim_
    assert claim.epsilon == 1.0 and claim.extra["true_epsilon"] == 4.0
    if profile == "none":
        assert claim.rdp is None and claim.gdp_mu is None
        return
    assert claim.rdp is not None and list(claim.rdp.orders) == ORDERS
    assert claim.gdp_mu == (
        pytest.approx(zoo.analytic_gaussian_mu(1.0, 1e-5))
        if cls is zoo.ExactGaussian and profile == "full"
        else None
    )
    # The curve is that of the mechanism at the claimed epsilon: its conversion at
    # delta 1e-5 is no smaller than the exact epsilon there (RDP conversions are
    # upper bounds), and not vacuous.
    eps = float(
        acc.epsilon_from_rdp(list(claim.rdp.epsilons), delta=1e-5, orders=ORDERS)
    )
    if cls is zoo.ExactGaussian:
        assert 1.0 <= eps <= 1.6
    else:
        # Pure 1-DP: its RDP tends to 1 at large orders and never exceeds it.
        assert max(claim.rdp.epsilons) <= 1.0 + 1e-12
        assert claim.rdp.epsilons[-1] >= 0.99 and 1.0 <= eps <= 1.01


@pytest.mark.statistical
def test_the_noise_is_calibrated_to_the_true_epsilon() -> None:
    """2,000 Gaussian answers at count 0 and 2,000 at count 1 (true epsilon 4): the
    sample means within 5 standard errors of 0 and 1 and the sample standard deviation
    within 10% of ``1 / mu`` (each fails with probability below 1e-5)."""
    domain = {"columns": [{"name": "a", "kind": "binary"}]}
    sigma = 1 / zoo.analytic_gaussian_mu(4.0, 1e-5)
    model = zoo.ExactGaussian(epsilon=1.0, delta=1e-5, true_epsilon=4.0)
    for count in (0, 1):
        data = pd.DataFrame({"a": [1] * count + [0, 0]})
        # fit counts the target's rows; the noise is drawn from the seed's stream.
        assert model.fit(data, domain=domain, seed=0).answer_ == (
            count + np.random.default_rng(0).normal(0.0, sigma)
        )
        answers = np.array(
            [model._noisy(count, np.random.default_rng(s)) for s in range(2000)]
        )
        assert abs(answers.mean() - count) < 5 * sigma / math.sqrt(2000)
        assert abs(answers.std() / sigma - 1) < 0.1


@pytest.mark.parametrize("domain_kind", ["binary", "continuous"])
def test_the_release_counts_the_noisy_answer_in_target_copies(
    domain_kind: str,
) -> None:
    domain = worst_case_domain(continuous=domain_kind == "continuous")
    js = domain.to_json()
    data = domain.cast(pd.DataFrame({"a": [0, 0], "b": [0, 0], "c": [0, 0]}))
    model = zoo.ExactGaussian(epsilon=1.0, delta=1e-5, true_epsilon=4.0)
    model.fit(data, domain=js, seed=3, public_seed=7)
    out = model.sample(100, seed=5, public_seed=7)
    domain.validate(out, name="release")
    target = (out == 1).all(axis=1)
    step = 100 / (2 * zoo.WIDTH / model.true_mu)
    assert int(target.sum()) == min(
        max(round(50 + (model.answer_ - 0.5) * step), 0), 100
    )
    # The fillers come from the public seed alone: the same for another privacy seed.
    again = zoo.ExactGaussian(epsilon=1.0, delta=1e-5, true_epsilon=4.0)
    again.fit(data, domain=js, seed=4, public_seed=7)
    other = again.sample(100, seed=6, public_seed=7)
    k = max(int(target.sum()), int((other == 1).all(axis=1).sum()))
    pd.testing.assert_frame_equal(out.iloc[k:], other.iloc[k:])


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="`true_epsilon` must be"):
        zoo.ExactLaplace(epsilon=1.0, true_epsilon=-1)
    with pytest.raises(ValueError, match="`profile` must be one of"):
        zoo.ExactLaplace(epsilon=1.0, profile="gdp")
    with pytest.raises(ValueError, match="needs `delta` > 0"):
        zoo.ExactGaussian(epsilon=1.0, delta=0.0)


def test_the_figures_docs_zoo_states() -> None:
    text = " ".join(
        (Path(__file__).resolve().parents[2] / "docs" / "zoo.md").read_text().split()
    )
    for epsilon in (4.0, 2.0, 1.0):
        assert f"{zoo.analytic_gaussian_mu(epsilon, 1e-5):.3f}" in text
    assert "python benchmarks/profile_zoo.py" in text
    assert f"{len(zoo.ZOO_ORDERS)} orders" in text
