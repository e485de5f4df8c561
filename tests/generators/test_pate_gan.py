"""The reference PATE-GAN: batching, seeding, the claim, and the release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from dpaudit.data import load_cervical_cancer
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.generators import accountants as acc
from dpaudit.generators.nets import BatchedMLP, MLPSpec
from dpaudit.generators.pate_gan import (
    PateGan,
    PateGanConfig,
    fit_logistic_regression,
    widths,
)
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)


@pytest.fixture(scope="module")
def cervical():
    return load_cervical_cancer()


def small(**kw) -> PateGanConfig:
    base = dict(device="cpu", max_iterations=3, batch_size=16)
    base.update(kw)
    return PateGanConfig(**base)


def test_batched_teachers_equal_unbatched_loop() -> None:
    gen = torch.Generator().manual_seed(0)
    spec = MLPSpec(
        n_in=7, hidden=(5, 3), n_out=1, activation="relu", out_activation="sigmoid"
    )
    net = BatchedMLP(6, spec, generator=gen)
    x = torch.rand(6, 11, 7, generator=gen)
    batched = net(x)
    for e in range(6):
        h = x[e]
        for i, layer in enumerate(net.layers):
            h = torch.nn.functional.linear(h, layer.weight[e].T, layer.bias[e, 0])
            h = torch.relu(h) if i < len(net.layers) - 1 else torch.sigmoid(h)
        torch.testing.assert_close(batched[e], h)
        torch.testing.assert_close(net(x[e : e + 1], member=e)[0], h)


def test_batched_gradients_are_per_member() -> None:
    """Summing member losses gives each member exactly its own gradient."""
    gen = torch.Generator().manual_seed(1)
    net = BatchedMLP(4, MLPSpec(n_in=3, hidden=(4,), n_out=1), generator=gen)
    x = torch.rand(4, 8, 3, generator=gen)
    net(x).sum(dim=(1, 2)).sum().backward()
    full = net.layers[0].weight.grad.clone()
    for e in range(4):
        net.zero_grad()
        net(x)[e].sum().backward()
        torch.testing.assert_close(net.layers[0].weight.grad[e], full[e])


def test_logistic_regression_agrees_with_sklearn() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 120, 4))
    y = (x[..., 0] + 0.5 * x[..., 1] + rng.normal(size=(3, 120)) > 0).astype(float)
    w = fit_logistic_regression(torch.as_tensor(x), torch.as_tensor(y)).numpy()
    for e in range(3):
        ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(x[e], y[e])
        np.testing.assert_allclose(w[e, :4], ref.coef_[0], atol=1e-5)
        np.testing.assert_allclose(w[e, 4], ref.intercept_[0], atol=1e-5)


def test_logistic_regression_weights_leave_rows_out() -> None:
    """Rows of weight 0 (the padding of partitions of unequal size) change nothing:
    the fit is scikit-learn's on the rows of weight 1."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 60, 3))
    y = (x[..., 0] + rng.normal(size=(2, 60)) > 0).astype(float)
    keep = np.ones((2, 60))
    keep[0, 40:] = 0.0
    keep[1, :7] = 0.0
    w = fit_logistic_regression(
        torch.as_tensor(x), torch.as_tensor(y), weight=torch.as_tensor(keep)
    ).numpy()
    for e in range(2):
        rows = keep[e] > 0
        ref = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(
            x[e][rows], y[e][rows]
        )
        np.testing.assert_allclose(w[e, :3], ref.coef_[0], atol=1e-5)
        np.testing.assert_allclose(w[e, 3], ref.intercept_[0], atol=1e-5)


