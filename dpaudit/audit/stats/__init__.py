"""Pure statistics: no game, no store, no configuration. Estimators of the error
rates and eps_emp, sizing, the Bayesian estimate, trade-off curves, privacy profiles,
ceilings, thresholds, the one-run bound and the AUC.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.audit.stats.calibrated import (
        clear_caches,
        deciding_counts,
        deciding_level,
        family,
        family_counts,
        judge,
        refutes_perfectly,
        rounds_needed,
    )
    from dpaudit.audit.stats.ceiling import (
        eps_ceiling,
        mu_ceiling,
        mu_max_attainable,
        profile_rounds_needed,
    )
    from dpaudit.audit.stats.claimnotes import (
        claim_dp_text,
        over_budget_note,
        rounds_to_decide,
    )
    from dpaudit.audit.stats.estimators import (
        AttackCounts,
        eps_lower_bound,
        eps_max_attainable,
        rate_upper_bound,
        rate_upper_bounds,
    )
    from dpaudit.audit.stats.levelgap import level_gap
    from dpaudit.audit.stats.memo import use_store
    from dpaudit.audit.stats.onerun_bound import (
        onerun_eps_lower_bound,
        onerun_eps_max_attainable,
    )
    from dpaudit.audit.stats.onerun_curves import ProfileCurve, profile_curve
    from dpaudit.audit.stats.onerun_fdp import rejects
    from dpaudit.audit.stats.oracle import (
        violation_ceiling,
    )
    from dpaudit.audit.stats.profile import (
        ClaimedProfile,
        gdp_tradeoff,
        judge_point,
        rdp_boundary,
    )
    from dpaudit.audit.stats.sizing import (
        fewest_rounds,
    )
    from dpaudit.audit.stats.thresholds import (
        roc_auc,
    )
    from dpaudit.audit.stats.tradeoff import (
        bernoulli_renyi,
        eps_of_gdp,
        gdp_delta,
        gdp_mu_of_eps,
        mu_lower_bound,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpaudit.audit.stats.estimators": (
        "AttackCounts",
        "rate_upper_bound",
        "rate_upper_bounds",
        "eps_lower_bound",
        "eps_max_attainable",
    ),
    "dpaudit.audit.stats.calibrated": (
        "clear_caches",
        "deciding_counts",
        "deciding_level",
        "family",
        "family_counts",
        "judge",
        "refutes_perfectly",
        "rounds_needed",
    ),
    "dpaudit.audit.stats.ceiling": (
        "mu_ceiling",
        "mu_max_attainable",
        "eps_ceiling",
        "profile_rounds_needed",
    ),
    "dpaudit.audit.stats.claimnotes": (
        "claim_dp_text",
        "over_budget_note",
        "rounds_to_decide",
    ),
    "dpaudit.audit.stats.onerun_bound": (
        "onerun_eps_lower_bound",
        "onerun_eps_max_attainable",
    ),
    "dpaudit.audit.stats.profile": (
        "ClaimedProfile",
        "gdp_tradeoff",
        "judge_point",
        "rdp_boundary",
    ),
    "dpaudit.audit.stats.tradeoff": (
        "bernoulli_renyi",
        "gdp_delta",
        "gdp_mu_of_eps",
        "mu_lower_bound",
        "eps_of_gdp",
    ),
    "dpaudit.audit.stats.sizing": ("fewest_rounds",),
    "dpaudit.audit.stats.levelgap": ("level_gap",),
    "dpaudit.audit.stats.onerun_fdp": ("rejects",),
    "dpaudit.audit.stats.onerun_curves": ("ProfileCurve", "profile_curve"),
    "dpaudit.audit.stats.memo": ("use_store",),
    "dpaudit.audit.stats.oracle": ("violation_ceiling",),
    "dpaudit.audit.stats.thresholds": ("roc_auc",),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "AttackCounts",
    "ClaimedProfile",
    "ProfileCurve",
    "bernoulli_renyi",
    "claim_dp_text",
    "clear_caches",
    "deciding_counts",
    "deciding_level",
    "eps_ceiling",
    "eps_lower_bound",
    "eps_max_attainable",
    "eps_of_gdp",
    "family",
    "family_counts",
    "fewest_rounds",
    "gdp_delta",
    "gdp_mu_of_eps",
    "gdp_tradeoff",
    "judge",
    "judge_point",
    "level_gap",
    "mu_ceiling",
    "mu_lower_bound",
    "mu_max_attainable",
    "onerun_eps_lower_bound",
    "onerun_eps_max_attainable",
    "over_budget_note",
    "profile_curve",
    "profile_rounds_needed",
    "rate_upper_bound",
    "rate_upper_bounds",
    "rdp_boundary",
    "refutes_perfectly",
    "rejects",
    "roc_auc",
    "rounds_needed",
    "rounds_to_decide",
    "use_store",
    "violation_ceiling",
]
