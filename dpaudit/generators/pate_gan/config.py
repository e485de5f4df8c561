"""PATE-GAN's configuration: hyperparameters, architecture and the defect catalogue.

Every defect of the six reviewed implementations is one boolean field made with
:func:`~dpaudit.generators.catalogue.bug_field`: its metadata is the catalogue entry
(``dpaudit list bugs``, docs/bugs.md), so the flag list, the listing and the
unbounded-reference reasons all derive from this class.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import torch

from dpaudit.errors import InvalidParameterError
from dpaudit.generators.catalogue import bug_field, declared_bugs
from dpaudit.generators.flags import get_variant
from dpaudit.generators.names import DEVICES, Device
from dpaudit.validation import check_choice, require

LatentDistribution = Literal["uniform", "uniform_pm1", "normal"]


@dataclass(frozen=True, kw_only=True, slots=True)
class PateGanConfig:
    """PATE-GAN hyperparameters, architecture and bug flags.

    Layer widths are written as expressions of the encoded width ``d`` and the latent
    width ``z``: ``"d,d/2,d"``, ``"2d/3,d/3"``, ``"100,100"``; an empty string means no
    hidden layer.

    Args:
        epsilon, delta: the privacy budget.
        num_teachers: ``k``; None -> ``max(2, n // 125)`` as in the audit study.
        lam: lambda, the inverse Laplace scale of the vote noise (``Lap(1/lambda)``).
        orders: moment orders ``L`` of the accountant.
        batch_size: rows per teacher, student and generator step.
        teacher_steps, student_steps, generator_steps: ``n_T``, ``n_S`` and generator
            steps per iteration.
        max_iterations: a cap on iterations (the budget usually stops training first).
        fixed_iterations: iterations of implementations without an accountant.
        lr, beta1, weight_decay, optimizer: optimiser settings.
        latent_dim, latent_distribution: latent noise ``z`` (paper: Unif([0,1]^d)).
        generator_*, student_*, teacher_*, discriminator_hidden: architectures.
        min_width: the smallest hidden-layer width: a hidden width below it is raised
            to it (1: the widths as written). ``d,d/2,d`` on a 3-column table has a
            one-unit ReLU layer that can be dead for every input from initialisation
            on; no gradient then reaches the generator and every release is one
            constant table. The audit gives the reference 8 (docs/soundness.md,
            "The default audit").
        student_clip: clip student weights to +-value after each step (updated).
        teacher_rows: with ``lr_teachers_refit``, what each refit sees: ``batch``
            (``batch_size`` rows drawn from the teacher's partition, and as many
            generated; synthcity) or ``partition`` (every row of the partition once,
            and as many generated; updated).
        student_loss: ``bce`` (PATE-GAN's student, a classifier of the noisy labels)
            or ``wasserstein`` (updated's: a critic, maximising
            ``mean(Y S) - mean((1 - Y) S)``, the generator minimising ``-mean(S)``).
        gradient_penalty: WGAN-GP penalty of the single discriminator (a number, or
            ``"k"`` for the number of teachers as in turing).
        gaussian_noise_form: ``xor`` (original) or ``multiply`` (turing), for
            ``gaussian_label_noise``.
        label_column: the label used by ``label_distribution_given`` (default: the
            last column of the domain).
        device: ``auto`` (CUDA when available), ``cpu`` or ``cuda``.
        record_trace: keep per-iteration traces (epsilon, teacher losses on their own
            partition vs the others', records seen per teacher).
        variant: the name of the variant this config reproduces (for records only).
        teacher_rule: how ``k`` follows from ``n`` when ``num_teachers`` is None:
            ``study`` (``max(2, n // 125)``, the audit study's) or ``smartnoise``
            (``int(n / 1000)``, smartnoise-synth 1.0.8 ``pategan.py:80``, which
            fails below 1,000 rows; see ``small_table``). An audit fixes ``k`` by
            the same rule from ``|D|`` for both worlds.
        small_table: with ``teacher_rule="smartnoise"`` and no ``num_teachers`` on
            fewer than 1,000 rows: ``refuse`` (the real code cannot train:
            ``np.array_split`` into 0 parts; an explicit ``num_teachers`` is the
            caller's own modification and is not refused)
            or ``study`` (the audit study's modification of smartnoise: ``k`` a
            parameter, ``max(2, n // 125)``, and ``batch_size`` lowered to
            ``min(batch_size, n // k)``).
        partition_order: with ``balanced_partition``, what is cut into ``k``
            contiguous slices: ``permutation`` (a random permutation of the rows,
            updated and synthcity) or ``rows`` (the rows in their stored order,
            borealis and smartnoise; the audit appends the target last).
        moments_conversion: how the implementation's own accountant turns log-moments
            into epsilon: ``classic`` (PATE-GAN's ``min_l (alpha(l) + log(1/delta))/l``),
            ``improved`` (the tighter RDP conversion, docs/formulas.md) or ``auto``
            (improved for the reference, classic when a defect is switched on: the
            reviewed code computes the classic formula).
        The remaining boolean fields are the defects (docs/bugs.md; all False:
        correct).
    """

    epsilon: float = 1.0
    delta: float = 1e-5
    num_teachers: int | None = None
    lam: float = 1e-3
    orders: int = 100
    batch_size: int = 64
    teacher_steps: int = 5
    student_steps: int = 5
    generator_steps: int = 1
    max_iterations: int = 1000
    fixed_iterations: int | None = None
    lr: float = 1e-4
    beta1: float = 0.9
    weight_decay: float = 0.0
    optimizer: Literal["adam", "rmsprop"] = "adam"
    latent_dim: str = "d"
    latent_distribution: LatentDistribution = "uniform"
    generator_hidden: str = "d,d/2,d"
    generator_activation: Literal["relu", "leaky_relu", "tanh"] = "relu"
    generator_output: Literal["sigmoid", "linear"] = "sigmoid"
    generator_residual: bool = False
    generator_layer_norm: bool = False
    student_hidden: str = "d,d/2,d"
    student_activation: Literal["relu", "leaky_relu", "tanh"] = "relu"
    student_dropout: float = 0.0
    student_clip: float | None = None
    student_loss: Literal["bce", "wasserstein"] = "bce"
    teacher_rows: Literal["batch", "partition"] = "batch"
    teacher_hidden: str = "d"
    teacher_activation: Literal["relu", "leaky_relu", "tanh"] = "relu"
    discriminator_hidden: str = "d,d"
    min_width: int = 1
    gradient_penalty: float | str = 10.0
    gaussian_noise_form: Literal["xor", "multiply"] = "xor"
    label_column: str | None = None
    device: Device = "auto"
    record_trace: bool = False
    variant: str | None = None
    moments_conversion: Literal["auto", "classic", "improved"] = "auto"
    teacher_rule: Literal["study", "smartnoise"] = "study"
    small_table: Literal["refuse", "study"] = "refuse"
    partition_order: Literal["permutation", "rows"] = "permutation"
    # --- defects (docs/bugs.md); every one False in the correct reference
    single_discriminator: bool = bug_field(
        kind="privacy",
        implementations="original turing",
        description="no teachers and no student: one discriminator sees all the data and "
        "the generator trains directly against it (WGAN-GP loss)",
        consequence="no privacy mechanism at all: the generator's gradients come from "
        "the raw data",
        unbounded_reason="one discriminator sees all the data: no privacy mechanism",
    )
    no_accountant: bool = bug_field(
        kind="privacy",
        implementations="original turing",
        description="trains a fixed number of iterations; epsilon only sets a noise "
        "scale; nothing is tracked",
        consequence="the claimed epsilon is nominal: nothing bounds what training spends",
    )
    gaussian_label_noise: bool = bug_field(
        kind="privacy",
        implementations="original turing",
        description="Gaussian noise on the discriminator's own real/fake training labels, "
        "thresholded at 0.5 (each label flipped with probability "
        "Phi(-0.5/sigma)), sigma = sqrt(2 ln(1.25 X))/epsilon with a wrong X "
        "(original: 10 XOR 5 = 15, sigma = 2.421/epsilon; turing: "
        "1.25 * 10**delta, sigma = 0.668/epsilon)",
        consequence="label noise does not bound the influence of a record: no DP guarantee",
        unbounded_reason="label noise does not bound a record's influence",
    )
    partition_last_only: bool = bug_field(
        kind="privacy",
        implementations="updated",
        description="an index bug makes every teacher train on the last partition",
        consequence="the claim's partition argument fails: all teachers see the same "
        "records, one record changes every vote",
    )
    repartition_every_iteration: bool = bug_field(
        kind="privacy",
        implementations="synthcity",
        description="a fresh random partition is drawn every iteration",
        consequence="over training every teacher sees every record: one record can "
        "change all votes",
    )
    shared_sampling: bool = bug_field(
        kind="privacy",
        implementations="original turing",
        description="each teacher step samples its batch from all rows",
        consequence="no disjoint partitions: every teacher sees every record",
    )
    accountant_index_bug: bool = bug_field(
        kind="privacy",
        implementations="synthcity",
        description="exp(2*lambda*l + 1) where exp(2*lambda*(l+1)) is meant in the "
        "moments update",
        consequence="underestimates epsilon when lambda > 0.5: training spends more than "
        "it claims",
    )
    accountant_missing_log: bool = bug_field(
        kind="privacy",
        implementations="borealis smartnoise",
        description="the data-dependent moment term is used without its log, then "
        "clamped to the data-independent bound",
        consequence="overestimates epsilon (stops early: a utility loss, not a leak by "
        "itself)",
    )
    data_bounds: bool = bug_field(
        kind="privacy",
        implementations="original updated synthcity borealis",
        description="min/max fitted on the private data and used to scale inputs and "
        "outputs",
        consequence="a record that sets a column's extreme leaks through the released "
        "range",
        unbounded_reason="the released range is read from the private data",
    )
    private_categories: bool = bug_field(
        kind="further",
        implementations="smartnoise synthcity",
        description="each binary, categorical and integer (ordinal) column's value set "
        "is learned from the private data (smartnoise: LabelTransformer + "
        "OneHotEncoder under categorical/ordinal hints; synthcity: its "
        "one-hot encoder of discrete columns), so the release can only hold "
        "values the private data hold",
        consequence="a record with a value no other record has is released only when it "
        "is in the data: its presence shows in the release's support",
        unbounded_reason="the released value sets are read from the private data",
    )
    lr_teachers_refit: bool = bug_field(
        kind="other",
        implementations="updated synthcity",
        description="teachers are logistic regressions re-created and refitted from "
        "scratch every iteration on real plus generated rows",
        consequence="teachers forget the generator's history; votes are "
        "near-deterministic",
    )
    output_not_rescaled: bool = bug_field(
        kind="other",
        implementations="updated borealis",
        description="synthetic data is returned in the model's [0, 1] space, not in "
        "original units",
        consequence="released data has the wrong units (a utility bug)",
    )
    integer_floor: bool = bug_field(
        kind="other",
        implementations="turing",
        description="integer columns are truncated (astype(int)) instead of rounded",
        consequence="integer values are biased downwards (a utility bug)",
    )
    laplace_scale_inverted: bool = bug_field(
        kind="further",
        implementations="updated",
        description="votes get Lap(lambda) noise while the accountant assumes "
        "Lap(1/lambda)",
        consequence="at small lambda the vote is effectively noiseless while the "
        "accountant charges for scale 1/lambda",
    )
    single_noise_vote: bool = bug_field(
        kind="further",
        implementations="updated synthcity borealis smartnoise",
        description="one Laplace draw added to the 'real' count and compared with k/2",
        consequence="the data-dependent q no longer bounds the error rate: the "
        "data-dependent claim is invalid (the data-independent bound still "
        "holds)",
    )
    skip_unaccounted_queries: bool = bug_field(
        kind="further",
        implementations="synthcity",
        description="when at least half the noisy labels of a batch say 'real', the batch "
        "is not charged to the accountant and the student trains on it with "
        "every label 'fake'",
        consequence="the decision to drop is itself a function of the votes and is not "
        "accounted",
    )
    student_sees_real_data: bool = bug_field(
        kind="further",
        implementations="synthcity",
        description="the student discriminator is also trained on real rows",
        consequence="the student, and the generator behind it, see the data with no "
        "noise at all",
        unbounded_reason="the student trains on real rows with no noise",
    )
    delta_override: bool = bug_field(
        kind="further",
        implementations="synthcity",
        description="the delta passed in is ignored and 1/(n sqrt(n)) used (0.125 for "
        "n = 4)",
        consequence="the claim is for a far larger delta than asked",
    )
    real_category_frequencies: bool = bug_field(
        kind="further",
        implementations="synthcity",
        description="generation draws conditional category vectors from the real data's "
        "frequencies",
        consequence="category frequencies of the private data are released without noise",
        unbounded_reason="exact category frequencies are released",
    )
    latent_mismatch: bool = bug_field(
        kind="further",
        implementations="borealis smartnoise",
        description="trained on U(0,1) latent noise, sampled from N(0,1)",
        consequence="samples come from outside the training distribution (a utility bug)",
    )
    label_distribution_given: bool = bug_field(
        kind="further",
        implementations="original",
        description="the real label distribution is passed to the generator and used at "
        "sampling",
        consequence="the private label frequencies are released without noise",
        unbounded_reason="the exact label distribution is released",
    )
    budget_overshoot: bool = bug_field(
        kind="further",
        implementations="updated synthcity borealis smartnoise",
        description="the budget is checked once per outer iteration, so the last "
        "iteration can exceed epsilon",
        consequence="the final claim can exceed the budget asked for",
    )
    balanced_partition: bool = bug_field(
        kind="further",
        implementations="updated synthcity borealis smartnoise",
        description="teachers get balanced contiguous slices of the rows (array_split or "
        "int(i*n/k) bounds, of the rows in data order or of a permutation) "
        "instead of an independent assignment of each record",
        consequence="adding one record shifts the slice bounds: with n = qk + r rows, "
        "other teachers' data change too with probability (n-q)/(n+1) "
        "(0.80 on Cervical Cancer with 5 teachers), up to k of them, so one "
        "record can move up to k votes while the accountant charges "
        "sensitivity 1 (sound only averaged over a fresh permutation, not "
        "for a fixed one)",
    )

    def __post_init__(self) -> None:
        require(
            self.epsilon > 0 and math.isfinite(self.epsilon),
            "epsilon",
            "> 0",
            self.epsilon,
        )
        require(0 < self.delta < 1, "delta", "in (0, 1)", self.delta)
        require(
            self.num_teachers is None or self.num_teachers >= 1,
            "num_teachers",
            ">= 1",
            self.num_teachers,
        )
        require(self.lam > 0 and math.isfinite(self.lam), "lam", "> 0", self.lam)
        for name in (
            "orders",
            "batch_size",
            "teacher_steps",
            "student_steps",
            "generator_steps",
            "max_iterations",
        ):
            value = getattr(self, name)
            require(
                isinstance(value, int) and value >= 1, name, "an integer >= 1", value
            )
        require(
            self.fixed_iterations is None or self.fixed_iterations >= 1,
            "fixed_iterations",
            ">= 1",
            self.fixed_iterations,
        )
        require(self.lr > 0, "lr", "> 0", self.lr)
        require(
            0 <= self.student_dropout < 1,
            "student_dropout",
            "in [0, 1)",
            self.student_dropout,
        )
        check_choice(
            self.moments_conversion,
            "moments_conversion",
            ("auto", "classic", "improved"),
        )
        check_choice(self.teacher_rule, "teacher_rule", ("study", "smartnoise"))
        check_choice(self.student_loss, "student_loss", ("bce", "wasserstein"))
        check_choice(self.teacher_rows, "teacher_rows", ("batch", "partition"))
        check_choice(self.small_table, "small_table", ("refuse", "study"))
        check_choice(self.partition_order, "partition_order", ("permutation", "rows"))
        check_choice(self.device, "device", DEVICES)
        require(
            self.latent_distribution in ("uniform", "uniform_pm1", "normal"),
            "latent_distribution",
            "uniform, uniform_pm1 or normal",
            self.latent_distribution,
        )
        require(
            self.optimizer in ("adam", "rmsprop"),
            "optimizer",
            "adam or rmsprop",
            self.optimizer,
        )
        require(
            isinstance(self.min_width, int)
            and not isinstance(self.min_width, bool)
            and self.min_width >= 1,
            "min_width",
            "an integer >= 1",
            self.min_width,
        )
        for name in (
            "latent_dim",
            "generator_hidden",
            "student_hidden",
            "teacher_hidden",
            "discriminator_hidden",
        ):
            widths(getattr(self, name), d=2, z=2, name=name)
        if self.device == "cuda" and not torch.cuda.is_available():
            raise InvalidParameterError(
                "`device` is 'cuda' but CUDA is not available. Use --device cpu or auto."
            )

    @property
    def bugs(self) -> list[str]:
        """The defects switched on."""
        return [name for name in BUG_FIELDS if getattr(self, name)]

    @property
    def conversion(self) -> Literal["classic", "improved"]:
        """How the implementation's own accountant turns log-moments into epsilon.

        The reference (no defect switched on) uses the improved RDP conversion (Balle
        et al. 2020; Canonne, Kamath, Steinke 2020; docs/formulas.md): ``alpha(l)/l``
        is the RDP of order ``l + 1``, so it is a valid, tighter reading of the same
        bound. A variant keeps PATE-GAN's classic ``min_l (alpha(l) + log(1/delta))/l``,
        which is what the reviewed code computes.
        """
        if self.moments_conversion != "auto":
            return self.moments_conversion
        return "classic" if self.bugs else "improved"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


BUG_FIELDS: tuple[str, ...] = tuple(declared_bugs(PateGanConfig))

_WIDTH = re.compile(r"^(\d*)([dz]?)(?:/(\d+))?$")


def widths(
    expr: str | int, *, d: int, z: int, name: str = "widths", floor: int = 1
) -> tuple[int, ...]:
    """Parses a layer-width expression such as ``"d,d/2,d"`` or ``"2d/3,d/3"``; each
    width is at least ``floor``.

    >>> widths("d,d/2,4d", d=29, z=7)
    (29, 14, 116)
    >>> widths("d,d/2,d", d=3, z=3, floor=8)
    (8, 8, 8)
    """
    text = str(expr).replace(" ", "")
    if not text:
        return ()
    out = []
    for token in text.split(","):
        match = _WIDTH.match(token)
        if not match or not (match.group(1) or match.group(2)):
            raise InvalidParameterError(
                f"`{name}` must be comma-separated widths like 'd,d/2,100'. Got {expr!r}."
            )
        mult = int(match.group(1)) if match.group(1) else 1
        base = {"d": d, "z": z, "": 1}[match.group(2)]
        div = int(match.group(3)) if match.group(3) else 1
        out.append(max(1, floor, (mult * base) // div))
    return tuple(out)


def default_num_teachers(n_rows: int) -> int:
    """The audit study's choice: ``max(2, n // 125)`` (5 for 686 rows, 2 for 4)."""
    return max(2, n_rows // 125)


SMARTNOISE_MIN_ROWS = 1000
"""smartnoise-synth 1.0.8 trains ``int(n / 1000)`` teachers: none below 1,000 rows."""


def rule_num_teachers(
    n_rows: int, *, teacher_rule: str = "study", small_table: str = "refuse"
) -> int:
    """``k`` for ``n_rows`` rows under ``teacher_rule`` (see :class:`PateGanConfig`).

    >>> rule_num_teachers(2000, teacher_rule="smartnoise")
    2
    >>> rule_num_teachers(4, teacher_rule="smartnoise", small_table="study")
    2

    Raises:
        InvalidParameterError: the ``smartnoise`` rule on fewer than 1,000 rows with
            ``small_table="refuse"``.
    """
    if teacher_rule != "smartnoise":
        return default_num_teachers(n_rows)
    if n_rows >= SMARTNOISE_MIN_ROWS:
        return n_rows // SMARTNOISE_MIN_ROWS
    if small_table == "study":
        return default_num_teachers(n_rows)
    raise InvalidParameterError(
        f"`data` must have at least {SMARTNOISE_MIN_ROWS:,} rows for smartnoise's teacher "
        f"rule int(n / 1000) (the real code fails below). Got {n_rows} rows. Use a "
        "larger table, or --option small_table=study for the audit study's "
        "small-table modification."
    )


def small_table_batch_size(cfg: PateGanConfig, *, n_rows: int, k: int) -> int:
    """The batch size a run uses: ``min(batch_size, n // k)`` (at least 1) under the
    study's small-table modification of smartnoise, else ``batch_size``.

    >>> small_table_batch_size(PateGanConfig(teacher_rule="smartnoise",
    ...                        small_table="study"), n_rows=4, k=2)
    2
    """
    if (
        cfg.teacher_rule == "smartnoise"
        and cfg.small_table == "study"
        and n_rows < SMARTNOISE_MIN_ROWS
    ):
        return max(1, min(cfg.batch_size, n_rows // k))
    return cfg.batch_size


def audit_num_teachers(n_rows: int, options: Mapping[str, Any]) -> int:
    """``k`` an audit fixes from ``|D|`` for both worlds: the rule of the options'
    (or their variant's) ``teacher_rule`` and ``small_table``.

    Raises:
        InvalidParameterError: as :func:`rule_num_teachers`.
    """
    chosen: dict[str, Any] = {}
    variant = options.get("variant")
    if variant:
        chosen.update(get_variant(str(variant)).overrides)
    chosen.update({k: v for k, v in options.items() if v is not None})
    return rule_num_teachers(
        n_rows,
        teacher_rule=str(chosen.get("teacher_rule", "study")),
        small_table=str(chosen.get("small_table", "refuse")),
    )


def gaussian_label_sigma(epsilon: float, *, delta: float, form: str) -> float:
    """The label-noise sigma of the original and turing code, with their wrong ``X``.

    ``sqrt(2 ln(1.25 X)) / epsilon``: original writes ``10 ^ delta`` (XOR) with delta
    passed as 5, so X = 15; turing writes ``1.25 * 10**delta``.

    >>> round(gaussian_label_sigma(1.0, delta=1e-5, form="xor"), 3)
    2.421
    >>> round(gaussian_label_sigma(1.0, delta=1e-5, form="multiply"), 3)
    0.668
    """
    x = (10 ^ 5) if form == "xor" else 10**delta
    return math.sqrt(2.0 * math.log(1.25 * x)) / epsilon


def resolve_device(device: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)
