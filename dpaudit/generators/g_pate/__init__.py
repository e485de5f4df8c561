"""G-PATE (Long et al., NeurIPS 2021): a reference implementation for auditing.

This code exists to be audited, not to protect production data (compare Opacus'
``secure_mode``: the noise comes from ordinary PyTorch generators).

G-PATE has no student discriminator. ``k`` teacher discriminators are trained,
non-privately, each on its own partition of the private data (real rows) against
generated rows; each record goes to one teacher, drawn independently and uniformly
from the public stream (:mod:`~dpaudit.generators.g_pate.partition`), so adding a
record changes one teacher's data only. For every generated record ``x`` each
teacher computes the direction that improves ``x`` under its loss, ``-dL/dx``;
DPGradAgg (:mod:`~dpaudit.generators.g_pate.aggregation`) aggregates the ``k``
directions privately with Confident-GNMax and the generator is trained by MSE towards
``x + aggregated direction``. The accountant (:mod:`~dpaudit.generators.g_pate.accounting`)
charges Renyi DP per query and stops training before the budget could be exceeded.

Modules: :mod:`.config` (the config, its defect flags, the options an audit builds
it from), :mod:`.layout`, :mod:`.networks`, :mod:`.partition`, :mod:`.aggregation`,
:mod:`.accounting`, :mod:`.trainer` (training by phase, ``M`` models as one tensor
program, one public and one privacy stream per model), :mod:`.release` (the releases
of a ``fit_many`` ensemble in one generator pass) and :mod:`.model` (the
:class:`GPate` object).
"""

from __future__ import annotations

from dpaudit.generators.g_pate.accounting import (
    ACCOUNTANT_NAME,
    NOT_SANITISED_NOTE,
    UNSANITISED_ACCOUNTANT_NAME,
)
from dpaudit.generators.g_pate.aggregation import (
    Aggregate,
    dp_grad_agg,
    teacher_input_gradients,
)
from dpaudit.generators.g_pate.config import (
    IMAGE_SIDE,
    GPateConfig,
    config_from_options,
    defaults_for_rows,
    with_small_table_defaults,
)
from dpaudit.generators.g_pate.model import GPate, make_gpate
from dpaudit.generators.g_pate.networks import (
    _ConvGenerators,
    _ConvTeachers,
    _MlpGenerators,
    _MlpTeachers,
)
from dpaudit.generators.g_pate.partition import assign_teachers

__all__ = [
    "ACCOUNTANT_NAME",
    "IMAGE_SIDE",
    "NOT_SANITISED_NOTE",
    "UNSANITISED_ACCOUNTANT_NAME",
    "Aggregate",
    "GPate",
    "GPateConfig",
    "_ConvGenerators",
    "_ConvTeachers",
    "_MlpGenerators",
    "_MlpTeachers",
    "assign_teachers",
    "config_from_options",
    "defaults_for_rows",
    "dp_grad_agg",
    "make_gpate",
    "teacher_input_gradients",
    "with_small_table_defaults",
]
