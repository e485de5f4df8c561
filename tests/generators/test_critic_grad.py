"""The WGAN-GP critic's hand-written gradient (single-discriminator variants)."""

from __future__ import annotations

import pytest
import torch

from dpaudit.generators.nets import BatchedMLP, MLPSpec
from dpaudit.generators.pate_gan.critic import (
    is_relu_critic,
    wgan_gp_grad_,
    wgan_gp_loss,
)


def _critic(members: int, hidden: tuple[int, ...], n_in: int, seed: int) -> BatchedMLP:
    net = BatchedMLP(
        members,
        MLPSpec(
            n_in=n_in,
            hidden=hidden,
            n_out=1,
            activation="relu",
            out_activation="linear",
        ),
        generator=torch.Generator().manual_seed(seed),
    )
    return net.double()


@pytest.mark.parametrize("hidden", [(5,), (6, 6), (7, 3, 4)])
@pytest.mark.parametrize("noisy", [False, True])
def test_gradient_equals_autograd(hidden: tuple[int, ...], noisy: bool) -> None:
    """Every parameter's gradient equals double backpropagation's (float64, 1e-12),
    with stopped members (weight 0), inactive ReLU units and label-noise weights."""
    e, b, p = 6, 17, 5
    gen = torch.Generator().manual_seed(len(hidden) + 10 * noisy)
    net = _critic(e, hidden, p, seed=3)
    real = torch.rand(e, b, p, generator=gen, dtype=torch.float64)
    fake = torch.rand(e, b, p, generator=gen, dtype=torch.float64) - 0.5
    mix = torch.rand(e, b, 1, generator=gen, dtype=torch.float64)
    inter = mix * real + (1 - mix) * fake
    w_real = torch.ones(e, b, 1, dtype=torch.float64)
    w_fake = torch.ones(e, b, 1, dtype=torch.float64)
    if noisy:
        w_real = w_real + torch.randn(e, b, 1, generator=gen, dtype=torch.float64)
        w_fake = w_fake + torch.randn(e, b, 1, generator=gen, dtype=torch.float64)
    weight = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0], dtype=torch.float64)
    loss = wgan_gp_loss(
        net,
        real=real,
        fake=fake,
        inter=inter,
        w_real=w_real,
        w_fake=w_fake,
        penalty=10.0,
    )
    expected = torch.autograd.grad((loss * weight).sum(), list(net.parameters()))
    wgan_gp_grad_(
        net,
        real=real,
        fake=fake,
        inter=inter,
        w_real=w_real,
        w_fake=w_fake,
        penalty=10.0,
        weight=weight,
    )
    for param, want in zip(net.parameters(), expected, strict=True):
        assert param.grad is not None
        torch.testing.assert_close(param.grad, want, rtol=1e-12, atol=1e-12)
    # Stopped members get exactly zero, and some ReLU units were inactive.
    for param in net.parameters():
        assert param.grad is not None
        assert torch.count_nonzero(param.grad[1]) == 0
    assert any(bool((torch.relu(layer(inter)) == 0).any()) for layer in net.layers[:1])


def test_zero_input_gradient_matches_torch_norm() -> None:
    """A member whose input gradient is zero (every unit inactive) takes torch's
    convention for the norm's gradient at 0 (zero), not a NaN."""
    e, b, p = 2, 4, 3
    net = _critic(e, (4,), p, seed=1)
    with torch.no_grad():
        net.layers[0].bias[0].fill_(-100.0)  # member 0: every unit inactive
    x = torch.rand(e, b, p, dtype=torch.float64)
    ones = torch.ones(e, b, 1, dtype=torch.float64)
    weight = torch.ones(e, dtype=torch.float64)
    loss = wgan_gp_loss(
        net, real=x, fake=x.flip(1), inter=x, w_real=ones, w_fake=ones, penalty=1.0
    )
    expected = torch.autograd.grad(loss.sum(), list(net.parameters()))
    wgan_gp_grad_(
        net,
        real=x,
        fake=x.flip(1),
        inter=x,
        w_real=ones,
        w_fake=ones,
        penalty=1.0,
        weight=weight,
    )
    for param, want in zip(net.parameters(), expected, strict=True):
        assert param.grad is not None and bool(torch.isfinite(param.grad).all())
        torch.testing.assert_close(param.grad, want, rtol=1e-12, atol=1e-12)


def test_only_plain_relu_critics_qualify() -> None:
    gen = torch.Generator().manual_seed(0)
    assert is_relu_critic(
        BatchedMLP(
            2,
            MLPSpec(
                n_in=3,
                hidden=(4, 4),
                n_out=1,
                activation="relu",
                out_activation="linear",
            ),
            generator=gen,
        )
    )
    for spec in (
        MLPSpec(
            n_in=3, hidden=(4,), n_out=1, activation="tanh", out_activation="linear"
        ),
        MLPSpec(
            n_in=3,
            hidden=(4,),
            n_out=1,
            activation="relu",
            out_activation="linear",
            layer_norm=True,
        ),
        MLPSpec(
            n_in=3, hidden=(4,), n_out=1, activation="relu", out_activation="sigmoid"
        ),
    ):
        assert not is_relu_critic(BatchedMLP(2, spec, generator=gen))
