"""The teacher phase: ``k`` teachers per model on their own partitions, and the noisy
vote that labels the student's rows (the only privacy mechanism of PATE-GAN)."""

from __future__ import annotations

import torch
from torch import Tensor

from dpaudit.generators.nets import (
    gather_rows,
    relu_logit_bce_grad_,
    relu_logits,
    with_ones,
)
from dpaudit.generators.optim import train_step
from dpaudit.generators.pate_gan.claim import non_private_event
from dpaudit.generators.pate_gan.state import TrainerState


def fit_logistic_regression(
    x: Tensor,
    y: Tensor,
    *,
    c: float = 1.0,
    iterations: int = 30,
    tol: float = 1e-10,
    weight: Tensor | None = None,
) -> Tensor:
    """L2-regularised logistic regressions, one per member, by Newton's method.

    Minimises ``C * sum log-loss + ||w||^2 / 2`` (intercept not penalised), the
    objective of scikit-learn's ``LogisticRegression(C=c)``; the optimum is unique, so
    the result agrees with scikit-learn's. ``x[E, N, p]``, ``y[E, N]`` -> ``w[E, p+1]``
    (last entry the intercept).

    Newton's method converges quadratically here (measured on the ``updated`` variant
    over Cervical Cancer: steps 2, 1, 0.9, 0.4, 6e-2, 1e-3, 5e-7, 1e-13, then rounding
    noise of 1e-15), so a member stops once its largest step is below ``tol``; the
    others go on (a member's result never depends on its batch mates), and the loop
    ends when every member has stopped or after ``iterations`` steps. ``weight[E, N]``
    (0 or 1) leaves rows out of a member's fit (padding), as scikit-learn's
    ``sample_weight``.
    """
    e, _, p = x.shape
    xa = with_ones(x)
    w = torch.zeros(e, p + 1, dtype=x.dtype, device=x.device)
    penalty = torch.ones(p + 1, dtype=x.dtype, device=x.device)
    penalty[-1] = 1e-10
    eye = torch.diag(penalty)
    running = torch.ones(e, dtype=torch.bool, device=x.device)
    for _ in range(iterations):
        prob = torch.sigmoid(torch.bmm(xa, w.unsqueeze(-1)).squeeze(-1))
        resid = prob - y if weight is None else (prob - y) * weight
        grad = c * torch.bmm(xa.transpose(1, 2), resid.unsqueeze(-1)).squeeze(-1)
        grad = grad + penalty * w
        curv = prob * (1.0 - prob) if weight is None else prob * (1.0 - prob) * weight
        hess = c * torch.bmm(xa.transpose(1, 2), xa * curv.unsqueeze(-1)) + eye
        step = torch.linalg.solve(hess, grad.unsqueeze(-1)).squeeze(-1)
        w = torch.where(running[:, None], w - step, w)
        running &= step.abs().amax(dim=1) >= tol
        if not bool(running.any()):
            break
    return w


