"""G-PATE's transcript: every answer Confident-GNMax gave, its exact likelihood, and
its replay in a neighbouring world; canary teachers.

The privacy mechanism of G-PATE is DPGradAgg's per-coordinate Confident-GNMax
(:mod:`.aggregation`): for every query (generated record x projected coordinate),
with clean vote counts ``n`` over ``bins`` bins, the query is answered iff
``max_j n_j + sigma1 N >= T``, and an answered query releases
``argmax_j n_j + sigma2 N_j`` (``N, N_j`` i.i.d. standard normals from the privacy
stream). The accountant (:mod:`.accounting`) composes exactly these answers, and it
stops training on the number of answered queries only (a function of released
answers; the ``unsanitised_data_dependent`` defect stops on the counts instead).
Everything else (the back-projected direction, the generator, the release) is a
function of the answers and of the public randomness, so the sequence of answers,
the *transcript* (:class:`AnswerTranscript`), is the strongest release the claim's
proof covers (docs/soundness.md, "The transcript release of G-PATE (canary
teachers)").

Given the clean counts ``c`` of a query, an answer has the exact probability
(:func:`log_answer_probability`)

* unanswered: ``Phi((T - top)/sigma1)``;
* answered with bin ``j``: ``Phi((top - T)/sigma1) * P(argmax = j | c, sigma2)``,

with ``top = max_j c_j``; ``P(argmax = j) = E_z[prod_{i != j} Phi((c_j - c_i)/sigma2 +
z)]`` (:func:`log_argmax_probability`, a quadrature over one dimension).

**Canary teachers** (``canary``: the target record). G-PATE's proof holds for
teachers that are *any* function of their own partition (and of public randomness
and released answers): the sensitivity it charges, one vote per histogram, only needs
each record to reach one teacher. So the adversary may replace the teachers by a
crafted function. The canary teacher votes, on every query, bin ``bins - 1`` if the
target record is in its partition (the rows :mod:`.partition` assigns it), else bin
0. "Trained on" is read as "in its partition" from the first iteration on: a
teacher's batches cycle through its partition, so its state is a function of the
whole partition, and the proof allows the teacher to depend on all of it at once;
this is the most distinguishing choice (the target's teacher differs from the first
query on). Everything else runs as implemented: partitioning, the noise, the
accountant and its stopping, the generator's training on the answers. Counts then
take two shapes, ``[k, 0, ..., 0]`` without the target and ``[k - h, 0, ..., h]``
with it (``h`` teachers hold a copy; 1 in the game), and the replay needs no
training (:func:`canary_counts`). A VIOLATION under canary teachers shows that the
implementation's privacy argument is broken; it does not by itself show that a
table the trained generator releases leaks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor

from dpaudit.errors import InvalidParameterError
from dpaudit.generators.g_pate.accounting import Spending
from dpaudit.generators.g_pate.config import GPateConfig

#: Quadrature step and half-width (in units of ``sigma2``) of
#: :func:`log_argmax_probability`: the trapezoidal rule on a uniform grid converges
#: geometrically for these smooth, Gaussian-tailed integrands; the grid is centred on
#: the integrand's mode, so tiny probabilities keep their relative accuracy.
QUAD_STEP = 0.02
QUAD_HALF_WIDTH = 12.0


@dataclass(frozen=True, kw_only=True, slots=True)
class AnswerTranscript:
    """Every Confident-GNMax answer of one G-PATE run, iteration by iteration.

    Args:
        answered: ``[S, B, p]`` whether query (record ``b``, coordinate ``p``) of
            iteration ``s`` was answered.
        winners: ``[S, B, p]`` the noisy-argmax bin of each answered query; -1 where
            the query was not answered (nothing is released there).
        used: ``[S]`` whether iteration ``s`` was committed (the model was still
            training and its accountant kept the batch).
    """

    answered: NDArray[np.bool_]
    winners: NDArray[np.int64]
    used: NDArray[np.bool_]

    def __post_init__(self) -> None:
        if (
            self.answered.ndim != 3
            or self.winners.shape != self.answered.shape
            or self.used.shape != (self.answered.shape[0],)
        ):
            raise InvalidParameterError(
                "`answered` and `winners` must be [iterations, batch, projection_dim] "
                f"and `used` [iterations]. Got {self.answered.shape}, "
                f"{self.winners.shape} and {self.used.shape}."
            )
        if bool((self.winners[~self.answered] != -1).any()):
            raise InvalidParameterError(
                "`winners` must be -1 exactly where a query was not answered."
            )

    @property
    def queries(self) -> int:
        """The queries of used iterations."""
        return int(self.used.sum()) * int(np.prod(self.answered.shape[1:]))


# ---------------------------------------------------------------- probabilities


def log_argmax_probability(counts: Tensor, winner: Tensor, sigma: float) -> Tensor:
    """``log P(argmax_i (c_i + sigma N_i) = j)`` for i.i.d. standard normals ``N_i``.

    ``P = E_z[prod_{i != j} Phi(d_i + z)]``, ``d_i = (c_j - c_i)/sigma``,
    ``z ~ N(0, 1)``, computed in log space by the trapezoidal rule on a uniform grid
    (step :data:`QUAD_STEP`, half-width :data:`QUAD_HALF_WIDTH` around the
    integrand's mode), batched in float64. The relative error is below ``1e-12``
    while ``|d_i| <= 30`` (tests compare the two-bin closed form, SciPy's adaptive
    quadrature and Monte Carlo).

    Args:
        counts: ``[N, bins]`` clean counts (any real values).
        winner: ``[N]`` the bin ``j`` of each row.
        sigma: the noise scale, > 0.

    Returns:
        ``[N]`` float64.

    >>> c = torch.tensor([[3.0, 1.0]])
    >>> p = math.exp(float(log_argmax_probability(c, torch.tensor([0]), 2.0)[0]))
    >>> round(p, 10) == round(0.5 * math.erfc(-(2.0 / 2.0) / 2.0), 10)
    True
    """
    if not sigma > 0:
        raise InvalidParameterError(f"`sigma` must be > 0. Got {sigma!r}.")
    c = counts.to(torch.float64)
    j = winner.to(torch.long).reshape(-1, 1)
    cj = c.gather(1, j)
    d = (cj - c) / sigma  # [N, bins]; d_j = 0 is excluded below
    others = torch.ones_like(d, dtype=torch.bool).scatter_(1, j, False)
    # The integrand's mode: maximise -z^2/2 + sum_i log Phi(d_i + z); a few Newton
    # steps from 0 (concave objective), clamped for safety.
    z0 = torch.zeros(c.shape[0], 1, dtype=torch.float64, device=c.device)
    for _ in range(50):
        x = d + z0
        lphi = torch.special.log_ndtr(x)
        # r = phi(x)/Phi(x), stably in logs.
        r = torch.exp(-0.5 * x * x - 0.5 * math.log(2 * math.pi) - lphi)
        r = torch.where(others, r, torch.zeros_like(r))
        grad = -z0 + r.sum(1, keepdim=True)
        hess = -1.0 - (r * (x + r)).sum(1, keepdim=True)
        z0 = (z0 - grad / hess).clamp(-1e3, 1e3)
    nodes = torch.arange(
        -QUAD_HALF_WIDTH,
        QUAD_HALF_WIDTH + QUAD_STEP / 2,
        QUAD_STEP,
        dtype=torch.float64,
        device=c.device,
    )
    out = torch.empty(c.shape[0], dtype=torch.float64, device=c.device)
    chunk = max(1, (1 << 22) // (nodes.numel() * c.shape[1]))
    for start in range(0, c.shape[0], chunk):
        sl = slice(start, start + chunk)
        z = z0[sl] + nodes[None, :]  # [n, G]
        terms = torch.special.log_ndtr(d[sl, :, None] + z[:, None, :])  # [n, bins, G]
        terms = torch.where(others[sl, :, None], terms, torch.zeros_like(terms))
        log_f = -0.5 * z * z - 0.5 * math.log(2 * math.pi) + terms.sum(1)
        out[sl] = torch.logsumexp(log_f, dim=1) + math.log(QUAD_STEP)
    return out


def log_answer_probability(
    counts: Tensor,
    answered: Tensor,
    winners: Tensor,
    *,
    threshold: float,
    sigma1: float,
    sigma2: float,
) -> Tensor:
    """``log P(answer | counts)`` of Confident-GNMax, elementwise over queries.

    Args:
        counts: ``[N, bins]`` clean counts.
        answered: ``[N]`` bool.
        winners: ``[N]`` the released bin (ignored where not answered).
        threshold: ``T``.
        sigma1, sigma2: the threshold and argmax noise scales.

    Returns:
        ``[N]`` float64: ``log Phi((T - top)/sigma1)`` where unanswered,
        ``log Phi((top - T)/sigma1) + log P(argmax = j)`` where answered. Rows that
        share ``(counts, answered, winner)`` are computed once.

    >>> c = torch.tensor([[2.0, 0.0], [2.0, 0.0]])
    >>> lp = log_answer_probability(c, torch.tensor([False, True]),
    ...     torch.tensor([-1, 0]), threshold=2.0, sigma1=1.0, sigma2=1.0)
    >>> [round(math.exp(v), 6) for v in lp.tolist()]
    [0.5, 0.460675]
    """
    c = counts.to(torch.float64)
    ans = answered.to(torch.bool)
    win = torch.where(ans, winners.to(torch.long), torch.zeros_like(winners.long()))
    key = torch.cat([c, ans[:, None].to(torch.float64), win[:, None].double()], 1)
    # NumPy's unique rows (torch.unique(dim=0) is slow on CPU).
    np_unique, np_inverse = np.unique(key.cpu().numpy(), axis=0, return_inverse=True)
    unique = torch.from_numpy(np_unique).to(c.device)
    inverse = torch.from_numpy(np_inverse.reshape(-1)).to(c.device)
    uc, ua, uw = unique[:, :-2], unique[:, -2].bool(), unique[:, -1].long()
    top = uc.amax(dim=1)
    gate = torch.special.log_ndtr(
        torch.where(ua, top - threshold, threshold - top) / sigma1
    )
    arg = torch.zeros_like(gate)
    if bool(ua.any()):
        arg[ua] = log_argmax_probability(uc[ua], uw[ua], sigma2)
    out: Tensor = (gate + arg)[inverse]
    return out


# ------------------------------------------------------------------ canaries


def canary_holders(
    teacher: NDArray[np.int64], is_target: NDArray[np.bool_], k: int
) -> NDArray[np.int64]:
    """How many of each teacher's rows are the target: ``[k]`` (the canary teacher
    ``t`` votes bin ``bins - 1`` iff entry ``t`` > 0).

    >>> canary_holders(np.array([0, 1, 1]), np.array([False, False, True]), 3).tolist()
    [0, 1, 0]
    """
    return np.bincount(teacher[is_target], minlength=k).astype(np.int64)


def canary_counts(holders: NDArray[np.int64], bins: int) -> NDArray[np.float64]:
    """The clean counts of every query under canary teachers, ``[bins]``: a teacher
    holding the target votes ``bins - 1``, every other one 0.

    >>> canary_counts(np.array([0, 1, 0]), 4).tolist()
    [2.0, 0.0, 0.0, 1.0]
    """
    out = np.zeros(bins, dtype=np.float64)
    h = int((holders > 0).sum())
    out[0] += holders.size - h
    out[bins - 1] += h
    return out


# ------------------------------------------------------------------ recording


class Recorder:
    """Collects the answers of ``M`` models during training (internal).

    ``keep_counts`` also keeps the clean counts (not part of the release: for tests
    that check a replay against the run it replays)."""

    def __init__(self, *, keep_counts: bool = False) -> None:
        self.answered: list[NDArray[np.bool_]] = []
        self.winners: list[NDArray[np.int64]] = []
        self.used: list[NDArray[np.bool_]] = []
        self.keep_counts = keep_counts
        self.counts: list[NDArray[np.float32]] = []

    def observe(
        self, answered: Tensor, winners: Tensor, used: NDArray[np.bool_], counts: Tensor
    ) -> None:
        """Iteration ``s``: ``answered[M, B, p]``, ``winners[M, B, p]``, ``used[M]``."""
        a = answered.detach().to("cpu", torch.bool).numpy()
        w = winners.detach().to("cpu", torch.int64).numpy()
        self.answered.append(a)
        self.winners.append(np.where(a, w, -1))
        self.used.append(np.asarray(used, dtype=np.bool_).copy())
        if self.keep_counts:
            self.counts.append(counts.detach().to("cpu").numpy())

    def transcripts(self) -> list[AnswerTranscript]:
        """One transcript per model, trimmed after its last used iteration."""
        if not self.answered:
            return []
        answered = np.stack(self.answered, axis=1)  # [M, S, B, p]
        winners = np.stack(self.winners, axis=1)
        used = np.stack(self.used, axis=1)  # [M, S]
        out = []
        for m in range(answered.shape[0]):
            last = int(np.flatnonzero(used[m])[-1]) + 1 if used[m].any() else 0
            out.append(
                AnswerTranscript(
                    answered=answered[m, :last].copy(),
                    winners=winners[m, :last].copy(),
                    used=used[m, :last].copy(),
                )
            )
        return out


# --------------------------------------------------------------------- replay


def stack_transcripts(
    transcripts: Sequence[AnswerTranscript], *, batch: int, projection_dim: int
) -> tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.bool_]]:
    """The transcripts padded to one length: ``answered[M, S, B, p]``,
    ``winners[M, S, B, p]`` (-1 where unanswered or padding) and ``used[M, S]``."""
    for t in transcripts:
        if t.answered.shape[1:] != (batch, projection_dim):
            raise InvalidParameterError(
                "a transcript's queries per iteration must be the configuration's "
                f"({batch} x {projection_dim}). Got {t.answered.shape[1:]}."
            )
    steps = max((len(t.used) for t in transcripts), default=0)
    m = len(transcripts)
    answered = np.zeros((m, steps, batch, projection_dim), dtype=np.bool_)
    winners = np.full((m, steps, batch, projection_dim), -1, dtype=np.int64)
    used = np.zeros((m, steps), dtype=np.bool_)
    for i, t in enumerate(transcripts):
        s = len(t.used)
        answered[i, :s], winners[i, :s], used[i, :s] = t.answered, t.winners, t.used
    return answered, winners, used


class Replay:
    """Forces each model's answers to a given transcript and accumulates the
    transcript's log-likelihood under the model's own clean counts (trained
    teachers; internal).

    Args:
        transcripts: one per model (model ``m`` replays ``transcripts[m]``).
        config: the configuration (queries per iteration, the noise scales).
        device: the trainer's device.
    """

    def __init__(
        self,
        transcripts: Sequence[AnswerTranscript],
        config: GPateConfig,
        device: torch.device,
    ) -> None:
        answered, winners, used = stack_transcripts(
            transcripts, batch=config.batch_size, projection_dim=config.projection_dim
        )
        self.config = config
        self.answered = torch.from_numpy(answered).to(device)
        self.winners = torch.from_numpy(winners).to(device)
        self.used = used
        self.steps = used.shape[1]
        self.step = 0
        m = len(transcripts)
        self.log_likelihood = np.zeros(m, dtype=np.float64)
        self.contradicted = np.zeros(m, dtype=np.bool_)

    def forced(self, like: Tensor) -> tuple[Tensor, Tensor]:
        """The current iteration's ``(answered, winners)``, each shaped as ``like``
        ``[M, B, p]`` (beyond the transcript: nothing answered)."""
        if self.step < self.steps:
            winners = self.winners[:, self.step]
            return self.answered[:, self.step], winners.clamp(min=0)
        zeros = torch.zeros_like(like, dtype=torch.long)
        return zeros.to(torch.bool), zeros

    def observe(
        self, counts: Tensor, answered: Tensor, winners: Tensor, used: NDArray[np.bool_]
    ) -> None:
        """The model's clean counts ``[M, B, p, bins]`` of the current iteration,
        the forced answers and the model's own use ``used[M]``; then moves on."""
        cfg = self.config
        m = counts.shape[0]
        expected = (
            self.used[:, self.step]
            if self.step < self.steps
            else np.zeros(m, dtype=np.bool_)
        )
        self.contradicted |= expected != used
        take = expected & used
        if take.any():
            pick = torch.from_numpy(take).to(counts.device)
            lp = log_answer_probability(
                counts[pick].reshape(-1, cfg.bins).to("cpu", torch.float64),
                answered[pick].reshape(-1).cpu(),
                winners[pick].reshape(-1).cpu(),
                threshold=cfg.threshold_count,
                sigma1=cfg.sigma1,
                sigma2=cfg.sigma2,
            )
            self.log_likelihood[take] += lp.reshape(int(take.sum()), -1).sum(1).numpy()
        self.step += 1

    def finish(self) -> None:
        """Iterations of the transcripts the replay never reached contradict it."""
        if self.step < self.steps:
            self.contradicted |= self.used[:, self.step :].any(axis=1)


