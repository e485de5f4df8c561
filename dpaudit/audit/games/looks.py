"""Sequential looks: when a ``--sequential`` audit analyses, and at which level.

A sequential audit plans ``rounds`` rounds per world as nested blocks
(:meth:`dpaudit.audit.games.plan.GamePlan.create`, ``looks=``): block ``k`` adds rounds to
each world, balanced and split into train, validation and test in the plan's
proportions on its own, and look ``k`` analyses blocks ``1..k`` (the first
``2 * per_world[k]`` rounds of the plan). The audit stops at the first look whose
verdict is VIOLATION and never stops early otherwise (CONSISTENT and INCONCLUSIVE
wait for the full size).

Level spending (docs/soundness.md, "Sequential looks"): look ``k`` computes its
bound at level ``alpha_k = alpha * weight_k`` (each attack at ``alpha_k / n_attacks``
as before), with ``sum_k alpha_k = alpha``. A false VIOLATION at any look needs the
bound of that look to exceed the true epsilon, which happens with probability at most
``alpha_k`` whatever the looks before it showed; by the union bound over the looks the
whole procedure reports a false VIOLATION with probability at most ``alpha``. The
weights lean on the last look (:data:`LOOK_WEIGHTS`): the price is that the full-size
bound is taken at ``0.7 * alpha`` instead of ``alpha`` (4.35 instead of 4.42 at most
for 400 + 400 test rounds and three attacks).

Looks that would leave a block with an empty split (small ``rounds``) are merged
into the next look, their level with them (:func:`plan_looks`), so the levels still
sum to ``alpha``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.plan import empty_split, split_sizes
from dpaudit.errors import InvalidParameterError

#: Where the looks fall, as fractions of the planned rounds per world (the last is
#: the full size). 10% of the study's 1,000 rounds per world is 40 + 40 test rounds:
#: enough for an attack with no errors to refute a claim of epsilon = 1 at its level.
LOOK_FRACTIONS: tuple[float, ...] = (0.1, 0.2, 0.5, 1.0)

#: The share of ``alpha`` each look spends (sums to 1). Most of it is kept for the
#: full size, where a CONSISTENT needs the power; the early looks get enough to prove
#: a blatant leak (an attack with no errors) at a claim of epsilon = 1.
LOOK_WEIGHTS: tuple[float, ...] = (0.05, 0.1, 0.15, 0.7)


@dataclass(frozen=True, kw_only=True, slots=True)
class LookPlan:
    """The looks of a sequential audit.

    Attributes:
        per_world: rounds per world analysed at each look (increasing; the last is
            the planned size).
        alphas: the level each look spends (sums to the audit's ``alpha``).
    """

    per_world: tuple[int, ...]
    alphas: tuple[float, ...]

    @property
    def blocks(self) -> tuple[int, ...]:
        """Rounds per world each look adds (block ``k`` = look ``k`` minus ``k - 1``)."""
        before = (0, *self.per_world[:-1])
        return tuple(b - a for a, b in zip(before, self.per_world))


def _valid_block(rounds: int, split: tuple[float, float, float]) -> bool:
    return rounds >= 1 and not empty_split(rounds, split)


def plan_looks(
    rounds: int,
    *,
    split: tuple[float, float, float],
    alpha: float,
    fractions: tuple[float, ...] = LOOK_FRACTIONS,
    weights: tuple[float, ...] = LOOK_WEIGHTS,
) -> LookPlan:
    """The looks of a sequential audit of ``rounds`` rounds per world.

    Look ``k`` falls after ``round(fractions[k] * rounds)`` rounds per world and
    spends ``alpha * weights[k]``. A look whose block (the rounds it adds) would
    leave a split empty, or add nothing, is merged into the next one (its level
    goes with it); a last block too small is merged into the one before.

    Args:
        rounds: the planned rounds per world.
        split: the plan's train, validation and test fractions.
        alpha: the audit's overall level.
        fractions: increasing fractions ending in 1.
        weights: one positive weight per fraction, summing to 1.

    Raises:
        InvalidParameterError: ``rounds`` too small for one block, or bad fractions.

    >>> p = plan_looks(1000, split=(0.4, 0.2, 0.4), alpha=0.05)
    >>> p.per_world, [round(a, 4) for a in p.alphas]
    ((100, 200, 500, 1000), [0.0025, 0.005, 0.0075, 0.035])
    >>> plan_looks(20, split=(0.4, 0.2, 0.4), alpha=0.05).per_world
    (4, 10, 20)
    >>> plan_looks(5, split=(0.4, 0.2, 0.4), alpha=0.05).per_world
    (5,)
    """
    if (
        len(fractions) != len(weights)
        or not fractions
        or fractions[-1] != 1.0
        or any(b <= a for a, b in itertools.pairwise(fractions))
        or any(w <= 0 for w in weights)
        or not math.isclose(sum(weights), 1.0, abs_tol=1e-12)
    ):
        raise InvalidParameterError(
            "look `fractions` must increase to 1 and `weights` be positive and sum "
            f"to 1, one per fraction. Got {fractions!r}, {weights!r}."
        )
    if not _valid_block(rounds, split):
        raise InvalidParameterError(
            f"`rounds` = {rounds} leaves an empty split with {split!r}; use more rounds."
        )
    sizes: list[int] = []
    levels: list[float] = []
    carried = 0.0
    for fraction, weight in zip(fractions, weights):
        size = rounds if fraction == 1.0 else round(fraction * rounds)
        carried += weight
        if _valid_block(size - (sizes[-1] if sizes else 0), split):
            sizes.append(size)
            levels.append(carried)
            carried = 0.0
    if carried > 0.0:  # the last block was too small: merge it into the one before
        sizes[-1] = rounds
        levels[-1] += carried
    # Scaled so that the levels sum to ``alpha`` exactly (the last absorbs rounding).
    alphas = [alpha * w for w in levels[:-1]]
    alphas.append(alpha - math.fsum(alphas))
    return LookPlan(per_world=tuple(sizes), alphas=tuple(alphas))


def audit_looks(config: AuditConfig) -> LookPlan:
    """The looks of ``config``'s audit (its rounds, split and alpha); a single look
    at the full size and ``alpha`` when it is not sequential."""
    if not config.sequential:
        return LookPlan(per_world=(config.rounds,), alphas=(config.alpha,))
    return plan_looks(config.rounds, split=config.fractions, alpha=config.alpha)


def look_test_sizes(
    looks: LookPlan, *, split: tuple[float, float, float]
) -> tuple[int, ...]:
    """Test rounds per world at each look (the blocks' test rounds, summed).

    >>> look_test_sizes(plan_looks(1000, split=(0.4, 0.2, 0.4), alpha=0.05),
    ...                 split=(0.4, 0.2, 0.4))
    (40, 80, 200, 400)
    """
    out: list[int] = []
    for block in looks.blocks:
        out.append((out[-1] if out else 0) + split_sizes(block, split)[2])
    return tuple(out)
