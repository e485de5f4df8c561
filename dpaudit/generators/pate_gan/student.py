"""The student phase (trained on generated rows labelled by the noisy teacher vote,
charged to the moments accountant) and the generator phase."""

from __future__ import annotations

import torch
from torch import Tensor

from dpaudit.generators.nets import with_ones
from dpaudit.generators.optim import frozen, train_step
from dpaudit.generators.pate_gan.claim import non_private_event
from dpaudit.generators.pate_gan.state import TrainerState
from dpaudit.generators.pate_gan.teachers import noisy_labels, votes
from dpaudit.generators.pate_gan.transcript import vote_noise


def student_iteration(s: TrainerState, *, uses_accountant: bool) -> None:
    """``n_S`` student steps; each step's vote is charged before it is used."""
    cfg, b, k = s.cfg, s.cfg.batch_size, s.k
    steps = cfg.student_steps
    # The generator is fixed during the student steps: the steps' generated batches
    # come from one forward pass. (The votes stay per step: at hundreds of models
    # the teachers' activations on all steps' rows would exceed 32 MiB, which glibc
    # serves by mmap, page-faulting it in on every call: 2-3x slower.)
    with torch.no_grad():
        fakes = s.generator(s.latent(steps * b))
        fakes1 = with_ones(fakes) if s.fused_teachers else None
    for step in range(steps):
        part = slice(step * b, (step + 1) * b)
        fake = fakes[:, part]
        n1 = votes(s, fake, None if fakes1 is None else fakes1[:, part])
        labels = noisy_labels(s, n1)
        # The ledger's counts of each vote gap |n1 - n0| per model (integer counts:
        # a scatter-add instead of a [M, B, k + 1] one-hot).
        gap = (2 * n1 - k).abs()
        gaps = torch.zeros(s.m, k + 1, dtype=torch.int64, device=s.device).scatter_add_(
            1, gap, torch.ones_like(gap)
        )
        step_counts = gaps.to(torch.float64)
        use = s.active.clone()
        if uses_accountant and not cfg.budget_overshoot:
            # Stop before the budget would be exceeded: a batch whose charge would
            # cross epsilon is not used, and its model stops.
            within = s.epsilon(s.gap_counts + step_counts) <= cfg.epsilon
            s.active &= within
            use &= within
        # Every query whose answer is acted upon, charged or not (the reference).
        s.all_gap_counts += step_counts * use[:, None]
        if s.recorder is not None:
            s.recorder.observe(labels > 0.5, use, n1)
        if s.replay is not None:
            beta, single_draw = vote_noise(cfg)
            s.replay.observe(n1, use, k=k, beta=beta, single_draw=single_draw)
        charged = use
        if cfg.skip_unaccounted_queries:
            # A batch whose noisy labels say "real" for at least half its rows is
            # not charged and trains the student with every label "fake"
            # (synthcity plugin_pategan.py: `np.sum(Y_mb) >= len(X) / 2`).
            skipped = labels.mean(dim=1) >= 0.5
            labels = torch.where(skipped[:, None], torch.zeros_like(labels), labels)
            charged = use & ~skipped
        s.gap_counts += step_counts * charged[:, None]
        # No step is skipped for the whole batch (even when no model uses it): the
        # draws and the optimiser's step count of one model must not depend on its
        # batch mates.
        real = None
        if cfg.student_sees_real_data:
            s.record(non_private_event("student_sees_real_data"))
            real = s.sample_all_rows(b)[0]

        def loss(
            fake: Tensor = fake, labels: Tensor = labels, real: Tensor | None = real
        ) -> Tensor:
            bce = torch.nn.functional.binary_cross_entropy_with_logits
            out = s.student(fake, logits=True, generator=s.public).squeeze(-1)
            if cfg.student_loss == "wasserstein":
                # A critic: maximise mean(Y S) - mean((1 - Y) S) (updated).
                critic: Tensor = ((1.0 - 2.0 * labels) * out).mean(dim=1)
                return critic
            total = bce(out, labels, reduction="none").mean(dim=1)
            if real is not None:
                # The student also sees real rows, with no noise at all.
                out_r = s.student(real, logits=True, generator=s.public).squeeze(-1)
                total = total + bce(
                    out_r, torch.ones_like(out_r), reduction="none"
                ).mean(dim=1)
            return total

        train_step(s.student_step, loss, use)
        if cfg.student_clip is not None:
            s.student.clamp_(cfg.student_clip)


def generator_iteration(s: TrainerState) -> None:
    """The generator's steps against the student (or the single discriminator)."""
    cfg, b = s.cfg, s.cfg.batch_size
    for _ in range(cfg.generator_steps):
        z = s.latent(b)

        def loss(z: Tensor = z) -> Tensor:
            fake = s.generator(z)
            if cfg.single_discriminator:
                critic: Tensor = -s.critic(fake, logits=True).mean(dim=(1, 2))
                return critic
            out = s.student(fake, logits=True).squeeze(-1)
            if cfg.student_loss == "wasserstein":
                critic_g: Tensor = -out.mean(dim=1)
                return critic_g
            bce = torch.nn.functional.binary_cross_entropy_with_logits
            return bce(out, torch.ones_like(out), reduction="none").mean(dim=1)

        # Only the generator steps: the discriminator's parameter gradients are not
        # computed (the gradients reaching the generator are the same).
        with frozen(s.critic if cfg.single_discriminator else s.student):
            train_step(s.gen_step, loss, s.active)
