"""What PATE-GAN claims, and what a correct accountant would charge for the same run.

Training records privacy events, as in dp_accounting's design: the vote histograms
(the ledger of vote gaps, every query whose answer was acted upon) and *non-private*
events, where data reach the output by a path without privacy noise; one accountant
composes them (:func:`reference_epsilon`), and a non-private event composes to an
unbounded epsilon. The reasons come from the defect catalogue: a flag whose
:class:`~dpaudit.generators.catalogue.BugDoc` has an ``unbounded_reason`` is recorded
as a non-private event where its path runs; the other flags change what one vote query
costs (docs/soundness.md).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dpaudit.generators import accountants as acc
from dpaudit.generators.base import RdpCurve
from dpaudit.generators.catalogue import declared_bugs
from dpaudit.generators.pate_gan.config import PateGanConfig

# Defects after which no accountant over the teachers' queries bounds the leak: the
# data reach the released model by a path no noise covers.
UNBOUNDED: dict[str, str] = {
    name: doc.unbounded_reason
    for name, doc in declared_bugs(PateGanConfig).items()
    if doc.unbounded_reason is not None
}


def non_private_event(flag: str) -> tuple[str, str]:
    """The non-private event of defect ``flag``: ``(flag, reason)``.

    Raises:
        KeyError: ``flag`` declares no ``unbounded_reason`` (the catalogue and the
            code would disagree).
    """
    return flag, UNBOUNDED[flag]


def uses_accountant(cfg: PateGanConfig) -> bool:
    """Whether the implementation tracks its spending (else its claim is nominal)."""
    return not (cfg.no_accountant or cfg.single_discriminator)


def accountant_name(cfg: PateGanConfig) -> str:
    """The accountant the implementation's own claim comes from."""
    if not uses_accountant(cfg):
        return "none (nominal epsilon)"
    name = "pate-gan moments"
    if cfg.accountant_index_bug:
        name += " (with accountant_index_bug)"
    if cfg.accountant_missing_log:
        name += " (with accountant_missing_log)"
    return name


def vote_sensitivity(cfg: PateGanConfig, k: int) -> tuple[int, str]:
    """How many teachers' votes one record can change (1 in the reference), and why.

    ``k`` when teachers share records, and under ``balanced_partition``: adding a
    record to balanced slices of a fixed order (the data's, or a permutation held as
    public randomness) shifts the slice bounds, and when it lands in teacher ``j``'s
    slice ``1 + |j - r|`` teachers' data change (``n = qk + r``), up to ``k``; the
    sensitivity-1 argument needs an assignment that never moves another record
    (docs/soundness.md).
    """
    if (
        cfg.partition_last_only
        or cfg.shared_sampling
        or (cfg.repartition_every_iteration and not cfg.lr_teachers_refit)
    ):
        return k, "teachers share records: vote sensitivity k"
    if cfg.balanced_partition:
        return k, (
            "balanced partition: one record shifts the slice bounds and can "
            "change up to k teachers' data: vote sensitivity k"
        )
    return 1, ""


def query_spec(
    lam: float, *, sensitivity: int, single_draw: bool
) -> tuple[float, bool]:
    """The ``lambda`` at which PATE-GAN's moments formula charges one vote query, and
    whether its data-dependent term is valid.

    The formula's data-independent term ``2 lambda^2 l (l + 1)`` is the log-moment
    bound ``eps^2 l (l + 1) / 2`` of a pure ``eps``-DP query (Papernot et al. 2017,
    Thm 2; Bun and Steinke 2016, Prop. 3.3) at ``eps = 2 lambda``. A vote with noise
    ``Lap(1/lambda)`` on each of the two counts, when ``s`` teachers' votes can
    change, moves each count by up to ``s``: pure ``2 s lambda``-DP, charged at
    ``s lambda``. One draw on the "real" count compared with ``k/2``
    (``single_noise_vote``) sees a shift of up to ``s``: pure ``s lambda``-DP,
    charged at ``s lambda / 2``. The data-dependent term assumes two draws and
    ``s = 1`` (docs/soundness.md, "The reference epsilon of a vote").

    >>> query_spec(1e-3, sensitivity=1, single_draw=False)
    (0.001, True)
    >>> query_spec(1e-3, sensitivity=2, single_draw=True)
    (0.001, False)
    >>> query_spec(1e-3, sensitivity=16, single_draw=False)
    (0.016, False)
    """
    if single_draw:
        return sensitivity * lam / 2.0, False
    return sensitivity * lam, sensitivity == 1


