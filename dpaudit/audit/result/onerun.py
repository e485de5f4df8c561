"""What ``result.json`` records of a one-run audit (``one_run``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OneRunBoundFigure", "OneRunRule", "OneRunSummary"]


@dataclass(frozen=True, kw_only=True, slots=True)
class OneRunRule:
    """One guess rule's guesses and bound (an entry of ``one_run.rules``).

    Attributes:
        rule: ``count`` (numbers fixed in advance) or ``threshold`` (every canary
            whose score reaches the threshold, rounded down to a size of the grid
            fixed in advance).
        alpha: the level its bound was computed at.
        guesses_in, guesses_out, correct: its guesses and how many were right.
        eps_emp: its lower bound.
        eps_max_attainable: its bound with every guess right.
        passed: ``threshold``: canaries whose score reached it (``None``: count).
        mu_emp: the f-DP bounds' largest mu-GDP rejected (``None``: steinke).
        refutes: the f-DP bounds rejected the claim's stated curve (``None``:
            steinke, or no mu stated).
    """

    rule: str
    alpha: float
    guesses_in: int
    guesses_out: int
    correct: int
    eps_emp: float
    eps_max_attainable: float
    passed: int | None = None
    mu_emp: float | None = None
    refutes: bool | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class OneRunBoundFigure:
    """What one bound shows from the audit's scores and guesses (an entry of
    ``one_run.bounds``): the figures the audit would have had with that bound
    configured. Descriptive except the entry that ``decides``: the verdict is the
    configured bound's alone, fixed before any fit (docs/soundness.md, "Every
    bound's figure beside the verdict").

    Attributes:
        bound: ``steinke``, ``fdp`` or ``order``.
        eps_emp: its eps_emp (as ``eps_emp`` of a result with that bound).
        eps_max_attainable: its eps_emp with every guess correct.
        mu_emp: the f-DP bounds' largest mu-GDP rejected (``None``: steinke).
        claim_refuted: the f-DP bounds rejected the claim's stated curve
            (``None``: steinke, or no mu stated).
        decides: this is the configured bound (``one_run.bound``), the verdict's.
    """

    bound: str
    eps_emp: float
    eps_max_attainable: float
    mu_emp: float | None = None
    claim_refuted: bool | None = None
    decides: bool = False


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
        guesses_in, guesses_out: guesses "in" and "out" of the rule that gave
            eps_emp (``rule``).
        guesses: ``guesses_in + guesses_out`` (the bound's ``r``).
        correct_in, correct_out: correct guesses of each kind.
        correct: correct guesses (the bound's ``v``).
        eps_max_attainable: the eps_emp of every guess correct: the largest this
            audit could show (the largest over the rules).
        guess_rule: the configured rule (``count``, ``threshold`` or ``both``;
            results written before the key existed used ``count``).
        rule: the rule whose guesses and bound are the result's.
        threshold: the score's threshold (``None``: no threshold rule ran).
        rules: every rule that ran, each at its share of alpha.
        bound: the bound that decided: ``steinke``, ``fdp`` or ``order`` (results
            written before the key existed used ``steinke``).
        mu_emp: the f-DP bounds' largest mu-GDP rejected, with every smaller one
            (``None``: steinke).
        claim_refuted: the f-DP bounds rejected the claim's stated curve (its
            (epsilon, delta) lines with its mu-GDP, zCDP or RDP curve; ``None``:
            steinke or no profile stated).
        claim_curve: that curve beyond the lines, in words (``mu-GDP 0.5``,
            ``zCDP rho 0.373``, ``RDP at 46 orders``); ``None`` as ``claim_refuted``.
        bounds: every sound bound's figures from the same scores and guesses
            (steinke, fdp, order); descriptive but the one that ``decides``
            (results written before the key existed have none).
        guesses_planned: the count rule's counts were planned from the
            configuration (no ``--guesses``; docs/soundness.md, "Guess counts
            planned from the configuration"); ``False``: given; ``None``: results
            written before planning existed (a tenth of the canaries per side).
        planning_mu: the mu of the Gaussian the counts were planned on (the
            claim's boundary at the configured epsilon); ``None``: not planned.
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
    guess_rule: str = "count"
    rule: str = "count"
    threshold: float | None = None
    rules: tuple[OneRunRule, ...] = ()
    bound: str = "steinke"
    mu_emp: float | None = None
    claim_refuted: bool | None = None
    claim_curve: str | None = None
    bounds: tuple[OneRunBoundFigure, ...] = ()
    guesses_planned: bool | None = None
    planning_mu: float | None = None
