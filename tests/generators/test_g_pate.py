"""G-PATE: the generator contract, batching, DPGradAgg and the privacy claim.

Everything runs on CPU with a few teachers and tiny networks; the noise scales are
chosen so that a model trains for tens of iterations before its budget is spent.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from torch.nn import functional as F

from dpaudit.data import Column, Domain
from dpaudit.errors import (
    DataError,
    DpauditWarning,
    InvalidParameterError,
    NotFittedError,
)
from dpaudit.generators import accountants
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.catalogue import declared_bugs
from dpaudit.generators.g_pate import (
    ACCOUNTANT_NAME,
    UNSANITISED_ACCOUNTANT_NAME,
    GPate,
    GPateConfig,
    _ConvTeachers,
    _MlpTeachers,
    defaults_for_rows,
    dp_grad_agg,
    teacher_input_gradients,
    with_small_table_defaults,
)
from dpaudit.generators.registry import generator_factory, registered_generators
from dpaudit.rng import Rngs

SMALL = {
    "epsilon": 20.0,
    "delta": 1e-5,
    "num_teachers": 10,
    "batch_size": 8,
    "sigma1": 20.0,
    "sigma2": 10.0,
    "projection_dim": 2,
    "max_iterations": 60,
    "device": "cpu",
}


def small_config(**overrides: object) -> GPateConfig:
    return GPateConfig(**{**SMALL, **overrides})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def domain() -> Domain:
    return Domain(
        (
            Column(name="age", kind="integer", lower=18, upper=90),
            Column(name="income", kind="continuous", lower=0.0, upper=100.0),
            Column(name="smoker", kind="binary"),
            Column(
                name="region", kind="categorical", categories=("north", "south", "west")
            ),
        )
    )


def make_table(n: int, seed: int) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": gen.integers(20, 80, n).astype(np.int64),
            "income": gen.uniform(10.0, 60.0, n),
            "smoker": gen.integers(0, 2, n).astype(np.int64),
            "region": gen.choice(["north", "south", "west"], n).astype(object),
        }
    )


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return make_table(120, 0)


@pytest.fixture(scope="module")
def fitted(table: pd.DataFrame, domain: Domain) -> GPate:
    return GPate(small_config()).fit(table, domain=domain, rng=Rngs.from_seed(7))


def generator_params(model: GPate) -> list[torch.Tensor]:
    assert model._fitted is not None
    return [p.detach().clone() for p in model._fitted.generator.parameters()]


# -------------------------------------------------------------------------- config
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"num_teachers": 0}, "`num_teachers` must be an integer in [1, inf). Got 0."),
        (
            {"num_teachers": 2.5},
            "`num_teachers` must be an integer in [1, inf). Got 2.5.",
        ),
        ({"epsilon": 0.0}, "`epsilon` must be a number in (0, inf). Got 0.0."),
        ({"delta": 1.5}, "`delta` must be a number in (0, 1). Got 1.5."),
        ({"sigma1": -1.0}, "`sigma1` must be a number in (0, inf). Got -1.0."),
        ({"threshold": 0.0}, "`threshold` must be a number in (0, 1]"),
        ({"threshold": 1.5}, "`threshold` must be a number in (0, 1]"),
        ({"bins": 1}, "`bins` must be an integer in [2, inf). Got 1."),
        ({"clip": float("inf")}, "`clip` must be a number in (0, inf)"),
        (
            {"batch_size": True},
            "`batch_size` must be an integer in [1, inf). Got True.",
        ),
        ({"architecture": "resnet"}, "`architecture` must be one of mlp, dcgan"),
        ({"device": "tpu"}, "`device` must be one of auto, cpu, cuda"),
        ({"accountant": "moments"}, "`accountant` must be one of"),
        ({"label_column": ""}, "`label_column` must be a column name or None"),
        ({"data_bounds": 1}, "`data_bounds` must be True or False. Got 1."),
    ],
)
def test_bad_config_raises_with_the_field_named(
    overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidParameterError) as info:
        small_config(**overrides)
    assert str(info.value).startswith(message)


def test_config_is_frozen_and_keyword_only() -> None:
    cfg = small_config()
    with pytest.raises(AttributeError):
        cfg.epsilon = 3.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        GPateConfig(1.0, 1e-5)  # type: ignore[misc]


def test_registered_generator_and_bug_flags() -> None:
    factory, description = generator_factory("gpate"), registered_generators()["gpate"]
    assert "G-PATE" in description
    model = factory(epsilon=1.0, delta=1e-5, num_teachers=5)
    assert isinstance(model, GPate)
    assert model.config.num_teachers == 5
    with pytest.raises(InvalidParameterError, match="unknown G-PATE option"):
        factory(epsilon=1.0, delta=1e-5, teachers=5)
    # The CLI and the runner pass flags as `bugs`, and None for unset options.
    flagged = factory(epsilon=1.0, delta=1e-5, bugs=["data_bounds"], device=None)
    assert flagged.config.data_bounds
    assert flagged.config.device == "auto"
    with pytest.raises(InvalidParameterError, match="unknown bug flag"):
        factory(epsilon=1.0, delta=1e-5, bugs=["no_accountant"])
    with pytest.raises(
        InvalidParameterError, match="`variant` must be None for G-PATE"
    ):
        factory(epsilon=1.0, delta=1e-5, variant="original")
    flags = declared_bugs(GPateConfig)
    assert set(flags) == {"unsanitised_data_dependent", "data_bounds"}
    assert all(b.kind == "further" for b in flags.values())


# ------------------------------------------------------------------------ contract
def test_not_fitted_errors() -> None:
    model = GPate(small_config())
    with pytest.raises(NotFittedError, match="fit"):
        model.sample(3, rng=Rngs.from_seed(0))
    with pytest.raises(NotFittedError):
        _ = model.privacy_claim_
    assert not hasattr(model, "privacy_claim_")


def test_fit_returns_self_and_sample_keeps_the_schema(
    table: pd.DataFrame, domain: Domain
) -> None:
    model = GPate(small_config())
    original = table.copy()
    assert model.fit(table, domain=domain, rng=Rngs.from_seed(1)) is model
    pd.testing.assert_frame_equal(table, original)  # inputs are never mutated
    out = model.sample(50, rng=Rngs.from_seed(2))
    assert list(out.columns) == list(table.columns)
    assert len(out) == 50
    expected = domain.cast(table).dtypes
    for name in ("age", "income", "smoker"):
        assert out[name].dtype == expected[name]
    assert out["age"].between(18, 90).all()
    assert out["income"].between(0.0, 100.0).all()
    assert set(out["smoker"]) <= {0, 1}
    assert set(out["region"]) <= {"north", "south", "west"}
    assert len(model.sample(0, rng=Rngs.from_seed(2))) == 0
    domain.validate(out, name="synthetic")


def test_same_seed_same_output_and_different_seeds_differ(
    table: pd.DataFrame, domain: Domain, fitted: GPate
) -> None:
    again = GPate(small_config()).fit(table, domain=domain, rng=Rngs.from_seed(7))
    for a, b in zip(generator_params(fitted), generator_params(again)):
        assert torch.equal(a, b)
    pd.testing.assert_frame_equal(
        fitted.sample(30, rng=Rngs.from_seed(3)),
        again.sample(30, rng=Rngs.from_seed(3)),
    )
    assert fitted.privacy_claim_ == again.privacy_claim_
    other = GPate(small_config()).fit(table, domain=domain, rng=Rngs.from_seed(8))
    assert any(
        not torch.equal(a, b)
        for a, b in zip(generator_params(fitted), generator_params(other))
    )
    assert not fitted.sample(30, rng=Rngs.from_seed(3)).equals(
        fitted.sample(30, rng=Rngs.from_seed(4))
    )


def test_fit_is_idempotent_and_ignores_global_seeding(
    table: pd.DataFrame, domain: Domain, fitted: GPate
) -> None:
    rng = Rngs.from_seed(7)
    model = GPate(small_config())
    torch.manual_seed(123)
    np.random.seed(123)  # noqa: NPY002 - checking that global state is not used
    model.fit(table, domain=domain, rng=rng)
    first = generator_params(model)
    torch.manual_seed(456)
    np.random.seed(456)  # noqa: NPY002
    model.fit(table, domain=domain, rng=rng)
    for a, b, c in zip(first, generator_params(model), generator_params(fitted)):
        assert torch.equal(a, b)
        assert torch.equal(a, c)


def test_fit_many_equals_separate_fits_member_by_member(domain: Domain) -> None:
    """Each model draws from its own stream, in the same order, and members never
    interact, so ``fit_many`` trains the models ``fit`` would.

    Bitwise equality is not guaranteed: PyTorch's vectorised CPU kernels for
    transcendental functions (sigmoid, softplus, exp) can differ in the last bit
    depending on where an element falls relative to the SIMD width, i.e. on how many
    members share the tensor. Over a short run that stays at float32 rounding level;
    every privacy-relevant quantity (vote histograms, answered queries, the claim) is
    identical.
    """
    datasets = [make_table(120, 0), make_table(121, 1), make_table(119, 2)]
    rngs = Rngs.from_seed(11).spawn(3)
    batched = GPate(small_config()).fit_many(datasets, domain=domain, rngs=rngs)
    assert len(batched) == 3
    iterations = set()
    for data, rng, model in zip(datasets, Rngs.from_seed(11).spawn(3), batched):
        alone = GPate(small_config()).fit(data, domain=domain, rng=rng)
        for a, b in zip(generator_params(model), generator_params(alone)):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
        assert model.privacy_claim_ == alone.privacy_claim_
        assert model.privacy_claim_.iterations == alone.privacy_claim_.iterations
        a_out = model.sample(40, rng=Rngs.from_seed(5))
        b_out = alone.sample(40, rng=Rngs.from_seed(5))
        np.testing.assert_allclose(a_out["income"], b_out["income"], rtol=1e-4)
        iterations.add(model.privacy_claim_.iterations)
    # The members stopped at different iterations: the mask, not a common stop.
    assert len(iterations) > 1


def test_fit_many_checks_its_streams(table: pd.DataFrame, domain: Domain) -> None:
    with pytest.raises(InvalidParameterError, match="one stream per dataset"):
        GPate(small_config()).fit_many(
            [table, table], domain=domain, rngs=[Rngs.from_seed(0)]
        )


def test_too_few_rows_for_the_teachers_is_refused(domain: Domain) -> None:
    with pytest.raises(DataError, match="one per teacher"):
        GPate(small_config(num_teachers=50)).fit(
            make_table(20, 0), domain=domain, rng=Rngs.from_seed(0)
        )


# ---------------------------------------------------------------- privacy claim
@pytest.mark.parametrize("epsilon", [5.0, 8.0, 20.0])
def test_claim_never_exceeds_epsilon_and_stops_before_the_budget(
    table: pd.DataFrame, domain: Domain, epsilon: float
) -> None:
    cfg = small_config(epsilon=epsilon, max_iterations=500)
    claim = GPate(cfg).fit(table, domain=domain, rng=Rngs.from_seed(3)).privacy_claim_
    assert isinstance(claim, PrivacyClaim)
    assert claim.accountant == ACCOUNTANT_NAME
    assert claim.trace["stop_reason"] == "budget"
    assert 0 < claim.epsilon <= epsilon
    assert claim.epsilon == claim.epsilon_data_independent
    assert claim.reference_epsilon == claim.epsilon_data_independent
    trace = claim.trace["epsilon"]
    assert len(trace) == claim.iterations == len(claim.trace["answered"])
    assert trace[-1] == claim.epsilon
    assert all(a < b for a, b in itertools.pairwise(trace))
    # The claim is what the reference accountant says about the recorded ledger.
    ledger = accountants.ConfidentGnmaxLedger.from_json(claim.trace["ledger"])
    assert ledger.num_queries == claim.iterations * 16
    assert ledger.num_answered == sum(claim.trace["answered"])
    assert accountants.confident_gnmax_epsilon(ledger, delta=1e-5) == claim.epsilon
    # Stopping was not premature: one more batch could have exceeded the budget.
    worst = accountants.confident_gnmax_rdp_data_independent(
        ledger.num_queries + 16, ledger.num_answered + 16, sigma1=20.0, sigma2=10.0
    )
    assert float(accountants.epsilon_from_rdp(worst, delta=1e-5)) > epsilon
    json.dumps(claim.to_json())


def test_max_iterations_caps_training(table: pd.DataFrame, domain: Domain) -> None:
    claim = (
        GPate(small_config(max_iterations=4))
        .fit(table, domain=domain, rng=Rngs.from_seed(3))
        .privacy_claim_
    )
    assert claim.iterations == 4
    assert claim.trace["stop_reason"] == "max_iterations"


def test_a_budget_below_one_batch_trains_nothing_and_warns(
    table: pd.DataFrame, domain: Domain
) -> None:
    with pytest.warns(DpauditWarning, match="does not cover one batch"):
        model = GPate(small_config(epsilon=0.5)).fit(
            table, domain=domain, rng=Rngs.from_seed(3)
        )
    assert model.privacy_claim_.iterations == 0
    assert model.privacy_claim_.epsilon == 0.0
    assert len(model.sample(5, rng=Rngs.from_seed(0))) == 5


def test_data_dependent_mode_traces_but_never_claims_it(
    table: pd.DataFrame, domain: Domain, fitted: GPate
) -> None:
    model = GPate(small_config(accountant="data_dependent")).fit(
        table, domain=domain, rng=Rngs.from_seed(7)
    )
    claim = model.privacy_claim_
    # Same training as the data-independent mode: the stopping rule is the same.
    assert claim.epsilon == fitted.privacy_claim_.epsilon
    assert claim.accountant == ACCOUNTANT_NAME
    assert "not sanitised" in claim.trace["data_dependent_note"]
    dd = claim.trace["epsilon_data_dependent_not_sanitised"]
    assert len(dd) == claim.iterations
    assert all(d <= e * (1 + 1e-12) for d, e in zip(dd, claim.trace["epsilon"]))
    ledger = accountants.ConfidentGnmaxLedger.from_json(claim.trace["ledger"])
    assert sum(ledger.multiplicity) == ledger.num_answered
    assert all(sum(row) == 10 for row in ledger.top_counts)  # k votes per query
    assert claim.trace["data_dependent_final_not_sanitised"] == pytest.approx(
        accountants.confident_gnmax_epsilon(ledger, delta=1e-5, data_dependent=True)
    )


def test_unsanitised_data_dependent_claims_the_data_dependent_value(
    table: pd.DataFrame, domain: Domain
) -> None:
    # Many teachers agreeing, little GNMax noise: the data-dependent bound is far
    # below the data-independent one, so the defect trains much longer.
    cfg = small_config(
        num_teachers=40,
        sigma1=60.0,
        sigma2=4.0,
        epsilon=30.0,
        max_iterations=80,
        unsanitised_data_dependent=True,
    )
    claim = GPate(cfg).fit(table, domain=domain, rng=Rngs.from_seed(3)).privacy_claim_
    assert claim.accountant == UNSANITISED_ACCOUNTANT_NAME
    assert claim.epsilon == claim.trace["data_dependent_final_not_sanitised"]
    assert claim.epsilon <= 30.0 * (1 + 1e-9)
    assert claim.reference_epsilon == claim.epsilon_data_independent
    assert claim.reference_epsilon is not None
    assert claim.reference_epsilon > 30.0 > claim.epsilon * 0.999


def test_data_bounds_defect_reads_the_range_from_the_data(domain: Domain) -> None:
    data = make_table(120, 4)
    data.loc[:, "income"] = np.linspace(40.0, 45.0, 120)
    model = GPate(small_config(data_bounds=True)).fit(
        data, domain=domain, rng=Rngs.from_seed(0)
    )
    out = model.sample(200, rng=Rngs.from_seed(1))
    assert out["income"].between(40.0, 45.0).all()
    # No accountant bounds what the data bounds leak: the reference says so.
    assert model.privacy_claim_.reference_epsilon is None
    assert "unbounded" in model.privacy_claim_.trace["reference_note"]
    safe = GPate(small_config()).fit(data, domain=domain, rng=Rngs.from_seed(0))
    assert safe._fitted is not None and safe._fitted.layout.domain == domain
    assert safe.privacy_claim_.reference_epsilon == safe.privacy_claim_.epsilon


@pytest.mark.parametrize("n_rows", [120, 686])
def test_small_table_defaults_train_the_planned_iterations(
    domain: Domain, n_rows: int
) -> None:
    """Noise scaled with k alone leaves a small table untrained at epsilon = 1; the
    calibrated defaults run the planned iterations within the budget."""
    table = make_table(n_rows, 6)
    k = max(2, n_rows // 125)
    scaled = GPateConfig(
        epsilon=1.0,
        delta=1e-5,
        num_teachers=k,
        max_iterations=5,
        sigma1=1500.0 * k / 2100,
        sigma2=600.0 * k / 2100,
        device="cpu",
    )
    with pytest.warns(DpauditWarning, match="does not cover one batch"):
        untrained = GPate(scaled).fit(table, domain=domain, rng=Rngs.from_seed(0))
    assert untrained.privacy_claim_.iterations == 0
    options = defaults_for_rows(n_rows, epsilon=1.0, delta=1e-5, iterations=5)
    assert options["num_teachers"] == k
    assert options["sigma1"] / options["sigma2"] == pytest.approx(2.5)
    cfg = GPateConfig(
        epsilon=1.0, delta=1e-5, max_iterations=500, device="cpu", **options
    )
    claim = GPate(cfg).fit(table, domain=domain, rng=Rngs.from_seed(0)).privacy_claim_
    assert claim.iterations >= 5
    assert claim.epsilon <= 1.0


def test_small_table_defaults_never_go_below_the_published_noise() -> None:
    big = defaults_for_rows(284_807, epsilon=100.0, delta=1e-5, iterations=1)
    k = 284_807 // 125
    assert big["sigma1"] == pytest.approx(1500.0 * k / 2100)
    assert big["sigma2"] == pytest.approx(600.0 * k / 2100)


def test_data_bounds_defect_in_a_batch_of_differently_shaped_domains(
    domain: Domain,
) -> None:
    full = make_table(120, 5)
    no_west = full[full["region"] != "west"].reset_index(drop=True)
    models = GPate(small_config(data_bounds=True, max_iterations=3)).fit_many(
        [full, no_west], domain=domain, rngs=Rngs.from_seed(0).spawn(2)
    )
    assert set(models[1].sample(100, rng=Rngs.from_seed(1))["region"]) <= {
        "north",
        "south",
    }
    assert all(m.privacy_claim_.iterations == 3 for m in models)


# ---------------------------------------------------------------------- DPGradAgg
def test_dp_grad_agg_unanimous_teachers_back_project_the_winning_midpoint() -> None:
    gen = torch.Generator().manual_seed(0)
    m, k, b, p, d, bins, clip = 1, 5, 2, 3, 4, 10, 1e-4
    one = torch.randn(1, 1, b, d, generator=gen) * 1e-4
    grads = one.expand(m, k, b, d)
    proj = torch.randn(m, b, p, d, generator=gen) / math.sqrt(p)
    zeros = torch.zeros(m, b, p)
    agg = dp_grad_agg(
        grads,
        proj,
        clip=clip,
        bins=bins,
        threshold=0.5 * k,
        sigma1=100.0,
        sigma2=100.0,
        threshold_noise=zeros,
        vote_noise=torch.zeros(m, b, p, bins),
    )
    # Independent computation in float64.
    r = proj.double().numpy()[0]
    g = one.double().numpy()[0, 0]
    coords = np.clip(np.einsum("bpd,bd->bp", r, g), -clip, clip)
    width = 2 * clip / bins
    winner = np.minimum(np.floor((coords + clip) / width), bins - 1)
    mid = -clip + (winner + 0.5) * width
    expected = np.einsum("bpd,bp->bd", r, mid)
    assert agg.answered.all()
    np.testing.assert_array_equal(agg.winners[0].numpy(), winner)
    assert torch.all(agg.counts.sum(-1) == k)
    assert torch.all(agg.counts.amax(-1) == k)
    np.testing.assert_allclose(
        agg.gradient[0].double().numpy(), expected, rtol=1e-5, atol=1e-12
    )


def test_dp_grad_agg_saturated_coordinates_vote_the_end_bins() -> None:
    m, k, b, p, d, bins, clip = 1, 4, 1, 2, 2, 10, 1e-4
    grads = torch.tensor([1.0, -1.0]).expand(m, k, b, d)  # |projection| >> c
    proj = torch.eye(2).reshape(1, 1, 2, 2)
    agg = dp_grad_agg(
        grads,
        proj,
        clip=clip,
        bins=bins,
        threshold=2.0,
        sigma1=1.0,
        sigma2=1.0,
        threshold_noise=torch.zeros(m, b, p),
        vote_noise=torch.zeros(m, b, p, bins),
    )
    assert agg.winners[0, 0].tolist() == [bins - 1, 0]
    half = clip - clip / bins
    np.testing.assert_allclose(agg.gradient[0, 0].numpy(), [half, -half], rtol=1e-6)


def test_dp_grad_agg_unanswered_queries_contribute_zero() -> None:
    m, k, b, p, d, bins = 2, 3, 2, 2, 3, 4
    grads = torch.full((m, k, b, d), 1e-5)
    proj = torch.ones(m, b, p, d)
    # The threshold (k + 1 votes) cannot be met with zero noise.
    agg = dp_grad_agg(
        grads,
        proj,
        clip=1e-4,
        bins=bins,
        threshold=k + 1.0,
        sigma1=1.0,
        sigma2=1.0,
        threshold_noise=torch.zeros(m, b, p),
        vote_noise=torch.zeros(m, b, p, bins),
    )
    assert not agg.answered.any()
    assert torch.count_nonzero(agg.gradient) == 0


def test_dp_grad_agg_noise_decides_among_close_bins() -> None:
    m, k, b, p, d, bins, clip = 1, 3, 1, 1, 1, 2, 1.0
    grads = torch.tensor([0.5, 0.5, -0.5]).reshape(m, k, b, d)  # votes 2 : 1
    proj = torch.ones(m, b, p, d)
    vote_noise = torch.tensor([1.5, 0.0]).reshape(m, b, p, bins)  # sigma2 = 1 flips it
    agg = dp_grad_agg(
        grads,
        proj,
        clip=clip,
        bins=bins,
        threshold=1.0,
        sigma1=1.0,
        sigma2=1.0,
        threshold_noise=torch.zeros(m, b, p),
        vote_noise=vote_noise,
    )
    assert agg.counts[0, 0, 0].tolist() == [1.0, 2.0]
    assert agg.winners.item() == 0  # 1 + 1.5 > 2
    assert agg.gradient.item() == pytest.approx(-0.5)


# ----------------------------------------------------- batched teacher gradients
def _per_teacher_mlp_gradients(
    teachers: _MlpTeachers, x: torch.Tensor, k: int
) -> torch.Tensor:
    """Reference: one teacher at a time, with its own weights and plain autograd."""
    layers = teachers.net.layers
    m, b, d = x.shape
    out = torch.empty(m, k, b, d)
    for e in range(m * k):
        xi = x[e // k].detach().clone().requires_grad_(True)
        h = F.leaky_relu(xi @ layers[0].weight[e] + layers[0].bias[e], 0.2)
        logit = h @ layers[1].weight[e] + layers[1].bias[e]
        (grad,) = torch.autograd.grad(F.softplus(-logit).sum() / b, xi)
        out[e // k, e % k] = -grad
    return out


def test_batched_teacher_gradients_equal_a_per_teacher_loop() -> None:
    gen = torch.Generator().manual_seed(0)
    m, k, b, d = 3, 4, 5, 6
    teachers = _MlpTeachers(m * k, d, generator=gen, device=torch.device("cpu"))
    x = torch.rand(m, b, d, generator=gen)
    batched = teacher_input_gradients(teachers, x, torch.zeros(m, b, 0), num_teachers=k)
    assert batched.shape == (m, k, b, d)
    torch.testing.assert_close(
        batched, _per_teacher_mlp_gradients(teachers, x, k), rtol=1e-5, atol=1e-8
    )


def test_batched_conv_teacher_gradients_equal_a_per_teacher_loop() -> None:
    gen = torch.Generator().manual_seed(1)
    m, k, b, classes, width = 2, 3, 2, 3, 2
    teachers = _ConvTeachers(
        m * k, classes, width, generator=gen, device=torch.device("cpu")
    )
    x = torch.rand(m, b, 784, generator=gen)
    cond = F.one_hot(torch.tensor([[0, 2], [1, 1]]), classes).float()
    batched = teacher_input_gradients(teachers, x, cond, num_teachers=k)
    c_in = 1 + classes
    for e in range(m * k):
        xi = x[e // k].detach().clone().requires_grad_(True)
        planes = cond[e // k].reshape(b, classes, 1, 1).expand(b, classes, 28, 28)
        img = torch.cat([xi.reshape(b, 1, 28, 28), planes], dim=1)
        w1 = teachers.conv1.weight[e * width : (e + 1) * width]
        b1 = teachers.conv1.bias[e * width : (e + 1) * width]
        w2 = teachers.conv2.weight[e * 2 * width : (e + 1) * 2 * width]
        b2 = teachers.conv2.bias[e * 2 * width : (e + 1) * 2 * width]
        assert w1.shape[1] == c_in
        h = F.leaky_relu(F.conv2d(img, w1, b1, stride=2, padding=1), 0.2)
        h = F.leaky_relu(F.conv2d(h, w2, b2, stride=2, padding=1), 0.2)
        logit = h.reshape(b, -1) @ teachers.out.weight[e] + teachers.out.bias[e]
        (grad,) = torch.autograd.grad(F.softplus(-logit).sum() / b, xi)
        torch.testing.assert_close(batched[e // k, e % k], -grad, rtol=1e-4, atol=1e-7)


def test_batched_conditional_mlp_teacher_gradients_equal_a_per_teacher_loop() -> None:
    gen = torch.Generator().manual_seed(2)
    m, k, b, d, classes = 2, 3, 5, 4, 3
    teachers = _MlpTeachers(
        m * k, d, generator=gen, device=torch.device("cpu"), classes=classes
    )
    layers = teachers.net.layers
    assert layers[0].weight.shape[1] == d + classes
    x = torch.rand(m, b, d, generator=gen)
    labels = torch.randint(0, classes, (m, b), generator=gen)
    cond = F.one_hot(labels, classes).float()
    batched = teacher_input_gradients(teachers, x, cond, num_teachers=k)
    assert batched.shape == (m, k, b, d)  # with respect to x only, not the label
    for e in range(m * k):
        xi = x[e // k].detach().clone().requires_grad_(True)
        inp = torch.cat([xi, cond[e // k]], dim=-1)
        h = F.leaky_relu(inp @ layers[0].weight[e] + layers[0].bias[e], 0.2)
        logit = h @ layers[1].weight[e] + layers[1].bias[e]
        (grad,) = torch.autograd.grad(F.softplus(-logit).sum() / b, xi)
        torch.testing.assert_close(batched[e // k, e % k], -grad, rtol=1e-5, atol=1e-8)
    # The label matters: other labels, other gradients.
    other = teacher_input_gradients(
        teachers, x, F.one_hot((labels + 1) % classes, classes).float(), num_teachers=k
    )
    assert not torch.allclose(batched, other)


# ------------------------------------------------------------- conditional tabular
@pytest.mark.parametrize("label", ["smoker", "region"])
def test_conditional_mlp_fit_and_sample_contract(
    label: str, table: pd.DataFrame, domain: Domain
) -> None:
    cfg = small_config(label_column=label, max_iterations=5)
    model = GPate(cfg).fit(table, domain=domain, rng=Rngs.from_seed(3))
    assert model._fitted is not None
    layout = model._fitted.layout
    width = domain.encoded_dim - (1 if label == "smoker" else 3)
    assert layout.width == width
    assert layout.classes == (2 if label == "smoker" else 3)
    assert model.privacy_claim_.iterations == 5
    assert model.privacy_claim_.trace["queries_per_iteration"] == 8 * 2
    out = model.sample(400, rng=Rngs.from_seed(4))
    assert list(out.columns) == list(table.columns)
    expected_dtypes = domain.cast(table).dtypes
    for name in ("age", "income", "smoker"):
        assert out[name].dtype == expected_dtypes[name]
    domain.validate(out, name="synthetic")
    # Uniform labels: every class is present, about equally often.
    expected = {0, 1} if label == "smoker" else {"north", "south", "west"}
    assert set(out[label]) == expected
    assert out[label].value_counts().min() > 400 / len(expected) / 2
    assert out["age"].between(18, 90).all()
    assert out["income"].between(0.0, 100.0).all()
    # Same seed, same sample; a different seed differs.
    pd.testing.assert_frame_equal(out, model.sample(400, rng=Rngs.from_seed(4)))
    assert not out.equals(model.sample(400, rng=Rngs.from_seed(5)))
    assert model.sample(0, rng=Rngs.from_seed(4)).shape == (0, 4)


def test_conditional_mlp_generator_follows_its_label(
    table: pd.DataFrame, domain: Domain
) -> None:
    model = GPate(small_config(label_column="smoker", max_iterations=2)).fit(
        table, domain=domain, rng=Rngs.from_seed(0)
    )
    assert model._fitted is not None
    gen = model._fitted.generator
    z = torch.randn(
        1, 6, model._fitted.latent, generator=torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        zero = gen(z, F.one_hot(torch.zeros(1, 6, dtype=torch.long), 2).float())
        one = gen(z, F.one_hot(torch.ones(1, 6, dtype=torch.long), 2).float())
    assert zero.shape == (1, 6, domain.encoded_dim - 1)
    assert not torch.allclose(zero, one)


def test_conditional_mlp_fit_many_equals_separate_fits(
    table: pd.DataFrame, domain: Domain
) -> None:
    cfg = small_config(label_column="region", max_iterations=4)
    data = [table, make_table(110, 1)]
    rngs = Rngs.from_seed(9).spawn(2)
    many = GPate(cfg).fit_many(data, domain=domain, rngs=rngs)
    for i, model in enumerate(many):
        single = GPate(cfg).fit(
            data[i], domain=domain, rng=Rngs.from_seed(9).spawn(2)[i]
        )
        assert model.privacy_claim_.epsilon == single.privacy_claim_.epsilon
        assert (
            model.privacy_claim_.trace["answered"]
            == single.privacy_claim_.trace["answered"]
        )
        for a, b in zip(generator_params(model), generator_params(single)):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_unconditional_mlp_is_unchanged_by_the_label_option(
    table: pd.DataFrame, domain: Domain
) -> None:
    a = GPate(small_config(max_iterations=3)).fit(
        table, domain=domain, rng=Rngs.from_seed(1)
    )
    b = GPate(small_config(max_iterations=3, label_column=None)).fit(
        table, domain=domain, rng=Rngs.from_seed(1)
    )
    assert a._fitted is not None and a._fitted.layout.classes == 0
    for x, y in zip(generator_params(a), generator_params(b)):
        torch.testing.assert_close(x, y, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("label", "message"),
    [
        (
            "nope",
            r"`label_column` must be a column of the domain \(age, income, smoker, region\)\. Got 'nope'",
        ),
        (
            "income",
            "`label_column` must be a binary, categorical or integer column. Got \"'income', a continuous column\"",
        ),
    ],
)
def test_conditional_mlp_bad_label_column(
    label: str, message: str, table: pd.DataFrame, domain: Domain
) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        GPate(small_config(label_column=label)).fit(
            table, domain=domain, rng=Rngs.from_seed(0)
        )


def test_conditional_mlp_refuses_a_label_only_table() -> None:
    dom = Domain((Column(name="y", kind="binary"),))
    data = pd.DataFrame({"y": np.arange(40) % 2})
    with pytest.raises(InvalidParameterError, match="not the only column"):
        GPate(small_config(label_column="y")).fit(
            data, domain=dom, rng=Rngs.from_seed(0)
        )


# ------------------------------------------------------------------------- images
def image_domain(label: bool) -> Domain:
    cols = [
        Column(name=f"p{i}", kind="integer", lower=0, upper=255) for i in range(784)
    ]
    if label:
        # The label first: the pixels need not be the first encoded coordinates.
        cols.insert(
            0, Column(name="label", kind="categorical", categories=("a", "b", "c"))
        )
    return Domain(tuple(cols))


def image_table(n: int, label: bool, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    data = pd.DataFrame(
        gen.integers(0, 256, (n, 784)), columns=[f"p{i}" for i in range(784)]
    )
    if label:
        data.insert(0, "label", gen.choice(["a", "b", "c"], n).astype(object))
    return data


@pytest.mark.parametrize("label", [True, False])
def test_dcgan_architecture_on_tiny_random_images(label: bool) -> None:
    dom = image_domain(label)
    data = image_table(24, label)
    cfg = small_config(
        architecture="dcgan",
        label_column="label" if label else None,
        num_teachers=3,
        batch_size=4,
        projection_dim=3,
        image_channels=2,
        latent_dim=8,
        max_iterations=3,
    )
    models = GPate(cfg).fit_many(
        [data, data.iloc[:-1]], domain=dom, rngs=Rngs.from_seed(0).spawn(2)
    )
    for model in models:
        assert model.privacy_claim_.iterations == 3
        out = model.sample(6, rng=Rngs.from_seed(1))
        assert out.shape == (6, 784 + int(label))
        assert list(out.columns) == list(data.columns)
        assert out["p0"].dtype == np.int64
        assert out.drop(columns=["label"] if label else []).to_numpy().min() >= 0
        assert out.drop(columns=["label"] if label else []).to_numpy().max() <= 255
        if label:
            assert set(out["label"]) <= {"a", "b", "c"}


def test_dcgan_needs_28_by_28_pixels(domain: Domain, table: pd.DataFrame) -> None:
    with pytest.raises(
        InvalidParameterError, match="`domain` must be 784 pixel columns"
    ):
        GPate(small_config(architecture="dcgan")).fit(
            table, domain=domain, rng=Rngs.from_seed(0)
        )


def test_no_warnings_in_a_normal_fit(table: pd.DataFrame, domain: Domain) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GPate(small_config(max_iterations=3)).fit(
            table, domain=domain, rng=Rngs.from_seed(0)
        )


def test_weak_noise_g_pate_moves_its_samples_toward_the_data() -> None:
    """The aggregated teacher gradients point toward the data: with almost no noise
    (sigma1 = 0.5, sigma2 = 0.1 for 5 teachers) and a wide clip, 1,000 iterations
    bring the generated mean at least halfway (in squared distance) from the
    untrained generator to the data's (0.85, 0.15). A flipped sign or a lost
    projection would move it away or not at all. Seeded, so deterministic."""
    dom = Domain(
        (
            Column(name="a", kind="continuous", lower=0.0, upper=1.0),
            Column(name="b", kind="continuous", lower=0.0, upper=1.0),
        )
    )
    gen = np.random.default_rng(0)
    data = pd.DataFrame(
        {
            "a": np.clip(0.85 + 0.02 * gen.standard_normal(500), 0, 1),
            "b": np.clip(0.15 + 0.02 * gen.standard_normal(500), 0, 1),
        }
    )
    target = data.mean().to_numpy()

    def distance(iterations: int) -> float:
        cfg = GPateConfig(
            epsilon=1e9,
            delta=1e-5,
            num_teachers=5,
            batch_size=32,
            sigma1=0.5,
            sigma2=0.1,
            projection_dim=2,
            clip=0.1,
            max_iterations=iterations,
            device="cpu",
        )
        model = GPate(cfg).fit(data, domain=dom, rng=Rngs.from_seed(0))
        assert model.privacy_claim_.iterations == iterations
        out = model.sample(1000, rng=Rngs.from_seed(1)).mean().to_numpy()
        return float(((out - target) ** 2).sum())

    before, after = distance(0), distance(1000)
    assert before > 0.1  # the untrained generator sits near the middle
    assert after < 0.5 * before


def test_small_table_defaults_apply_only_where_needed() -> None:
    given = {"num_teachers": 7, "sigma1": 3.0}
    assert with_small_table_defaults(given, 500, epsilon=1.0, delta=1e-5) == given
    assert with_small_table_defaults({}, 50_000, epsilon=1.0, delta=1e-5) == {}
    planned = with_small_table_defaults(
        {"max_iterations": 40, "sigma2": 9.0}, 686, epsilon=1.0, delta=1e-5
    )
    expected = defaults_for_rows(686, epsilon=1.0, delta=1e-5, iterations=40)
    assert planned["num_teachers"] == 5
    assert planned["sigma1"] == expected["sigma1"]
    assert planned["sigma2"] == 9.0  # what the user gave wins


def test_weak_noise_dcgan_learns_a_two_tone_image() -> None:
    """The image path learns: every real image is bright on the left half and dark on
    the right; with weak noise, 60 iterations of the conditional-free DCGAN G-PATE
    make generated left halves clearly brighter than right halves (untrained: equal).
    Seeded, so deterministic; seeds 0-3 give left - right of 62 to 90 grey levels."""
    img = np.zeros((28, 28), dtype=np.int64)
    img[:, :14] = 255
    data = pd.DataFrame(
        np.tile(img.reshape(1, -1), (30, 1)), columns=[f"p{i}" for i in range(784)]
    )

    def contrast(iterations: int) -> float:
        cfg = small_config(
            architecture="dcgan",
            num_teachers=3,
            batch_size=8,
            projection_dim=10,
            image_channels=4,
            latent_dim=8,
            max_iterations=iterations,
            epsilon=1e6,
            sigma1=0.5,
            sigma2=0.1,
            clip=0.1,
            lr=1e-2,
        )
        model = GPate(cfg).fit(data, domain=image_domain(False), rng=Rngs.from_seed(0))
        assert model.privacy_claim_.iterations == iterations
        out = model.sample(50, rng=Rngs.from_seed(1)).to_numpy().reshape(50, 28, 28)
        return float(out[:, :, :14].mean() - out[:, :, 14:].mean())

    assert abs(contrast(0)) < 5.0
    assert contrast(60) > 40.0
