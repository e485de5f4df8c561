"""What ``result.json`` records of a measurement-transcript audit (``measurements``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MeasurementSummary"]


@dataclass(frozen=True, kw_only=True, slots=True)
class MeasurementSummary:
    """The measurements a plug-in stated (``privacy_transcript``) and their exact
    privacy (``measurements`` in ``result.json``; docs/soundness.md, "The
    measurement transcript").

    Every "largest" is over the audit's rounds (both worlds): a mechanism whose
    choice of measurements depends on the data states other measurements in
    other rounds (``varies``).

    Attributes:
        records: measurement records per round (the largest).
        gaussian_answers, laplace_answers: noisy answers per round with each noise
            (the largest).
        answers_changed: answers whose exact count differs between the worlds (the
            largest): the only ones that carry privacy loss.
        varies: the exact privacy differs between rounds.
        mu_exact: the exact mu of the Gaussian answers (``sqrt(sum (c' - c)^2 /
            sigma^2)``, the largest); ``None`` with no Gaussian answer.
        rho_exact: their zCDP rho, ``mu_exact^2 / 2``; ``None`` unless every
            answer is Gaussian.
        eps_exact: epsilon at ``eps_delta`` of every answer composed
            (dp-accounting's privacy-loss distributions; the largest); infinite
            (``inf``, written as null and read back as ``None``) for answers stated
            without noise (read by the one-run game only).
        eps_delta: the delta of ``eps_exact`` (the audit's).
        mu_ceiling: the expected mu_emp of the best possible test of an exactly
            ``mu_exact``-GDP mechanism at this test size and level (Gaussian answers
            only; ``None`` otherwise).
        mu_to_ceiling: the headline mu_emp over ``mu_ceiling``.
        claimed, spent: the claim and what the measurements spend, in the
            claim's strongest stated term (``term``: ``rho``, ``mu`` or
            ``epsilon``).
        spends_more_than_claimed: ``spent > claimed``: the stated measurements
            alone cost more than the claim (a finding of the plug-in's own
            statement, beside the verdict's test of the noise).
        covers, leaves_out: what the transcript covers and what it leaves out, in
            words.
    """

    records: int
    gaussian_answers: int
    laplace_answers: int
    answers_changed: int
    varies: bool
    mu_exact: float | None
    rho_exact: float | None
    eps_exact: float | None
    eps_delta: float
    mu_ceiling: float | None
    mu_to_ceiling: float | None
    term: str
    claimed: float | None
    spent: float | None
    spends_more_than_claimed: bool | None
    covers: str
    leaves_out: str
