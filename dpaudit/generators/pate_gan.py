"""Reference PATE-GAN (Jordon, Yoon and van der Schaar, ICLR 2019), batched, with the
defects of six public implementations as flags.

This is a reference implementation for auditing, not for production: it makes no
attempt at floating-point-safe noise (compare Opacus' ``secure_mode``).

Algorithm 1 of PATE-GAN: ``k`` teacher discriminators, each trained only on its own
disjoint partition of the data (real rows vs generated rows); a student discriminator
trained only on generated rows labelled by the noisy teacher vote; a generator trained
to fool the student. Per iteration: ``n_T`` teacher steps, ``n_S`` student steps, one
generator step; training stops when the moments accountant's epsilon would exceed the
budget. The noisy vote is report-noisy-max with independent ``Lap(1/lambda)`` noise on
both counts, which is what the accountant's data-dependent bound assumes.

Everything is batched: :meth:`PateGan.fit_many` trains ``M`` independent models (for
example with and without a target record) as one tensor program. The teachers of all
models are one :class:`~dpaudit.generators.nets.BatchedMLP` of ``M * k`` members, the
students and generators ensembles of ``M``. Members that reach their budget stop by a
mask. There is no Python loop over teachers or models inside a training step.

Each defect of BUGS.md is one boolean field of :class:`PateGanConfig` and one visible
``if config.<flag>:`` branch below (or in the data encoding).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, Self

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.generators import accountants as acc
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.nets import (
    BatchedMLP,
    MaskedStep,
    MLPSpec,
    gather_rows,
    is_relu_logit,
    make_optimizer,
    relu_logit_bce_grad_,
    relu_logits,
    train_step,
    with_ones,
)
from dpaudit.rng import ParallelDraws, Rngs

Device = Literal["auto", "cpu", "cuda"]
LatentDistribution = Literal["uniform", "uniform_pm1", "normal"]

BUG_FIELDS = (
    "single_discriminator", "no_accountant", "gaussian_label_noise",
    "partition_last_only", "repartition_every_iteration", "shared_sampling",
    "accountant_index_bug", "accountant_missing_log", "data_bounds", "lr_teachers_refit",
    "output_not_rescaled", "integer_floor", "laplace_scale_inverted", "single_noise_vote",
    "skip_unaccounted_queries", "student_sees_real_data", "delta_override",
    "real_category_frequencies", "latent_mismatch", "label_distribution_given",
    "budget_overshoot",
)


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
        student_clip: clip student weights to +-value after each step (updated).
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
        The remaining boolean fields are the defects of BUGS.md (all False: correct).
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
    teacher_hidden: str = "d"
    teacher_activation: Literal["relu", "leaky_relu", "tanh"] = "relu"
    discriminator_hidden: str = "d,d"
    gradient_penalty: float | str = 10.0
    gaussian_noise_form: Literal["xor", "multiply"] = "xor"
    label_column: str | None = None
    device: Device = "auto"
    record_trace: bool = False
    variant: str | None = None
    # --- defects (BUGS.md); every one False in the correct reference
    single_discriminator: bool = False
    no_accountant: bool = False
    gaussian_label_noise: bool = False
    partition_last_only: bool = False
    repartition_every_iteration: bool = False
    shared_sampling: bool = False
    accountant_index_bug: bool = False
    accountant_missing_log: bool = False
    data_bounds: bool = False
    lr_teachers_refit: bool = False
    output_not_rescaled: bool = False
    integer_floor: bool = False
    laplace_scale_inverted: bool = False
    single_noise_vote: bool = False
    skip_unaccounted_queries: bool = False
    student_sees_real_data: bool = False
    delta_override: bool = False
    real_category_frequencies: bool = False
    latent_mismatch: bool = False
    label_distribution_given: bool = False
    budget_overshoot: bool = False

    def __post_init__(self) -> None:
        _check(self.epsilon > 0 and math.isfinite(self.epsilon), "epsilon", "> 0", self.epsilon)
        _check(0 < self.delta < 1, "delta", "in (0, 1)", self.delta)
        _check(self.num_teachers is None or self.num_teachers >= 1, "num_teachers",
               ">= 1", self.num_teachers)
        _check(self.lam > 0 and math.isfinite(self.lam), "lam", "> 0", self.lam)
        for name in ("orders", "batch_size", "teacher_steps", "student_steps",
                     "generator_steps", "max_iterations"):
            value = getattr(self, name)
            _check(isinstance(value, int) and value >= 1, name, "an integer >= 1", value)
        _check(self.fixed_iterations is None or self.fixed_iterations >= 1,
               "fixed_iterations", ">= 1", self.fixed_iterations)
        _check(self.lr > 0, "lr", "> 0", self.lr)
        _check(0 <= self.student_dropout < 1, "student_dropout", "in [0, 1)",
               self.student_dropout)
        _check(self.device in ("auto", "cpu", "cuda"), "device", "auto, cpu or cuda",
               self.device)
        _check(self.latent_distribution in ("uniform", "uniform_pm1", "normal"),
               "latent_distribution", "uniform, uniform_pm1 or normal",
               self.latent_distribution)
        _check(self.optimizer in ("adam", "rmsprop"), "optimizer", "adam or rmsprop",
               self.optimizer)
        for name in ("latent_dim", "generator_hidden", "student_hidden", "teacher_hidden",
                     "discriminator_hidden"):
            widths(getattr(self, name), d=2, z=2, name=name)
        if self.device == "cuda" and not torch.cuda.is_available():
            raise InvalidParameterError(
                "`device` is 'cuda' but CUDA is not available. Use --device cpu or auto."
            )

    @property
    def bugs(self) -> list[str]:
        """The defects switched on."""
        return [name for name in BUG_FIELDS if getattr(self, name)]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _check(ok: bool, name: str, constraint: str, value: Any) -> None:
    if not ok:
        raise InvalidParameterError(f"`{name}` must be {constraint}. Got {value!r}.")


_WIDTH = re.compile(r"^(\d*)([dz]?)(?:/(\d+))?$")


def widths(expr: str | int, *, d: int, z: int, name: str = "widths") -> tuple[int, ...]:
    """Parses a layer-width expression such as ``"d,d/2,d"`` or ``"2d/3,d/3"``.

    >>> widths("d,d/2,4d", d=29, z=7)
    (29, 14, 116)
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
        out.append(max(1, (mult * base) // div))
    return tuple(out)


def default_num_teachers(n_rows: int) -> int:
    """The audit study's choice: ``max(2, n // 125)`` (5 for 686 rows, 2 for 4)."""
    return max(2, n_rows // 125)


def gaussian_label_sigma(epsilon: float, delta: float, form: str) -> float:
    """The label-noise sigma of the original and turing code, with their wrong ``X``.

    ``sqrt(2 ln(1.25 X)) / epsilon``: original writes ``10 ^ delta`` (XOR) with delta
    passed as 5, so X = 15; turing writes ``1.25 * 10**delta``.

    >>> round(gaussian_label_sigma(1.0, 1e-5, "xor"), 3), round(gaussian_label_sigma(1.0, 1e-5, "multiply"), 3)
    (2.421, 0.668)
    """
    x = (10 ^ 5) if form == "xor" else 10**delta
    return math.sqrt(2.0 * math.log(1.25 * x)) / epsilon


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def laplace_from_uniform(u: Tensor, scale: float | Tensor) -> Tensor:
    """Laplace noise by inverse CDF from uniform draws ``u`` on ``[0, 1)``."""
    u = (u - 0.5).clamp(-0.5 + 1e-7, 0.5 - 1e-7)
    return -scale * torch.sign(u) * torch.log1p(-2.0 * u.abs())


def fit_logistic_regression(x: Tensor, y: Tensor, *, c: float = 1.0,
                            iterations: int = 30) -> Tensor:
    """L2-regularised logistic regressions, one per member, by Newton's method.

    Minimises ``C * sum log-loss + ||w||^2 / 2`` (intercept not penalised), the
    objective of scikit-learn's ``LogisticRegression(C=c)``; the optimum is unique, so
    the result agrees with scikit-learn's. ``x[E, N, p]``, ``y[E, N]`` -> ``w[E, p+1]``
    (last entry the intercept).
    """
    e, _, p = x.shape
    xa = with_ones(x)
    w = torch.zeros(e, p + 1, dtype=x.dtype, device=x.device)
    penalty = torch.ones(p + 1, dtype=x.dtype, device=x.device)
    penalty[-1] = 1e-10
    eye = torch.diag(penalty)
    for _ in range(iterations):
        prob = torch.sigmoid(torch.bmm(xa, w.unsqueeze(-1)).squeeze(-1))
        grad = c * torch.bmm(xa.transpose(1, 2), (prob - y).unsqueeze(-1)).squeeze(-1)
        grad = grad + penalty * w
        weight = (prob * (1.0 - prob)).unsqueeze(-1)
        hess = c * torch.bmm(xa.transpose(1, 2), xa * weight) + eye
        w = w - torch.linalg.solve(hess, grad.unsqueeze(-1)).squeeze(-1)
    return w


@dataclass
class _Batch:
    """The encoded training data of ``M`` models, padded to the longest."""

    data: Tensor  # [M, N, p]
    n_rows: Tensor  # [M]
    domains: list[Domain]
    originals: list[pd.DataFrame]


class PateGan:
    """PATE-GAN with the generator protocol (``fit``, ``fit_many``, ``sample``,
    ``privacy_claim_``). Construct with a :class:`PateGanConfig`."""

    # Fitted attributes (set by fit/fit_many; absent before).
    generator_: torch.nn.Module
    device_: torch.device
    latent_dim_: int
    domain_: Domain
    num_teachers_: int
    category_frequencies_: dict[str, tuple[np.ndarray, np.ndarray]]
    label_column_: str
    label_frequencies_: tuple[np.ndarray, np.ndarray]
    _claim: PrivacyClaim

    def __init__(self, config: PateGanConfig | None = None, **options: Any) -> None:
        base = config or PateGanConfig()
        self.config = replace(base, **options) if options else base

    # ------------------------------------------------------------------ API
    def fit(self, data: pd.DataFrame, *, domain: Domain, rng: Rngs) -> Self:
        """Trains one model on ``data`` (never mutated) with the public ``domain``."""
        (model,) = self.fit_many([data], domain=domain, rngs=[rng])
        self.__dict__.update(model.__dict__)
        return self

    def fit_many(self, datasets: Sequence[pd.DataFrame], *, domain: Domain,
                 rngs: Sequence[Rngs]) -> list[PateGan]:
        """Trains ``len(datasets)`` independent models as one tensor program.

        Model ``m`` trains on ``datasets[m]``; all randomness comes from ``rngs`` (one
        stream per model, combined into the batch's generator), so the same streams and
        the same batch give the same models.
        """
        if len(datasets) != len(rngs) or not datasets:
            raise InvalidParameterError(
                f"`datasets` and `rngs` must be non-empty and of equal length. Got "
                f"{len(datasets)} and {len(rngs)}."
            )
        cfg = self.config
        k = cfg.num_teachers or default_num_teachers(min(len(d) for d in datasets))
        checked: set[int] = set()
        for i, frame in enumerate(datasets):
            if id(frame) not in checked:
                domain.validate(frame, name=f"datasets[{i}]", min_rows=k)
                checked.add(id(frame))
        return _Trainer(cfg, domain, k, list(datasets), list(rngs)).run()

    def sample(self, n: int, *, rng: Rngs) -> pd.DataFrame:
        """Releases ``n`` synthetic rows with the original columns, dtypes and units."""
        if not hasattr(self, "generator_"):
            raise NotFittedError("this PateGan is not fitted yet: call `fit` first.")
        if not (isinstance(n, int | np.integer) and n >= 0):
            raise InvalidParameterError(f"`n` must be a non-negative integer. Got {n!r}.")
        cfg = self.config
        gen = rng.torch(self.device_)
        with torch.no_grad():
            latent_dist = cfg.latent_distribution
            if cfg.latent_mismatch:
                # Trained on U(0,1), sampled from N(0,1): outside the training range.
                latent_dist = "normal"
            z = _latent((1, int(n), self.latent_dim_), latent_dist, ParallelDraws(gen))
            out = self.generator_(z)[0].clamp(0.0, 1.0).cpu().numpy()
        domain = self.domain_
        if cfg.output_not_rescaled:
            # Released in the model's [0, 1] space, not in original units.
            frame = pd.DataFrame(
                {col.name: out[:, sl].argmax(axis=1) if col.kind == "categorical"
                 else out[:, sl.start] for col, sl in zip(domain.columns, domain.slices())},
                columns=domain.names)
        else:
            rounding: Literal["round", "floor"] = "floor" if cfg.integer_floor else "round"
            frame = domain.decode(out, integer_rounding=rounding)
        if cfg.real_category_frequencies:
            # Discrete columns drawn from the private data's exact frequencies.
            for name, (values, probs) in self.category_frequencies_.items():
                frame[name] = rng.numpy.choice(values, size=int(n), p=probs)
        if cfg.label_distribution_given:
            # The private label distribution, passed to the generator, used at sampling.
            values, probs = self.label_frequencies_
            frame[self.label_column_] = rng.numpy.choice(values, size=int(n), p=probs)
        return frame

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "_claim"):
            raise NotFittedError("this PateGan is not fitted yet: call `fit` first.")
        return self._claim


def _latent(shape: tuple[int, ...], dist: str, draws: ParallelDraws) -> Tensor:
    if dist == "normal":
        return draws.randn(shape)
    u = draws.rand(shape)
    return u.mul_(2.0).sub_(1.0) if dist == "uniform_pm1" else u


class _Trainer:
    """One batched training run of ``M`` models (internal)."""

    def __init__(self, cfg: PateGanConfig, domain: Domain, k: int,
                 datasets: list[pd.DataFrame], rngs: list[Rngs]) -> None:
        self.cfg, self.k, self.rngs = cfg, k, rngs
        self.m = len(datasets)
        self.device = resolve_device(cfg.device)
        seq = np.random.SeedSequence([r.int_seed() for r in rngs])
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(int(seq.generate_state(1, dtype=np.uint64)[0] >> 1))
        self.draws = ParallelDraws(self.gen)
        self.batch = self._encode(domain, datasets)
        self.p = int(self.batch.data.shape[2])
        self.z = widths(cfg.latent_dim, d=self.p, z=self.p, name="latent_dim")[0]
        self.fused_teachers = False

    # ----------------------------------------------------------------- data
    def _encode(self, domain: Domain, datasets: list[pd.DataFrame]) -> _Batch:
        domains: list[Domain] = []
        encoded: dict[int, tuple[Domain, np.ndarray]] = {}
        for frame in datasets:
            # An audit batch holds a few distinct tables many times: encode each once.
            if id(frame) not in encoded:
                if self.cfg.data_bounds:
                    # Bounds read from the private data: the released range leaks
                    # extremes.
                    dom = domain.with_data_bounds(frame)
                else:
                    dom = domain
                encoded[id(frame)] = (dom, dom.encode(frame))
            domains.append(encoded[id(frame)][0])
        n_max = max(len(f) for f in datasets)
        p = domain.encoded_dim
        data = torch.zeros(self.m, n_max, p)
        for i, frame in enumerate(datasets):
            data[i, : len(frame)] = torch.from_numpy(encoded[id(frame)][1])
        n_rows = torch.tensor([len(f) for f in datasets])
        return _Batch(data=data.to(self.device), n_rows=n_rows.to(self.device),
                      domains=domains, originals=datasets)

    def _permutation(self) -> Tensor:
        """A random permutation of each model's rows, padding rows last: [M, N]."""
        n_max = self.batch.data.shape[1]
        keys = torch.rand(self.m, n_max, generator=self.gen, device=self.device)
        pad = torch.arange(n_max, device=self.device)[None, :] >= self.batch.n_rows[:, None]
        return torch.argsort(keys + pad.to(keys.dtype) * 2.0, dim=1)

    def _partitions(self) -> tuple[Tensor, Tensor]:
        """Start and size of each teacher's slice of the permutation: [M, k] each."""
        k = self.k
        n = self.batch.n_rows[:, None]
        # numpy.array_split's sizes: the first n % k partitions get one row more.
        idx = torch.arange(k, device=self.device)[None, :]
        size = n // k + (idx < n % k).to(torch.long)
        start = torch.cumsum(size, dim=1) - size
        if self.cfg.partition_last_only:
            # An index bug: every teacher trains on the last partition.
            start = start[:, -1:].expand(-1, k).clone()
            size = size[:, -1:].expand(-1, k).clone()
        if self.cfg.shared_sampling or self.cfg.single_discriminator:
            # Each teacher step samples from all rows.
            start = torch.zeros_like(start)
            size = self.batch.n_rows[:, None].expand(-1, k).clone()
        return start, size

    def _teacher_row_indices(self, perm: Tensor, start: Tensor, size: Tensor,
                             n: int) -> Tensor:
        """Indices of ``n`` rows (with replacement) from each teacher's partition:
        ``[M, k, n]``."""
        m, k = self.m, start.shape[1]
        u = self.draws.rand((m, k, n))
        pos = start[..., None] + torch.floor(u * size[..., None]).to(torch.long)
        return torch.gather(perm, 1, pos.reshape(m, k * n)).view(m, k, n)

    def _sample_teacher_rows(self, perm: Tensor, start: Tensor, size: Tensor,
                             n: int) -> tuple[Tensor, Tensor]:
        """``n`` rows (with replacement) from each teacher's partition.

        Returns the rows ``[M*k, n, p]`` and their row indices ``[M*k, n]``.
        """
        m, k = self.m, start.shape[1]
        rows = self._teacher_row_indices(perm, start, size, n).reshape(m, k * n)
        # Gather from each model's own table: no copy of the data per teacher.
        real = gather_rows(self.batch.data, rows).reshape(m * k, n, self.p)
        return real, rows.reshape(m * k, n)

    def _sample_all_rows(self, n: int) -> tuple[Tensor, Tensor]:
        """``n`` rows (with replacement) from each model's whole dataset: [M, n, p],
        and their indices [M, n]."""
        u = self.draws.rand((self.m, n))
        idx = torch.floor(u * self.batch.n_rows[:, None]).to(torch.long)
        return gather_rows(self.batch.data, idx), idx

    def _latent(self, n: int) -> Tensor:
        return _latent((self.m, n, self.z), self.cfg.latent_distribution, self.draws)

    # --------------------------------------------------------------- models
    def _build(self) -> None:
        cfg, p, z, m, k = self.cfg, self.p, self.z, self.m, self.k
        out_act: Literal["sigmoid", "linear"] = (
            "sigmoid" if cfg.generator_output == "sigmoid" else "linear")
        self.generator = BatchedMLP(m, MLPSpec(
            n_in=z, hidden=widths(cfg.generator_hidden, d=p, z=z), n_out=p,
            activation=cfg.generator_activation, out_activation=out_act,
            residual=cfg.generator_residual, layer_norm=cfg.generator_layer_norm,
        ), generator=self.gen, device=self.device)
        def opt(params: Iterator[torch.nn.Parameter]) -> torch.optim.Optimizer:
            return make_optimizer(params, name=cfg.optimizer, lr=cfg.lr,
                                  betas=(cfg.beta1, 0.999), weight_decay=cfg.weight_decay)

        self.gen_step = MaskedStep(self.generator, opt(self.generator.parameters()))
        if cfg.single_discriminator:
            self.critic = BatchedMLP(m, MLPSpec(
                n_in=p, hidden=widths(cfg.discriminator_hidden, d=p, z=z), n_out=1,
                activation="relu", out_activation="linear"),
                generator=self.gen, device=self.device)
            self.critic_step = MaskedStep(self.critic, opt(self.critic.parameters()))
            return
        self.student = BatchedMLP(m, MLPSpec(
            n_in=p, hidden=widths(cfg.student_hidden, d=p, z=z), n_out=1,
            activation=cfg.student_activation, out_activation="sigmoid",
            dropout=cfg.student_dropout), generator=self.gen, device=self.device)
        self.student_step = MaskedStep(self.student, opt(self.student.parameters()))
        if not cfg.lr_teachers_refit:
            self.teachers = BatchedMLP(m * k, MLPSpec(
                n_in=p, hidden=widths(cfg.teacher_hidden, d=p, z=z), n_out=1,
                activation=cfg.teacher_activation, out_activation="sigmoid"),
                generator=self.gen, device=self.device)
            self.teacher_step = MaskedStep(self.teachers, opt(self.teachers.parameters()))
            # PATE-GAN's teachers (one ReLU layer, a logit) take the hand-written
            # gradient; their real rows come from a table with a ones column.
            self.fused_teachers = is_relu_logit(self.teachers)
            if self.fused_teachers:
                self.data1 = with_ones(self.batch.data)

    # ------------------------------------------------------------- training
    def run(self) -> list[PateGan]:
        started = time.perf_counter()
        cfg, m, k = self.cfg, self.m, self.k
        self._build()
        delta_claim = cfg.delta
        if cfg.delta_override:
            # The delta passed in is ignored: 1 / (n sqrt(n)).
            n = self.batch.n_rows.to(torch.float64)
            delta_claim_t = 1.0 / (n * torch.sqrt(n))
        else:
            delta_claim_t = torch.full((m,), delta_claim, dtype=torch.float64)
        self.delta_claim = delta_claim_t.cpu().numpy()
        own_spec = acc.MomentsAccountantSpec(
            lam=cfg.lam, orders=cfg.orders, index_bug=cfg.accountant_index_bug,
            missing_log=cfg.accountant_missing_log)
        self.own_table = torch.as_tensor(acc.increment_table(k, own_spec),
                                         device=self.device)
        self.gap_counts = torch.zeros(m, k + 1, dtype=torch.float64, device=self.device)
        self.all_gap_counts = torch.zeros_like(self.gap_counts)  # incl. skipped batches
        self.log_inv_delta = torch.as_tensor(np.log(1.0 / self.delta_claim),
                                             device=self.device)
        self.orders = torch.arange(1, cfg.orders + 1, dtype=torch.float64,
                                   device=self.device)
        self.active = torch.ones(m, dtype=torch.bool, device=self.device)
        self.iterations = torch.zeros(m, dtype=torch.long, device=self.device)
        n_max = self.batch.data.shape[1]
        self.seen = torch.zeros(m * k, n_max, dtype=torch.bool, device=self.device)
        self.trace_eps: list[list[float]] = []
        self.trace_eps_di: list[list[float]] = []
        self.trace_moment1: list[list[float]] = []
        self.trace_losses: list[tuple[int, list[float], list[float]]] = []
        self.perm = perm = self._permutation()
        start, size = self._partitions()
        uses_accountant = not (cfg.no_accountant or cfg.single_discriminator)
        if uses_accountant:
            total = cfg.max_iterations
        else:
            total = min(cfg.fixed_iterations or cfg.max_iterations, cfg.max_iterations)
        self.sigma = (gaussian_label_sigma(cfg.epsilon, cfg.delta, cfg.gaussian_noise_form)
                      if cfg.gaussian_label_noise else 0.0)
        for it in range(total):
            if not bool(self.active.any()):
                break
            if cfg.repartition_every_iteration:
                # A fresh random partition every iteration: over training every
                # teacher sees every record.
                self.perm = perm = self._permutation()
            if cfg.single_discriminator:
                self._critic_iteration(perm, start, size)
            else:
                self._teacher_iteration(perm, start, size)
                self._student_iteration(uses_accountant)
            self._generator_iteration()
            self.iterations += self.active.to(torch.long)
            if cfg.record_trace:
                self._record(it)
            if uses_accountant and cfg.budget_overshoot:
                # The budget is checked once per outer iteration, after the fact.
                self.active &= self._epsilon(self.gap_counts) <= cfg.epsilon
        return self._models(time.perf_counter() - started)

    def _teacher_iteration(self, perm: Tensor, start: Tensor, size: Tensor) -> None:
        cfg, m, k, b = self.cfg, self.m, self.k, self.cfg.batch_size
        active_t = self.active.repeat_interleave(k)
        if cfg.lr_teachers_refit:
            # Logistic-regression teachers re-created and refitted from scratch every
            # iteration on a batch of real plus generated rows.
            real, idx = self._sample_teacher_rows(perm, start, size, b)
            self._mark_seen(idx, active_t)
            with torch.no_grad():
                fake = self.generator(self._latent(b)).repeat_interleave(k, dim=0)
            x = torch.cat([real, fake], dim=1).to(torch.float64)
            y = torch.cat([torch.ones(m * k, b), torch.zeros(m * k, b)], dim=1)
            self.lr_weights = fit_logistic_regression(x, y.to(x))
            return
        steps = cfg.teacher_steps
        # The generator is fixed during the teacher steps: the generated batches of all
        # steps come from one forward pass, each step's real rows from one draw.
        with torch.no_grad():
            fakes = self.generator(self._latent(steps * b))  # [M, steps * b, p]
        rows = self._teacher_row_indices(perm, start, size, steps * b)  # [M, k, steps * b]
        self._mark_seen(rows.reshape(m * k, steps * b), active_t)
        for step in range(steps):
            part = slice(step * b, (step + 1) * b)
            fake = fakes[:, part]  # shared by the k teachers of a model
            idx = rows[:, :, part].reshape(m, k * b)
            y_real: Tensor | float = 1.0
            y_fake: Tensor | float = 0.0
            if cfg.gaussian_label_noise:
                y_real = 1.0 + self.sigma * torch.randn(
                    m * k, 1, b, generator=self.gen, device=self.device)
                y_fake = self.sigma * torch.randn(
                    m * k, 1, b, generator=self.gen, device=self.device)
            if self.fused_teachers:
                real1 = gather_rows(self.data1, idx).view(m * k, b, self.p + 1)
                relu_logit_bce_grad_(self.teachers, [(real1, 1, y_real),
                                                     (with_ones(fake), k, y_fake)],
                                     active_t.to(fake.dtype))
                self.teacher_step.step(active_t)
                continue
            real = gather_rows(self.batch.data, idx).view(m * k, b, self.p)

            def loss(real: Tensor = real, fake: Tensor = fake, y_real: Tensor | float = y_real,
                     y_fake: Tensor | float = y_fake) -> Tensor:
                bce = torch.nn.functional.binary_cross_entropy_with_logits
                out_r = self.teachers(real, logits=True).transpose(1, 2)  # [M*k, 1, b]
                out_f = self.teachers.forward_shared(fake, self.k, logits=True).transpose(1, 2)
                lr_ = bce(out_r, torch.as_tensor(y_real).expand_as(out_r), reduction="none")
                lf_ = bce(out_f, torch.as_tensor(y_fake).expand_as(out_f), reduction="none")
                return lr_.mean(dim=(1, 2)) + lf_.mean(dim=(1, 2))

            train_step(self.teacher_step, loss, active_t)

    def _mark_seen(self, idx: Tensor, active_t: Tensor) -> None:
        hit = torch.zeros_like(self.seen)
        hit.scatter_(1, idx, True)
        self.seen |= hit & active_t[:, None]

    def _votes(self, fake: Tensor) -> Tensor:
        """Number of teachers voting "real" for each generated row: [M, B]."""
        k = self.k
        with torch.no_grad():
            if self.cfg.lr_teachers_refit:
                x = fake.repeat_interleave(k, dim=0)
                xa = with_ones(x).to(torch.float64)
                logit = torch.bmm(xa, self.lr_weights.unsqueeze(-1)).squeeze(-1)
            elif self.fused_teachers:
                logit = relu_logits(self.teachers, with_ones(fake), k)[0]
            else:
                logit = self.teachers.forward_shared(fake, k, logits=True)
        real = (logit > 0).reshape(self.m, k, -1)
        return real.sum(dim=1)

    def _noisy_labels(self, n1: Tensor) -> Tensor:
        cfg, k = self.cfg, self.k
        scale = cfg.lam if cfg.laplace_scale_inverted else 1.0 / cfg.lam
        # laplace_scale_inverted: Lap(lambda) where the accountant assumes Lap(1/lambda).
        shape = tuple(n1.shape)
        if cfg.single_noise_vote:
            # One Laplace draw on the "real" count, compared with k/2.
            noise = laplace_from_uniform(self.draws.rand(shape), scale)
            return (n1.to(noise.dtype) + noise > k / 2.0).to(torch.float32)
        n0 = k - n1
        noise1 = laplace_from_uniform(self.draws.rand(shape), scale)
        noise0 = laplace_from_uniform(self.draws.rand(shape), scale)
        return (n1 + noise1 > n0 + noise0).to(torch.float32)

    def _epsilon(self, gap_counts: Tensor) -> Tensor:
        alpha = gap_counts @ self.own_table
        return torch.min((alpha + self.log_inv_delta[:, None]) / self.orders, dim=1).values

    def _student_iteration(self, uses_accountant: bool) -> None:
        cfg, b, k = self.cfg, self.cfg.batch_size, self.k
        steps = cfg.student_steps
        # The generator is fixed during the student steps: the steps' generated batches
        # come from one forward pass. (The votes stay per step: at hundreds of models
        # the teachers' activations on all steps' rows would exceed 32 MiB, which glibc
        # serves by mmap, page-faulting it in on every call: 2-3x slower.)
        with torch.no_grad():
            fakes = self.generator(self._latent(steps * b))
        for step in range(steps):
            fake = fakes[:, step * b:(step + 1) * b]
            n1 = self._votes(fake)
            labels = self._noisy_labels(n1)
            gaps = torch.nn.functional.one_hot((2 * n1 - k).abs(), k + 1).sum(dim=1)
            step_counts = gaps.to(torch.float64)
            use = self.active.clone()
            if uses_accountant and not cfg.budget_overshoot:
                # Stop before the budget would be exceeded: a batch whose charge would
                # cross epsilon is not used, and its model stops.
                within = self._epsilon(self.gap_counts + step_counts) <= cfg.epsilon
                self.active &= within
                use &= within
            # Every query whose answer is acted upon, charged or not (the reference).
            self.all_gap_counts += step_counts * use[:, None]
            if cfg.skip_unaccounted_queries:
                # A batch whose noisy labels mostly say "real" is dropped, uncharged.
                use &= labels.mean(dim=1) <= 0.5
            self.gap_counts += step_counts * use[:, None]
            if not bool(use.any()):
                continue
            real = self._sample_all_rows(b)[0] if cfg.student_sees_real_data else None

            def loss(fake: Tensor = fake, labels: Tensor = labels,
                     real: Tensor | None = real) -> Tensor:
                bce = torch.nn.functional.binary_cross_entropy_with_logits
                out = self.student(fake, logits=True, generator=self.gen).squeeze(-1)
                total = bce(out, labels, reduction="none").mean(dim=1)
                if real is not None:
                    # The student also sees real rows, with no noise at all.
                    out_r = self.student(real, logits=True, generator=self.gen).squeeze(-1)
                    total = total + bce(out_r, torch.ones_like(out_r),
                                        reduction="none").mean(dim=1)
                return total

            train_step(self.student_step, loss, use)
            if cfg.student_clip is not None:
                self.student.clamp_(cfg.student_clip)

    def _critic_iteration(self, perm: Tensor, start: Tensor, size: Tensor) -> None:
        """WGAN-GP critic steps of the single discriminator (``k`` per iteration)."""
        cfg, b, m, k = self.cfg, self.cfg.batch_size, self.m, self.k
        penalty = float(k) if cfg.gradient_penalty == "k" else float(cfg.gradient_penalty)
        # The original code runs as many critic steps per iteration as it has
        # (nominal) teachers; these are sequential optimiser steps, not teachers.
        critic_steps = k
        for _ in range(critic_steps):
            real, idx = self._sample_all_rows(b)
            # The one discriminator is reported as every "teacher" (it sees all rows).
            self._mark_seen(idx.repeat_interleave(k, dim=0), self.active.repeat_interleave(k))
            with torch.no_grad():
                fake = self.generator(self._latent(b))
            w_real = torch.ones(m, b, 1, device=self.device)
            w_fake = torch.ones(m, b, 1, device=self.device)
            if cfg.gaussian_label_noise:
                # Gaussian noise on the critic's own real/fake labels (+1/-1 weights).
                w_real = w_real + self.sigma * torch.randn(
                    w_real.shape, generator=self.gen, device=self.device)
                w_fake = w_fake + self.sigma * torch.randn(
                    w_fake.shape, generator=self.gen, device=self.device)
            mix = torch.rand(m, b, 1, generator=self.gen, device=self.device)

            def loss(real: Tensor = real, fake: Tensor = fake, mix: Tensor = mix,
                     w_real: Tensor = w_real, w_fake: Tensor = w_fake) -> Tensor:
                inter = (mix * real + (1 - mix) * fake).requires_grad_(True)
                out = self.critic(inter, logits=True)
                (grad,) = torch.autograd.grad(out.sum(), inter, create_graph=True)
                gp = ((grad.norm(dim=2) - 1.0) ** 2).mean(dim=1)
                d_real = (self.critic(real, logits=True) * w_real).mean(dim=(1, 2))
                d_fake = (self.critic(fake, logits=True) * w_fake).mean(dim=(1, 2))
                total: Tensor = d_fake - d_real + penalty * gp
                return total

            train_step(self.critic_step, loss, self.active)

    def _generator_iteration(self) -> None:
        cfg, b = self.cfg, self.cfg.batch_size
        for _ in range(cfg.generator_steps):
            z = self._latent(b)

            def loss(z: Tensor = z) -> Tensor:
                fake = self.generator(z)
                if cfg.single_discriminator:
                    critic: Tensor = -self.critic(fake, logits=True).mean(dim=(1, 2))
                    return critic
                out = self.student(fake, logits=True).squeeze(-1)
                bce = torch.nn.functional.binary_cross_entropy_with_logits
                return bce(out, torch.ones_like(out), reduction="none").mean(dim=1)

            train_step(self.gen_step, loss, self.active)

    def _record(self, it: int) -> None:
        self.trace_eps.append(self._epsilon(self.gap_counts).cpu().tolist())
        self.trace_moment1.append((self.gap_counts @ self.own_table[:, 0]).cpu().tolist())
        di = acc.data_independent_increment(lam=self.cfg.lam, orders=self.cfg.orders)
        queries = self.gap_counts.sum(dim=1).cpu().numpy()
        self.trace_eps_di.append(acc.epsilon_from_moments(
            queries[:, None] * di[None, :], delta=self.cfg.delta).tolist())
        if not hasattr(self, "teachers") or self.cfg.single_discriminator:
            return
        own, other = self._teacher_losses()
        self.trace_losses.append((it, own, other))

    def _teacher_losses(self) -> tuple[list[float], list[float]]:
        """Each teacher's BCE on real rows of its own partition vs all other rows."""
        k, n_max = self.k, self.batch.data.shape[1]
        data = self.batch.data.repeat_interleave(k, dim=0)
        with torch.no_grad():
            logit = self.teachers(data, logits=True).squeeze(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logit, torch.ones_like(logit), reduction="none")
        start, size = self._partitions()
        ranks = torch.argsort(self.perm, dim=1)[:, None, :]  # position of each row
        own = (ranks >= start[..., None]) & (ranks < (start + size)[..., None])
        valid = (torch.arange(n_max, device=self.device)[None, :]
                 < self.batch.n_rows[:, None])[:, None, :]
        own = own.reshape(self.m * k, n_max)
        valid_t = valid.expand(-1, k, -1).reshape(self.m * k, n_max)
        own_rows = own & valid_t
        other_rows = ~own & valid_t
        l_own = (loss * own_rows).sum(1) / own_rows.sum(1).clamp(min=1)
        l_other = (loss * other_rows).sum(1) / other_rows.sum(1).clamp(min=1)
        return l_own.cpu().tolist(), l_other.cpu().tolist()

    # ---------------------------------------------------------------- output
    def _models(self, seconds: float) -> list[PateGan]:
        cfg, k = self.cfg, self.k
        uses_accountant = not (cfg.no_accountant or cfg.single_discriminator)
        eps_own = self._epsilon(self.gap_counts).cpu().numpy()
        counts = self.gap_counts.cpu().numpy()
        all_counts = self.all_gap_counts.cpu().numpy()
        di = acc.pate_gan_epsilon(counts, acc.MomentsAccountantSpec(
            lam=cfg.lam, orders=cfg.orders, data_dependent=False), delta=cfg.delta)
        ref, note = reference_epsilon(cfg, k, all_counts)
        seen_rows = self.seen.reshape(self.m, k, -1)
        seen = seen_rows.sum(dim=2).cpu().numpy()
        unused = (self.batch.n_rows - seen_rows.any(dim=1).sum(dim=1)).cpu().numpy()
        iterations = self.iterations.cpu().numpy()
        models = []
        for i in range(self.m):
            model = PateGan(cfg)
            model.generator_ = _Member(self.generator, i)
            model.device_ = self.device
            model.latent_dim_ = self.z
            model.domain_ = self.batch.domains[i]
            model.num_teachers_ = k
            original = self.batch.originals[i]
            if cfg.real_category_frequencies:
                model.category_frequencies_ = {
                    col.name: _frequencies(original[col.name])
                    for col in model.domain_.columns if col.kind in ("binary", "categorical")}
            if cfg.label_distribution_given:
                label = cfg.label_column or model.domain_.names[-1]
                model.label_column_ = label
                model.label_frequencies_ = _frequencies(original[label])
            claimed = float(eps_own[i]) if uses_accountant else cfg.epsilon
            trace: dict[str, Any] = {
                "records_seen": seen[i].tolist(),
                "records_unused": int(unused[i]),
                "rows": len(original),
                "ledger": acc.ledger_summary(counts[i]),
                "queries_including_skipped": int(all_counts[i].sum()),
                "delta_used": float(self.delta_claim[i]),
                "wall_seconds": seconds / self.m,
                "reference_note": note,
            }
            if cfg.record_trace:
                trace["epsilon"] = [row[i] for row in self.trace_eps]
                trace["epsilon_data_independent"] = [row[i] for row in self.trace_eps_di]
                trace["moment1"] = [row[i] for row in self.trace_moment1]
                trace["teacher_losses"] = [
                    {"iteration": it, "own": own[i * k:(i + 1) * k],
                     "other": other[i * k:(i + 1) * k]}
                    for it, own, other in self.trace_losses]
            model._claim = PrivacyClaim(
                epsilon=claimed,
                delta=float(self.delta_claim[i]),
                accountant=_accountant_name(cfg),
                epsilon_data_independent=float(di[i]) if uses_accountant else None,
                reference_epsilon=None if ref is None else float(ref[i]),
                iterations=int(iterations[i]),
                trace=trace,
            )
            models.append(model)
        return models


def _frequencies(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    counts = series.value_counts(normalize=True, sort=False).sort_index()
    return counts.index.to_numpy(), counts.to_numpy(dtype=float)


def _accountant_name(cfg: PateGanConfig) -> str:
    if cfg.no_accountant or cfg.single_discriminator:
        return "none (nominal epsilon)"
    name = "pate-gan moments"
    if cfg.accountant_index_bug:
        name += " (with accountant_index_bug)"
    if cfg.accountant_missing_log:
        name += " (with accountant_missing_log)"
    return name


# Defects after which no accountant over the teachers' queries bounds the leak: the
# data reach the released model by a path no noise covers.
UNBOUNDED = {
    "single_discriminator": "one discriminator sees all the data: no privacy mechanism",
    "gaussian_label_noise": "label noise does not bound a record's influence",
    "student_sees_real_data": "the student trains on real rows with no noise",
    "data_bounds": "the released range is read from the private data",
    "real_category_frequencies": "exact category frequencies are released",
    "label_distribution_given": "the exact label distribution is released",
}


def reference_epsilon(cfg: PateGanConfig, k: int,
                      gap_counts: np.ndarray) -> tuple[np.ndarray | None, str]:
    """What a correct accountant charges for the queries a (buggy) run performed.

    The ledger includes queries the implementation did not charge
    (``skip_unaccounted_queries``). Returns ``(None, reason)`` when no finite epsilon
    holds (a defect lets data reach the output by an unnoised path).
    """
    for flag, why in UNBOUNDED.items():
        if getattr(cfg, flag):
            return None, f"unbounded: {why} ({flag})"
    lam = cfg.lam
    notes = []
    data_dependent = True
    if cfg.laplace_scale_inverted:
        # Noise Lap(lambda) is Lap(1/lambda') with lambda' = 1/lambda.
        lam = 1.0 / lam
        notes.append("noise scale is lambda, charged as lambda' = 1/lambda")
    if cfg.partition_last_only or cfg.shared_sampling or (
            cfg.repartition_every_iteration and not cfg.lr_teachers_refit):
        # One record can change every teacher's vote: sensitivity k, not 1.
        lam = lam * k
        data_dependent = False
        notes.append("teachers share records: vote sensitivity k")
    if cfg.single_noise_vote:
        # The data-dependent q assumes independent noise on both counts.
        data_dependent = False
        notes.append("single noise draw: data-dependent bound invalid")
    spec = acc.MomentsAccountantSpec(lam=lam, orders=cfg.orders,
                                     data_dependent=data_dependent)
    eps = acc.pate_gan_epsilon(gap_counts, spec, delta=cfg.delta)
    return eps, "; ".join(notes) or "correct moments accountant on the same ledger"


class _Member(torch.nn.Module):
    """Member ``index`` of a batched generator, as a module mapping ``[1, n, z]``."""

    def __init__(self, ensemble: BatchedMLP, index: int) -> None:
        super().__init__()
        self.ensemble = ensemble
        self.index = index

    def forward(self, z: Tensor) -> Tensor:
        out: Tensor = self.ensemble(z, member=self.index)
        return out


def config_from_options(*, epsilon: float, delta: float, variant: str | None = None,
                        bugs: Sequence[str] = (), **options: Any) -> PateGanConfig:
    """A config from a variant name, extra bug flags and plain options (CLI/TOML)."""
    from dpaudit.generators.bugs import build_config

    config: PateGanConfig = build_config(
        PateGanConfig, generator="pategan", label="PATE-GAN", epsilon=epsilon,
        delta=delta, variant=variant, bugs=bugs, **options)
    return config


def _factory(*, epsilon: float, delta: float, **options: Any) -> PateGan:
    return PateGan(config_from_options(epsilon=epsilon, delta=delta, **options))