def teacher_iteration(s: TrainerState) -> None:
    """``n_T`` steps of every teacher on real rows of its partition vs generated rows."""
    cfg, m, k, b, dev = s.cfg, s.m, s.k, s.cfg.batch_size, s.device
    active_t = s.active.repeat_interleave(k)
    if s.canary is not None:
        _canary_rows(s, active_t)
        return
    if cfg.lr_teachers_refit and cfg.teacher_rows == "partition":
        # updated: each teacher refits on every row of its partition once, plus as
        # many generated rows (pate_gan.py: X_mb = temp_x[idx[:partition_data_no]]).
        _partition_lr_teachers(s)
        return
    if cfg.lr_teachers_refit:
        # Logistic-regression teachers re-created and refitted from scratch every
        # iteration on a batch of real plus generated rows.
        real, idx, nonempty = s.sample_teacher_rows(b)
        s.mark_seen(idx, active_t & nonempty)
        with torch.no_grad():
            fake = s.generator(s.latent(b)).repeat_interleave(k, dim=0)
        x = torch.cat([real, fake], dim=1).to(torch.float64)
        y = torch.cat(
            [torch.ones(m * k, b, device=dev), torch.zeros(m * k, b, device=dev)], dim=1
        )
        # A teacher without rows uses none: its real rows become zeros labelled fake.
        w = torch.cat(
            [
                nonempty[:, None].expand(-1, b).to(x.dtype),
                torch.ones(m * k, b, dtype=x.dtype, device=dev),
            ],
            dim=1,
        )
        s.lr_weights = fit_logistic_regression(x * w[..., None], y.to(x) * w)
        return
    steps = cfg.teacher_steps
    # The generator is fixed during the teacher steps: the generated batches of all
    # steps come from one forward pass, each step's real rows from one draw.
    with torch.no_grad():
        fakes = s.generator(s.latent(steps * b))  # [M, steps * b, p]
        fakes1 = with_ones(fakes) if s.fused_teachers else fakes
    rows, nonempty_mk = s.teacher_row_indices(steps * b)  # [M, k, steps * b]
    nonempty = nonempty_mk.reshape(m * k)
    s.mark_seen(rows.reshape(m * k, steps * b), active_t & nonempty)
    real_weight = (active_t & nonempty).to(fakes.dtype)
    for step in range(steps):
        part = slice(step * b, (step + 1) * b)
        fake = fakes[:, part]  # shared by the k teachers of a model
        idx = rows[:, :, part].reshape(m, k * b)
        y_real: Tensor | float = 1.0
        y_fake: Tensor | float = 0.0
        if cfg.gaussian_label_noise:
            # Privacy noise (the implementation's claim rests on it): privacy stream.
            s.record(non_private_event("gaussian_label_noise"))
            # Thresholded at 0.5, as the original code does: binary noisy labels.
            noisy_real = 1.0 + s.sigma * s.privacy.randn((k, 1, b)).view(m * k, 1, b)
            noisy_fake = s.sigma * s.privacy.randn((k, 1, b)).view(m * k, 1, b)
            y_real = (noisy_real > 0.5).to(noisy_real.dtype)
            y_fake = (noisy_fake > 0.5).to(noisy_fake.dtype)
        if s.fused_teachers:
            real1 = gather_rows(s.data1, idx).view(m * k, b, s.p + 1)
            relu_logit_bce_grad_(
                s.teachers,
                [(real1, 1, y_real), (fakes1[:, part], k, y_fake)],
                active_t.to(fake.dtype),
                batch_weights=[real_weight, None],
            )
            s.teacher_step.step(active_t)
            continue
        real = gather_rows(s.batch.data, idx).view(m * k, b, s.p)

        def loss(
            real: Tensor = real,
            fake: Tensor = fake,
            y_real: Tensor | float = y_real,
            y_fake: Tensor | float = y_fake,
        ) -> Tensor:
            bce = torch.nn.functional.binary_cross_entropy_with_logits
            out_r = s.teachers(real, logits=True).transpose(1, 2)  # [M*k, 1, b]
            out_f = s.teachers.forward_shared(fake, k, logits=True).transpose(1, 2)
            target_r = torch.as_tensor(y_real, dtype=out_r.dtype, device=out_r.device)
            target_f = torch.as_tensor(y_fake, dtype=out_f.dtype, device=out_f.device)
            lr_ = bce(out_r, target_r.expand_as(out_r), reduction="none")
            lf_ = bce(out_f, target_f.expand_as(out_f), reduction="none")
            return lr_.mean(dim=(1, 2)) * (real_weight > 0) + lf_.mean(dim=(1, 2))

        train_step(s.teacher_step, loss, active_t)


def _canary_rows(s: TrainerState, active_t: Tensor) -> None:
    """Canary teachers (:mod:`.canary`): the rows each teacher would train on this
    iteration, drawn from the public stream exactly as the teachers' own path draws
    them, marked as trained on; no teacher is trained (a canary's vote ignores its
    weights). Refitted teachers start afresh every iteration."""
    cfg, m, k, b = s.cfg, s.m, s.k, s.cfg.batch_size
    assert s.canary is not None
    if cfg.lr_teachers_refit:
        s.canary.reset()
    if cfg.lr_teachers_refit and cfg.teacher_rows == "partition":
        width = max(int(s.size.max()), 1)
        pos = torch.arange(width, device=s.device)
        inside = pos[None, None, :] < s.size[..., None]
        at = (s.start[..., None] + pos).clamp_(max=s.batch.data.shape[1] - 1)
        rows = torch.gather(s.perm, 1, at.reshape(m, k * width)).view(m, k, width)
        rows = torch.where(inside, rows, rows[..., :1])
        s.mark_seen(rows.reshape(m * k, width), active_t & (s.size > 0).reshape(m * k))
        s.latent(width)  # the public draws of the fit's generated rows
        return
    if cfg.lr_teachers_refit:
        _, idx, nonempty = s.sample_teacher_rows(b)
        s.mark_seen(idx, active_t & nonempty)
        s.latent(b)
        return
    steps = cfg.teacher_steps
    s.latent(steps * b)
    rows, nonempty_mk = s.teacher_row_indices(steps * b)
    s.mark_seen(rows.reshape(m * k, steps * b), active_t & nonempty_mk.reshape(m * k))
    if cfg.gaussian_label_noise:
        # The defect's path runs in the implementation whatever the teachers are.
        s.record(non_private_event("gaussian_label_noise"))


def _partition_lr_teachers(s: TrainerState) -> None:
    """Logistic-regression teachers refitted on their whole partitions: teacher ``t``
    of a model on its ``size[t]`` rows (each once) and ``size[t]`` generated rows;
    padding (up to the largest partition of the batch) has weight 0."""
    m, k, dev = s.m, s.k, s.device
    width = max(int(s.size.max()), 1)
    pos = torch.arange(width, device=dev)
    inside = pos[None, None, :] < s.size[..., None]  # [M, k, width]
    at = (s.start[..., None] + pos).clamp_(max=s.batch.data.shape[1] - 1)
    rows = torch.gather(s.perm, 1, at.reshape(m, k * width)).view(m, k, width)
    active_t = s.active.repeat_interleave(k)
    s.mark_seen(
        torch.where(inside, rows, rows[..., :1]).reshape(m * k, width),
        active_t & (s.size > 0).reshape(m * k),
    )
    real = gather_rows(s.batch.data, rows.reshape(m, k * width)).view(m * k, width, s.p)
    with torch.no_grad():
        fake = s.generator(s.latent(width)).repeat_interleave(k, dim=0)
    x = torch.cat([real, fake], dim=1).to(torch.float64)
    y = torch.cat(
        [torch.ones(m * k, width, device=dev), torch.zeros(m * k, width, device=dev)],
        dim=1,
    ).to(x)
    keep = inside.reshape(m * k, width).to(x.dtype)
    s.lr_weights = fit_logistic_regression(x, y, weight=torch.cat([keep, keep], dim=1))


