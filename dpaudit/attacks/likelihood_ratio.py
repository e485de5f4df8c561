"""The likelihood-ratio attack on a transcript release (white-box, exact).

Under the transcript release (``--release transcript``, docs/soundness.md "The
transcript release") a round releases every noisy answer the generator's private
mechanism gave (PATE-GAN: each noisy teacher vote). The adversary knows both worlds
``D`` and ``D' = D ∪ {target}``, the code, and the fixed public randomness; it does not
know the privacy noise. Given the transcript so far, training in either world is
deterministic, so the adversary replays training in both worlds with every answer
forced to the observed one, reads each query's clean votes in ``D`` and in ``D'``, and
sums the log-probabilities of the observed answers (the generator's
``replay_log_likelihoods``, one tensor program for two worlds x the rounds of a
group). The score is

    log P(transcript | D') - log P(transcript | D),

the Neyman-Pearson statistic of the two simple hypotheses (Neyman and Pearson 1933):
no test of the same size on the same release has more power. It trains nothing; the
audit picks its threshold on validation rounds as for any threshold attack.

A transcript impossible in one world (its accountant would have answered a step the
transcript did not, or the reverse) has likelihood 0 there: the score is then
:data:`IMPOSSIBLE` towards the other world.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, Self

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpaudit.attacks.base import check_features
from dpaudit.attacks.names import LIKELIHOOD_RATIO as LIKELIHOOD_RATIO
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.rng import Rngs

#: The score of a transcript impossible in one world (finite, so the analysis's
#: thresholds and the store take it like any other score).
IMPOSSIBLE = 1e12


class Replayer(Protocol):
    """A generator that can replay its training given a transcript."""

    def replay_log_likelihoods(
        self,
        datasets: Sequence[pd.DataFrame],
        transcripts: Sequence[Any],
        *,
        domain: Domain,
        public_rngs: Sequence[Rngs],
        canary: pd.DataFrame | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]: ...


def log_likelihood_ratio(
    log_with: NDArray[np.float64],
    log_without: NDArray[np.float64],
    *,
    impossible_with: NDArray[np.bool_],
    impossible_without: NDArray[np.bool_],
) -> NDArray[np.float64]:
    """``log_with - log_without``, with an impossible world's likelihood 0.

    >>> log_likelihood_ratio(np.array([-1.0, -2.0, -3.0]), np.array([-2.0, -1.0, -3.0]),
    ...     impossible_with=np.array([False, True, True]),
    ...     impossible_without=np.array([False, False, True])).tolist()
    [1.0, -1000000000000.0, 0.0]
    """
    out = np.asarray(log_with, dtype=np.float64) - np.asarray(log_without)
    out = np.where(impossible_with & ~impossible_without, -IMPOSSIBLE, out)
    out = np.where(impossible_without & ~impossible_with, IMPOSSIBLE, out)
    return np.where(impossible_with & impossible_without, 0.0, out)


class LikelihoodRatioAttack:
    """The exact likelihood-ratio test of a transcript release.

    Args:
        generator: a fresh generator of the audit's configuration (it replays).
        domain: the public domain.
        without: ``D``.
        with_target: ``D ∪ {target}``.
        public_rng: the fixed public (fit) stream of the audit.
        canary: the target record when the teachers are canary teachers (the
            replay's teachers must be the run's); None: trained teachers.
        name: the registry name (default ``likelihood-ratio``).
    """

    trains_classifier: bool = False

    def __init__(
        self,
        *,
        generator: Replayer,
        domain: Domain,
        without: pd.DataFrame,
        with_target: pd.DataFrame,
        public_rng: Rngs,
        name: str = LIKELIHOOD_RATIO,
        canary: pd.DataFrame | None = None,
    ) -> None:
        self.name = name
        self.generator = generator
        self.domain = domain
        self.without = without
        self.with_target = with_target
        self.public_rng = public_rng
        self.canary = canary
        self.fitted_ = False

    @property
    def n_features(self) -> int:
        return 3

    @property
    def feature_names(self) -> list[str]:
        return ["log_likelihood_ratio", "log_likelihood_with", "log_likelihood_without"]

    def featurize(self, synthetic: Sequence[pd.DataFrame]) -> NDArray[np.float64]:
        """Refused: this attack reads transcripts (:meth:`featurize_transcripts`)."""
        raise InvalidParameterError(
            f"attack {self.name!r} needs the transcript release "
            "(--release transcript), not synthetic tables."
        )

    def featurize_transcripts(self, transcripts: Sequence[Any]) -> NDArray[np.float64]:
        """``[R, 3]``: the log-likelihood ratio and the two log-likelihoods of each
        round's transcript, replayed in both worlds as one batch of ``2 R`` runs."""
        r = len(transcripts)
        if r == 0:
            return np.zeros((0, self.n_features), dtype=np.float64)
        worlds = [d for _ in range(r) for d in (self.with_target, self.without)]
        forced = [t for t in transcripts for _ in range(2)]
        ll, impossible = self.generator.replay_log_likelihoods(
            worlds,
            forced,
            domain=self.domain,
            public_rngs=[self.public_rng] * (2 * r),
            canary=self.canary,
        )
        ll = np.asarray(ll, dtype=np.float64).reshape(r, 2)
        impossible = np.asarray(impossible, dtype=np.bool_).reshape(r, 2)
        ratio = log_likelihood_ratio(
            ll[:, 0],
            ll[:, 1],
            impossible_with=impossible[:, 0],
            impossible_without=impossible[:, 1],
        )
        ll = np.where(impossible, -IMPOSSIBLE, ll)
        return np.column_stack([ratio, ll[:, 0], ll[:, 1]])

    def fit(self, features: NDArray[Any], labels: NDArray[Any]) -> Self:
        """Nothing to learn (the statistic is exact); checks the width."""
        check_features(features, n_features=self.n_features)
        self.fitted_ = True
        return self

    def score(self, features: NDArray[Any]) -> NDArray[np.float64]:
        """The log-likelihood ratio (higher: more likely a member)."""
        if not self.fitted_:
            raise NotFittedError(
                f"attack {self.name!r} must be fitted before `score`; call `fit` first."
            )
        x = check_features(features, n_features=self.n_features)
        return np.asarray(x[:, 0], dtype=np.float64)
