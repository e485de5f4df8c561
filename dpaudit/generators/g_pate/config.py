"""G-PATE's configuration, its defect flags, and the options an audit builds it from.

The two defect flags are declared here, once, as fields made by
:func:`~dpaudit.generators.catalogue.bug_field`: their metadata is the catalogue
entry (``declared_bugs(GPateConfig)``, docs/bugs.md). This module imports neither
generator registry nor the bug catalogue module, so the catalogue can derive from
the config without an import cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from dpaudit.errors import InvalidParameterError, did_you_mean
from dpaudit.generators import accountants
from dpaudit.generators.catalogue import bug_field, declared_bugs
from dpaudit.generators.names import DEVICES, Device
from dpaudit.validation import check_choice, check_scalar, require

Architecture = Literal["mlp", "dcgan"]
AccountantMode = Literal["data_independent", "data_dependent"]

IMAGE_SIDE = 28
"""Images of the ``dcgan`` architecture are ``IMAGE_SIDE x IMAGE_SIDE``, one channel."""

PUBLISHED_NUM_TEACHERS = 2100
"""G-PATE's published number of teachers (the default of ``num_teachers``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class GPateConfig:
    """Configuration of :class:`~dpaudit.generators.g_pate.GPate`.

    Defaults are G-PATE's published Kaggle Credit settings (Long et al. 2021): 2,100
    teachers, batch 32, ``sigma1 = 1500``, ``sigma2 = 600``, projection dimension 5,
    ``T = 0.5 k``, ``c = 1e-4``, ``B = 10``, Adam 1e-3. The noise scales go with the
    number of teachers: with far fewer teachers, scale the sigmas down with ``k``.

    Args:
        epsilon: the privacy budget; training stops before it would be exceeded.
        delta: the delta of the ``(epsilon, delta)`` claim, in (0, 1).
        num_teachers: teachers ``k``; the data needs at least one row per teacher.
        batch_size: generated records per iteration (also the teachers' batch).
        sigma1: noise of Confident-GNMax's threshold check.
        sigma2: noise of the GNMax answer.
        threshold: ``T`` as a fraction of the teachers, in (0, 1].
        projection_dim: ``p``, coordinates of each projected gradient (queries per
            record).
        clip: ``c``, coordinates are clipped to ``[-c, c]``.
        bins: ``B``, bins of the discretised coordinate (GNMax classes), >= 2.
        lr: Adam learning rate of teachers and generator.
        max_iterations: cap on training iterations (generator updates).
        latent_dim: generator input width (default: the data width for ``mlp``,
            100 for ``dcgan``).
        architecture: ``mlp`` (tabular; PATE-GAN-sized: generator hidden
            ``d, d/2, d``, teachers one hidden layer of ``d``, ``d`` the encoded
            width of the generated columns; conditional on ``label_column`` when
            given) or ``dcgan`` (28 x 28 one-channel images, DCGAN-style
            convolutional teachers and generator, conditional on ``label_column``
            when given).
        image_channels: base channel count of the ``dcgan`` networks (teachers
            ``w, 2w``; generator ``2w, w``).
        label_column: the class column the networks condition on (binary,
            categorical, or integer with public bounds), as in G-PATE's conditional
            generator. The generator maps ``z ++ onehot(y)`` to the other columns;
            each teacher scores ``(x, onehot(y))``, real rows with their own class,
            generated rows with the class they were conditioned on; DPGradAgg
            aggregates gradients with respect to ``x`` only (the class is not
            perturbed, and the number and kind of queries is unchanged). Classes of
            generated rows, in training and in ``sample``, are drawn uniformly over
            the public categories: the real class frequencies are never used nor
            released (a released table has about equal classes, whatever the
            private distribution). With ``dcgan`` every other column is a pixel
            (28 x 28 of them, row-major). ``None`` (default): unconditional.
        teacher_steps: teacher updates per iteration.
        device: ``auto`` (CUDA when available), ``cpu`` or ``cuda``.
        accountant: ``data_independent`` (the DP claim) or ``data_dependent``, which
            also traces the data-dependent epsilon, labelled "not sanitised"; the
            claim stays data-independent.
        record_trace: also record the records each teacher holds (``records_seen``)
            in the claim's trace, next to the per-iteration epsilon and answered
            queries it always holds (``dpaudit trace --generator gpate``).
        unsanitised_data_dependent: DEFECT (public G-PATE code): training stops on
            the unsanitised data-dependent epsilon and the claim reports it.
        data_bounds: DEFECT: bounds and categories are read from the private data
            (``Domain.with_data_bounds``).
    """

    epsilon: float
    delta: float
    num_teachers: int = PUBLISHED_NUM_TEACHERS
    batch_size: int = 32
    sigma1: float = 1500.0
    sigma2: float = 600.0
    threshold: float = 0.5
    projection_dim: int = 5
    clip: float = 1e-4
    bins: int = 10
    lr: float = 1e-3
    max_iterations: int = 10_000
    latent_dim: int | None = None
    architecture: Architecture = "mlp"
    image_channels: int = 32
    label_column: str | None = None
    teacher_steps: int = 1
    device: Device = "auto"
    accountant: AccountantMode = "data_independent"
    record_trace: bool = False
    unsanitised_data_dependent: bool = bug_field(
        kind="further",
        implementations="g-pate",
        description="training stops on, and the claim reports, the data-dependent RDP "
        "epsilon of Confident-GNMax (Papernot et al. 2018, Thm 6) without "
        "smooth-sensitivity sanitisation",
        consequence="the claimed epsilon is a function of the private data, not a DP "
        "guarantee; the data-independent epsilon actually spent exceeds the "
        "budget",
    )
    data_bounds: bool = bug_field(
        kind="further",
        implementations="g-pate",
        description="bounds and categories read from the private data "
        "(Domain.with_data_bounds) to scale inputs and outputs",
        consequence="a record that sets a column's extreme leaks through the released "
        "range",
        unbounded_reason="bounds read from the private data reach the release "
        "(data_bounds)",
    )

    def __post_init__(self) -> None:
        check_scalar(self.epsilon, "epsilon", min_val=0, closed="neither")
        check_scalar(self.delta, "delta", min_val=0, max_val=1, closed="neither")
        for name in (
            "num_teachers",
            "batch_size",
            "projection_dim",
            "image_channels",
            "teacher_steps",
        ):
            check_scalar(getattr(self, name), name, kind=int, min_val=1)
        for name in ("sigma1", "sigma2", "clip", "lr"):
            check_scalar(getattr(self, name), name, min_val=0, closed="neither")
        check_scalar(self.threshold, "threshold", min_val=0, max_val=1, closed="right")
        check_scalar(self.bins, "bins", kind=int, min_val=2)
        check_scalar(self.max_iterations, "max_iterations", kind=int, min_val=0)
        check_scalar(
            self.latent_dim, "latent_dim", kind=int, min_val=1, allow_none=True
        )
        check_choice(self.architecture, "architecture", ("mlp", "dcgan"))
        require(
            self.label_column is None
            or (isinstance(self.label_column, str) and bool(self.label_column)),
            "label_column",
            "a column name or None",
            self.label_column,
        )
        check_choice(self.device, "device", DEVICES)
        check_choice(
            self.accountant, "accountant", ("data_independent", "data_dependent")
        )
        for flag in declared_bugs(GPateConfig):
            value = getattr(self, flag)
            require(isinstance(value, bool), flag, "True or False", value)

    @property
    def traces_data_dependent(self) -> bool:
        """Whether training computes the (unsanitised) data-dependent epsilon."""
        return self.accountant == "data_dependent" or self.unsanitised_data_dependent

    @property
    def threshold_count(self) -> float:
        """``T``: the vote count the noisy top count must reach."""
        return self.threshold * self.num_teachers