def votes(s: TrainerState, fake: Tensor, fake1: Tensor | None = None) -> Tensor:
    """Number of teachers voting "real" for each generated row: [M, B]. ``fake1``:
    ``with_ones(fake)``, when the caller has it."""
    k = s.k
    if s.canary is not None:
        return s.canary.votes(int(fake.shape[1]))
    with torch.no_grad():
        if s.cfg.lr_teachers_refit:
            x = fake.repeat_interleave(k, dim=0)
            xa = with_ones(x).to(torch.float64)
            logit = torch.bmm(xa, s.lr_weights.unsqueeze(-1)).squeeze(-1)
        elif s.fused_teachers:
            logit = relu_logits(
                s.teachers, with_ones(fake) if fake1 is None else fake1, k
            )[0]
        else:
            logit = s.teachers.forward_shared(fake, k, logits=True)
    real = (logit > 0).reshape(s.m, k, -1)
    return real.sum(dim=1)


def noisy_labels(s: TrainerState, n1: Tensor) -> Tensor:
    """The noisy vote (report-noisy-max, ``Lap(1/lambda)`` on both counts, from the
    privacy stream): 1 where the noisy "real" count wins."""
    cfg, k = s.cfg, s.k
    if s.replay is not None:
        # A replay: the answers are the transcript's (no noise is drawn).
        return s.replay.forced(s.m, int(n1.shape[1]))
    scale = cfg.lam if cfg.laplace_scale_inverted else 1.0 / cfg.lam
    # laplace_scale_inverted: Lap(lambda) where the accountant assumes Lap(1/lambda).
    shape = tuple(n1.shape[1:])
    if cfg.single_noise_vote:
        # One Laplace draw on the "real" count, compared with k/2.
        noise = s.privacy.laplace(shape, scale=scale, dtype=torch.float64)
        return (n1.to(noise.dtype) + noise > k / 2.0).to(torch.float32)
    n0 = k - n1
    noise1 = s.privacy.laplace(shape, scale=scale, dtype=torch.float64)
    noise0 = s.privacy.laplace(shape, scale=scale, dtype=torch.float64)
    return (n1 + noise1 > n0 + noise0).to(torch.float32)


#: Rows x teachers evaluated at once by :func:`teacher_losses` (bounds its memory).
LOSS_CHUNK = 2**20


def teacher_losses(s: TrainerState) -> tuple[list[float], list[float]]:
    """Each teacher's BCE on real rows of its own partition vs all other rows.

    Every teacher is evaluated on every row (the trace's comparison), in chunks of
    rows so that at most about :data:`LOSS_CHUNK` rows x teachers are held at once
    (not ``k`` copies of the table: quadratic in the rows). A table within one
    chunk gives exactly the former single pass."""
    m, k, n_max = s.m, s.k, s.batch.data.shape[1]
    chunk = max(1, LOSS_CHUNK // max(1, m * k))
    ranks = torch.argsort(s.perm, dim=1)[:, None, :]  # position of each row
    index = torch.arange(n_max, device=s.device)[None, :]
    valid_all = (index < s.batch.n_rows[:, None])[:, None, :]
    zero = torch.zeros(m * k, device=s.device)
    sum_own, sum_other = zero.clone(), zero.clone()
    n_own = torch.zeros(m * k, dtype=torch.long, device=s.device)
    n_other = n_own.clone()
    for lo in range(0, n_max, chunk):
        part = slice(lo, min(lo + chunk, n_max))
        width = part.stop - part.start
        data = s.batch.data[:, part].repeat_interleave(k, dim=0)
        with torch.no_grad():
            logit = s.teachers(data, logits=True).squeeze(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logit, torch.ones_like(logit), reduction="none"
        )
        r = ranks[..., part]
        own = (r >= s.start[..., None]) & (r < (s.start + s.size)[..., None])
        own = own.reshape(m * k, width)
        valid_t = valid_all[..., part].expand(-1, k, -1).reshape(m * k, width)
        own_rows = own & valid_t
        other_rows = ~own & valid_t
        sum_own += (loss * own_rows).sum(1)
        sum_other += (loss * other_rows).sum(1)
        n_own += own_rows.sum(1)
        n_other += other_rows.sum(1)
    l_own = sum_own / n_own.clamp(min=1)
    l_other = sum_other / n_other.clamp(min=1)
    return l_own.cpu().tolist(), l_other.cpu().tolist()
