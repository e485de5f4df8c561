"""Reference PATE-GAN (Jordon, Yoon and van der Schaar, ICLR 2019), batched, with the
defects of six public implementations as flags (docs/bugs.md).

Algorithm 1 of PATE-GAN: ``k`` teacher discriminators, each trained only on its own
disjoint partition of the data (real rows vs generated rows); a student discriminator
trained only on generated rows labelled by the noisy teacher vote; a generator trained
to fool the student. Training stops when the moments accountant's epsilon would exceed
the budget. The noisy vote is report-noisy-max with independent ``Lap(1/lambda)``
noise on both counts, which is what the accountant's data-dependent bound assumes.

Modules: :mod:`.config` (hyperparameters and the defect catalogue), :mod:`.state`,
:mod:`.teachers`, :mod:`.student`, :mod:`.critic` and :mod:`.trainer` (the batched
training run, by phase), :mod:`.claim` (the accounting and the reference epsilon),
:mod:`.model` (:class:`PateGan`), :mod:`.variants` (the six implementations).
"""

from __future__ import annotations

from dpaudit.generators.pate_gan import variants as _variants  # noqa: F401  (registers)
from dpaudit.generators.pate_gan.claim import UNBOUNDED, reference_epsilon
from dpaudit.generators.pate_gan.config import (
    BUG_FIELDS,
    PateGanConfig,
    audit_num_teachers,
    default_num_teachers,
    gaussian_label_sigma,
    resolve_device,
    rule_num_teachers,
    widths,
)
from dpaudit.generators.pate_gan.model import PateGan, config_from_options
from dpaudit.generators.pate_gan.teachers import fit_logistic_regression

__all__ = [
    "BUG_FIELDS",
    "UNBOUNDED",
    "PateGan",
    "PateGanConfig",
    "audit_num_teachers",
    "config_from_options",
    "default_num_teachers",
    "fit_logistic_regression",
    "gaussian_label_sigma",
    "reference_epsilon",
    "resolve_device",
    "rule_num_teachers",
    "widths",
]
