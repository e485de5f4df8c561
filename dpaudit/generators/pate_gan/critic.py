"""The single-discriminator path (``single_discriminator``: original, turing): a
WGAN-GP critic on all rows, with no teachers, no student and no vote.

The critic's gradient is written out (:func:`wgan_gp_grad_`) instead of taken by
double backpropagation: for a ReLU critic the gradient penalty's gradient has a closed
form (ReLU's second derivative is zero wherever it exists). Both do about the same
matmuls; the written-out form skips autograd's graph of a gradient of a gradient:
``original`` on Cervical Cancer went from 405 and 461 to 534 and 558
model-iterations/s (128 models, 1 thread, runs alternating with the autograd version:
``benchmarks/train_throughput.py --variant original --models 128``). Tests compare it
with autograd in float64.
"""

from __future__ import annotations

import torch
from torch import Tensor

from dpaudit.generators.nets import BatchedLinear, BatchedMLP
from dpaudit.generators.optim import train_step
from dpaudit.generators.pate_gan.claim import non_private_event
from dpaudit.generators.pate_gan.state import TrainerState

_relu_grad = torch.ops.aten.threshold_backward  # grad where the ReLU output is > 0


def is_relu_critic(net: BatchedMLP) -> bool:
    """Whether ``net`` is a ReLU MLP with one linear output unit and nothing else
    (no layer norm, residual or dropout): the critic :func:`wgan_gp_grad_` handles."""
    spec = net.spec
    return (
        len(spec.hidden) >= 1
        and spec.n_out == 1
        and spec.activation == "relu"
        and spec.out_activation == "linear"
        and not spec.layer_norm
        and not spec.residual
        and spec.dropout == 0
    )


def _layers(net: BatchedMLP) -> list[BatchedLinear]:
    layers = [layer for layer in net.layers if isinstance(layer, BatchedLinear)]
    assert len(layers) == len(net.layers)
    return layers


def _forward(layers: list[BatchedLinear], x: Tensor) -> list[Tensor]:
    """Every hidden layer's ReLU output on ``x[E, B, n_in]``."""
    out = []
    h = x
    for layer in layers:
        h = torch.relu_(torch.baddbmm(layer.bias, h, layer.weight))
        out.append(h)
    return out


@torch.no_grad()
def wgan_gp_grad_(
    net: BatchedMLP,
    *,
    real: Tensor,
    fake: Tensor,
    inter: Tensor,
    w_real: Tensor,
    w_fake: Tensor,
    penalty: float,
    weight: Tensor,
) -> None:
    """Sets the ``.grad`` of a :func:`is_relu_critic` ensemble's parameters to the
    gradient of ``sum_e weight[e] * L_e`` with the WGAN-GP critic loss

        ``L = mean_b D(fake) w_fake - mean_b D(real) w_real
        + penalty * mean_b (||grad_x D(inter_b)|| - 1)^2``,

    the gradient autograd takes by double backpropagation (tests compare them).

    With ``m_l`` the ReLU masks of the hidden layers at ``inter``, ``W_l`` the hidden
    weights and ``w`` the output weight, the input gradient is ``g = a_1 W_1^T`` with
    ``a_L = m_L * w^T`` and ``a_l = (a_{l+1} W_{l+1}^T) * m_l``. The masks are
    piecewise constant, so the penalty's gradient flows only through the weights in
    these products (never the biases): with ``u = dL/dg = penalty * 2 (|g| - 1) g /
    (|g| B)`` (0 where ``g = 0``, as torch's norm gives), ``dW_1 = u^T a_1``, then
    down the layers ``r_l = (da_l) * m_l``, ``dW_{l+1} = r_l^T a_{l+1}``,
    ``da_{l+1} = r_l W_{l+1}``, and ``dw = sum_b da_L * m_L``. The Wasserstein terms
    are ordinary backpropagation of ``dD = -w_real / B`` (real rows), ``w_fake / B``
    (generated rows).

    Args:
        real, fake, inter: ``[E, B, n_in]`` rows: real, generated, interpolated.
        w_real, w_fake: ``[E, B, 1]`` weights of the critic's outputs on them.
        penalty: the gradient penalty's coefficient.
        weight: ``[E]``, each member's weight in the sum (0 for stopped members).
    """
    layers = _layers(net)
    hidden, last = layers[:-1], layers[-1]
    e = net.members
    scale = weight.to(real.dtype).view(e, 1, 1)
    # The Wasserstein terms, real and generated rows in one pass.
    b_real, b_fake = real.shape[1], fake.shape[1]
    x = torch.cat([real, fake], dim=1)
    acts = [x, *_forward(hidden, x)]
    dout = torch.cat(
        [w_real.expand(e, b_real, 1) / -b_real, w_fake.expand(e, b_fake, 1) / b_fake],
        dim=1,
    ).mul_(scale)
    grads: dict[int, Tensor] = {}
    grads[id(last.weight)] = torch.bmm(acts[-1].transpose(1, 2), dout)
    grads[id(last.bias)] = dout.sum(dim=1, keepdim=True)
    delta = _relu_grad(dout * last.weight.transpose(1, 2), acts[-1], 0.0)
    for i in range(len(hidden) - 1, -1, -1):
        layer = hidden[i]
        grads[id(layer.weight)] = torch.bmm(acts[i].transpose(1, 2), delta)
        grads[id(layer.bias)] = delta.sum(dim=1, keepdim=True)
        if i > 0:
            delta = _relu_grad(
                torch.bmm(delta, layer.weight.transpose(1, 2)), acts[i], 0.0
            )
    # The gradient penalty at the interpolated rows.
    rows = inter.shape[1]
    hs = _forward(hidden, inter)
    a = [_relu_grad(last.weight.transpose(1, 2).expand(e, rows, -1), hs[-1], 0.0)]
    for i in range(len(hidden) - 1, 0, -1):  # a_i from a_{i+1}, W_{i+1} = hidden[i]
        a.insert(
            0,
            _relu_grad(
                torch.bmm(a[0], hidden[i].weight.transpose(1, 2)), hs[i - 1], 0.0
            ),
        )
    g = torch.bmm(a[0], hidden[0].weight.transpose(1, 2))  # [E, B, n_in]
    norm = g.norm(dim=2, keepdim=True)
    coef = torch.where(
        norm > 0, (norm - 1.0) * (2.0 * penalty / rows) / norm, torch.zeros_like(norm)
    ).mul_(scale)
    u = g * coef
    grads[id(hidden[0].weight)].add_(torch.bmm(u.transpose(1, 2), a[0]))
    da = torch.bmm(u, hidden[0].weight)
    for i in range(1, len(hidden)):
        r = _relu_grad(da, hs[i - 1], 0.0)
        grads[id(hidden[i].weight)].add_(torch.bmm(r.transpose(1, 2), a[i]))
        da = torch.bmm(r, hidden[i].weight)
    grads[id(last.weight)].add_(_relu_grad(da, hs[-1], 0.0).sum(dim=1).unsqueeze(-1))
    for layer in layers:
        layer.weight.grad = grads[id(layer.weight)]
        layer.bias.grad = grads[id(layer.bias)]