def reference_moments(
    cfg: PateGanConfig,
    k: int,
    gap_counts: np.ndarray,
    *,
    non_private: Mapping[str, str] | None = None,
) -> tuple[np.ndarray | None, str]:
    """The log-moments ``alpha[..., L]`` a correct accountant charges for the events a
    (buggy) run recorded, and the note saying how; ``(None, reason)`` when a
    non-private event happened (no finite bound). :func:`reference_epsilon` converts
    them; ``alpha(l) / l`` is the reference's RDP at order ``l + 1``."""
    events = (
        dict(non_private)
        if non_private is not None
        else {flag: why for flag, why in UNBOUNDED.items() if getattr(cfg, flag)}
    )
    for flag, why in events.items():
        return None, f"unbounded: {why} ({flag})"
    lam = cfg.lam
    notes = []
    if cfg.laplace_scale_inverted:
        # Noise Lap(lambda) is Lap(1/lambda') with lambda' = 1/lambda.
        lam = 1.0 / lam
        notes.append("noise scale is lambda, charged as lambda' = 1/lambda")
    sensitivity, why = vote_sensitivity(cfg, k)
    if sensitivity > 1:
        notes.append(why)
    spec_lam, data_dependent = query_spec(
        lam, sensitivity=sensitivity, single_draw=cfg.single_noise_vote
    )
    if cfg.single_noise_vote:
        # The data-dependent q assumes independent noise on both counts.
        notes.append(
            f"single noise draw: pure {sensitivity} x lambda-DP per query, "
            "data-independent bound"
        )
    spec = acc.MomentsAccountantSpec(
        lam=spec_lam, orders=cfg.orders, data_dependent=data_dependent
    )
    alpha = acc.moments_from_gap_counts(gap_counts, spec)
    return alpha, "; ".join(notes) or "correct moments accountant on the same ledger"


def reference_epsilon(
    cfg: PateGanConfig,
    k: int,
    gap_counts: np.ndarray,
    *,
    non_private: Mapping[str, str] | None = None,
) -> tuple[np.ndarray | None, str]:
    """What a correct accountant charges for the events a (buggy) run recorded.

    ``gap_counts`` is the vote ledger, including queries the implementation did not
    charge (``skip_unaccounted_queries``). ``non_private``: the run's non-private
    events (flag -> reason); None assumes every declared one of ``cfg``'s flags
    happened (for a ledger without a run). Returns ``(None, reason)`` when one
    happened: no finite epsilon holds. Each query is charged by
    :func:`query_spec`: the data-independent bound of a pure ``2 s lambda``-DP query
    (independent noise on both counts) or ``s lambda``-DP query (one draw on the
    "real" count, ``single_noise_vote``), ``s`` the vote sensitivity; the
    data-dependent bound only for ``s = 1`` and two draws (docs/soundness.md, "The
    reference epsilon of a vote"). The log-moments are :func:`reference_moments`.
    """
    alpha, note = reference_moments(cfg, k, gap_counts, non_private=non_private)
    if alpha is None:
        return None, note
    # dpaudit's own, correct accountant: the improved conversion (docs/formulas.md).
    eps = acc.epsilon_from_moments(alpha, delta=cfg.delta, conversion="improved")
    return eps, note


def rdp_of_moments(alpha: np.ndarray) -> RdpCurve:
    """A moments accountant's log-moments ``alpha(l)``, ``l = 1..L``, as the RDP curve
    they state: ``alpha(l) / l`` at order ``l + 1`` (docs/formulas.md; orders whose
    value is infinite are left out).

    >>> rdp_of_moments(np.array([1.0, 3.0])).to_json()
    {'orders': [2.0, 3.0], 'epsilons': [1.0, 1.5]}
    """
    a = np.asarray(alpha, dtype=np.float64)
    ls = np.arange(1, a.shape[-1] + 1, dtype=np.float64)
    return RdpCurve.of((ls + 1.0).tolist(), (a / ls).tolist())
