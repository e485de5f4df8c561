"""The root seed's child streams, named in one place.

Every random draw of an audit comes from one root seed (``AuditConfig.seed``).
:class:`Streams` hands out its children by name; nothing else in the package spawns
from the root seed with a literal index. The indices are fixed forever (a stored
audit resumes with the same streams), and because :meth:`dpaudit.rng.Rngs.spawn` is
idempotent a child does not depend on how many siblings were asked for.

========== ===== ==============================================================
name       index what it feeds
========== ===== ==============================================================
rounds     0     one child per round: the round's fit and sample streams
plan       1     the membership bits and the train/validation/test split
attacks    2     one child per attack (queries, classifiers)
trace      3     retired (an extra training-trace fit; the trace now comes from
                 a round of the game); kept so that no index is ever reused
public     4     the audit's public stream in ``fixed_public`` mode (fit, sample)
selection  5     target selection (``--target auto``): its pool's bits and models;
                 public seed selection (``--public-seed auto``): its pools
candidates 6     the public streams of candidates 1, 2, ... of ``--public-seed``
                 (candidate 0 is ``public``)
one_run    7     the one-run game (:mod:`dpaudit.audit.games.one_run`): its canaries'
                 inclusion bits, its fits' streams, its tie-breaks
========== ===== ==============================================================

The selection stream is disjoint from the rounds', plan's and attacks' streams, so
no round that picked the target also enters the final estimate (docs/soundness.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from dpaudit.rng import Rngs

#: Child index of each named stream of the root seed (never renumber).
STREAM_INDEX: Final[dict[str, int]] = {
    "rounds": 0,
    "plan": 1,
    "attacks": 2,
    "trace": 3,
    "public": 4,
    "selection": 5,
    "candidates": 6,
    "one_run": 7,
}


@dataclass(frozen=True, slots=True)
class Streams:
    """The named child streams of one root seed.

    >>> s = Streams(0)
    >>> s.rounds(3)[2].spawn_key, s.plan().spawn_key, s.public_fit().spawn_key
    ((0, 2), (1,), (4, 0))
    """

    root_seed: int

    def _child(self, name: str) -> Rngs:
        return Rngs.from_seed(self.root_seed).spawn(len(STREAM_INDEX))[
            STREAM_INDEX[name]
        ]

    def rounds(self, n: int) -> list[Rngs]:
        """One stream per round (round ``i``: child ``i`` of ``rounds``)."""
        return self._child("rounds").spawn(n)

    @staticmethod
    def fit_and_sample(round_rng: Rngs) -> tuple[Rngs, Rngs]:
        """A round's two streams: ``(fit, sample)``."""
        fit, sample = round_rng.spawn(2)
        return fit, sample

    def plan(self) -> Rngs:
        """The bits and the split of the game."""
        return self._child("plan")

    def attacks(self, n: int) -> list[Rngs]:
        """One stream per attack (indexed by the attack's position in the registry)."""
        return self._child("attacks").spawn(n)

    def public_fit(self) -> Rngs:
        """The public stream every round's ``fit`` gets in ``fixed_public`` mode."""
        return self._child("public").spawn(2)[0]

    def public_sample(self) -> Rngs:
        """The public stream every round's ``sample`` gets in ``fixed_public`` mode."""
        return self._child("public").spawn(2)[1]

    def public_candidate(self, index: int) -> tuple[Rngs, Rngs]:
        """The ``(fit, sample)`` public streams of candidate ``index`` of
        ``--public-seed``: candidate 0 is :meth:`public_fit`, :meth:`public_sample`
        (the default audit's); candidate ``j >= 1`` is child ``j - 1`` of
        ``candidates`` (independent of how many candidates were compared)."""
        if index == 0:
            return self.public_fit(), self.public_sample()
        fit, sample = self._child("candidates").spawn(index)[index - 1].spawn(2)
        return fit, sample

    def public_selection(self) -> tuple[Rngs, Rngs]:
        """``--public-seed auto``'s ``(pool, attacks)`` streams: children 3 and 4 of
        :meth:`selection` (target selection takes children 0 to 2)."""
        pool, attacks = self.selection().spawn(5)[3:]
        return pool, attacks

    def one_run(self) -> Rngs:
        """The one-run game's stream (:mod:`dpaudit.audit.games.one_run.plan`)."""
        return self._child("one_run")

    def selection(self) -> Rngs:
        """Target selection's stream (disjoint from every stream of the final game)."""
        return self._child("selection")
