"""The single-discriminator path (``single_discriminator``: original, turing): a
WGAN-GP critic on all rows, with no teachers, no student and no vote."""

from __future__ import annotations

import torch
from torch import Tensor

from dpaudit.generators.nets import train_step
from dpaudit.generators.pate_gan.claim import non_private_event
from dpaudit.generators.pate_gan.state import TrainerState


def critic_iteration(s: TrainerState) -> None:
    """WGAN-GP critic steps of the single discriminator (``k`` per iteration)."""
    cfg, b, m, k = s.cfg, s.cfg.batch_size, s.m, s.k
    penalty = float(k) if cfg.gradient_penalty == "k" else float(cfg.gradient_penalty)
    # The original code runs as many critic steps per iteration as it has
    # (nominal) teachers; these are sequential optimiser steps, not teachers.
    # The critic trains on all rows and the generator on the critic: no mechanism.
    s.record(non_private_event("single_discriminator"))
    for _ in range(k):
        real, idx = s.sample_all_rows(b)
        # The one discriminator is reported as every "teacher" (it sees all rows).
        s.mark_seen(idx.repeat_interleave(k, dim=0), s.active.repeat_interleave(k))
        with torch.no_grad():
            fake = s.generator(s.latent(b))
        w_real = torch.ones(m, b, 1, device=s.device)
        w_fake = torch.ones(m, b, 1, device=s.device)
        if cfg.gaussian_label_noise:
            # Gaussian noise on the critic's own real/fake labels (+1/-1 weights): the
            # implementation's privacy noise, from the privacy stream.
            s.record(non_private_event("gaussian_label_noise"))
            w_real = w_real + s.sigma * s.privacy.randn((b, 1))
            w_fake = w_fake + s.sigma * s.privacy.randn((b, 1))
        mix = s.public.rand((b, 1))

        def loss(real: Tensor = real, fake: Tensor = fake, mix: Tensor = mix,
                 w_real: Tensor = w_real, w_fake: Tensor = w_fake) -> Tensor:
            inter = (mix * real + (1 - mix) * fake).requires_grad_(True)
            out = s.critic(inter, logits=True)
            (grad,) = torch.autograd.grad(out.sum(), inter, create_graph=True)
            gp = ((grad.norm(dim=2) - 1.0) ** 2).mean(dim=1)
            d_real = (s.critic(real, logits=True) * w_real).mean(dim=(1, 2))
            d_fake = (s.critic(fake, logits=True) * w_fake).mean(dim=(1, 2))
            total: Tensor = d_fake - d_real + penalty * gp
            return total

        train_step(s.critic_step, loss, s.active)
