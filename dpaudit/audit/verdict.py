"""The verdict: the empirical lower bound against the claim.

``VIOLATION`` only when eps_emp > claimed epsilon (DESIGN.md, rule 6): eps_emp is a
lower bound on the true epsilon that holds with the stated confidence, so a bound
above the claim proves, at that confidence, that the claim is false. ``CONSISTENT``
means this attack found no violation; it is not a proof of privacy.
"""

from __future__ import annotations

import enum
import math


class Verdict(enum.Enum):
    """The outcome of an audit."""

    CONSISTENT = "CONSISTENT"
    VIOLATION = "VIOLATION"
    INCONCLUSIVE = "INCONCLUSIVE"


def decide(eps_emp: float | None, eps_claimed: float | None) -> Verdict:
    """``VIOLATION`` when ``eps_emp > eps_claimed``; ``INCONCLUSIVE`` without numbers.

    >>> decide(4.68, 1.0).value, decide(0.3, 1.0).value, decide(None, 1.0).value
    ('VIOLATION', 'CONSISTENT', 'INCONCLUSIVE')
    """
    if eps_emp is None or eps_claimed is None or math.isnan(eps_emp):
        return Verdict.INCONCLUSIVE
    return Verdict.VIOLATION if eps_emp > eps_claimed else Verdict.CONSISTENT
