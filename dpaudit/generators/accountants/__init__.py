"""Privacy accountants as pure functions over ledgers.

* :mod:`~dpaudit.generators.accountants.moments`: PATE-GAN's moments accountant
  (Jordon et al. 2019; Papernot et al. 2017, Thm 3) over histograms of vote gaps.
* :mod:`~dpaudit.generators.accountants.gnmax`: the Confident-GNMax Renyi-DP
  accountant of G-PATE (Papernot et al. 2018; Long et al. 2021).
* :mod:`~dpaudit.generators.accountants.conversion`: RDP (and log-moments) to
  ``(epsilon, delta)``, classic (Mironov 2017) or improved (Balle et al. 2020; Canonne,
  Kamath, Steinke 2020, as in dp-accounting); see docs/formulas.md.
* :mod:`~dpaudit.generators.accountants.reference`: the same compositions and
  conversions computed by dp-accounting itself, to cross-check against.

Everything is pure: no I/O, no randomness, float64.
"""

from __future__ import annotations

from dpaudit.generators.accountants.conversion import (
    CONVERSIONS,
    RDP_ORDERS,
    Conversion,
    epsilon_from_moments,
    epsilon_from_rdp,
    epsilon_per_order,
    moments_offset,
    optimal_order,
)
from dpaudit.generators.accountants.gnmax import (
    ConfidentGnmaxLedger,
    calibrate_confident_gnmax_sigmas,
    compress_vote_histograms,
    confident_gnmax_epsilon,
    confident_gnmax_rdp,
    confident_gnmax_rdp_data_independent,
    gnmax_log_error_bound,
    gnmax_rdp_data_dependent,
    gnmax_rdp_data_independent,
    threshold_rdp,
)
from dpaudit.generators.accountants.moments import (
    FloatArray,
    MomentsAccountantSpec,
    data_independent_increment,
    error_bound,
    increment_table,
    ledger_summary,
    max_queries_data_independent,
    moments_from_gap_counts,
    moments_increment,
    pate_gan_epsilon,
)

__all__ = [
    "CONVERSIONS",
    "RDP_ORDERS",
    "ConfidentGnmaxLedger",
    "Conversion",
    "FloatArray",
    "MomentsAccountantSpec",
    "calibrate_confident_gnmax_sigmas",
    "compress_vote_histograms",
    "confident_gnmax_epsilon",
    "confident_gnmax_rdp",
    "confident_gnmax_rdp_data_independent",
    "data_independent_increment",
    "epsilon_from_moments",
    "epsilon_from_rdp",
    "epsilon_per_order",
    "error_bound",
    "gnmax_log_error_bound",
    "gnmax_rdp_data_dependent",
    "gnmax_rdp_data_independent",
    "increment_table",
    "ledger_summary",
    "max_queries_data_independent",
    "moments_from_gap_counts",
    "moments_increment",
    "moments_offset",
    "optimal_order",
    "pate_gan_epsilon",
    "threshold_rdp",
]
