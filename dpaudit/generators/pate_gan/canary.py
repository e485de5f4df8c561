"""Canary teachers: the adversary's teachers of the transcript game (``--teachers
canary``).

PATE-GAN's privacy argument never looks inside a teacher: each record lands in one
teacher's data (the partition, public randomness), a teacher's vote is *some* function
of its own data, and the noisy vote bounds what one teacher's vote can change
(docs/soundness.md, "Canary teachers"). The claim therefore holds for every teacher
training procedure, including one the adversary writes. The canary teacher is the one
that makes the target's presence as visible as a single teacher can: it votes "real"
on every query exactly when the target is among the rows it has trained on since it
was (re)created, and "fake" otherwise. Everything else runs as implemented: the
partition and the rows each teacher draws from it (so ``shared_sampling`` or
``partition_last_only`` let the target reach several teachers), the noisy vote and its
noise, the accountant and its stopping, the student's use of the answers
(``skip_unaccounted_queries``). Teacher training itself is skipped: a canary teacher's
vote does not depend on its weights.

"Trained on the target" means: a teacher that persists across iterations (the
reference's networks, trained step by step) has trained on it from the first step
whose rows included it; a teacher refitted from scratch every iteration (the
logistic-regression variants) only in an iteration whose fit included it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from numpy.typing import NDArray
from torch import Tensor

from dpaudit.errors import InvalidParameterError


def canary_mask(
    datasets: list[pd.DataFrame], canary: pd.DataFrame, *, n_max: int
) -> NDArray[np.bool_]:
    """``[M, n_max]``: where each table's rows equal the canary record (every
    column; padding is False).

    >>> d = pd.DataFrame({"a": [0, 1, 0], "b": [0.5, 1.0, 0.5]})
    >>> canary_mask([d], d.iloc[[1]], n_max=4).tolist()
    [[False, True, False, False]]
    """
    if len(canary) != 1:
        raise InvalidParameterError(
            f"`canary` must be one row (the target record). Got {len(canary)} rows."
        )
    out = np.zeros((len(datasets), n_max), dtype=np.bool_)
    seen: dict[int, np.ndarray] = {}
    for i, frame in enumerate(datasets):
        if id(frame) not in seen:
            missing = [c for c in canary.columns if c not in frame.columns]
            if missing:
                raise InvalidParameterError(
                    f"`canary` has columns the data lack: {missing}; pass the "
                    "target record of the same table."
                )
            row = canary.iloc[0]
            equal = np.ones(len(frame), dtype=np.bool_)
            for col in canary.columns:
                equal &= (frame[col] == row[col]).to_numpy(dtype=np.bool_)
            seen[id(frame)] = equal
        out[i, : len(frame)] = seen[id(frame)]
    return out


class CanaryTeachers:
    """Which teachers of ``M`` models have trained on the canary (internal).

    Args:
        mask: ``[M, N]`` rows equal to the canary (:func:`canary_mask`).
        k: teachers per model.
        device: the trainer's device.
    """

    def __init__(
        self, mask: NDArray[np.bool_], *, k: int, device: torch.device
    ) -> None:
        self.k = k
        self.rows = torch.as_tensor(mask, dtype=torch.bool, device=device)
        m = self.rows.shape[0]
        self.rows_t = self.rows.repeat_interleave(k, dim=0)  # [M*k, N]
        self.seen = torch.zeros(m * k, dtype=torch.bool, device=device)

    def reset(self) -> None:
        """Teachers re-created from scratch: none has trained on anything yet."""
        self.seen.zero_()

    def mark(self, idx: Tensor, active_t: Tensor) -> None:
        """The rows ``idx[M*k, n]`` trained on by the active teachers ``[M*k]``."""
        hit = torch.gather(self.rows_t, 1, idx).any(dim=1)
        self.seen |= hit & active_t

    def votes(self, batch: int) -> Tensor:
        """``n1[M, B]``: teachers voting "real", the same for every query of a step."""
        n1 = self.seen.view(-1, self.k).sum(dim=1)
        return n1[:, None].expand(-1, batch).contiguous()


@dataclass(frozen=True, kw_only=True, slots=True)
class CanaryPrivacy:
    """The exact privacy of a canary transcript: what any test of it can reach.

    Under canary teachers a query's clean votes do not depend on the generated rows,
    so the transcript's law in each world is a product of Bernoullis known in closed
    form (:func:`~dpaudit.generators.pate_gan.transcript.log_probability`).

    Attributes:
        queries: answered queries.
        differing: queries whose clean votes differ between the worlds.
        epsilon: the transcript's epsilon at ``delta`` in the larger of its two
            directions (with the target over without, and without over with: adding
            or removing a record). ``method`` says how: ``enumeration`` (the joint
            law of the counts of "real" answers per pair of clean votes, a product
            of binomials, enumerated but for tails of mass below ``delta * 1e-6``,
            which is added to delta: exact up to that mass) when its grid has at
            most :data:`MAX_CELLS` cells, else ``pld`` (dp-accounting's privacy
            loss distribution of the Bernoulli pairs with ``symmetric=False``,
            composed: pessimistic, an upper bound that the rounding of every
            query's loss can raise by up to ``queries x discretization``).
        delta: the delta of ``epsilon``.
        mu: the central-limit GDP parameter ``sqrt(sum (p - q)^2 / (r (1 - r)))``
            (``r = (p + q) / 2``): the mu of the Gaussian trade-off the transcript
            approaches when every query's difference is small (Dong, Roth and Su
            2022, Thm 3.5); a description, cross-checked against ``epsilon``.
    """

    queries: int
    differing: int
    epsilon: float
    delta: float
    mu: float
    method: str = "enumeration"


#: The largest grid of counts :func:`canary_privacy` enumerates exactly.
MAX_CELLS = 4_000_000


def _enumerated_epsilon(
    blocks: list[tuple[float, float, float, float, int]], delta: float
) -> float | None:
    """epsilon(delta), the larger direction, of independent blocks of ``c`` equal
    Bernoulli pairs ``(log p, log(1 - p), log q, log(1 - q), c)`` (with the target
    ``p``, without ``q``), by enumerating the joint law of the blocks' counts of
    "real" answers; ``None`` when the grid exceeds :data:`MAX_CELLS`."""
    from scipy import stats
    from scipy.optimize import brentq

    cells = 1
    loss = np.zeros(1)
    weights = [np.ones(1), np.ones(1)]
    dropped = np.zeros(2)
    # Each block's tails are dropped while their mass stays below ``tol`` in both
    # worlds (the mass dropped is added to delta: an upper bound, by at most
    # delta * 1e-6).
    tol = delta * 1e-6 / (2 * len(blocks))
    for lp1, lp0, lq1, lq0, c in blocks:
        full = np.arange(c + 1)
        pmf = [stats.binom.pmf(full, c, math.exp(r)) for r in (lp1, lq1)]
        left = np.maximum(*[np.cumsum(m) for m in pmf])
        right = np.maximum(*[np.cumsum(m[::-1])[::-1] for m in pmf])
        low = int(np.searchsorted(left, tol, side="right"))
        high = int(np.flatnonzero(right > tol)[-1])
        cells *= high - low + 1
        if cells > MAX_CELLS:
            return None
        j = full[low : high + 1]
        block = [m[low : high + 1] for m in pmf]
        dropped += [float(m[:low].sum() + m[high + 1 :].sum()) for m in pmf]
        loss = (loss[:, None] + (j * (lp1 - lq1) + (c - j) * (lp0 - lq0))).ravel()
        weights = [np.outer(w, b).ravel() for w, b in zip(weights, block)]
    keep = (weights[0] > 0) | (weights[1] > 0)
    w_with, w_without, loss = weights[0][keep], weights[1][keep], loss[keep]

    def excess(e: float) -> float:
        # delta(e) in each direction: the hockey-stick divergences, + dropped mass.
        forward = np.maximum(w_with - math.exp(e) * w_without, 0.0).sum()
        reverse = np.maximum(w_without - math.exp(e) * w_with, 0.0).sum()
        return float(max(forward + dropped[0], reverse + dropped[1]) - delta)

    if excess(0.0) <= 0:
        return 0.0
    hi = max(1.0, float(np.abs(loss).max()) + 1.0)
    if excess(hi) > 0:  # mass of one world where the other's underflows: the PLD
        return None
    return float(brentq(excess, 0.0, hi, xtol=1e-9, rtol=1e-12))


def log_vote_probabilities(
    n1_with: int, n1_without: int, *, k: int, beta: float, single_draw: bool
) -> tuple[tuple[float, float], tuple[float, float]]:
    """``((log P(real), log P(fake)) with the target, (the same) without)`` of one
    noisy vote whose clean "real" votes are ``n1_with`` and ``n1_without`` (each
    outcome's log in its stable form, :func:`.transcript.log_probability`).

    >>> (a, b), (c, d) = log_vote_probabilities(1, 0, k=2, beta=1.0, single_draw=False)
    >>> round(math.exp(a), 6), round(math.exp(c), 6)
    (0.5, 0.135335)
    """
    from dpaudit.generators.pate_gan.transcript import log_probability

    n1 = torch.tensor([n1_with, n1_with, n1_without, n1_without], device="cpu")
    labels = torch.tensor([True, False, True, False], device="cpu")
    lp = log_probability(n1, labels, k=k, beta=beta, single_draw=single_draw).tolist()
    return (lp[0], lp[1]), (lp[2], lp[3])


def canary_privacy(
    n1_with: NDArray[np.int64],
    n1_without: NDArray[np.int64],
    *,
    k: int,
    beta: float,
    single_draw: bool,
    delta: float,
    discretization: float = 1e-5,
) -> CanaryPrivacy:
    """The exact privacy of a transcript whose answered queries had clean "real"
    votes ``n1_with`` (world with the target) and ``n1_without`` (without).

    >>> p = canary_privacy(np.array([1] * 4), np.array([0] * 4), k=2, beta=1.0,
    ...                    single_draw=False, delta=1e-5)
    >>> (p.queries, p.differing, round(p.mu, 3), 1.2 < p.epsilon < 8.0)
    (4, 4, 1.567, True)
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    a = np.asarray(n1_with, dtype=np.int64).ravel()
    b = np.asarray(n1_without, dtype=np.int64).ravel()
    if a.shape != b.shape:
        raise InvalidParameterError(
            f"`n1_with` and `n1_without` must have equal lengths. Got {a.size} and "
            f"{b.size}."
        )
    pairs, counts = np.unique(np.stack([a, b], axis=1), axis=0, return_counts=True)
    blocks = []
    info = 0.0
    differing = 0
    for (x, y), c in zip(pairs.tolist(), counts.tolist()):
        if x == y:
            continue
        differing += int(c)
        lp, lq = log_vote_probabilities(x, y, k=k, beta=beta, single_draw=single_draw)
        p, q = math.exp(lp[0]), math.exp(lq[0])
        r = (p + q) / 2.0
        info += c * (p - q) ** 2 / max(r * (1.0 - r), 1e-300)
        blocks.append((lp[0], lp[1], lq[0], lq[1], int(c)))
    eps = _enumerated_epsilon(blocks, delta) if blocks else 0.0
    method = "enumeration"
    if eps is None:
        method, composed = "pld", None
        for lp1, lp0, lq1, lq0, c in blocks:
            # Both directions (symmetric=False): get_epsilon_for_delta is the larger.
            one = pld_lib.from_two_probability_mass_functions(
                {1: lp1, 0: lp0},
                {1: lq1, 0: lq0},
                value_discretization_interval=discretization,
                symmetric=False,
            ).self_compose(c)
            composed = one if composed is None else composed.compose(one)
        assert composed is not None
        eps = float(composed.get_epsilon_for_delta(delta))
    return CanaryPrivacy(
        queries=int(a.size),
        differing=differing,
        epsilon=max(eps, 0.0),
        delta=float(delta),
        mu=math.sqrt(info),
        method=method,
    )
