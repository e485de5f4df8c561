"""G-PATE (Long et al., NeurIPS 2021): a reference implementation for auditing.

This code exists to be audited, not to protect production data (compare Opacus'
``secure_mode``: the noise comes from ordinary PyTorch generators).

G-PATE has no student discriminator. ``k`` teacher discriminators are trained,
non-privately, each on its own disjoint partition of the private data (real rows)
against generated rows. For every generated record ``x`` each teacher computes the
direction that improves ``x`` under its loss, ``-dL/dx``; DPGradAgg aggregates the
``k`` directions privately and the generator is trained by MSE towards
``x + aggregated direction``. DPGradAgg (REFERENCES.md, G-PATE):

1. project each teacher's direction with a fresh Gaussian matrix ``R`` (``p x d``,
   entries ``N(0, 1/p)``, ``p`` = ``projection_dim``) drawn for each record;
2. clip each coordinate to ``[-c, c]`` and discretise it into ``B`` bins of width
   ``2c/B``: each teacher votes one bin per coordinate;
3. per coordinate, Confident-GNMax (Papernot et al. 2018): answer only if
   ``max_j n_j + N(0, sigma1^2) >= T`` (``T = threshold * k``), then take
   ``argmax_j n_j + N(0, sigma2^2)``;
4. back-project the winning bins' midpoints with ``R^T`` (0 where not answered).

Privacy is accounted in Renyi DP (:mod:`dpaudit.generators.accountants`): every
query pays ``a / (2 sigma1^2)``, every answered query ``a / sigma2^2``; training
stops *before* a batch could exceed the budget (the check charges the whole batch as
if every query were answered, so the stopping time depends only on outputs already
paid for). The data-dependent bound (Papernot et al. 2018, Thm 6) can be traced, but
it is a function of the private data and is never the DP claim, except under the
``unsanitised_data_dependent`` defect, which reproduces the public G-PATE code.

Performance: ``M`` models are trained as one tensor program. All ``k`` teachers of
all ``M`` models are one ensemble of ``M * k`` members, the generators one of ``M``
members; the per-record input gradients of every teacher come from one backward pass
(``torch.autograd.grad`` of the summed per-record teacher losses with respect to the
generated batch, replicated per teacher); members that reach their budget stop via a
mask. Each model draws from its own torch generator (``rng.torch(device)``), in the
same order whatever the batch, so ``fit_many`` reproduces ``fit`` member by member
(the same votes, answers and claim; network weights equal up to float32 rounding,
since PyTorch's vectorised kernels may round an element differently depending on the
tensor's size). Per-model noise is drawn a chunk of iterations ahead, outside the
training step, so the step has no loop over models, teachers or records.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Self

import numpy as np
import pandas as pd
import torch
from numpy.typing import NDArray
from torch import Tensor, nn
from torch.nn import functional as F

from dpaudit.data import Domain
from dpaudit.errors import DpauditWarning, InvalidParameterError, NotFittedError
from dpaudit.generators import accountants
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.bugs import BugFlag, register_bug
from dpaudit.generators.nets import (
    BatchedLinear,
    BatchedMLP,
    MaskedStep,
    MLPSpec,
    make_optimizer,
    member_losses,
    train_step,
)
from dpaudit.rng import Rngs

Architecture = Literal["mlp", "dcgan"]
AccountantMode = Literal["data_independent", "data_dependent"]
DeviceName = Literal["auto", "cpu", "cuda"]

IMAGE_SIDE = 28
"""Images of the ``dcgan`` architecture are ``IMAGE_SIDE x IMAGE_SIDE``, one channel."""

_NOISE_BUDGET = 1 << 18
"""Per model, about this many normals are drawn at once (a whole number of
iterations, at most 32): the chunk length depends on the configuration and the data
width only, never on the number of models, so ``fit_many`` and ``fit`` draw the same
numbers."""

ACCOUNTANT_NAME = "confident_gnmax_rdp"
UNSANITISED_ACCOUNTANT_NAME = "confident_gnmax_rdp_data_dependent_unsanitised"
NOT_SANITISED_NOTE = (
    "not sanitised: the data-dependent epsilon (Papernot et al. 2018, Thm 6) is a "
    "function of the private data and is not a DP guarantee without smooth-sensitivity "
    "sanitisation"
)


# --------------------------------------------------------------------------- config
def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool
    )


def _positive(name: str, value: Any) -> None:
    if not (_is_number(value) and math.isfinite(value) and value > 0):
        raise InvalidParameterError(f"`{name}` must be a positive number. Got {value!r}.")


def _integer(name: str, value: Any, minimum: int) -> None:
    if not (isinstance(value, int | np.integer) and not isinstance(value, bool)):
        raise InvalidParameterError(f"`{name}` must be an integer >= {minimum}. Got {value!r}.")
    if value < minimum:
        raise InvalidParameterError(f"`{name}` must be >= {minimum}. Got {value!r}.")


def _choice(name: str, value: Any, options: tuple[str, ...]) -> None:
    if value not in options:
        raise InvalidParameterError(
            f"`{name}` must be one of {', '.join(map(repr, options))}. Got {value!r}."
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class GPateConfig:
    """Configuration of :class:`GPate`.

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
        unsanitised_data_dependent: DEFECT (public G-PATE code): training stops on
            the unsanitised data-dependent epsilon and the claim reports it. That
            value depends on the private data, is not a DP guarantee, and the
            data-independent epsilon actually spent (``reference_epsilon``) exceeds
            the budget.
        data_bounds: DEFECT (``data_bounds`` of BUGS.md): bounds and categories are
            read from the private data (``Domain.with_data_bounds``); a record that
            sets a column's extreme leaks through the released range.
    """

    epsilon: float
    delta: float
    num_teachers: int = 2100
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
    device: DeviceName = "auto"
    accountant: AccountantMode = "data_independent"
    unsanitised_data_dependent: bool = False
    data_bounds: bool = False

    def __post_init__(self) -> None:
        _positive("epsilon", self.epsilon)
        if not (_is_number(self.delta) and 0 < self.delta < 1):
            raise InvalidParameterError(f"`delta` must be in (0, 1). Got {self.delta!r}.")
        _integer("num_teachers", self.num_teachers, 1)
        _integer("batch_size", self.batch_size, 1)
        _positive("sigma1", self.sigma1)
        _positive("sigma2", self.sigma2)
        if not (_is_number(self.threshold) and 0 < self.threshold <= 1):
            raise InvalidParameterError(
                "`threshold` must be in (0, 1] (a fraction of the teachers). "
                f"Got {self.threshold!r}."
            )
        _integer("projection_dim", self.projection_dim, 1)
        _positive("clip", self.clip)
        _integer("bins", self.bins, 2)
        _positive("lr", self.lr)
        _integer("max_iterations", self.max_iterations, 0)
        if self.latent_dim is not None:
            _integer("latent_dim", self.latent_dim, 1)
        _choice("architecture", self.architecture, ("mlp", "dcgan"))
        _integer("image_channels", self.image_channels, 1)
        if self.label_column is not None and (
            not isinstance(self.label_column, str) or not self.label_column
        ):
            raise InvalidParameterError(
                f"`label_column` must be a column name or None. Got {self.label_column!r}."
            )
        _integer("teacher_steps", self.teacher_steps, 1)
        _choice("device", self.device, ("auto", "cpu", "cuda"))
        _choice("accountant", self.accountant, ("data_independent", "data_dependent"))
        for flag in ("unsanitised_data_dependent", "data_bounds"):
            if not isinstance(getattr(self, flag), bool):
                raise InvalidParameterError(
                    f"`{flag}` must be True or False. Got {getattr(self, flag)!r}."
                )

    @property
    def traces_data_dependent(self) -> bool:
        """Whether training computes the (unsanitised) data-dependent epsilon."""
        return self.accountant == "data_dependent" or self.unsanitised_data_dependent

    @property
    def threshold_count(self) -> float:
        """``T``: the vote count the noisy top count must reach."""
        return self.threshold * self.num_teachers


# --------------------------------------------------------------------- DPGradAgg
@dataclass(frozen=True, slots=True)
class Aggregate:
    """What DPGradAgg returns for a batch (leading axes ``[M, B]``: models, records).

    Attributes:
        gradient: the private direction per record, ``[M, B, d]``.
        answered: whether each query (record, coordinate) was answered, ``[M, B, p]``.
        counts: the clean vote histograms, ``[M, B, p, bins]`` (the ledger's input).
        winners: the noisy-argmax bin of each query, ``[M, B, p]``.
    """

    gradient: Tensor
    answered: Tensor
    counts: Tensor
    winners: Tensor


def dp_grad_agg(
    teacher_gradients: Tensor,
    projection: Tensor,
    *,
    clip: float,
    bins: int,
    threshold: float,
    sigma1: float,
    sigma2: float,
    threshold_noise: Tensor,
    vote_noise: Tensor,
) -> Aggregate:
    """G-PATE's DPGradAgg (Long et al. 2021, Alg. 1) for ``M`` models at once.

    Args:
        teacher_gradients: each teacher's direction per record, ``[M, k, B, d]``.
        projection: one matrix per record, ``[M, B, p, d]`` (entries ``N(0, 1/p)``).
        clip: ``c``; projected coordinates are clipped to ``[-c, c]``.
        bins: ``B`` bins of width ``2c/B`` over ``[-c, c]``.
        threshold: ``T``, the vote count the noisy top count must reach.
        sigma1, sigma2: Confident-GNMax noise scales.
        threshold_noise: standard normals ``[M, B, p]`` (scaled by ``sigma1``).
        vote_noise: standard normals ``[M, B, p, bins]`` (scaled by ``sigma2``).

    Returns:
        The aggregate; ``gradient = R^T v`` with ``v`` the winning bins' midpoints
        (0 where the query was not answered).
    """
    m, k, b, _ = teacher_gradients.shape
    p = projection.shape[2]
    projected = torch.einsum("mbpd,mkbd->mkbp", projection, teacher_gradients)
    width = 2.0 * clip / bins
    votes = torch.floor((projected.clamp(-clip, clip) + clip) / width).long()
    votes = votes.clamp_(0, bins - 1).reshape(m, k, b * p).transpose(1, 2)
    counts = torch.zeros(m, b * p, bins, dtype=projected.dtype, device=projected.device)
    counts.scatter_add_(2, votes, torch.ones_like(votes, dtype=projected.dtype))
    counts = counts.reshape(m, b, p, bins)
    top = counts.amax(dim=-1)
    answered = top + sigma1 * threshold_noise >= threshold
    winners = torch.argmax(counts + sigma2 * vote_noise, dim=-1)
    midpoints = -clip + (winners.to(projected.dtype) + 0.5) * width
    answer = torch.where(answered, midpoints, torch.zeros_like(midpoints))
    gradient = torch.einsum("mbpd,mbp->mbd", projection, answer)
    return Aggregate(gradient=gradient, answered=answered, counts=counts, winners=winners)


# ----------------------------------------------------------------------- networks
class _BatchedConv(nn.Module):
    """``E`` independent (transposed) 2-D convolutions as one grouped convolution.

    Activations use the layout ``[B, E * C, H, W]``: member ``e`` owns channels
    ``e*C .. (e+1)*C - 1``. Parameters have the member axis first (``weight`` rows
    ``e*C_out ..`` for a convolution, ``e*C_in ..`` for a transposed one), so
    ensembles concatenate and split along dimension 0.
    """

    def __init__(
        self, members: int, c_in: int, c_out: int, *, kernel: int, stride: int,
        padding: int, transpose: bool, generator: torch.Generator, device: torch.device,
    ) -> None:
        super().__init__()
        self.c_out, self.stride, self.padding, self.transpose = c_out, stride, padding, transpose
        bound = 1.0 / math.sqrt(c_in * kernel * kernel)
        shape = ((members * c_in, c_out, kernel, kernel) if transpose
                 else (members * c_out, c_in, kernel, kernel))
        w = torch.empty(shape, device=device)
        bias = torch.empty(members * c_out, device=device)
        w.uniform_(-bound, bound, generator=generator)
        bias.uniform_(-bound, bound, generator=generator)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(bias)

    def forward(self, h: Tensor) -> Tensor:
        groups = self.bias.shape[0] // self.c_out
        if self.transpose:
            return F.conv_transpose2d(h, self.weight, self.bias, stride=self.stride,
                                      padding=self.padding, groups=groups)
        return F.conv2d(h, self.weight, self.bias, stride=self.stride,
                        padding=self.padding, groups=groups)


class _MlpTeachers(nn.Module):
    """Teacher discriminators for tabular data: one hidden layer of width ``d``.

    With ``classes > 0`` a teacher scores ``x ++ onehot(y)`` (input ``d + C``).
    """

    def __init__(self, members: int, d: int, *, generator: torch.Generator,
                 device: torch.device, classes: int = 0) -> None:
        super().__init__()
        self.classes = classes
        spec = MLPSpec(n_in=d + classes, hidden=(d,), n_out=1, activation="leaky_relu",
                       out_activation="linear")
        self.net = BatchedMLP(members, spec, generator=generator, device=device)

    def forward(self, x: Tensor, cond: Tensor) -> Tensor:
        if self.classes:
            x = torch.cat([x, cond], dim=-1)
        out: Tensor = self.net(x, logits=True)
        return out


class _MlpGenerators(nn.Module):
    """PATE-GAN-sized generators: hidden ``d, d/2, d`` (ReLU), sigmoid output.

    With ``classes > 0`` the input is ``z ++ onehot(y)`` (``latent + C``).
    """

    def __init__(self, members: int, latent: int, d: int, *, generator: torch.Generator,
                 device: torch.device, classes: int = 0) -> None:
        super().__init__()
        self.classes = classes
        spec = MLPSpec(n_in=latent + classes, hidden=(d, max(d // 2, 1), d), n_out=d,
                       activation="relu", out_activation="sigmoid")
        self.net = BatchedMLP(members, spec, generator=generator, device=device)

    def forward(self, z: Tensor, cond: Tensor) -> Tensor:
        if self.classes:
            z = torch.cat([z, cond], dim=-1)
        out: Tensor = self.net(z)
        return out


class _ConvTeachers(nn.Module):
    """DCGAN-style conditional discriminators for 28 x 28 images.

    conv 4x4/2 (``1 + C -> w``, 28 -> 14), leaky ReLU, conv 4x4/2 (``w -> 2w``,
    14 -> 7), leaky ReLU, linear to one logit. The class enters as ``C`` constant
    input planes. No batch normalisation: a record's output must not depend on the
    other records of the batch, so that per-record input gradients are exact.
    """

    def __init__(self, members: int, classes: int, width: int, *,
                 generator: torch.Generator, device: torch.device) -> None:
        super().__init__()
        self.classes, self.width = classes, width
        kw = {"kernel": 4, "stride": 2, "padding": 1, "transpose": False,
              "generator": generator, "device": device}
        self.conv1 = _BatchedConv(members, 1 + classes, width, **kw)  # type: ignore[arg-type]
        self.conv2 = _BatchedConv(members, width, 2 * width, **kw)  # type: ignore[arg-type]
        self.out = BatchedLinear(members, 2 * width * 49, 1, generator=generator,
                                 device=device)

    def forward(self, x: Tensor, cond: Tensor) -> Tensor:
        e, b = x.shape[:2]
        img = x.reshape(e, b, 1, IMAGE_SIDE, IMAGE_SIDE)
        if self.classes:
            planes = cond.reshape(e, b, self.classes, 1, 1).expand(
                e, b, self.classes, IMAGE_SIDE, IMAGE_SIDE)
            img = torch.cat([img, planes], dim=2)
        h = img.transpose(0, 1).reshape(b, e * (1 + self.classes), IMAGE_SIDE, IMAGE_SIDE)
        h = F.leaky_relu(self.conv1(h), 0.2)
        h = F.leaky_relu(self.conv2(h), 0.2)
        h = h.reshape(b, e, 2 * self.width * 49).transpose(0, 1)
        out: Tensor = self.out(h)
        return out


class _ConvGenerators(nn.Module):
    """DCGAN-style conditional generators for 28 x 28 images.

    linear (``z ++ onehot(y) -> 2w * 7 * 7``), ReLU, transposed conv 4x4/2
    (``2w -> w``, 7 -> 14), ReLU, transposed conv 4x4/2 (``w -> 1``, 14 -> 28),
    sigmoid.
    """

    def __init__(self, members: int, latent: int, classes: int, width: int, *,
                 generator: torch.Generator, device: torch.device) -> None:
        super().__init__()
        self.width = width
        self.fc = BatchedLinear(members, latent + classes, 2 * width * 49,
                                generator=generator, device=device)
        kw = {"kernel": 4, "stride": 2, "padding": 1, "transpose": True,
              "generator": generator, "device": device}
        self.up1 = _BatchedConv(members, 2 * width, width, **kw)  # type: ignore[arg-type]
        self.up2 = _BatchedConv(members, width, 1, **kw)  # type: ignore[arg-type]

    def forward(self, z: Tensor, cond: Tensor) -> Tensor:
        m, b = z.shape[:2]
        h = torch.relu(self.fc(torch.cat([z, cond], dim=-1)))
        h = h.reshape(m, b, 2 * self.width, 7, 7).transpose(0, 1)
        h = h.reshape(b, m * 2 * self.width, 7, 7)
        h = torch.relu(self.up1(h))
        h = torch.sigmoid(self.up2(h))
        return h.reshape(b, m, IMAGE_SIDE * IMAGE_SIDE).transpose(0, 1)


def _concat_members(modules: Sequence[nn.Module]) -> nn.Module:
    """One ensemble whose members are those of ``modules``, in order (every
    parameter has its member axis first)."""
    out = copy.deepcopy(modules[0])
    sources = [dict(m.named_parameters()) for m in modules]
    with torch.no_grad():
        for name, param in out.named_parameters():
            param.data = torch.cat([s[name].detach() for s in sources], dim=0)
    return out


def _load_member(template: nn.Module, ensemble: nn.Module, index: int, members: int) -> None:
    """Copies member ``index`` of ``ensemble`` into the one-member ``template``."""
    source = dict(ensemble.named_parameters())
    with torch.no_grad():
        for name, param in template.named_parameters():
            param.data = source[name].detach().chunk(members, dim=0)[index].clone()


def teacher_input_gradients(
    teachers: nn.Module, x: Tensor, cond: Tensor, *, num_teachers: int
) -> Tensor:
    """Every teacher's improving direction ``-dL/dx`` for every generated record,
    in one backward pass.

    ``x[M, B, d]`` (model ``m``'s generated batch) is replicated to the ``M * k``
    teacher members; ``L`` is the generator's non-saturating loss
    ``softplus(-logit)`` averaged over the batch, as in G-PATE. A record influences
    only its own teacher outputs (no batch statistics), so the gradient of the
    summed losses with respect to the replicated batch holds every per-teacher,
    per-record gradient.

    Returns:
        ``[M, k, B, d]``.
    """
    m, b, d = x.shape
    with torch.enable_grad():
        x_rep = x.detach().repeat_interleave(num_teachers, dim=0).requires_grad_(True)
        cond_rep = cond.repeat_interleave(num_teachers, dim=0)
        logits = teachers(x_rep, cond_rep)
        loss = F.softplus(-logits).sum() / b
        (grad,) = torch.autograd.grad(loss, x_rep)
    return (-grad).reshape(m, num_teachers, b, d)


# ------------------------------------------------------------------------- layout
@dataclass(frozen=True, slots=True)
class _Layout:
    """Where the generated (``free``) and conditioning coordinates sit in the
    encoding of a domain."""

    domain: Domain
    free: NDArray[np.int64]
    classes: int
    label_slice: slice | None
    label_kind: str | None

    @classmethod
    def build(cls, domain: Domain, config: GPateConfig) -> _Layout:
        d = domain.encoded_dim
        label = config.label_column
        if config.architecture == "mlp" and label is None:
            return cls(domain, np.arange(d), 0, None, None)
        classes, label_slice, kind = 0, None, None
        if label is not None:
            if label not in domain.names:
                raise InvalidParameterError(
                    f"`label_column` {label!r} is not a column of the domain."
                )
            col = domain[label]
            label_slice = domain.slices()[domain.names.index(label)]
            kind = col.kind
            if col.kind == "categorical":
                assert col.categories is not None
                classes = len(col.categories)
            elif col.kind in ("integer", "binary"):
                lower = 0.0 if col.lower is None else col.lower
                upper = 1.0 if col.upper is None else col.upper
                classes = round(upper - lower) + 1
            else:
                raise InvalidParameterError(
                    f"`label_column` {label!r} must be binary, categorical or integer. "
                    f"Got a {col.kind} column."
                )
            if classes < 2:
                raise InvalidParameterError(
                    f"`label_column` {label!r} must have at least 2 classes in the "
                    f"domain. Got {classes}."
                )
        free = np.array([i for i in range(d)
                         if label_slice is None or not label_slice.start <= i < label_slice.stop],
                        dtype=np.int64)
        if config.architecture == "mlp":
            if free.size == 0:
                raise InvalidParameterError(
                    f"`label_column` {label!r} is the only column: the 'mlp' "
                    "architecture needs at least one other column to generate."
                )
            return cls(domain, free, classes, label_slice, kind)
        if free.size != IMAGE_SIDE * IMAGE_SIDE:
            raise InvalidParameterError(
                f"the 'dcgan' architecture needs {IMAGE_SIDE * IMAGE_SIDE} pixel "
                f"columns (28 x 28) besides `label_column`. Got {free.size} encoded "
                "coordinates."
            )
        return cls(domain, free, classes, label_slice, kind)

    @property
    def width(self) -> int:
        return int(self.free.size)

    def signature(self) -> tuple[int, ...]:
        return (*(c.width for c in self.domain.columns), self.classes)

    def split(self, encoded: NDArray[np.float32]) -> tuple[NDArray[np.float32],
                                                           NDArray[np.float32]]:
        """Encoded rows -> (generated part ``[n, d]``, one-hot class ``[n, C]``)."""
        free = encoded[:, self.free]
        onehot = np.zeros((encoded.shape[0], self.classes), dtype=np.float32)
        if self.label_slice is not None:
            block = encoded[:, self.label_slice]
            if self.label_kind == "categorical":
                onehot = block.astype(np.float32)
            else:
                cls_idx = np.rint(block[:, 0] * (self.classes - 1)).astype(np.int64)
                onehot[np.arange(encoded.shape[0]), cls_idx] = 1.0
        return free, onehot

    def assemble(self, free: NDArray[np.floating[Any]],
                 classes: NDArray[np.int64] | None) -> NDArray[np.float64]:
        """Generated part and class indices -> encoded rows."""
        out = np.zeros((free.shape[0], self.domain.encoded_dim), dtype=np.float64)
        out[:, self.free] = free
        if self.label_slice is not None and classes is not None:
            if self.label_kind == "categorical":
                out[np.arange(free.shape[0]), self.label_slice.start + classes] = 1.0
            else:
                out[:, self.label_slice.start] = classes / max(self.classes - 1, 1)
        return out


def _resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise InvalidParameterError(
            "`device` is 'cuda' but CUDA is not available. Use 'auto' or 'cpu'."
        )
    return torch.device(name)


def _latent_dim(config: GPateConfig, layout: _Layout) -> int:
    if config.latent_dim is not None:
        return config.latent_dim
    return layout.width if config.architecture == "mlp" else 100


def _make_teachers(config: GPateConfig, layout: _Layout, members: int, *,
                   generator: torch.Generator, device: torch.device) -> nn.Module:
    if config.architecture == "mlp":
        return _MlpTeachers(members, layout.width, generator=generator, device=device,
                            classes=layout.classes)
    return _ConvTeachers(members, layout.classes, config.image_channels,
                         generator=generator, device=device)


def _make_generators(config: GPateConfig, layout: _Layout, members: int, *,
                     generator: torch.Generator, device: torch.device) -> nn.Module:
    latent = _latent_dim(config, layout)
    if config.architecture == "mlp":
        return _MlpGenerators(members, latent, layout.width, generator=generator,
                              device=device, classes=layout.classes)
    return _ConvGenerators(members, latent, layout.classes, config.image_channels,
                           generator=generator, device=device)


# ----------------------------------------------------------------------- training
@dataclass(frozen=True, slots=True)
class _NoisePlan:
    """How one iteration's standard normals (and uniforms) are laid out."""

    sizes: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]
    uniforms: int
    chunk: int

    @classmethod
    def build(cls, config: GPateConfig, layout: _Layout, latent: int) -> _NoisePlan:
        b, p, s = config.batch_size, config.projection_dim, config.teacher_steps
        shapes = ((s, b, latent), (b, latent), (b, p, layout.width), (b, p),
                  (b, p, config.bins))
        sizes = tuple(math.prod(sh) for sh in shapes)
        uniforms = (s + 1) * b if layout.classes else 0
        chunk = int(min(32, max(1, _NOISE_BUDGET // (sum(sizes) + uniforms))))
        return cls(sizes, shapes, uniforms, chunk)


@dataclass(slots=True)
class _Fitted:
    generator: nn.Module
    layout: _Layout
    latent: int
    claim: PrivacyClaim
    device: torch.device


def _partition_rows(
    perms: Sequence[Tensor], sizes: Sequence[int], k: int, stride: int,
    device: torch.device,
) -> tuple[Tensor, Tensor]:
    """Row indices (into the stacked, padded data) of every teacher's partition.

    Model ``m``'s rows are split, in the order of its random permutation, into ``k``
    disjoint parts of sizes ``n // k`` or ``n // k + 1``. Adding a record to the data
    shifts which rows land where for a given seed, but not the distribution: a
    uniformly random equal split of ``D + {x}`` is distributed as one of ``D`` with
    ``x`` added to one part, and teachers are exchangeable (i.i.d. initialisation),
    so one record changes one teacher's vote per query, as the accountant assumes.
    Teacher ``t`` cycles through its part in order, ``B`` rows per update.

    Returns:
        The padded index table ``[M * k, max part]`` and the part sizes ``[M * k]``.
    """
    width = max(-(-n // k) for n in sizes)
    tables, part_sizes = [], []
    for m, (perm, n) in enumerate(zip(perms, sizes)):
        base, extra = divmod(n, k)
        size = torch.full((k,), base, dtype=torch.long, device=device)
        size[:extra] += 1
        start = torch.cumsum(size, 0) - size
        pos = start[:, None] + torch.arange(width, device=device)[None, :]
        pos = torch.where(pos < (start + size)[:, None], pos, start[:, None])
        tables.append(perm[pos] + m * stride)
        part_sizes.append(size)
    return torch.cat(tables), torch.cat(part_sizes)


class _Trainer:
    """Trains ``M`` G-PATE models of one layout as one tensor program."""

    def __init__(self, config: GPateConfig, layouts: Sequence[_Layout],
                 encoded: Sequence[NDArray[np.float32]], rngs: Sequence[Rngs],
                 device: torch.device) -> None:
        self.config, self.layouts, self.device = config, layouts, device
        cfg = config
        self.m, self.k = len(layouts), cfg.num_teachers
        layout = layouts[0]
        self.d, self.classes = layout.width, layout.classes
        self.latent = _latent_dim(cfg, layout)
        self.plan = _NoisePlan.build(cfg, layout, self.latent)
        self.gens = [r.torch(device) for r in rngs]

        # Per-model initialisation, each from its own stream (so that fit_many
        # reproduces fit), then one ensemble of all members.
        teachers, generators, perms = [], [], []
        for g, data in zip(self.gens, encoded):
            teachers.append(_make_teachers(cfg, layout, self.k, generator=g, device=device))
            generators.append(_make_generators(cfg, layout, 1, generator=g, device=device))
            perms.append(torch.randperm(data.shape[0], generator=g, device=device))
        self.templates = generators
        self.teachers = _concat_members(teachers)
        self.generators = _concat_members(generators)
        del teachers

        sizes = [x.shape[0] for x in encoded]
        stride = max(sizes)
        table = np.zeros((self.m * stride, self.d + self.classes), dtype=np.float32)
        for i, (lay, x) in enumerate(zip(layouts, encoded)):
            free, onehot = lay.split(x)
            table[i * stride:i * stride + x.shape[0]] = np.concatenate([free, onehot], 1)
        self.table = torch.from_numpy(table).to(device)
        self.rows, self.part_sizes = _partition_rows(perms, sizes, self.k, stride, device)

        betas = (0.5, 0.999)
        self.teacher_step = MaskedStep(self.teachers, make_optimizer(
            self.teachers.parameters(), name="adam", lr=cfg.lr, betas=betas))
        self.generator_step = MaskedStep(self.generators, make_optimizer(
            self.generators.parameters(), name="adam", lr=cfg.lr, betas=betas))
        self.teacher_updates = 0
        self._normals: Tensor | None = None
        self._uniforms: Tensor | None = None

    # ------------------------------------------------------------------ noise
    def _noise(self, iteration: int) -> tuple[list[Tensor], Tensor | None]:
        """This iteration's noise for all models: each model's own stream, drawn a
        chunk of iterations at a time (the only loop over models, outside the step)."""
        chunk = self.plan.chunk
        offset = iteration % chunk
        if offset == 0 or self._normals is None:
            total = sum(self.plan.sizes)
            self._normals = torch.stack([
                torch.randn(chunk, total, generator=g, device=self.device)
                for g in self.gens])
            if self.plan.uniforms:
                self._uniforms = torch.stack([
                    torch.rand(chunk, self.plan.uniforms, generator=g, device=self.device)
                    for g in self.gens])
        flat = self._normals[:, offset]
        # Contiguous per-iteration tensors (views into the chunk would be strided).
        parts = [piece.reshape(self.m, *shape).contiguous() for piece, shape in
                 zip(torch.split(flat, list(self.plan.sizes), dim=1), self.plan.shapes)]
        uniforms = (None if self._uniforms is None
                    else self._uniforms[:, offset].contiguous())
        return parts, uniforms

    def _onehot(self, uniforms: Tensor | None, start: int, count: int) -> Tensor:
        if not self.classes or uniforms is None:
            return torch.zeros(self.m, count, 0, device=self.device)
        cls_idx = (uniforms[:, start:start + count] * self.classes).long()
        cls_idx = cls_idx.clamp_(max=self.classes - 1)
        return F.one_hot(cls_idx, self.classes).to(torch.float32)

    # ------------------------------------------------------------------- steps
    def _teacher_update(self, z: Tensor, cond_fake: Tensor, active_teachers: Tensor) -> None:
        b, k = self.config.batch_size, self.k
        with torch.no_grad():
            fake = self.generators(z, cond_fake)
        fake = torch.cat([fake, cond_fake], dim=-1).repeat_interleave(k, dim=0)
        pos = self.teacher_updates * b + torch.arange(b, device=self.device)
        index = self.rows.gather(1, pos[None, :] % self.part_sizes[:, None])
        real = self.table[index]  # [M * k, B, d + C]
        batch = torch.cat([real, fake], dim=1)
        x, cond = batch[..., :self.d], batch[..., self.d:]

        def losses() -> Tensor:
            logits = self.teachers(x, cond)
            return (member_losses(F.softplus(-logits[:, :b]))
                    + member_losses(F.softplus(logits[:, b:])))

        train_step(self.teacher_step, losses, active_teachers)
        self.teacher_updates += 1

    def run(self) -> list[_Fitted]:
        cfg = self.config
        b, p, k, m = cfg.batch_size, cfg.projection_dim, self.k, self.m
        queries_per_iteration = b * p
        orders = accountants.RDP_ORDERS
        thr_rdp = accountants.threshold_rdp(orders, sigma1=cfg.sigma1)
        dd = cfg.traces_data_dependent
        stop_on_dd = cfg.unsanitised_data_dependent

        num_queries = np.zeros(m, dtype=np.int64)
        num_answered = np.zeros(m, dtype=np.int64)
        dd_gnmax = np.zeros((m, orders.size))
        active = np.ones(m, dtype=bool)
        iterations = np.zeros(m, dtype=np.int64)
        eps_trace: list[NDArray[np.float64]] = []
        dd_trace: list[NDArray[np.float64]] = []
        answered_trace: list[NDArray[np.int64]] = []
        committed_trace: list[NDArray[np.bool_]] = []
        ledger_rows: list[NDArray[np.int64]] = []
        ledger_mult: list[NDArray[np.int64]] = []

        def eps_di(q: NDArray[np.int64], a: NDArray[np.int64]) -> NDArray[np.float64]:
            rdp = accountants.confident_gnmax_rdp_data_independent(
                q, a, sigma1=cfg.sigma1, sigma2=cfg.sigma2, orders=orders)
            return accountants.epsilon_from_rdp(rdp, delta=cfg.delta, orders=orders)

        for t in range(cfg.max_iterations):
            if not stop_on_dd:
                # Charge the whole batch as if every query were answered: the
                # decision then depends only on outputs already paid for, and the
                # budget can never be exceeded.
                worst = eps_di(num_queries + queries_per_iteration,
                               num_answered + queries_per_iteration)
                active &= worst <= cfg.epsilon
            if not active.any():
                break
            normals, uniforms = self._noise(t)
            z_teacher, z_gen, proj, thr_noise, vote_noise = normals
            mask = torch.from_numpy(active).to(self.device)
            mask_teachers = mask.repeat_interleave(k)
            for s in range(cfg.teacher_steps):
                self._teacher_update(z_teacher[:, s], self._onehot(uniforms, s * b, b),
                                     mask_teachers)

            cond = self._onehot(uniforms, cfg.teacher_steps * b, b)
            x = self.generators(z_gen, cond)
            grads = teacher_input_gradients(self.teachers, x.detach(), cond, num_teachers=k)
            agg = dp_grad_agg(
                grads, proj / math.sqrt(p), clip=cfg.clip, bins=cfg.bins,
                threshold=cfg.threshold_count, sigma1=cfg.sigma1, sigma2=cfg.sigma2,
                threshold_noise=thr_noise, vote_noise=vote_noise)

            answered = agg.answered.reshape(m, -1).cpu().numpy()
            new_queries = num_queries + queries_per_iteration
            new_answered = num_answered + answered.sum(axis=1)
            batch_dd = np.zeros_like(dd_gnmax)
            rows = np.zeros((0, cfg.bins), dtype=np.int64)
            owners = np.zeros(0, dtype=np.int64)
            if dd:
                counts = agg.counts.reshape(m, -1, cfg.bins).cpu().numpy()
                pick = answered & active[:, None]
                owners = np.nonzero(pick)[0]
                rows = np.rint(counts[pick]).astype(np.int64)
                if rows.shape[0]:
                    log_q = accountants.gnmax_log_error_bound(
                        rows, sigma2=cfg.sigma2, num_classes=cfg.bins)
                    per_query = accountants.gnmax_rdp_data_dependent(
                        log_q, sigma2=cfg.sigma2, orders=orders)
                    np.add.at(batch_dd, owners, per_query)
                new_dd_rdp = new_queries[:, None] * thr_rdp + dd_gnmax + batch_dd
                eps_dd_new = accountants.epsilon_from_rdp(new_dd_rdp, delta=cfg.delta,
                                                          orders=orders)
                dd_trace.append(eps_dd_new)
            if stop_on_dd:
                # DEFECT unsanitised_data_dependent: the stopping rule (and the
                # claim) use the data-dependent epsilon, itself a function of the data.
                active &= eps_dd_new <= cfg.epsilon
                if not active.any():
                    break
                mask = torch.from_numpy(active).to(self.device)

            target = x.detach() + agg.gradient

            def generator_losses(x: Tensor = x, target: Tensor = target) -> Tensor:
                return ((x - target) ** 2).sum(dim=-1).mean(dim=-1)

            train_step(self.generator_step, generator_losses, mask)

            num_queries = np.where(active, new_queries, num_queries)
            num_answered = np.where(active, new_answered, num_answered)
            dd_gnmax = np.where(active[:, None], dd_gnmax + batch_dd, dd_gnmax)
            iterations += active
            eps_trace.append(eps_di(num_queries, num_answered))
            answered_trace.append(answered.sum(axis=1))
            committed_trace.append(active.copy())
            if dd and rows.shape[0]:
                keep = active[owners]
                key = np.concatenate([owners[keep, None], -np.sort(-rows[keep], 1)], 1)
                ledger_rows.append(key)
                ledger_mult.append(np.ones(key.shape[0], dtype=np.int64))
                if len(ledger_rows) >= 64:
                    merged = _merge_rows(ledger_rows, ledger_mult)
                    ledger_rows, ledger_mult = [merged[0]], [merged[1]]

        stopped_by_cap = active & (iterations >= cfg.max_iterations)
        merged_rows, merged_mult = (_merge_rows(ledger_rows, ledger_mult) if ledger_rows
                                    else (np.zeros((0, cfg.bins + 1), np.int64),
                                          np.zeros(0, np.int64)))
        results = []
        untrained: list[int] = []
        for i in range(m):
            # Bookkeeping per model, after training (not inside a step).
            mine = merged_rows[:, 0] == i
            ledger = accountants.ConfidentGnmaxLedger(
                sigma1=float(cfg.sigma1), sigma2=float(cfg.sigma2), num_classes=cfg.bins,
                num_queries=int(num_queries[i]), num_answered=int(num_answered[i]),
                top_counts=tuple(map(tuple, merged_rows[mine, 1:].tolist())) if dd else (),
                multiplicity=tuple(merged_mult[mine].tolist()) if dd else (),
            )
            committed = [j for j, c in enumerate(committed_trace) if c[i]]
            trace: dict[str, Any] = {
                "epsilon": [float(eps_trace[j][i]) for j in committed],
                "answered": [int(answered_trace[j][i]) for j in committed],
                "queries_per_iteration": queries_per_iteration,
                "accountant_mode": cfg.accountant,
                "stop_reason": "max_iterations" if stopped_by_cap[i] else "budget",
            }
            eps_independent = accountants.confident_gnmax_epsilon(ledger, delta=cfg.delta)
            # The reference: what a correct accountant charges for the queries run
            # (as for PATE-GAN); none holds where data reach the release unnoised.
            epsilon: float = eps_independent
            reference: float | None = eps_independent
            trace["reference_note"] = "data-independent RDP on the same ledger"
            if cfg.data_bounds:
                reference = None
                trace["reference_note"] = (
                    "unbounded: bounds read from the private data reach the release "
                    "(data_bounds)")
            accountant = ACCOUNTANT_NAME
            if dd:
                eps_dependent = accountants.confident_gnmax_epsilon(
                    ledger, delta=cfg.delta, data_dependent=True)
                trace["epsilon_data_dependent_not_sanitised"] = [
                    float(dd_trace[j][i]) for j in committed]
                trace["data_dependent_final_not_sanitised"] = eps_dependent
                trace["data_dependent_note"] = NOT_SANITISED_NOTE
                if stop_on_dd:
                    epsilon = eps_dependent
                    accountant = UNSANITISED_ACCOUNTANT_NAME
            if ledger.num_queries:
                rdp = accountants.confident_gnmax_rdp(ledger)
                trace["optimal_order"] = float(accountants.optimal_order(
                    rdp, delta=cfg.delta))
            trace["ledger"] = ledger.to_json()
            if iterations[i] == 0 and not stopped_by_cap[i]:
                untrained.append(i)
            claim = PrivacyClaim(
                epsilon=float(epsilon), delta=float(cfg.delta), accountant=accountant,
                epsilon_data_independent=float(eps_independent),
                reference_epsilon=None if reference is None else float(reference),
                iterations=int(iterations[i]), trace=trace)
            template = self.templates[i]
            _load_member(template, self.generators, i, m)
            template.eval()
            results.append(_Fitted(template, self.layouts[i], self.latent, claim,
                                   self.device))
        if untrained:
            # One warning per batch, not one per model.
            warnings.warn(
                f"G-PATE: for {len(untrained)} of {m} model(s) the budget "
                f"epsilon={cfg.epsilon} does not cover one batch of queries; they were "
                "not trained. Raise `epsilon`, the sigmas, or lower `batch_size` or "
                "`projection_dim`.", DpauditWarning, stacklevel=4)
        return results


def _merge_rows(rows: list[NDArray[np.int64]], mult: list[NDArray[np.int64]]
                ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Distinct ``(model, sorted histogram)`` rows with summed multiplicities."""
    stacked = np.concatenate(rows)
    weights = np.concatenate(mult)
    unique, inverse = np.unique(stacked, axis=0, return_inverse=True)
    total = np.bincount(inverse.reshape(-1), weights=weights, minlength=unique.shape[0])
    return unique, np.rint(total).astype(np.int64)


# ---------------------------------------------------------------------- generator
class GPate:
    """G-PATE (Long et al., NeurIPS 2021), reference implementation for auditing.

    ``fit`` trains on a table with its public domain; ``fit_many`` trains several
    independent models as one tensor program; ``sample`` releases synthetic rows in
    the original columns, dtypes and units; ``privacy_claim_`` states what training
    spent (see :class:`GPateConfig` for the accountant modes and defects).

    Args:
        config: the configuration (only stored).
    """

    def __init__(self, config: GPateConfig) -> None:
        if not isinstance(config, GPateConfig):
            raise InvalidParameterError(
                f"`config` must be a GPateConfig. Got {type(config).__name__}."
            )
        self.config = config
        self._fitted: _Fitted | None = None

    def __repr__(self) -> str:
        state = "fitted" if self._fitted is not None else "not fitted"
        return f"GPate(epsilon={self.config.epsilon}, delta={self.config.delta}, {state})"

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        """What training spent (raises :class:`NotFittedError` before ``fit``)."""
        if self._fitted is None:
            raise NotFittedError(
                "this GPate is not fitted: call `fit` before reading `privacy_claim_`."
            )
        return self._fitted.claim

    def fit(self, data: pd.DataFrame, *, domain: Domain, rng: Rngs) -> Self:
        """Trains on ``data`` (validated against the public ``domain``).

        Args:
            data: the private table.
            domain: its public domain (bounds never read from ``data``, unless the
                ``data_bounds`` defect is on).
            rng: this fit's random streams (same seed, same model).

        Returns:
            self.
        """
        self._fitted = self._train([data], domain=domain, rngs=[rng])[0]
        return self

    def fit_many(
        self, datasets: Sequence[pd.DataFrame], *, domain: Domain, rngs: Sequence[Rngs]
    ) -> list[GPate]:
        """Trains one independent model per dataset, as one tensor program.

        Model ``i`` is the model ``fit(datasets[i], rng=rngs[i])`` would train: each
        draws from its own stream and members never interact.

        Returns:
            ``len(datasets)`` new fitted :class:`GPate` objects, in order.
        """
        datasets = list(datasets)
        rngs = list(rngs)
        if len(datasets) != len(rngs):
            raise InvalidParameterError(
                f"`rngs` must have one stream per dataset ({len(datasets)}). "
                f"Got {len(rngs)}."
            )
        out = []
        for fitted in self._train(datasets, domain=domain, rngs=rngs):
            model = GPate(self.config)
            model._fitted = fitted
            out.append(model)
        return out

    def _train(self, datasets: Sequence[pd.DataFrame], *, domain: Domain,
               rngs: Sequence[Rngs]) -> list[_Fitted]:
        cfg = self.config
        if not isinstance(domain, Domain):
            raise InvalidParameterError(
                f"`domain` must be a Domain. Got {type(domain).__name__}."
            )
        if not datasets:
            raise InvalidParameterError("`datasets` must hold at least one table.")
        for r in rngs:
            if not isinstance(r, Rngs):
                raise InvalidParameterError(
                    f"`rng` must be a dpaudit.rng.Rngs. Got {type(r).__name__}."
                )
        device = _resolve_device(cfg.device)
        layouts, encoded = [], []
        for i, data in enumerate(datasets):
            name = "data" if len(datasets) == 1 else f"datasets[{i}]"
            domain.validate(data, name=name, min_rows=cfg.num_teachers)
            dom = domain.with_data_bounds(data) if cfg.data_bounds else domain
            layouts.append(_Layout.build(dom, cfg))
            encoded.append(dom.encode(data))
        # With the data_bounds defect, per-dataset domains may differ in width
        # (categories absent from one dataset): train each shape as its own batch.
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, lay in enumerate(layouts):
            groups.setdefault(lay.signature(), []).append(i)
        results: list[_Fitted | None] = [None] * len(datasets)
        for members in groups.values():
            trainer = _Trainer(cfg, [layouts[i] for i in members],
                               [encoded[i] for i in members], [rngs[i] for i in members],
                               device)
            for i, fitted in zip(members, trainer.run()):
                results[i] = fitted
        return [r for r in results if r is not None]

    def sample(self, n: int, *, rng: Rngs) -> pd.DataFrame:
        """``n`` synthetic rows in the original columns, dtypes and units.

        With ``label_column``, each row's class is drawn uniformly over the label's
        public categories and the generator is conditioned on it: the released
        class frequencies are public (uniform), not the private label distribution.

        Raises:
            NotFittedError: before ``fit``.
        """
        if self._fitted is None:
            raise NotFittedError("this GPate is not fitted: call `fit` before `sample`.")
        if not (isinstance(n, int | np.integer) and not isinstance(n, bool) and n >= 0):
            raise InvalidParameterError(f"`n` must be an integer >= 0. Got {n!r}.")
        if not isinstance(rng, Rngs):
            raise InvalidParameterError(f"`rng` must be a dpaudit.rng.Rngs. Got {rng!r}.")
        fitted = self._fitted
        layout, device = fitted.layout, fitted.device
        g = rng.torch(device)
        z = torch.randn(1, int(n), fitted.latent, generator=g, device=device)
        classes = None
        if layout.classes:
            u = torch.rand(1, int(n), generator=g, device=device)
            classes = (u * layout.classes).long().clamp_(max=layout.classes - 1)
        pieces = []
        with torch.no_grad():
            for start in range(0, int(n), 4096):
                stop = min(start + 4096, int(n))
                cond = (torch.zeros(1, stop - start, 0, device=device) if classes is None
                        else F.one_hot(classes[:, start:stop], layout.classes).float())
                pieces.append(fitted.generator(z[:, start:stop], cond)[0].cpu())
        free = (torch.cat(pieces).numpy() if pieces
                else np.zeros((0, layout.width), dtype=np.float32))
        cls_np = None if classes is None else classes[0].cpu().numpy()
        return layout.domain.decode(layout.assemble(free, cls_np))


# --------------------------------------------------------------------- registries
def config_from_options(*, epsilon: float, delta: float, variant: str | None = None,
                        bugs: Sequence[str] = (), **options: Any) -> GPateConfig:
    """A config from a variant name, bug flags and plain options (CLI/TOML).

    Options whose value is None keep their default.

    Raises:
        InvalidParameterError: for an unknown option, flag, or a variant of another
            generator.
    """
    from dpaudit.generators.bugs import build_config

    config: GPateConfig = build_config(
        GPateConfig, generator="gpate", label="G-PATE", epsilon=epsilon, delta=delta,
        variant=variant, bugs=bugs, **options)
    return config


def defaults_for_rows(
    n_rows: int, *, epsilon: float, delta: float, iterations: int = 100,
    batch_size: int = 32, projection_dim: int = 5,
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
        epsilon=epsilon, delta=delta, num_queries=iterations * batch_size * projection_dim,
        ratio=1500.0 / 600.0)
    return {"num_teachers": k, "sigma1": max(1500.0 * k / 2100, s1_cal),
            "sigma2": max(600.0 * k / 2100, s2_cal)}


def with_small_table_defaults(
    options: Mapping[str, Any], n_rows: int, *, epsilon: float, delta: float,
) -> dict[str, Any]:
    """``options`` completed by :func:`defaults_for_rows` when the table has fewer
    rows than the published 2,100 teachers and ``num_teachers`` is not given (the
    planned iterations: ``max_iterations`` when given, else 100). Options given win."""
    out = dict(options)
    published_k = int(GPateConfig.__dataclass_fields__["num_teachers"].default)  # type: ignore[arg-type]
    if "num_teachers" in out or n_rows >= published_k:
        return out
    small = defaults_for_rows(
        n_rows, epsilon=epsilon, delta=delta,
        iterations=int(out.get("max_iterations", 100)),
        batch_size=int(out.get("batch_size", 32)),
        projection_dim=int(out.get("projection_dim", 5)))
    for key, value in small.items():
        out.setdefault(key, value)
    return out


def _factory(*, epsilon: float, delta: float, **options: Any) -> GPate:
    """``gpate`` in the generator registry: ``GPate(config_from_options(...))``."""
    return GPate(config_from_options(epsilon=epsilon, delta=delta, **options))


register_bug(BugFlag(
    name="unsanitised_data_dependent", generator="gpate", kind="further",
    implementations=("g-pate",),
    description="training stops on, and the claim reports, the data-dependent RDP "
                "epsilon of Confident-GNMax (Papernot et al. 2018, Thm 6) without "
                "smooth-sensitivity sanitisation",
    consequence="the claimed epsilon is a function of the private data, not a DP "
                "guarantee; the data-independent epsilon actually spent exceeds the "
                "budget",
))
register_bug(BugFlag(
    name="data_bounds", generator="gpate", kind="further",
    implementations=("g-pate",),
    description="bounds and categories read from the private data "
                "(Domain.with_data_bounds) to scale inputs and outputs",
    consequence="a record that sets a column's extreme leaks through the released range",
))
