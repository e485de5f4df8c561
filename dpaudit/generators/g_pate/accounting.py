"""What G-PATE's training spends, per model, and the privacy claim it makes.

Privacy is accounted in Renyi DP (:mod:`dpaudit.generators.accountants`): every
query pays ``a / (2 sigma1^2)``, every answered query ``a / sigma2^2``; training
stops *before* a batch could exceed the budget (the check charges the whole batch as
if every query were answered, so the stopping time depends only on outputs already
paid for). The data-dependent bound (Papernot et al. 2018, Thm 6) can be traced, but
it is a function of the private data and is never the DP claim, except under the
``unsanitised_data_dependent`` defect, which reproduces the public G-PATE code.

The sensitivity the accountant charges, one teacher's vote per histogram, holds for
add/remove neighbours because each record is assigned to one teacher independently
from the public stream (:mod:`dpaudit.generators.g_pate.partition`): for every fixed
value of the public stream, adding a record changes one teacher's data only. All the
bookkeeping here runs on NumPy arrays over the ``M`` models, outside the tensor step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.generators import accountants
from dpaudit.generators.base import PrivacyClaim, RdpCurve
from dpaudit.generators.catalogue import declared_bugs
from dpaudit.generators.g_pate.config import GPateConfig

ACCOUNTANT_NAME = "confident_gnmax_rdp"
UNSANITISED_ACCOUNTANT_NAME = "confident_gnmax_rdp_data_dependent_unsanitised"
NOT_SANITISED_NOTE = (
    "not sanitised: the data-dependent epsilon (Papernot et al. 2018, Thm 6) is a "
    "function of the private data and is not a DP guarantee without smooth-sensitivity "
    "sanitisation"
)


def merge_rows(
    rows: list[NDArray[np.int64]], mult: list[NDArray[np.int64]]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Distinct ``(model, sorted histogram)`` rows with summed multiplicities."""
    stacked = np.concatenate(rows)
    weights = np.concatenate(mult)
    unique, inverse = np.unique(stacked, axis=0, return_inverse=True)
    total = np.bincount(inverse.reshape(-1), weights=weights, minlength=unique.shape[0])
    return unique, np.rint(total).astype(np.int64)


@dataclass(slots=True)
class _Pending:
    """One batch's charges, computed before the generator step, kept if committed."""

    new_answered: NDArray[np.int64]
    answered_count: NDArray[np.int64]
    batch_dd: NDArray[np.float64]
    rows: NDArray[np.int64]
    owners: NDArray[np.int64]


