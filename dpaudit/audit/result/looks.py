"""The record of a sequential audit's looks (``sequential`` in ``result.json``)."""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.audit.config.names import Verdict


@dataclass(frozen=True, kw_only=True, slots=True)
class SequentialLook:
    """One planned look of a sequential audit (an entry of ``sequential.looks``).

    Attributes:
        per_world: rounds per world the look analyses (blocks ``1..k`` of the plan).
        alpha: the level the look spends (its bound's overall level; the looks'
            levels sum to the audit's ``alpha``).
        eps_max_attainable: the largest eps_emp the look's test rounds can show at
            its level (known before the look is run).
        eps_emp: the look's eps_emp (``None``: not reached, the audit stopped).
        verdict: the look's verdict (``None``: not reached).
    """

    per_world: int
    alpha: float
    eps_max_attainable: float | None = None
    eps_emp: float | None = None
    verdict: Verdict | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SequentialLooks:
    """How a ``--sequential`` audit looked and where it stopped (``sequential`` in
    ``result.json``; absent for an audit analysed once).

    Attributes:
        planned_per_world: the plan's size (rounds per world planned);
            ``rounds.per_world`` is the rounds per world actually run.
        looks: every planned look, reached or not.
        decided: the look (1-based) whose analysis is the result.
        stopped_early: the audit stopped before the planned size (a VIOLATION).
    """

    planned_per_world: int
    looks: tuple[SequentialLook, ...]
    decided: int
    stopped_early: bool