def replay_usage(
    config: GPateConfig,
    answered: NDArray[np.bool_],
    counts: NDArray[np.float64] | None,
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which iterations each world's accountant would have committed given the
    transcripts' answers, and whether it would have gone on after them.

    Args:
        config: the (effective) configuration.
        answered: ``[M, S, B, p]`` the forced answers.
        counts: ``[M, bins]`` each model's clean counts (the same for every query;
            read only when the data-dependent bound is traced), or None.

    Returns:
        ``used[M, S]`` and ``continues[M]`` (the model would run iteration ``S``).
    """
    m, s = answered.shape[:2]
    spend = Spending(config, m)
    used = np.zeros((m, s), dtype=np.bool_)
    flat = answered.reshape(m, s, -1)
    per_query = None
    if config.traces_data_dependent:
        assert counts is not None
        per_query = np.broadcast_to(
            counts[:, None, :], (m, flat.shape[2], config.bins)
        ).astype(np.float32)
    for t in range(min(s, config.max_iterations)):
        if not spend.admit():
            break
        spend.charge(flat[:, t], per_query)
        used[:, t] = spend.active
        spend.commit()
    continues = np.zeros(m, dtype=np.bool_)
    if s < config.max_iterations:
        spend.admit()
        continues = spend.active.copy()
    return used, continues


def transcript_log_likelihoods(
    config: GPateConfig,
    answered: NDArray[np.bool_],
    winners: NDArray[np.int64],
    used: NDArray[np.bool_],
    counts: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``log P(transcript | counts)`` of ``M`` padded transcripts whose every query
    has the same clean counts ``counts[m]`` (canary teachers), as sufficient
    statistics: the unanswered queries and the answers per bin of used iterations.

    Returns:
        ``[M]`` float64.
    """
    m, _, _, _ = answered.shape
    bins = config.bins
    mask = used[:, :, None, None]
    unanswered = (~answered & mask).reshape(m, -1).sum(1)
    won = np.where(answered & mask, winners, bins)  # bins: not counted
    offset = (np.arange(m, dtype=np.int64) * (bins + 1))[:, None]
    per_bin = np.bincount(
        (won.reshape(m, -1) + offset).reshape(-1), minlength=m * (bins + 1)
    ).reshape(m, bins + 1)[:, :bins]
    # Every outcome's log-probability, once per distinct counts vector.
    shapes, which = np.unique(counts, axis=0, return_inverse=True)
    u = shapes.shape[0]
    c = torch.from_numpy(np.repeat(shapes, bins + 1, axis=0))
    ans = torch.tensor([True] * bins + [False], dtype=torch.bool, device="cpu").repeat(
        u
    )
    win = torch.tensor([*range(bins), -1], dtype=torch.long, device="cpu").repeat(u)
    lp = (
        log_answer_probability(
            c,
            ans,
            win,
            threshold=config.threshold_count,
            sigma1=config.sigma1,
            sigma2=config.sigma2,
        )
        .numpy()
        .reshape(u, bins + 1)[which.reshape(-1)]
    )
    stats = np.concatenate([per_bin, unanswered[:, None]], axis=1).astype(np.float64)
    # 0 * -inf (an impossible answer never given) counts as 0.
    terms = np.where(stats > 0, stats * lp, 0.0)
    out: NDArray[np.float64] = terms.sum(1)
    return out