@dataclass
class Spending:
    """The privacy ledger of ``m`` models trained together.

    Per iteration: :meth:`admit` (which models may run another batch), then
    :meth:`charge` (the batch's answers; the unsanitised stopping rule), then
    :meth:`commit` (the batch counts for the models still active).
    """

    config: GPateConfig
    m: int
    orders: NDArray[np.float64] = field(init=False)
    active: NDArray[np.bool_] = field(init=False)
    iterations: NDArray[np.int64] = field(init=False)
    num_queries: NDArray[np.int64] = field(init=False)
    num_answered: NDArray[np.int64] = field(init=False)
    dd_gnmax: NDArray[np.float64] = field(init=False)

    def __post_init__(self) -> None:
        self.orders = np.asarray(accountants.RDP_ORDERS, dtype=np.float64)
        self.thr_rdp = accountants.threshold_rdp(self.orders, sigma1=self.config.sigma1)
        self.per_iteration = self.config.batch_size * self.config.projection_dim
        self.active = np.ones(self.m, dtype=bool)
        self.iterations = np.zeros(self.m, dtype=np.int64)
        self.num_queries = np.zeros(self.m, dtype=np.int64)
        self.num_answered = np.zeros(self.m, dtype=np.int64)
        self.dd_gnmax = np.zeros((self.m, self.orders.size))
        self.eps_trace: list[NDArray[np.float64]] = []
        self.dd_trace: list[NDArray[np.float64]] = []
        self.answered_trace: list[NDArray[np.int64]] = []
        self.committed_trace: list[NDArray[np.bool_]] = []
        self.ledger_rows: list[NDArray[np.int64]] = []
        self.ledger_mult: list[NDArray[np.int64]] = []
        self._pending: _Pending | None = None

    def _eps(self, q: NDArray[np.int64], a: NDArray[np.int64]) -> NDArray[np.float64]:
        cfg = self.config
        rdp = accountants.confident_gnmax_rdp_data_independent(
            q, a, sigma1=cfg.sigma1, sigma2=cfg.sigma2, orders=self.orders
        )
        eps: NDArray[np.float64] = accountants.epsilon_from_rdp(
            rdp, delta=cfg.delta, orders=self.orders
        )
        return eps

    def admit(self) -> bool:
        """Stops the models whose budget cannot cover one more batch; whether any
        model is left.

        The whole batch is charged as if every query were answered: the decision then
        depends only on outputs already paid for, and the budget can never be
        exceeded (except under the ``unsanitised_data_dependent`` defect, which stops
        on the data-dependent value in :meth:`charge` instead).
        """
        if not self.config.unsanitised_data_dependent:
            per = self.per_iteration
            worst = self._eps(self.num_queries + per, self.num_answered + per)
            self.active &= worst <= self.config.epsilon
        return bool(self.active.any())

    def charge(
        self, answered: NDArray[np.bool_], counts: NDArray[np.float32] | None
    ) -> bool:
        """Records a batch's answers ``[m, queries]`` (and, when the data-dependent
        bound is traced, its clean vote histograms ``[m, queries, bins]``); returns
        whether any model is still active."""
        cfg = self.config
        batch_dd = np.zeros_like(self.dd_gnmax)
        rows = np.zeros((0, cfg.bins), dtype=np.int64)
        owners = np.zeros(0, dtype=np.int64)
        if cfg.traces_data_dependent:
            assert counts is not None
            pick = answered & self.active[:, None]
            owners = np.nonzero(pick)[0]
            rows = np.rint(counts[pick]).astype(np.int64)
            if rows.shape[0]:
                log_q = accountants.gnmax_log_error_bound(
                    rows, sigma2=cfg.sigma2, num_classes=cfg.bins
                )
                per_query = accountants.gnmax_rdp_data_dependent(
                    log_q, sigma2=cfg.sigma2, orders=self.orders
                )
                np.add.at(batch_dd, owners, per_query)
            new_queries = self.num_queries + self.per_iteration
            new_dd_rdp = new_queries[:, None] * self.thr_rdp + self.dd_gnmax + batch_dd
            eps_dd_new = accountants.epsilon_from_rdp(
                new_dd_rdp, delta=cfg.delta, orders=self.orders
            )
            self.dd_trace.append(eps_dd_new)
            if cfg.unsanitised_data_dependent:
                # DEFECT unsanitised_data_dependent: the stopping rule (and the
                # claim) use the data-dependent epsilon, itself a function of the data.
                self.active &= eps_dd_new <= cfg.epsilon
        count = answered.sum(axis=1).astype(np.int64)
        self._pending = _Pending(
            self.num_answered + count, count, batch_dd, rows, owners
        )
        return bool(self.active.any())

    def commit(self) -> None:
        """The charged batch counts for every model still active."""
        p, active = self._pending, self.active
        assert p is not None
        self.num_queries = np.where(
            active, self.num_queries + self.per_iteration, self.num_queries
        )
        self.num_answered = np.where(active, p.new_answered, self.num_answered)
        self.dd_gnmax = np.where(
            active[:, None], self.dd_gnmax + p.batch_dd, self.dd_gnmax
        )
        self.iterations += active
        self.eps_trace.append(self._eps(self.num_queries, self.num_answered))
        self.answered_trace.append(p.answered_count)
        self.committed_trace.append(active.copy())
        if self.config.traces_data_dependent and p.rows.shape[0]:
            keep = active[p.owners]
            key = np.concatenate([p.owners[keep, None], -np.sort(-p.rows[keep], 1)], 1)
            self.ledger_rows.append(key)
            self.ledger_mult.append(np.ones(key.shape[0], dtype=np.int64))
            if len(self.ledger_rows) >= 64:
                merged = merge_rows(self.ledger_rows, self.ledger_mult)
                self.ledger_rows, self.ledger_mult = [merged[0]], [merged[1]]
        self._pending = None

    def claims(
        self, *, records_seen: Sequence[Sequence[int]] | None = None
    ) -> tuple[list[PrivacyClaim], list[int]]:
        """Every model's claim, and the models that never trained (budget below one
        batch). ``records_seen[i]``: model ``i``'s rows per teacher, traced when
        given."""
        cfg = self.config
        stopped_by_cap = self.active & (self.iterations >= cfg.max_iterations)
        merged_rows, merged_mult = (
            merge_rows(self.ledger_rows, self.ledger_mult)
            if self.ledger_rows
            else (np.zeros((0, cfg.bins + 1), np.int64), np.zeros(0, np.int64))
        )
        claims, untrained = [], []
        for i in range(self.m):
            mine = merged_rows[:, 0] == i
            ledger = accountants.ConfidentGnmaxLedger(
                sigma1=float(cfg.sigma1),
                sigma2=float(cfg.sigma2),
                num_classes=cfg.bins,
                num_queries=int(self.num_queries[i]),
                num_answered=int(self.num_answered[i]),
                top_counts=(
                    tuple(map(tuple, merged_rows[mine, 1:].tolist()))
                    if cfg.traces_data_dependent
                    else ()
                ),
                multiplicity=(
                    tuple(merged_mult[mine].tolist())
                    if cfg.traces_data_dependent
                    else ()
                ),
            )
            claim = self._claim(
                i,
                ledger,
                stop_reason="max_iterations" if stopped_by_cap[i] else "budget",
                records_seen=None
                if records_seen is None
                else [int(c) for c in records_seen[i]],
            )
            claims.append(claim)
            if self.iterations[i] == 0 and not stopped_by_cap[i]:
                untrained.append(i)
        return claims, untrained

    def _claim(
        self,
        i: int,
        ledger: accountants.ConfidentGnmaxLedger,
        *,
        stop_reason: str,
        records_seen: list[int] | None = None,
    ) -> PrivacyClaim:
        cfg = self.config
        committed = [j for j, c in enumerate(self.committed_trace) if c[i]]
        trace: dict[str, Any] = {
            "epsilon": [float(self.eps_trace[j][i]) for j in committed],
            "answered": [int(self.answered_trace[j][i]) for j in committed],
            "queries_per_iteration": self.per_iteration,
            "accountant_mode": cfg.accountant,
            "stop_reason": stop_reason,
        }
        if records_seen is not None:
            # Every row of a teacher's part is in its batches (with replacement): the
            # part sizes are the records each teacher can see.
            trace["records_seen"] = records_seen
        eps_independent = accountants.confident_gnmax_epsilon(ledger, delta=cfg.delta)
        # The reference: what a correct accountant charges for the queries run (as for
        # PATE-GAN); none holds where data reach the release unnoised (a flag declared
        # with an `unbounded_reason`).
        epsilon: float = eps_independent
        reference: float | None = eps_independent
        trace["reference_note"] = "data-independent RDP on the same ledger"
        unbounded = [
            doc.unbounded_reason
            for name, doc in declared_bugs(GPateConfig).items()
            if doc.unbounded_reason and getattr(cfg, name)
        ]
        if unbounded:
            reference = None
            trace["reference_note"] = "unbounded: " + "; ".join(unbounded)
        accountant = ACCOUNTANT_NAME
        if cfg.traces_data_dependent:
            eps_dependent = accountants.confident_gnmax_epsilon(
                ledger, delta=cfg.delta, data_dependent=True
            )
            trace["epsilon_data_dependent_not_sanitised"] = [
                float(self.dd_trace[j][i]) for j in committed
            ]
            trace["data_dependent_final_not_sanitised"] = eps_dependent
            trace["data_dependent_note"] = NOT_SANITISED_NOTE
            if cfg.unsanitised_data_dependent:
                epsilon = eps_dependent
                accountant = UNSANITISED_ACCOUNTANT_NAME
        # The RDP curves: what the claimed accountant composed (data-dependent under
        # the defect), and the reference's data-independent one on the same ledger.
        independent_rdp = accountants.confident_gnmax_rdp(ledger)
        claimed_rdp = (
            accountants.confident_gnmax_rdp(ledger, data_dependent=True)
            if cfg.unsanitised_data_dependent and cfg.traces_data_dependent
            else independent_rdp
        )
        if ledger.num_queries:
            rdp = independent_rdp
            trace["optimal_order"] = float(
                accountants.optimal_order(rdp, delta=cfg.delta)
            )
        trace["ledger"] = ledger.to_json()
        # Typed facts a report reads (dpaudit.audit.result.model.TrainingFacts).
        trace["teachers"] = int(cfg.num_teachers)
        trace["accounted"] = bool(ledger.num_queries)
        return PrivacyClaim(
            epsilon=float(epsilon),
            delta=float(cfg.delta),
            accountant=accountant,
            epsilon_data_independent=float(eps_independent),
            reference_epsilon=None if reference is None else float(reference),
            iterations=int(self.iterations[i]),
            trace=trace,
            rdp=RdpCurve.of(self.orders.tolist(), claimed_rdp.tolist()),
            reference_rdp=(
                None
                if reference is None
                else RdpCurve.of(self.orders.tolist(), independent_rdp.tolist())
            ),
        )