def critic_iteration(s: TrainerState) -> None:
    """WGAN-GP critic steps of the single discriminator (``k`` per iteration)."""
    cfg, b, m, k = s.cfg, s.cfg.batch_size, s.m, s.k
    penalty = float(k) if cfg.gradient_penalty == "k" else float(cfg.gradient_penalty)
    # The original code runs as many critic steps per iteration as it has
    # (nominal) teachers; these are sequential optimiser steps, not teachers.
    # The critic trains on all rows and the generator on the critic: no mechanism.
    s.record(non_private_event("single_discriminator"))
    manual = is_relu_critic(s.critic)
    for _ in range(k):
        real, idx = s.sample_all_rows(b)
        # The one discriminator is reported as every "teacher" (it sees all rows).
        s.mark_seen(idx.repeat_interleave(k, dim=0), s.active.repeat_interleave(k))
        with torch.no_grad():
            fake = s.generator(s.latent(b))
        w_real = torch.ones(m, b, 1, device=s.device)
        w_fake = torch.ones(m, b, 1, device=s.device)
        if cfg.gaussian_label_noise:
            # Gaussian noise on the critic's own real/fake labels, thresholded at 0.5
            # (original PATE_GAN.py; reprosyn pate_gan.py): each row is then weighted
            # as real or as fake, and the loss mean((1 - M) D) - mean(M D) over the
            # 2b rows gives a real row M - 1/2 and a fake row 1/2 - M (a halved
            # Wasserstein term). The implementation's privacy noise: privacy stream.
            s.record(non_private_event("gaussian_label_noise"))
            m_real = (1.0 + s.sigma * s.privacy.randn((b, 1)) > 0.5).to(w_real.dtype)
            m_fake = (s.sigma * s.privacy.randn((b, 1)) > 0.5).to(w_fake.dtype)
            w_real = m_real - 0.5
            w_fake = 0.5 - m_fake
        mix = s.public.rand((b, 1))
        if manual:
            s.critic_step.optimizer.zero_grad(set_to_none=True)
            wgan_gp_grad_(
                s.critic,
                real=real,
                fake=fake,
                inter=mix * real + (1 - mix) * fake,
                w_real=w_real,
                w_fake=w_fake,
                penalty=penalty,
                weight=s.active.to(real.dtype),
            )
            s.critic_step.step(s.active)
            continue

        def loss(
            real: Tensor = real,
            fake: Tensor = fake,
            mix: Tensor = mix,
            w_real: Tensor = w_real,
            w_fake: Tensor = w_fake,
        ) -> Tensor:
            return wgan_gp_loss(
                s.critic,
                real=real,
                fake=fake,
                inter=mix * real + (1 - mix) * fake,
                w_real=w_real,
                w_fake=w_fake,
                penalty=penalty,
            )

        train_step(s.critic_step, loss, s.active)


def wgan_gp_loss(
    net: BatchedMLP,
    *,
    real: Tensor,
    fake: Tensor,
    inter: Tensor,
    w_real: Tensor,
    w_fake: Tensor,
    penalty: float,
) -> Tensor:
    """Each member's WGAN-GP critic loss (autograd; :func:`wgan_gp_grad_` writes its
    gradient out for ReLU critics)."""
    inter = inter.detach().requires_grad_(True)
    out = net(inter, logits=True)
    (grad,) = torch.autograd.grad(out.sum(), inter, create_graph=True)
    gp = ((grad.norm(dim=2) - 1.0) ** 2).mean(dim=1)
    d_real = (net(real, logits=True) * w_real).mean(dim=(1, 2))
    d_fake = (net(fake, logits=True) * w_fake).mean(dim=(1, 2))
    total: Tensor = d_fake - d_real + penalty * gp
    return total
