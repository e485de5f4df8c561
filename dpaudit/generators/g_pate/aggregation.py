"""DPGradAgg (Long et al. 2021, Alg. 1) and the teachers' per-record directions.

DPGradAgg:

1. project each teacher's direction with a fresh Gaussian matrix ``R`` (``p x d``,
   entries ``N(0, 1/p)``, ``p`` = ``projection_dim``) drawn for each record (public
   randomness: the privacy proof holds for every value of ``R``);
2. clip each coordinate to ``[-c, c]`` and discretise it into ``B`` bins of width
   ``2c/B``: each teacher votes one bin per coordinate;
3. per coordinate, Confident-GNMax (Papernot et al. 2018): answer only if
   ``max_j n_j + N(0, sigma1^2) >= T`` (``T = threshold * k``), then take
   ``argmax_j n_j + N(0, sigma2^2)`` (the privacy noise, the only randomness the
   guarantee rests on);
4. back-project the winning bins' midpoints with ``R^T`` (0 where not answered).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F


@dataclass(frozen=True, slots=True)
class Aggregate:
    """What DPGradAgg returns for a batch (leading axes ``[M, B]``: models, records).

    Attributes:
        gradient: the private direction per record, ``[M, B, d]``.
        answered: whether each query (record, coordinate) was answered, ``[M, B, p]``.
        counts: the clean vote histograms, ``[M, B, p, bins]`` (the ledger's input).
        winners: the noisy-argmax bin of each query, ``[M, B, p]``.
    """

    gradient: Tensor
    answered: Tensor
    counts: Tensor
    winners: Tensor


def dp_grad_agg(
    teacher_gradients: Tensor,
    projection: Tensor,
    *,
    clip: float,
    bins: int,
    threshold: float,
    sigma1: float,
    sigma2: float,
    threshold_noise: Tensor,
    vote_noise: Tensor,
) -> Aggregate:
    """G-PATE's DPGradAgg (Long et al. 2021, Alg. 1) for ``M`` models at once.

    Args:
        teacher_gradients: each teacher's direction per record, ``[M, k, B, d]``.
        projection: one matrix per record, ``[M, B, p, d]`` (entries ``N(0, 1/p)``).
        clip: ``c``; projected coordinates are clipped to ``[-c, c]``.
        bins: ``B`` bins of width ``2c/B`` over ``[-c, c]``.
        threshold: ``T``, the vote count the noisy top count must reach.
        sigma1, sigma2: Confident-GNMax noise scales.
        threshold_noise: standard normals ``[M, B, p]`` (scaled by ``sigma1``).
        vote_noise: standard normals ``[M, B, p, bins]`` (scaled by ``sigma2``).

    Returns:
        The aggregate; ``gradient = R^T v`` with ``v`` the winning bins' midpoints
        (0 where the query was not answered).
    """
    m, k, b, _ = teacher_gradients.shape
    p = projection.shape[2]
    projected = torch.einsum("mbpd,mkbd->mkbp", projection, teacher_gradients)
    width = 2.0 * clip / bins
    votes = torch.floor((projected.clamp(-clip, clip) + clip) / width).long()
    votes = votes.clamp_(0, bins - 1).reshape(m, k, b * p).transpose(1, 2)
    counts = torch.zeros(m, b * p, bins, dtype=projected.dtype, device=projected.device)
    counts.scatter_add_(2, votes, torch.ones_like(votes, dtype=projected.dtype))
    counts = counts.reshape(m, b, p, bins)
    return aggregate_counts(
        counts,
        projection,
        clip=clip,
        threshold=threshold,
        sigma1=sigma1,
        sigma2=sigma2,
        threshold_noise=threshold_noise,
        vote_noise=vote_noise,
    )


def aggregate_counts(
    counts: Tensor,
    projection: Tensor,
    *,
    clip: float,
    threshold: float,
    sigma1: float,
    sigma2: float,
    threshold_noise: Tensor,
    vote_noise: Tensor,
) -> Aggregate:
    """Steps 3 and 4 of DPGradAgg from the clean vote histograms ``counts[M, B, p,
    bins]``: Confident-GNMax per coordinate, then the back-projected direction.
    (Canary teachers, :mod:`.transcript`, enter here with crafted counts.)"""
    top = counts.amax(dim=-1)
    answered = top + sigma1 * threshold_noise >= threshold
    winners = torch.argmax(counts + sigma2 * vote_noise, dim=-1)
    return back_project(counts, projection, answered, winners, clip=clip)


def back_project(
    counts: Tensor,
    projection: Tensor,
    answered: Tensor,
    winners: Tensor,
    *,
    clip: float,
) -> Aggregate:
    """Step 4 of DPGradAgg: the winning bins' midpoints (0 where not answered)
    back-projected with ``R^T``. (A replay enters here with the transcript's
    answers forced, :mod:`.transcript`.)"""
    bins = counts.shape[-1]
    width = 2.0 * clip / bins
    midpoints = -clip + (winners.to(counts.dtype) + 0.5) * width
    answer = torch.where(answered, midpoints, torch.zeros_like(midpoints))
    gradient = torch.einsum("mbpd,mbp->mbd", projection, answer)
    return Aggregate(
        gradient=gradient, answered=answered, counts=counts, winners=winners
    )


def teacher_input_gradients(
    teachers: nn.Module, x: Tensor, cond: Tensor, *, num_teachers: int
) -> Tensor:
    """Every teacher's improving direction ``-dL/dx`` for every generated record,
    in one backward pass.

    ``x[M, B, d]`` (model ``m``'s generated batch) is replicated to the ``M * k``
    teacher members; ``L`` is the generator's non-saturating loss
    ``softplus(-logit)`` averaged over the batch, as in G-PATE. A record influences
    only its own teacher outputs (no batch statistics), so the gradient of the
    summed losses with respect to the replicated batch holds every per-teacher,
    per-record gradient.

    Returns:
        ``[M, k, B, d]``.
    """
    m, b, d = x.shape
    with torch.enable_grad():
        x_rep = x.detach().repeat_interleave(num_teachers, dim=0).requires_grad_(True)
        cond_rep = cond.repeat_interleave(num_teachers, dim=0)
        logits = teachers(x_rep, cond_rep)
        loss = F.softplus(-logits).sum() / b
        (grad,) = torch.autograd.grad(loss, x_rep)
    return (-grad).reshape(m, num_teachers, b, d)