def config_from_options(
    *,
    epsilon: float,
    delta: float,
    variant: str | None = None,
    bugs: Iterable[str] | str = (),
    **options: Any,
) -> GPateConfig:
    """A config from bug flags and plain options (CLI, TOML): the flags, then the
    options (those set to None keep their default), then the budget.

    G-PATE has no variants (the catalogued implementations configure PATE-GAN), so
    ``variant`` must be None.

    Raises:
        InvalidParameterError: for a variant, an unknown flag, or an unknown option
            (the message names the valid ones).
    """
    require(
        variant is None,
        "variant",
        "None for G-PATE (the variants configure PATE-GAN; `dpaudit list variants`)",
        variant,
    )
    known = [f.name for f in fields(GPateConfig)]
    flags = [bugs] if isinstance(bugs, str) else list(bugs)
    declared = declared_bugs(GPateConfig)
    unknown_flags = [f for f in flags if f not in declared]
    if unknown_flags:
        raise InvalidParameterError(
            f"unknown bug flag(s) {unknown_flags} for generator 'gpate'"
            f"{did_you_mean(unknown_flags[0], declared)}; valid flags: "
            f"{sorted(declared)} (`dpaudit list bugs` lists them)."
        )
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidParameterError(
            f"unknown G-PATE option(s) {unknown}{did_you_mean(unknown[0], known)}; "
            f"valid options: {sorted(known)}."
        )
    values: dict[str, Any] = dict.fromkeys(flags, True)
    values.update({k: v for k, v in options.items() if v is not None})
    values.update(epsilon=epsilon, delta=delta)
    return GPateConfig(**values)


