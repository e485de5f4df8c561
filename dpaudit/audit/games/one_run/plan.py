"""The one-run game's plan: the secret inclusion bits, the fits' streams, the guess
counts, and how scores become guesses.

Soundness rules (docs/soundness.md, "The one-run game") enforced here:

1. Each canary is included independently with probability 1/2. The bits are drawn
   from the privacy side of the game's stream (child 0 of
   :meth:`~dpaudit.audit.games.streams.Streams.one_run`), which nothing else reads; the
   attack never sees them.
2. Every fit has its own canaries (canary ``j`` of fit ``f`` is canary ``f * m + j``
   of the audit) and its own streams: a canary reaches only its own fit.
3. The count rule's numbers of guesses (``guesses_in`` "in" and ``guesses_out``
   "out") are fixed by the configuration before any release exists; only which
   canaries receive them depends on the scores (:func:`guess`). The threshold rule,
   whose number depends on the release, pays for it with a union bound
   (:mod:`dpaudit.audit.games.one_run.rules`). Ties are broken by a public
   permutation (child 2), drawn independently of the bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.games.one_run.counts import GuessCounts
from dpaudit.audit.games.streams import Streams
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs

__all__ = ["Guesses", "OneRunPlan", "default_guesses", "guess"]


def default_guesses(total_canaries: int) -> int:
    """Guesses per side when neither counts nor a plan are given (a direct caller of
    :meth:`OneRunPlan.create`; the game plans them:
    :func:`~dpaudit.audit.games.one_run.counts.plan_counts`): a tenth of all
    canaries (at least one), so that ``2 * guesses <= total_canaries``.

    >>> default_guesses(1000), default_guesses(4)
    (100, 1)
    """
    return max(1, total_canaries // 10)


@dataclass(frozen=True, kw_only=True, slots=True)
class OneRunPlan:
    """The draws and counts of one one-run audit, fixed before anything is trained.

    Attributes:
        bits: inclusion bit of each canary, shape ``[fits, canaries]`` (1: included).
        guesses_in, guesses_out: the guesses "in" and "out" to be made.
        root_seed: the root seed.
        planned: the counts were planned from the configuration
            (:func:`~dpaudit.audit.games.one_run.counts.plan_counts`), not given.
        planning_mu: the planning Gaussian's mu (``None``: not planned).
    """

    bits: NDArray[np.int64]
    guesses_in: int
    guesses_out: int
    root_seed: int
    planned: bool = False
    planning_mu: float | None = None

    @classmethod
    def create(
        cls,
        *,
        fits: int,
        canaries: int,
        guesses: int | None,
        seed: int,
        guesses_out: int | None = None,
        counts: GuessCounts | None = None,
    ) -> OneRunPlan:
        """The plan of ``fits`` fits of ``canaries`` canaries each: ``guesses``
        "in" and ``guesses_out`` "out" (default as many); without ``guesses``, the
        ``counts`` planned from the configuration (the game's), else
        :func:`default_guesses`.

        Raises:
            InvalidParameterError: more guesses than canaries.
        """
        total = fits * canaries
        given = guesses is not None or counts is None
        if guesses is not None:
            n_in = int(guesses)
        elif counts is not None:
            n_in = counts.guesses_in
        else:
            n_in = default_guesses(total)
        if guesses_out is not None:
            n_out = int(guesses_out)
        elif guesses is None and counts is not None:
            n_out = counts.guesses_out
        else:
            n_out = n_in
        if n_in + n_out > total:
            raise InvalidParameterError(
                f"`guesses` + `guesses_out` must be at most {total} (the canaries of "
                f"all fits). Got {n_in} + {n_out}."
            )
        bits_rng = Streams(seed).one_run().spawn(3)[0].numpy
        bits = bits_rng.integers(0, 2, size=(fits, canaries), dtype=np.int64)
        planned = not given and counts is not None and counts.planned
        return cls(
            bits=bits,
            guesses_in=n_in,
            guesses_out=n_out,
            root_seed=int(seed),
            planned=planned,
            planning_mu=counts.planning_mu if planned and counts else None,
        )

    @property
    def fits(self) -> int:
        return int(self.bits.shape[0])

    @property
    def canaries_per_fit(self) -> int:
        return int(self.bits.shape[1])

    def fit_rngs(self) -> list[Rngs]:
        """One stream per fit (split into fit and sample streams by the trainer)."""
        return Streams(self.root_seed).one_run().spawn(3)[1].spawn(self.fits)

    def tie_break(self) -> NDArray[np.float64]:
        """A public uniform key per canary (independent of the bits) that orders
        canaries of equal score."""
        rng = Streams(self.root_seed).one_run().spawn(3)[2].numpy
        return rng.random(self.bits.size)


@dataclass(frozen=True, kw_only=True, slots=True)
class Guesses:
    """The guesses made from the scores and how many were right.

    Attributes:
        guess: per canary (flattened over fits): 1 "in", -1 "out", 0 abstain.
        correct_in, correct_out: correct "in" and "out" guesses.
    """

    guess: NDArray[np.int64]
    correct_in: int
    correct_out: int

    @property
    def correct(self) -> int:
        return self.correct_in + self.correct_out


def guess(
    scores: NDArray[np.float64],
    bits: NDArray[np.int64],
    *,
    guesses_in: int,
    guesses_out: int,
    tie_break: NDArray[np.float64],
) -> Guesses:
    """ "In" for the ``guesses_in`` highest scores, "out" for the ``guesses_out``
    lowest, abstain on the rest; then counted against the bits.

    The ranking uses the scores and the public ``tie_break`` only: the bits are read
    after the guesses are made, to count them.

    >>> g = guess(np.array([3.0, 1.0, 2.0, 0.0]), np.array([1, 0, 1, 1]),
    ...           guesses_in=1, guesses_out=1, tie_break=np.zeros(4))
    >>> g.guess.tolist(), g.correct_in, g.correct_out
    ([1, 0, 0, -1], 1, 0)
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    flat_bits = np.asarray(bits, dtype=np.int64).ravel()
    if scores.shape != flat_bits.shape or scores.shape != tie_break.shape:
        raise InvalidParameterError(
            f"`scores` must hold one score per canary ({flat_bits.size}). "
            f"Got {scores.size}."
        )
    if guesses_in + guesses_out > scores.size:
        raise InvalidParameterError(
            f"`guesses_in + guesses_out` must be at most {scores.size}. "
            f"Got {guesses_in + guesses_out}."
        )
    # NaN scores (nothing to score) rank lowest, as the least evidence of inclusion.
    key = np.where(np.isnan(scores), -np.inf, scores)
    order = np.lexsort((tie_break, key))  # ascending score, ties by the public key
    out = np.zeros(scores.size, dtype=np.int64)
    if guesses_in:
        out[order[-guesses_in:]] = 1
    out[order[:guesses_out]] = -1
    correct_in = int(np.sum((out == 1) & (flat_bits == 1)))
    correct_out = int(np.sum((out == -1) & (flat_bits == 0)))
    return Guesses(guess=out, correct_in=correct_in, correct_out=correct_out)
