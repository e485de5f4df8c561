"""PATE-GAN's six reviewed implementations as variants of the reference.

Ganev, Annamalai and De Cristofaro (2024, "The Elusive Pursuit of Replicating
PATE-GAN") reviewed six public PATE-GAN implementations. Each is a set of the defect
flags :class:`~dpaudit.generators.pate_gan.config.PateGanConfig` declares plus that
implementation's architecture and defaults (docs/bugs.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpaudit.generators.flags import Variant, implementation_flags, register_variant
from dpaudit.generators.names import PATE_GAN, PateGanVariant
from dpaudit.generators.pate_gan.config import PateGanConfig


def _register(
    name: PateGanVariant,
    *,
    overrides: Mapping[str, Any],
    rationale: str,
    omit: Mapping[str, str] | None = None,
) -> None:
    """Registers the variant ``name``: its flags are those whose ``implementations``
    name it (the catalogue is the one place a variant's flags are written), less
    ``omit`` (flag -> why the variant leaves it out)."""
    register_variant(
        Variant(
            name=name,
            generator=PATE_GAN,
            flags=implementation_flags(PateGanConfig, name, omit=omit or {}),
            overrides=overrides,
            rationale=rationale,
        ),
        config_cls=PateGanConfig,
    )


# ------------------------------------------------------- the six implementations
_register(
    "original",
    overrides={
        "gaussian_noise_form": "xor",
        "generator_hidden": "d,d",
        "generator_activation": "tanh",
        "latent_dim": "d/4",
        "latent_distribution": "uniform_pm1",
        "discriminator_hidden": "d,d",
        "optimizer": "adam",
        "lr": 1e-4,
        "beta1": 0.5,
        "batch_size": 128,
        "fixed_iterations": 10_000,
        "gradient_penalty": 10.0,
    },
    rationale="the PATE-GAN authors' original code: a WGAN-GP with label noise, no PATE",
)
_register(
    "updated",
    overrides={
        "student_hidden": "d",
        "student_clip": 0.01,
        "student_loss": "wasserstein",
        "teacher_rows": "partition",
        "generator_hidden": "4d,4d",
        "generator_activation": "tanh",
        "latent_dim": "d",
        "latent_distribution": "uniform_pm1",
        "optimizer": "rmsprop",
        "lr": 1e-4,
        "batch_size": 64,
        "lam": 1.0,
        "orders": 20,
    },
    rationale="the authors' updated code: LR teachers, one partition used, inverted noise",
)
_register(
    "synthcity",
    overrides={
        "student_hidden": "100,100",
        "student_activation": "leaky_relu",
        "student_dropout": 0.1,
        "generator_hidden": "100,100",
        "generator_activation": "relu",
        "latent_dim": "100",
        "latent_distribution": "normal",
        "optimizer": "adam",
        "lr": 1e-4,
        "weight_decay": 1e-3,
        "batch_size": 200,
        "student_steps": 10,
        "generator_steps": 10,
        "max_iterations": 1000,
        "lam": 1e-3,
        "orders": 100,
    },
    rationale="synthcity's plugin: repartitions every iteration, index bug in the accountant",
)
_register(
    "turing",
    overrides={
        "gaussian_noise_form": "multiply",
        "generator_hidden": "d,d",
        "generator_activation": "tanh",
        "latent_dim": "d/4",
        "latent_distribution": "uniform_pm1",
        "discriminator_hidden": "d,d",
        "optimizer": "adam",
        "lr": 1e-4,
        "beta1": 0.5,
        "batch_size": 128,
        "fixed_iterations": 100,
        "gradient_penalty": "k",
    },
    rationale="the Alan Turing Institute's port of the original: same design, 100 iterations",
)
_register(
    "borealis",
    overrides={
        "teacher_hidden": "d/2",
        "student_hidden": "d/2",
        "generator_hidden": "2z",
        "generator_activation": "relu",
        "generator_output": "linear",
        "latent_dim": "d/4",
        "optimizer": "adam",
        "lr": 1e-4,
        "batch_size": 64,
        "teacher_steps": 5,
        "student_steps": 5,
        "lam": 1e-4,
        "orders": 100,
        "partition_order": "rows",
    },
    rationale="Borealis AI's implementation: correct partitions, accountant without its log",
)
_register(
    "smartnoise",
    omit={
        "private_categories": "the variant models smartnoise given a public, "
        "pre-fitted transformer (--bug private_categories adds its default "
        "preprocessing; docs/bugs.md)"
    },
    overrides={
        "teacher_hidden": "2d/3,d/3",
        "teacher_activation": "leaky_relu",
        "student_hidden": "2d/3,d/3",
        "student_activation": "leaky_relu",
        "generator_hidden": "64,64",
        "generator_activation": "leaky_relu",
        "generator_residual": True,
        "generator_layer_norm": True,
        "latent_dim": "64",
        "optimizer": "adam",
        "lr": 1e-4,
        "batch_size": 64,
        "teacher_steps": 5,
        "student_steps": 5,
        "lam": 1e-3,
        "orders": 100,
        "teacher_rule": "smartnoise",
        "partition_order": "rows",
    },
    rationale="OpenDP SmartNoise's port of Borealis: same accountant defect; "
    "int(n / 1000) teachers (--option small_table=study below 1,000 rows); "
    "--bug private_categories for its default preprocessing",
)
