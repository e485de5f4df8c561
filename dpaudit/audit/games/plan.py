"""The distinguishing game's plan: rounds, membership bits, seeds and the split.

Soundness rules (docs/soundness.md) enforced here:

1. Every round has a membership bit ``b`` (1: train on ``D ∪ {target}``, 0: on ``D``)
   and its own random stream spawned from one root seed. Bits are a random balanced
   assignment (exactly ``rounds`` rounds per world), drawn from the root seed.
4. Rounds are split, per world, into attack-training, threshold-selection
   (validation) and test rounds; the three sets are disjoint by construction, and
   :meth:`GamePlan.indices` is the only way the analysis reads them.

A sequential plan (``looks``, :mod:`dpaudit.audit.games.looks`) is nested blocks: block
``k`` holds ``looks[k] - looks[k - 1]`` rounds per world, balanced and split in the
plan's proportions on its own, and occupies the plan's indices ``2 * looks[k - 1]`` to
``2 * looks[k] - 1``; :meth:`GamePlan.at_look` is the game of the first ``k`` blocks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.games.streams import Streams
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs

Split = Literal["train", "validation", "test"]
SPLITS: tuple[Split, ...] = ("train", "validation", "test")
SPLIT_CODES: dict[Split, int] = {"train": 0, "validation": 1, "test": 2}


def empty_split(rounds: int, split: tuple[float, float, float]) -> bool:
    """Whether ``rounds`` rounds per world leave a split that ``split`` asks for
    empty (a zero train fraction asks for no training rounds: attacks that fit
    nothing, dpaudit.audit.config.split).

    >>> empty_split(5, (0.4, 0.2, 0.4)), empty_split(2, (0.4, 0.2, 0.4))
    (False, True)
    >>> empty_split(3, (0.0, 0.2, 0.8))
    False
    """
    return any(
        n < 1 for n, f in zip(split_sizes(rounds, split), split, strict=True) if f > 0
    )


def split_sizes(rounds: int, split: tuple[float, float, float]) -> tuple[int, int, int]:
    """Rounds of each split (train, validation, test) among ``rounds`` rounds of one
    world: the plan's rounding (test takes the remainder).

    >>> split_sizes(1000, (0.4, 0.2, 0.4)), split_sizes(5, (0.4, 0.2, 0.4))
    ((400, 200, 400), (2, 1, 2))
    """
    n_train = round(split[0] * rounds)
    n_val = round(split[1] * rounds)
    return n_train, n_val, rounds - n_train - n_val


@dataclass(frozen=True, kw_only=True, slots=True)
class GamePlan:
    """The rounds of one audit.

    Attributes:
        bits: membership bit of each round, shape ``[2 * rounds]``.
        splits: split code of each round (0 train, 1 validation, 2 test).
        root_seed: the root seed; its named children are :class:`Streams`.
        looks: a sequential plan's rounds per world at each look (cumulative; the
            last is the planned size); empty for a plan analysed once.
    """

    bits: NDArray[np.int64]
    splits: NDArray[np.int64]
    root_seed: int
    looks: tuple[int, ...] = ()

    @classmethod
    def create(
        cls,
        *,
        rounds: int,
        split: tuple[float, float, float] = (0.4, 0.2, 0.4),
        seed: int,
        looks: tuple[int, ...] = (),
    ) -> GamePlan:
        """A plan of ``rounds`` rounds per world (``2 * rounds`` in all).

        Args:
            rounds: rounds per world (the study: 1,000, split 400/200/400).
            split: fractions of each world's rounds for train, validation, test.
            seed: the root seed.
            looks: for a sequential audit, the rounds per world at each look
                (:func:`dpaudit.audit.games.looks.plan_looks`; increasing, the last equal
                to ``rounds``): the plan is built as nested blocks, each balanced
                and split on its own, drawn one after the other from the plan
                stream. Empty (the default): the plan of an audit analysed once.
        """
        if not (isinstance(rounds, int) and rounds >= 5):
            raise InvalidParameterError(
                f"`rounds` must be an integer >= 5. Got {rounds!r}."
            )
        if (
            len(split) != 3
            or split[0] < 0
            or min(split[1:]) <= 0
            or abs(sum(split) - 1) > 1e-9
        ):
            raise InvalidParameterError(
                "`split` must be three fractions summing to 1, validation and test "
                f"positive (train 0: attacks that fit nothing). Got {split!r}."
            )
        if looks:
            return cls._nested(looks, rounds=rounds, split=split, seed=seed)
        plan_rng = Streams(seed).plan().numpy
        n_train, n_val, n_test = split_sizes(rounds, split)
        if empty_split(rounds, split):
            raise InvalidParameterError(
                f"`rounds` = {rounds} leaves an empty split with {split!r}; use more rounds."
            )
        world_splits = np.array(
            [0] * n_train + [1] * n_val + [2] * n_test, dtype=np.int64
        )
        bits = np.array([0] * rounds + [1] * rounds, dtype=np.int64)
        splits = np.concatenate([world_splits, world_splits])
        order = plan_rng.permutation(2 * rounds)
        return cls(bits=bits[order], splits=splits[order], root_seed=int(seed))

    @classmethod
    def _nested(
        cls,
        looks: tuple[int, ...],
        *,
        rounds: int,
        split: tuple[float, float, float],
        seed: int,
    ) -> GamePlan:
        if looks[-1] != rounds or any(b <= a for a, b in zip((0, *looks), looks)):
            raise InvalidParameterError(
                f"`looks` must increase to `rounds` = {rounds}. Got {looks!r}."
            )
        plan_rng = Streams(seed).plan().numpy
        bits: list[NDArray[np.int64]] = []
        splits: list[NDArray[np.int64]] = []
        for before, after in zip((0, *looks), looks):
            m = after - before
            n_train, n_val, n_test = split_sizes(m, split)
            if empty_split(m, split):
                raise InvalidParameterError(
                    f"`looks` {looks!r}: a block of {m} rounds per world leaves an "
                    f"empty split with {split!r} (plan_looks merges such looks)."
                )
            world = np.array([0] * n_train + [1] * n_val + [2] * n_test, dtype=np.int64)
            # Each block is drawn after the ones before it from the one plan stream:
            # a balanced, split game of its own, independent of the others' order.
            order = plan_rng.permutation(2 * m)
            bits.append(np.array([0] * m + [1] * m, dtype=np.int64)[order])
            splits.append(np.concatenate([world, world])[order])
        return cls(
            bits=np.concatenate(bits),
            splits=np.concatenate(splits),
            root_seed=int(seed),
            looks=tuple(int(x) for x in looks),
        )

    def at_look(self, look: int) -> GamePlan:
        """The game of looks ``0 .. look`` (0-based): the first
        ``2 * looks[look]`` rounds, a balanced, split game of their own."""
        n = 2 * self.looks[look]
        return GamePlan(
            bits=self.bits[:n],
            splits=self.splits[:n],
            root_seed=self.root_seed,
            looks=self.looks[: look + 1],
        )

    @property
    def n_rounds(self) -> int:
        return int(self.bits.shape[0])

    def round_rngs(self) -> list[Rngs]:
        """One independent stream per round, spawned from the root seed."""
        return Streams(self.root_seed).rounds(self.n_rounds)

    def attack_rngs(self, n: int) -> list[Rngs]:
        """Streams for the attacks (queries, classifiers), disjoint from the rounds'."""
        return Streams(self.root_seed).attacks(n)

    def indices(self, split: Split) -> NDArray[np.int64]:
        """Round indices of one split (both worlds)."""
        return np.flatnonzero(self.splits == SPLIT_CODES[split])

    def world_sizes(self, split: Split) -> tuple[int, int]:
        """(non-members, members) in a split."""
        idx = self.indices(split)
        members = int(self.bits[idx].sum())
        return len(idx) - members, members
