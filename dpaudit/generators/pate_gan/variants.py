"""PATE-GAN's six reviewed implementations as variants of the reference.

Ganev, Annamalai and De Cristofaro (2024, "The Elusive Pursuit of Replicating
PATE-GAN") reviewed six public PATE-GAN implementations. Each is a set of the defect
flags :class:`~dpaudit.generators.pate_gan.config.PateGanConfig` declares plus that
implementation's architecture and defaults (docs/bugs.md).
"""

from __future__ import annotations

from dpaudit.generators.flags import Variant, register_config, register_variant
from dpaudit.generators.pate_gan.config import PateGanConfig

register_config("pategan", PateGanConfig)

# ------------------------------------------------------- the six implementations
_ALL_WITH_ACCOUNTANT = "budget_overshoot"

register_variant(
    Variant(
        name="original",
        generator="pategan",
        flags=frozenset(
            {
                "single_discriminator",
                "no_accountant",
                "gaussian_label_noise",
                "shared_sampling",
                "data_bounds",
                "label_distribution_given",
            }
        ),
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
)
register_variant(
    Variant(
        name="updated",
        generator="pategan",
        flags=frozenset(
            {
                "lr_teachers_refit",
                "partition_last_only",
                "data_bounds",
                "output_not_rescaled",
                "laplace_scale_inverted",
                "single_noise_vote",
                "balanced_partition",
                _ALL_WITH_ACCOUNTANT,
            }
        ),
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
)
register_variant(
    Variant(
        name="synthcity",
        generator="pategan",
        flags=frozenset(
            {
                "lr_teachers_refit",
                "repartition_every_iteration",
                "accountant_index_bug",
                "data_bounds",
                "single_noise_vote",
                "skip_unaccounted_queries",
                "student_sees_real_data",
                "delta_override",
                "real_category_frequencies",
                "private_categories",
                "balanced_partition",
                _ALL_WITH_ACCOUNTANT,
            }
        ),
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
)
register_variant(
    Variant(
        name="turing",
        generator="pategan",
        flags=frozenset(
            {
                "single_discriminator",
                "no_accountant",
                "gaussian_label_noise",
                "shared_sampling",
                "integer_floor",
            }
        ),
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
)
register_variant(
    Variant(
        name="borealis",
        generator="pategan",
        flags=frozenset(
            {
                "accountant_missing_log",
                "data_bounds",
                "output_not_rescaled",
                "single_noise_vote",
                "latent_mismatch",
                "balanced_partition",
                _ALL_WITH_ACCOUNTANT,
            }
        ),
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
)
register_variant(
    Variant(
        name="smartnoise",
        generator="pategan",
        flags=frozenset(
            {
                "accountant_missing_log",
                "single_noise_vote",
                "latent_mismatch",
                "balanced_partition",
                _ALL_WITH_ACCOUNTANT,
            }
        ),
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
)