def defaults_for_rows(
    n_rows: int,
    *,
    epsilon: float,
    delta: float,
    iterations: int = 100,
    batch_size: int = 32,
    projection_dim: int = 5,
) -> dict[str, Any]:
    """Settings for a table too small for the published 2,100 teachers.

    k is fixed from the row count (the audit study's ``max(2, n // 125)``; in an
    audit ``n`` is ``|D|`` in both worlds, so k does not leak membership). The noise
    is the larger of the published scale taken down with k (sigma / k as published:
    1500 / 2100 and 600 / 2100) and the scale calibrated so that ``iterations``
    iterations of ``batch_size * projection_dim`` queries, all answered, fit
    ``(epsilon, delta)`` (:func:`~dpaudit.generators.accountants.calibrate_confident_gnmax_sigmas`).
    Scaling with k alone leaves so little noise on a small table that the budget does
    not cover one batch and nothing is trained; with the calibration at least
    ``iterations`` iterations run. (With few teachers that noise drowns their votes:
    an honest consequence of the budget, which an audit then measures.)
    """
    k = max(2, n_rows // 125)
    s1_cal, s2_cal = accountants.calibrate_confident_gnmax_sigmas(
        epsilon=epsilon,
        delta=delta,
        num_queries=iterations * batch_size * projection_dim,
        ratio=1500.0 / 600.0,
    )
    return {
        "num_teachers": k,
        "sigma1": max(1500.0 * k / PUBLISHED_NUM_TEACHERS, s1_cal),
        "sigma2": max(600.0 * k / PUBLISHED_NUM_TEACHERS, s2_cal),
    }


def with_small_table_defaults(
    options: Mapping[str, Any],
    n_rows: int,
    *,
    epsilon: float,
    delta: float,
) -> dict[str, Any]:
    """``options`` completed by :func:`defaults_for_rows` when the table has fewer
    rows than the published 2,100 teachers and ``num_teachers`` is not given (the
    planned iterations: ``max_iterations`` when given, else 100). Options given win."""
    out = dict(options)
    if "num_teachers" in out or n_rows >= PUBLISHED_NUM_TEACHERS:
        return out
    small = defaults_for_rows(
        n_rows,
        epsilon=epsilon,
        delta=delta,
        iterations=int(out.get("max_iterations", 100)),
        batch_size=int(out.get("batch_size", 32)),
        projection_dim=int(out.get("projection_dim", 5)),
    )
    for key, value in small.items():
        out.setdefault(key, value)
    return out
