"""What every report says about the claim and about a CONSISTENT whose errors are
one-sided: the claim's own delta and accountant, a claim above the budget asked, and
how many rounds per world would decide the audit.

Pure functions of recorded numbers (no I/O). The rounds estimate is a plug-in
estimate, not a guarantee: it assumes the headline attack keeps the error rates it
showed on this audit's test rounds (docs/adapters.md, "Deciding a CONSISTENT"). It
asks the test that decides the audit: the exact test
(:mod:`dpaudit.audit.stats.calibrated`) wherever it is computed (up to
``EXACT_MAX_N`` test rounds per world, Clopper-Pearson), the per-rate box beyond.
"""

from __future__ import annotations

import math

from dpaudit.audit.stats import calibrated
from dpaudit.audit.stats.estimators import AttackCounts, eps_lower_bound
from dpaudit.audit.stats.sizing import fewest_rounds

__all__ = ["claim_dp_text", "over_budget_note", "rounds_to_decide"]


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def claim_dp_text(epsilon: float, delta: float | None) -> str:
    """The claim as a guarantee: ``1-DP (pure)`` for delta 0, else
    ``(1, 1e-05)-DP``.

    >>> claim_dp_text(1.0, 0.0), claim_dp_text(1.098, 1e-5)
    ('1-DP (pure epsilon-DP)', '(1.098, 1e-05)-DP')
    """
    if delta is not None and delta == 0:
        return f"{_fmt(epsilon)}-DP (pure epsilon-DP)"
    return f"({_fmt(epsilon)}, {delta if delta is None else f'{delta:g}'})-DP"


def over_budget_note(eps_claimed: float | None, eps_asked: float | None) -> str | None:
    """A sentence when the generator's claim exceeds the budget it was asked to
    spend (its own accountant stops past it), else None. The verdict is judged
    against the claim, the larger figure.

    >>> over_budget_note(1.098, 1.0)
    'The generator claims epsilon 1.098, above the budget asked (--epsilon 1): its own accountant spent more than it was given, and the verdict is judged against its claim 1.098.'
    >>> over_budget_note(1.0, 1.0) is None
    True
    """
    if eps_claimed is None or eps_asked is None:
        return None
    if not (math.isfinite(eps_claimed) and eps_claimed > eps_asked * (1 + 1e-9)):
        return None
    return (
        f"The generator claims epsilon {_fmt(eps_claimed)}, above the budget asked "
        f"(--epsilon {_fmt(eps_asked)}): its own accountant spent more than it was "
        f"given, and the verdict is judged against its claim {_fmt(eps_claimed)}."
    )


def rounds_to_decide(
    *,
    counts: AttackCounts,
    eps_claimed: float,
    delta: float,
    alpha: float,
    split: tuple[float, float, float] = (0.4, 0.2, 0.4),
    method: str = "clopper_pearson",
    max_rounds: int = 1_000_000,
) -> int | None:
    """The fewest rounds per world at which an attack with the error rates observed
    on these test rounds would refute ``eps_claimed`` (the claim's lines), for a CONSISTENT whose errors
    are one-sided (no false positive, or no false negative); None when its errors
    are two-sided, it made none (the attainable maximum then already says it), its
    rates could not refute the claim at any size, or more than ``max_rounds``.

    The estimate scales the test rounds, keeps the one-sided error at 0 and the
    other error rate at its observed value (the expected counts, rounded up for
    the attack), and asks the test that decides a claim of the (epsilon, delta)
    lines at the audit's per-attack ``alpha`` and delta: the exact test's eps_emp
    (:func:`dpaudit.audit.stats.calibrated.family`, as the verdict computes it)
    where it applies (Clopper-Pearson, at most ``EXACT_MAX_N`` test rounds per
    world), :func:`eps_lower_bound` (the per-rate box) beyond it or with
    ``method = "jeffreys"``. It is a plug-in estimate: the true rates differ from
    the observed ones by their sampling error, so the audit at that size decides
    with roughly even odds when the observed rates are the true ones; take it as
    the size to try, then run it (``--rounds``). For a claim that states a profile
    it answers the claim's (epsilon, delta) lines, which the claim's own test
    refutes along with its other regions.

    An attack with TP 10 of 20 and FP 0 of 20 (50 rounds per world, three attacks:
    per-attack alpha 0.05 / 3) shows eps_emp 0.83 by the exact test: CONSISTENT
    with a claim of 1. With the same rates the exact test refutes it at 65 rounds
    per world (26 test rounds per world, 13 false negatives), the verdict's own
    test agreeing:

    >>> c = AttackCounts(tp=10, fp=0, tn=20, fn=10)
    >>> rounds_to_decide(counts=c, eps_claimed=1.0, delta=1e-5, alpha=0.05 / 3)
    65
    >>> calibrated.judge(0, 26, 13, 26, delta=1e-5, alpha=0.05 / 3).eps_emp > 1.0
    True
    >>> rounds_to_decide(counts=c, eps_claimed=1.0, delta=1e-5, alpha=0.05 / 3,
    ...                  method="jeffreys")
    80
    >>> rounds_to_decide(counts=AttackCounts(tp=16, fp=2, tn=18, fn=4),
    ...                  eps_claimed=1.0, delta=1e-5, alpha=0.05) is None
    True
    """
    n_members, n_non = counts.tp + counts.fn, counts.fp + counts.tn
    if n_members == 0 or n_non == 0:
        return None
    fp_rate, fn_rate = counts.fp / n_non, counts.fn / n_members
    if (fp_rate > 0) == (fn_rate > 0):  # two-sided errors, or none at all
        return None
    if max(fp_rate, fn_rate) >= 1.0:
        return None

    def errors(n: int) -> tuple[int, int]:
        return math.ceil(fp_rate * n), math.ceil(fn_rate * n)

    def box_refutes(n: int) -> bool:
        fp, fn = errors(n)
        c = AttackCounts(tp=n - fn, fp=fp, tn=n - fp, fn=fn)
        bound = eps_lower_bound(c, delta=delta, alpha=alpha, method=method)  # type: ignore[arg-type]
        return bound > eps_claimed

    if method != "clopper_pearson":
        return fewest_rounds(box_refutes, split=split, max_rounds=max_rounds)

    def refutes(n: int) -> bool:
        if not calibrated.applies(n, n):
            return box_refutes(n)
        fam = calibrated.family(
            "eps",
            n,
            n,
            alpha=alpha,
            delta=delta,
            until=eps_claimed + calibrated.STEPS["eps"],
        )
        return fam.rejects(*errors(n), eps_claimed)

    # The box's answer (cheap, the exact test's is rarely far from it) starts the
    # search: a few exact families instead of one per halving from 1.
    guess = fewest_rounds(box_refutes, split=(0.0, 0.0, 1.0), max_rounds=max_rounds)
    return fewest_rounds(refutes, split=split, max_rounds=max_rounds, start=guess or 1)
