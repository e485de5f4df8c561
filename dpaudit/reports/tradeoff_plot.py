"""The trade-off plot of the HTML report: the picture that explains the verdict.

In the (FPR, FNR) plane of a membership test, the claim allows a region above a
curve: its (epsilon, delta) lines and every stated profile (the Gaussian trade-off
curve of mu-GDP; the boundary the RDP curve or zCDP rho implies, computed by the
verdict's own Renyi test on a grid). The headline attack's empirical trade-off on the
test rounds (its ROC as FNR = 1 - TPR) and the bounded test point are drawn on it: the
verdict is VIOLATION exactly when the point lies below some claimed boundary
(docs/soundness.md, "Testing the claim's profile").
"""

from __future__ import annotations

import math

import matplotlib as mpl
import numpy as np

from dpaudit.audit.games import claimed_profile
from dpaudit.audit.result import regions_summary
from dpaudit.audit.stats import gdp_tradeoff, rdp_boundary
from dpaudit.reports.model import AuditResult
from dpaudit.reports.numbers import fmt_number
from dpaudit.reports.plots import _RC, _figure, _label, _svg

__all__ = ["tradeoff_chart"]


def tradeoff_chart(result: AuditResult) -> str | None:
    """The claimed regions, the headline's empirical trade-off and the test point, as
    SVG; ``None`` for a result without a test point (an older result)."""
    if result.fpr_upper is None or result.fnr_upper is None:
        return None
    claim = result.claim
    eps = result.eps_claimed
    delta = result.delta
    x = np.linspace(0.0, 1.0, 401)
    with mpl.rc_context(_RC):
        fig = _figure(4.8, 4.4)
        ax = fig.add_subplot()
        ax.plot(
            [0, 1], [1, 0], color="#9e9e9e", linestyle=":", linewidth=1, label="chance"
        )
        if eps is not None and math.isfinite(eps):
            # e^700 ~ 1e304 already puts the lines on the axes (x <= 1); a claim of
            # 1e308 would overflow math.exp
            e = math.exp(min(eps, 700.0))
            lines = np.maximum.reduce(
                [np.zeros_like(x), (1 - delta - x) / e, 1 - delta - e * x]
            )
            ax.plot(
                x,
                lines,
                color="#37474f",
                linewidth=1.4,
                label=f"(eps {fmt_number(eps)}, delta {delta:g}) lines",
            )
        if claim.gdp_mu is not None:
            ax.plot(
                x,
                gdp_tradeoff(x, mu=claim.gdp_mu),
                color="#1565c0",
                linewidth=1.4,
                label=f"mu-GDP, mu {fmt_number(claim.gdp_mu)}",
            )
        if claim.rdp or claim.zcdp_rho is not None:
            profile = claimed_profile(claim, delta=delta)
            rx, ry = rdp_boundary(profile, points=201)
            name = "RDP curve" if claim.rdp else "zCDP"
            if claim.rdp and claim.zcdp_rho is not None:
                name = "RDP curve and zCDP"
            ax.plot(
                rx,
                ry,
                color="#6a1b9a",
                linewidth=1.4,
                linestyle="--",
                label=f"{name} (Renyi test)",
            )
        head = result.attacks.get(result.attack)
        if head is not None and head.roc_fpr and head.roc_tpr:
            ax.plot(
                head.roc_fpr,
                [1 - t for t in head.roc_tpr],
                color="#ef6c00",
                linewidth=1.2,
                label=_label(f"{result.attack} (test rounds)"),
            )
        a, b = result.fpr_upper, result.fnr_upper
        ax.plot([a, a], [0, b], color="#c62828", linewidth=0.8, linestyle=":")
        ax.plot([0, a], [b, b], color="#c62828", linewidth=0.8, linestyle=":")
        regions = (
            regions_summary(result.regions_violated)
            if result.regions_violated
            else "no region violated"
        )
        ax.plot(
            [a],
            [b],
            marker="o",
            color="#c62828",
            linestyle="none",
            label=f"test point (bounded): {regions}",
        )
        ax.set_xlabel("false-positive rate (FPR)")
        ax.set_ylabel("false-negative rate (FNR)")
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.01, 1.01)
        ax.set_aspect("equal")
        ax.legend(loc="upper right", frameon=False, fontsize=7)
        return _svg(fig)
