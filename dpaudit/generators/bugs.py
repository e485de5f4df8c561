"""The bug catalogue: every defect a named flag, every reviewed implementation a variant.

Ganev, Annamalai and De Cristofaro (2024, "The Elusive Pursuit of Replicating
PATE-GAN") reviewed six public PATE-GAN implementations. dpaudit reproduces each defect
as a boolean flag of the reference implementation's config (one visible ``if`` branch
in ``pate_gan.py`` or in the data encoding) and each implementation as a
:class:`Variant`: a set of flags plus that implementation's architecture and defaults.
A variant is data, not a fork of the code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from dpaudit.errors import InvalidParameterError

BugKind = Literal["privacy", "other", "further"]


@dataclass(frozen=True, kw_only=True, slots=True)
class BugFlag:
    """One defect.

    Attributes:
        name: the flag's name (also the config field that switches it on).
        generator: the generator whose config has the flag (``pategan``, ``gpate``).
        description: what the code does.
        consequence: the privacy (or utility) consequence.
        implementations: the reviewed implementations that have it.
        kind: ``privacy`` (a privacy violation counted in the study's Table 1),
            ``other`` (another bug in Table 1) or ``further`` (found in the same code,
            not in Table 1).
    """

    name: str
    generator: str
    description: str
    consequence: str
    implementations: tuple[str, ...]
    kind: BugKind

    @property
    def in_table1(self) -> bool:
        return self.kind in ("privacy", "other")


@dataclass(frozen=True, kw_only=True, slots=True)
class Variant:
    """A reviewed implementation, as configuration of the reference.

    Attributes:
        name: the implementation's name.
        generator: the reference generator it configures.
        flags: the bug flags switched on.
        overrides: architecture and hyperparameters (config field -> value).
        rationale: one line on where the variant comes from.
    """

    name: str
    generator: str
    flags: frozenset[str]
    overrides: Mapping[str, Any] = field(default_factory=dict)
    rationale: str = ""

    def with_flags(self, extra: Iterable[str]) -> Variant:
        """The variant with more flags switched on (``--bug FLAG``)."""
        extra = tuple(extra)
        check_flags(extra, generator=self.generator)
        return Variant(name=self.name, generator=self.generator,
                       flags=self.flags | frozenset(extra), overrides=self.overrides,
                       rationale=self.rationale)

    def config_overrides(self) -> dict[str, Any]:
        """Config field -> value: the architecture plus ``True`` for every flag."""
        out = dict(self.overrides)
        out.update(dict.fromkeys(sorted(self.flags), True))
        return out


_BUGS: dict[str, BugFlag] = {}
_VARIANTS: dict[str, Variant] = {}


def register_bug(flag: BugFlag) -> BugFlag:
    """Adds ``flag`` to the catalogue. Raises on a duplicate (generator, name)."""
    key = f"{flag.generator}:{flag.name}"
    if key in _BUGS:
        raise InvalidParameterError(f"bug flag {key!r} is already registered.")
    _BUGS[key] = flag
    return flag


def register_variant(variant: Variant) -> Variant:
    """Adds ``variant`` to the registry. Raises on a duplicate name or unknown flag."""
    if variant.name in _VARIANTS:
        raise InvalidParameterError(f"variant {variant.name!r} is already registered.")
    check_flags(variant.flags, generator=variant.generator)
    _VARIANTS[variant.name] = variant
    return variant


def bugs(generator: str | None = None) -> list[BugFlag]:
    """The catalogue, optionally for one generator, in registration order."""
    _load_generator_bugs()
    return [b for b in _BUGS.values() if generator is None or b.generator == generator]


def variants() -> Mapping[str, Variant]:
    return MappingProxyType(_VARIANTS)


def get_variant(name: str) -> Variant:
    try:
        return _VARIANTS[name]
    except KeyError:
        raise InvalidParameterError(
            f"`--variant` must be one of {', '.join(_VARIANTS)}. Got {name!r}."
        ) from None


def check_flags(names: Iterable[str], *, generator: str) -> None:
    """Raises :class:`InvalidParameterError` naming any flag unknown for ``generator``."""
    known = {b.name for b in bugs(generator)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InvalidParameterError(
            f"unknown bug flag(s) {unknown} for generator {generator!r}; "
            "`dpaudit list bugs` lists them."
        )


def build_config(config_cls: type[Any], *, generator: str, label: str, epsilon: float,
                 delta: float, variant: str | None = None,
                 bugs: Iterable[str] | str = (), **options: Any) -> Any:
    """A generator config from a variant name, extra bug flags and plain options
    (CLI, TOML): the variant's overrides, then the flags, then the options (those
    set to None keep their default), then the budget.

    Raises:
        InvalidParameterError: for an unknown option or flag, or a variant of
            another generator.
    """
    known = set(config_cls.__dataclass_fields__)
    overrides: dict[str, Any] = {}
    if variant:
        chosen = get_variant(variant)
        if chosen.generator != generator:
            raise InvalidParameterError(
                f"`variant` {variant!r} configures {chosen.generator!r}, not {generator!r}."
            )
        overrides.update(chosen.config_overrides())
        if "variant" in known:
            overrides["variant"] = variant
    flags = [bugs] if isinstance(bugs, str) else list(bugs)
    check_flags(flags, generator=generator)
    overrides.update(dict.fromkeys(flags, True))
    unknown = sorted(set(options) - known)
    if unknown:
        raise InvalidParameterError(
            f"unknown {label} option(s) {unknown}; valid options: {sorted(known)}."
        )
    overrides.update({k: v for k, v in options.items() if v is not None})
    overrides.update(epsilon=epsilon, delta=delta)
    return config_cls(**overrides)


def _load_generator_bugs() -> None:
    # G-PATE registers its own flags when imported.
    import importlib

    importlib.import_module("dpaudit.generators.g_pate")


def _pg(name: str, kind: BugKind, impls: str, description: str, consequence: str) -> None:
    register_bug(BugFlag(name=name, generator="pategan", kind=kind,
                         implementations=tuple(impls.split()), description=description,
                         consequence=consequence))


# ----------------------------------------------------------- PATE-GAN defects
_pg("single_discriminator", "privacy", "original turing",
    "no teachers and no student: one discriminator sees all the data and the generator "
    "trains directly against it (WGAN-GP loss)",
    "no privacy mechanism at all: the generator's gradients come from the raw data")
_pg("no_accountant", "privacy", "original turing",
    "trains a fixed number of iterations; epsilon only sets a noise scale; nothing is tracked",
    "the claimed epsilon is nominal: nothing bounds what training spends")
_pg("gaussian_label_noise", "privacy", "original turing",
    "Gaussian noise on the discriminator's own real/fake training labels, "
    "sigma = sqrt(2 ln(1.25 X))/epsilon with a wrong X (original: 10 XOR 5 = 15, "
    "sigma = 2.421/epsilon; turing: 1.25 * 10**delta, sigma = 0.668/epsilon)",
    "label noise does not bound the influence of a record: no DP guarantee")
_pg("partition_last_only", "privacy", "updated",
    "an index bug makes every teacher train on the last partition",
    "the claim's partition argument fails: all teachers see the same records, one "
    "record changes every vote")
_pg("repartition_every_iteration", "privacy", "synthcity",
    "a fresh random partition is drawn every iteration",
    "over training every teacher sees every record: one record can change all votes")
_pg("shared_sampling", "privacy", "original turing",
    "each teacher step samples its batch from all rows",
    "no disjoint partitions: every teacher sees every record")
_pg("accountant_index_bug", "privacy", "synthcity",
    "exp(2*lambda*l + 1) where exp(2*lambda*(l+1)) is meant in the moments update",
    "underestimates epsilon when lambda > 0.5: training spends more than it claims")
_pg("accountant_missing_log", "privacy", "borealis smartnoise",
    "the data-dependent moment term is used without its log, then clamped to the "
    "data-independent bound",
    "overestimates epsilon (stops early: a utility loss, not a leak by itself)")
_pg("data_bounds", "privacy", "original updated synthcity borealis",
    "min/max fitted on the private data and used to scale inputs and outputs",
    "a record that sets a column's extreme leaks through the released range")
_pg("lr_teachers_refit", "other", "updated synthcity",
    "teachers are logistic regressions re-created and refitted from scratch every "
    "iteration on real plus generated rows",
    "teachers forget the generator's history; votes are near-deterministic")
_pg("output_not_rescaled", "other", "updated borealis",
    "synthetic data is returned in the model's [0, 1] space, not in original units",
    "released data has the wrong units (a utility bug)")
_pg("integer_floor", "other", "turing",
    "integer columns are truncated (astype(int)) instead of rounded",
    "integer values are biased downwards (a utility bug)")
_pg("laplace_scale_inverted", "further", "updated",
    "votes get Lap(lambda) noise while the accountant assumes Lap(1/lambda)",
    "at small lambda the vote is effectively noiseless while the accountant charges "
    "for scale 1/lambda")
_pg("single_noise_vote", "further", "updated synthcity borealis smartnoise",
    "one Laplace draw added to the 'real' count and compared with k/2",
    "the data-dependent q no longer bounds the error rate: the data-dependent claim "
    "is invalid (the data-independent bound still holds)")
_pg("skip_unaccounted_queries", "further", "synthcity",
    "when most noisy labels of a batch say 'real', the batch is dropped without being "
    "charged to the accountant",
    "the decision to drop is itself a function of the votes and is not accounted")
_pg("student_sees_real_data", "further", "synthcity",
    "the student discriminator is also trained on real rows",
    "the student, and the generator behind it, see the data with no noise at all")
_pg("delta_override", "further", "synthcity",
    "the delta passed in is ignored and 1/(n sqrt(n)) used (0.125 for n = 4)",
    "the claim is for a far larger delta than asked")
_pg("real_category_frequencies", "further", "synthcity",
    "generation draws conditional category vectors from the real data's frequencies",
    "category frequencies of the private data are released without noise")
_pg("latent_mismatch", "further", "borealis smartnoise",
    "trained on U(0,1) latent noise, sampled from N(0,1)",
    "samples come from outside the training distribution (a utility bug)")
_pg("label_distribution_given", "further", "original",
    "the real label distribution is passed to the generator and used at sampling",
    "the private label frequencies are released without noise")
_pg("budget_overshoot", "further", "updated synthcity borealis smartnoise",
    "the budget is checked once per outer iteration, so the last iteration can exceed "
    "epsilon",
    "the final claim can exceed the budget asked for")


# ------------------------------------------------------- the six implementations
_ALL_WITH_ACCOUNTANT = "budget_overshoot"

register_variant(Variant(
    name="original", generator="pategan",
    flags=frozenset({"single_discriminator", "no_accountant", "gaussian_label_noise",
                     "shared_sampling", "data_bounds", "label_distribution_given"}),
    overrides={"gaussian_noise_form": "xor", "generator_hidden": "d,d",
               "generator_activation": "tanh", "latent_dim": "d/4",
               "latent_distribution": "uniform_pm1", "discriminator_hidden": "d,d",
               "optimizer": "adam", "lr": 1e-4, "beta1": 0.5, "batch_size": 128,
               "fixed_iterations": 10_000, "gradient_penalty": 10.0},
    rationale="the PATE-GAN authors' original code: a WGAN-GP with label noise, no PATE",
))
register_variant(Variant(
    name="updated", generator="pategan",
    flags=frozenset({"lr_teachers_refit", "partition_last_only", "data_bounds",
                     "output_not_rescaled", "laplace_scale_inverted", "single_noise_vote",
                     _ALL_WITH_ACCOUNTANT}),
    overrides={"student_hidden": "", "student_clip": 0.01, "generator_hidden": "4d,4d",
               "generator_activation": "tanh", "latent_dim": "d",
               "latent_distribution": "uniform_pm1", "optimizer": "rmsprop", "lr": 1e-4,
               "batch_size": 64, "lam": 1.0, "orders": 20},
    rationale="the authors' updated code: LR teachers, one partition used, inverted noise",
))
register_variant(Variant(
    name="synthcity", generator="pategan",
    flags=frozenset({"lr_teachers_refit", "repartition_every_iteration",
                     "accountant_index_bug", "data_bounds", "single_noise_vote",
                     "skip_unaccounted_queries", "student_sees_real_data", "delta_override",
                     "real_category_frequencies", _ALL_WITH_ACCOUNTANT}),
    overrides={"student_hidden": "100,100", "student_activation": "leaky_relu",
               "student_dropout": 0.1, "generator_hidden": "100,100",
               "generator_activation": "relu", "latent_dim": "100",
               "latent_distribution": "normal", "optimizer": "adam", "lr": 1e-4,
               "weight_decay": 1e-3, "batch_size": 200, "student_steps": 10,
               "generator_steps": 10, "max_iterations": 1000, "lam": 1e-3, "orders": 100},
    rationale="synthcity's plugin: repartitions every iteration, index bug in the accountant",
))
register_variant(Variant(
    name="turing", generator="pategan",
    flags=frozenset({"single_discriminator", "no_accountant", "gaussian_label_noise",
                     "shared_sampling", "integer_floor"}),
    overrides={"gaussian_noise_form": "multiply", "generator_hidden": "d,d",
               "generator_activation": "tanh", "latent_dim": "d/4",
               "latent_distribution": "uniform_pm1", "discriminator_hidden": "d,d",
               "optimizer": "adam", "lr": 1e-4, "beta1": 0.5, "batch_size": 128,
               "fixed_iterations": 100, "gradient_penalty": "k"},
    rationale="the Alan Turing Institute's port of the original: same design, 100 iterations",
))
register_variant(Variant(
    name="borealis", generator="pategan",
    flags=frozenset({"accountant_missing_log", "data_bounds", "output_not_rescaled",
                     "single_noise_vote", "latent_mismatch", _ALL_WITH_ACCOUNTANT}),
    overrides={"teacher_hidden": "d/2", "student_hidden": "d/2", "generator_hidden": "2z",
               "generator_activation": "relu", "generator_output": "linear",
               "latent_dim": "d/4", "optimizer": "adam", "lr": 1e-4, "batch_size": 64,
               "teacher_steps": 5, "student_steps": 5, "lam": 1e-4, "orders": 100},
    rationale="Borealis AI's implementation: correct partitions, accountant without its log",
))
register_variant(Variant(
    name="smartnoise", generator="pategan",
    flags=frozenset({"accountant_missing_log", "single_noise_vote", "latent_mismatch",
                     _ALL_WITH_ACCOUNTANT}),
    overrides={"teacher_hidden": "2d/3,d/3", "teacher_activation": "leaky_relu",
               "student_hidden": "2d/3,d/3", "student_activation": "leaky_relu",
               "generator_hidden": "64,64,64", "generator_residual": True,
               "generator_layer_norm": True, "latent_dim": "64", "optimizer": "adam",
               "lr": 1e-4, "batch_size": 64, "teacher_steps": 5, "student_steps": 5,
               "lam": 1e-3, "orders": 100},
    rationale="OpenDP SmartNoise's port of Borealis: same accountant defect",
))