def test_logistic_regression_stops_per_member_at_the_optimum() -> None:
    """Newton stops early per member: the result is the 30-step optimum (to rounding)
    and a member's weights do not depend on its batch mates (here: members of very
    different scales, which converge after different numbers of steps)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 90, 3)) * np.array([0.1, 1.0, 3.0, 10.0])[:, None, None]
    y = (x[..., 0] - x[..., 2] + rng.normal(size=(4, 90)) > 0).astype(float)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)
    batched = fit_logistic_regression(xt, yt)
    full = fit_logistic_regression(xt, yt, tol=0.0)  # all 30 steps, as before
    torch.testing.assert_close(batched, full, rtol=0, atol=1e-9)
    for e in range(4):
        alone = fit_logistic_regression(xt[e : e + 1], yt[e : e + 1])
        torch.testing.assert_close(alone[0], batched[e], rtol=0, atol=1e-12)


def test_widths() -> None:
    assert widths("2d/3,d/3", d=29, z=7) == (19, 9)
    assert widths("", d=3, z=1) == ()
    with pytest.raises(InvalidParameterError, match="widths like"):
        widths("d*2", d=3, z=1)


def test_fit_returns_self_and_sample_contract(cervical) -> None:
    model = PateGan(small())
    with pytest.raises(NotFittedError):
        model.sample(3, rng=Rngs.from_seed(0))
    assert (
        model.fit(cervical.train, domain=cervical.domain, rng=Rngs.from_seed(0))
        is model
    )
    out = model.sample(50, rng=Rngs.from_seed(1))
    assert list(out.columns) == list(cervical.train.columns)
    assert (out.dtypes == cervical.train.dtypes).all()
    cervical.domain.validate(out)


def test_same_seed_same_output_different_seed_differs(cervical) -> None:
    def run(seed: int) -> pd.DataFrame:
        model = PateGan(small()).fit(
            cervical.train, domain=cervical.domain, rng=Rngs.from_seed(seed)
        )
        return model.sample(40, rng=Rngs.from_seed(99))

    torch.manual_seed(123)  # global seeding must have no effect
    a = run(0)
    torch.manual_seed(456)
    np.random.seed(7)  # noqa: NPY002 - checks that global state is ignored
    b = run(0)
    pd.testing.assert_frame_equal(a, b)
    assert not run(1).equals(a)


def test_input_not_mutated(cervical) -> None:
    before = cervical.train.copy()
    PateGan(small()).fit(cervical.train, domain=cervical.domain, rng=Rngs.from_seed(0))
    pd.testing.assert_frame_equal(before, cervical.train)


def test_claim_within_budget_and_recorded(cervical) -> None:
    model = PateGan(PateGanConfig(device="cpu")).fit(
        cervical.train, domain=cervical.domain, rng=Rngs.from_seed(0)
    )
    claim = model.privacy_claim_
    assert claim.epsilon <= 1.0
    assert claim.epsilon_data_independent is not None
    assert claim.epsilon <= claim.epsilon_data_independent + 1e-12
    assert claim.iterations is not None
    assert 0 < claim.iterations < 1000  # the budget, not the cap, stopped it
    ledger = np.array(claim.trace["ledger"]["gap_counts"])
    spec = acc.MomentsAccountantSpec(lam=1e-3, orders=100)
    # The reference reads its moments with the improved RDP conversion.
    assert acc.pate_gan_epsilon(
        ledger, spec, delta=1e-5, conversion="improved"
    ) == pytest.approx(claim.epsilon)
    assert acc.pate_gan_epsilon(ledger, spec, delta=1e-5) > claim.epsilon  # classic
    # One more batch of 64 queries would have crossed the budget.
    more = ledger.copy()
    more[0] += 64
    assert acc.pate_gan_epsilon(more, spec, delta=1e-5, conversion="improved") > 1.0
    assert claim.reference_epsilon == pytest.approx(claim.epsilon)
    assert len(model.sample(686, rng=Rngs.from_seed(1))) == 686


def test_disjoint_partitions_records_seen(cervical) -> None:
    model = PateGan(small(max_iterations=30, batch_size=64)).fit(
        cervical.train, domain=cervical.domain, rng=Rngs.from_seed(0)
    )
    # Independent assignment: every record seen by exactly one teacher (sizes vary).
    seen = model.privacy_claim_.trace["records_seen"]
    assert sum(seen) == 686 and len(seen) == 5 and min(seen) > 0
    assert model.privacy_claim_.trace["records_unused"] == 0


def test_fit_many_trains_independent_models() -> None:
    ds = worst_case_dataset()
    d0, d1 = neighbouring_pair(ds.train, worst_case_target(ds.domain), domain=ds.domain)
    rngs = Rngs.from_seed(3).spawn(3)
    models = PateGan(small(num_teachers=2)).fit_many(
        [d0, d1, d0], domain=ds.domain, rngs=rngs
    )
    assert len(models) == 3
    assert [m.privacy_claim_.trace["rows"] for m in models] == [4, 5, 4]
    outs = [m.sample(20, rng=Rngs.from_seed(5)) for m in models]
    assert all(list(o.columns) == ["a", "b", "c"] for o in outs)
    # Same batch and streams: same models.
    again = PateGan(small(num_teachers=2)).fit_many(
        [d0, d1, d0], domain=ds.domain, rngs=rngs
    )
    for m, n in zip(models, again):
        pd.testing.assert_frame_equal(
            m.sample(20, rng=Rngs.from_seed(5)), n.sample(20, rng=Rngs.from_seed(5))
        )


def test_bad_config_messages() -> None:
    with pytest.raises(InvalidParameterError, match=r"`epsilon` must be > 0. Got -1"):
        PateGanConfig(epsilon=-1)
    with pytest.raises(InvalidParameterError, match=r"`delta` must be in \(0, 1\)"):
        PateGanConfig(delta=1.5)
    with pytest.raises(InvalidParameterError, match="`batch_size` must be an integer"):
        PateGanConfig(batch_size=0)


def test_fewer_rows_than_teachers() -> None:
    ds = worst_case_dataset()
    with pytest.raises(InvalidParameterError, match="one per teacher"):
        PateGan(small(num_teachers=9)).fit(
            ds.train, domain=ds.domain, rng=Rngs.from_seed(0)
        )


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_contract(cervical) -> None:
    model = PateGan(small(device="cuda")).fit(
        cervical.train, domain=cervical.domain, rng=Rngs.from_seed(0)
    )
    out = model.sample(100, rng=Rngs.from_seed(1))
    cervical.domain.validate(out)
    assert model.privacy_claim_.epsilon <= 1.0


@pytest.mark.parametrize("gaussian_label_noise", [False, True])
def test_hand_written_teacher_gradient_trains_as_autograd(
    cervical, monkeypatch, gaussian_label_noise
) -> None:
    """The teachers' hand-written gradient (the default architecture's fast path) and
    autograd train the same models: teachers, students, generators and claims, in
    float64."""
    from dpaudit.generators.pate_gan import state as pg_state
    from dpaudit.generators.pate_gan import teachers as pg_teachers
    from dpaudit.generators.pate_gan.trainer import Trainer

    calls: list[int] = []
    fused = pg_teachers.relu_logit_bce_grad_

    def spy(*args, **kwargs):
        calls.append(1)
        return fused(*args, **kwargs)

    trainers: list[Trainer] = []
    run = Trainer.run

    def keep(self):
        trainers.append(self)
        return run(self)

    monkeypatch.setattr(Trainer, "run", keep)

    def train():
        cfg = small(num_teachers=5, gaussian_label_noise=gaussian_label_noise)
        models = PateGan(cfg).fit_many(
            [cervical.train] * 2,
            domain=cervical.domain,
            rngs=Rngs.from_seed(4).spawn(2),
        )
        nets = [trainers[-1].teachers, trainers[-1].student, trainers[-1].generator]
        return nets, [m.privacy_claim_ for m in models]

    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        monkeypatch.setattr(pg_teachers, "relu_logit_bce_grad_", spy)
        nets_fused, claims_fused = train()
        assert len(calls) == 3 * 5  # iterations x teacher steps
        monkeypatch.setattr(pg_state, "is_relu_logit", lambda net: False)
        nets_auto, claims_auto = train()
        assert len(calls) == 3 * 5
    finally:
        torch.set_default_dtype(default)
    for net_f, net_a in zip(nets_fused, nets_auto, strict=True):
        for pf, pa in zip(net_f.parameters(), net_a.parameters(), strict=True):
            assert pf.dtype == torch.float64
            torch.testing.assert_close(pf, pa, rtol=1e-9, atol=1e-12)
    for cf, ca in zip(claims_fused, claims_auto, strict=True):
        assert cf.epsilon == ca.epsilon and cf.trace["ledger"] == ca.trace["ledger"]
