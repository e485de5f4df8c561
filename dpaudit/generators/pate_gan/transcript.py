"""PATE-GAN's transcript: every noisy teacher vote the student received, and its
replay in a neighbouring world.

The privacy mechanism of PATE-GAN is the noisy vote (:func:`.teachers.noisy_labels`):
for each generated row the student is trained on, ``n1`` of the ``k`` teachers vote
"real" and the student gets the label ``1[n1 + N1 > n0 + N0]``, ``N0, N1`` i.i.d.
``Lap(beta)`` (``beta = 1/lambda``; ``single_noise_vote``: ``1[n1 + N > k/2]``). The
claim composes these answers adaptively; everything else the run does (the student,
the generator, the release) is a function of the answers and of the public randomness,
so the sequence of answers, the *transcript*, is the strongest release the claim's
proof covers (docs/soundness.md, "The transcript release").

Under fixed public randomness the next queries depend on the data only through earlier
answers: given a transcript prefix, training in world ``D`` is deterministic. So an
adversary that knows both worlds replays training in each with the observed answers
forced, reads the clean votes ``n1`` each world would have had for every query, and
sums ``log P(answer | n1)``: the log-likelihood of the transcript in that world, exact
(:func:`log_probability`). Their difference is the Neyman-Pearson statistic.

A step whose use (the accountant's decision to answer it) differs between the
transcript and a world's replay cannot have happened in that world (with a
data-dependent accountant the stopping time depends on the data): that world's
likelihood is 0 (``contradicted``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor

from dpaudit.errors import InvalidParameterError
from dpaudit.generators.pate_gan.config import PateGanConfig


@dataclass(frozen=True, kw_only=True, slots=True)
class VoteTranscript:
    """The noisy votes of one PATE-GAN run, student step by student step.

    Args:
        labels: ``[S, B]`` the noisy answer (True: "real") of each of the ``B``
            generated rows of student step ``s``, as the vote produced it (before
            ``skip_unaccounted_queries`` relabels a batch).
        used: ``[S]`` whether step ``s``'s answers were acted upon (the model was
            still training and its accountant allowed the batch).
    """

    labels: NDArray[np.bool_]
    used: NDArray[np.bool_]

    def __post_init__(self) -> None:
        if self.labels.ndim != 2 or self.used.shape != (self.labels.shape[0],):
            raise InvalidParameterError(
                "`labels` must be [steps, batch] and `used` [steps]. Got "
                f"{self.labels.shape} and {self.used.shape}."
            )

    @property
    def queries(self) -> int:
        """The answered queries (rows of used steps)."""
        return int(self.used.sum()) * int(self.labels.shape[1])


def log_laplace_difference_cdf(x: Tensor, beta: float) -> Tensor:
    """``log P(N1 - N0 <= x)`` for i.i.d. ``N0, N1 ~ Lap(beta)``, stable for any x.

    ``P(N1 - N0 <= x) = 1 - exp(-x/beta) (1 + x/(2 beta)) / 2`` for ``x >= 0`` and
    ``exp(x/beta) (1 - x/(2 beta)) / 2`` for ``x < 0`` (the density of the difference
    is ``exp(-|x|/beta) (1 + |x|/beta) / (4 beta)``).

    >>> round(float(log_laplace_difference_cdf(torch.tensor(0.0), 1.0)), 6)
    -0.693147
    >>> round(math.exp(float(log_laplace_difference_cdf(torch.tensor(2.0), 1.0))), 6)
    0.864665
    """
    x = x.to(torch.float64)
    neg = torch.clamp(x, max=0.0)
    low = math.log(0.5) + neg / beta + torch.log1p(-neg / (2.0 * beta))
    pos = torch.clamp(x, min=0.0)
    high = torch.log1p(-0.5 * torch.exp(-pos / beta) * (1.0 + pos / (2.0 * beta)))
    return torch.where(x < 0, low, high)


def log_laplace_cdf(x: Tensor, beta: float) -> Tensor:
    """``log P(N <= x)`` for ``N ~ Lap(beta)``, stable for any x.

    >>> round(math.exp(float(log_laplace_cdf(torch.tensor(1.0), 1.0))), 6)
    0.81606
    """
    x = x.to(torch.float64)
    low = math.log(0.5) + torch.clamp(x, max=0.0) / beta
    high = torch.log1p(-0.5 * torch.exp(-torch.clamp(x, min=0.0) / beta))
    return torch.where(x < 0, low, high)


def log_probability(
    n1: Tensor, labels: Tensor, *, k: int, beta: float, single_draw: bool
) -> Tensor:
    """``log P(label | n1)`` of the noisy vote, elementwise.

    Two draws: ``label = 1[N1 - N0 > -(2 n1 - k)]``, so ``P(1) = F(2 n1 - k)`` and
    ``P(0) = F(-(2 n1 - k))`` with ``F`` the CDF of ``N1 - N0`` (symmetric). One draw
    (``single_noise_vote``): ``label = 1[N > k/2 - n1]``, ``P(1) = G(n1 - k/2)``,
    ``G`` the Laplace CDF.

    >>> n1 = torch.tensor([2, 2, 1])
    >>> lab = torch.tensor([True, False, True])
    >>> [round(v, 4) for v in log_probability(n1, lab, k=2, beta=1.0,
    ...                                        single_draw=False).tolist()]
    [-0.1454, -2.0, -0.6931]
    """
    sign = labels.to(torch.float64) * 2.0 - 1.0
    if single_draw:
        return log_laplace_cdf(sign * (n1.to(torch.float64) - k / 2.0), beta)
    return log_laplace_difference_cdf(sign * (2.0 * n1.to(torch.float64) - k), beta)


class Recorder:
    """Collects the noisy votes of ``M`` models during training (internal).

    ``keep_votes`` also keeps the clean votes ``n1`` (not part of the release: for
    tests that check a replay against the run it replays)."""

    def __init__(self, *, keep_votes: bool = False) -> None:
        self.labels: list[Tensor] = []
        self.used: list[Tensor] = []
        self.keep_votes = keep_votes
        self.votes: list[Tensor] = []

    def observe(self, labels: Tensor, used: Tensor, n1: Tensor) -> None:
        """Step ``s``: ``labels[M, B]``, ``used[M]`` and the clean votes ``n1[M, B]``."""
        self.labels.append(labels.detach().to("cpu", torch.bool))
        self.used.append(used.detach().to("cpu", torch.bool))
        if self.keep_votes:
            self.votes.append(n1.detach().to("cpu"))

    def transcripts(self) -> list[VoteTranscript]:
        """One transcript per model, trimmed after its last used step."""
        if not self.labels:
            return []
        labels = torch.stack(self.labels, dim=1).numpy()  # [M, S, B]
        used = torch.stack(self.used, dim=1).numpy()  # [M, S]
        out = []
        for m in range(labels.shape[0]):
            last = int(np.flatnonzero(used[m])[-1]) + 1 if used[m].any() else 0
            out.append(
                VoteTranscript(
                    labels=labels[m, :last].copy(), used=used[m, :last].copy()
                )
            )
        return out


class Replay:
    """Forces each model's noisy votes to a given transcript and accumulates the
    transcript's log-likelihood under the model's own clean votes (internal).

    Args:
        transcripts: one per model (model ``m`` replays ``transcripts[m]``).
        batch: ``B``, the student's batch.
        device: the trainer's device.
    """

    def __init__(
        self, transcripts: list[VoteTranscript], *, batch: int, device: torch.device
    ) -> None:
        for t in transcripts:
            if t.labels.shape[1] != batch:
                raise InvalidParameterError(
                    f"a transcript's batch must be the student's ({batch}). Got "
                    f"{t.labels.shape[1]}."
                )
        steps = max((len(t.used) for t in transcripts), default=0)
        labels = np.zeros((len(transcripts), steps, batch), dtype=np.bool_)
        used = np.zeros((len(transcripts), steps), dtype=np.bool_)
        for m, t in enumerate(transcripts):
            labels[m, : len(t.used)] = t.labels
            used[m, : len(t.used)] = t.used
        self.labels = torch.from_numpy(labels).to(device)
        self.used = torch.from_numpy(used).to(device)
        self.steps = steps
        self.step = 0
        m = len(transcripts)
        self.log_likelihood = torch.zeros(m, dtype=torch.float64, device=device)
        self.contradicted = torch.zeros(m, dtype=torch.bool, device=device)

    def forced(self, m: int, batch: int) -> Tensor:
        """The transcript's answers of the current step: ``[M, B]`` float32."""
        if self.step < self.steps:
            return self.labels[:, self.step].to(torch.float32)
        return torch.zeros(m, batch, dtype=torch.float32, device=self.labels.device)

    def observe(
        self, n1: Tensor, used: Tensor, *, k: int, beta: float, single_draw: bool
    ) -> None:
        """The model's clean votes ``n1[M, B]`` and its own use ``used[M]`` of the
        current step; then moves to the next step."""
        if self.step < self.steps:
            expected = self.used[:, self.step]
            labels = self.labels[:, self.step]
        else:
            expected = torch.zeros_like(used)
            labels = torch.zeros_like(n1, dtype=torch.bool)
        self.contradicted |= expected != used
        lp = log_probability(n1, labels, k=k, beta=beta, single_draw=single_draw)
        self.log_likelihood += lp.sum(dim=1) * (expected & used)
        self.step += 1

    def finish(self) -> None:
        """Steps of the transcripts the replay never reached contradict it (the
        replayed models all stopped before the transcript did)."""
        if self.step < self.steps:
            self.contradicted |= self.used[:, self.step :].any(dim=1)


def vote_noise(cfg: PateGanConfig) -> tuple[float, bool]:
    """``(beta, single_draw)`` of a config's vote: ``Lap(beta)`` noise (the same
    scale :func:`.teachers.noisy_labels` draws), and whether one draw is compared
    with ``k/2`` (``single_noise_vote``)."""
    beta = cfg.lam if cfg.laplace_scale_inverted else 1.0 / cfg.lam
    return beta, cfg.single_noise_vote
