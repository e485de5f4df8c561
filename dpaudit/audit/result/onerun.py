"""What ``result.json`` records of a one-run audit (``one_run``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OneRunSummary"]


@dataclass(frozen=True, kw_only=True, slots=True)
class OneRunSummary:
    """The one-run game's counts (``one_run`` in ``result.json``).

    Attributes:
        fits: fits made (each on the base plus its own included canaries).
        canaries: canaries in all (``fits * canaries_per_fit``).
        canaries_per_fit: canaries per fit.
        included: canaries that were included (revealed after the guesses).
        canary_kind: ``point`` (distinct far points) or ``category`` (a categorical
            value each; dpaudit/worst_case/canaries.py).
        score: how each canary was scored from its fit's release.
        guesses_in, guesses_out: guesses "in" and "out", fixed before the releases.
        guesses: ``guesses_in + guesses_out`` (the bound's ``r``).
        correct_in, correct_out: correct guesses of each kind.
        correct: correct guesses (the bound's ``v``).
        eps_max_attainable: the eps_emp of every guess correct: the largest this
            audit could show.
    """

    fits: int
    canaries: int
    canaries_per_fit: int
    included: int
    canary_kind: str
    score: str
    guesses_in: int
    guesses_out: int
    guesses: int
    correct_in: int
    correct_out: int
    correct: int
    eps_max_attainable: float
