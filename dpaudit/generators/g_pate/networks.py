"""Batched networks of G-PATE: ``E`` independent teachers or generators as one module.

Every parameter has its member axis first, so ensembles concatenate and split along
dimension 0 (:func:`concat_members`, :func:`load_member`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from dpaudit.generators.g_pate.config import IMAGE_SIDE, GPateConfig
from dpaudit.generators.g_pate.layout import Layout
from dpaudit.generators.nets import BatchedLinear, BatchedMLP, MLPSpec
from dpaudit.validation import require


class _BatchedConv(nn.Module):
    """``E`` independent (transposed) 2-D convolutions as one grouped convolution.

    Activations use the layout ``[B, E * C, H, W]``: member ``e`` owns channels
    ``e*C .. (e+1)*C - 1``. Parameters have the member axis first (``weight`` rows
    ``e*C_out ..`` for a convolution, ``e*C_in ..`` for a transposed one), so
    ensembles concatenate and split along dimension 0.
    """

    def __init__(
        self,
        members: int,
        c_in: int,
        c_out: int,
        *,
        kernel: int,
        stride: int,
        padding: int,
        transpose: bool,
        generator: torch.Generator,
        device: torch.device,
    ) -> None:
        super().__init__()
        self.c_out, self.stride, self.padding, self.transpose = (
            c_out,
            stride,
            padding,
            transpose,
        )
        bound = 1.0 / math.sqrt(c_in * kernel * kernel)
        shape = (
            (members * c_in, c_out, kernel, kernel)
            if transpose
            else (members * c_out, c_in, kernel, kernel)
        )
        w = torch.empty(shape, device=device)
        bias = torch.empty(members * c_out, device=device)
        w.uniform_(-bound, bound, generator=generator)
        bias.uniform_(-bound, bound, generator=generator)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(bias)

    def forward(self, h: Tensor) -> Tensor:
        groups = self.bias.shape[0] // self.c_out
        if self.transpose:
            return F.conv_transpose2d(
                h,
                self.weight,
                self.bias,
                stride=self.stride,
                padding=self.padding,
                groups=groups,
            )
        return F.conv2d(
            h,
            self.weight,
            self.bias,
            stride=self.stride,
            padding=self.padding,
            groups=groups,
        )


class _MlpTeachers(nn.Module):
    """Teacher discriminators for tabular data: one hidden layer of width ``d``.

    With ``classes > 0`` a teacher scores ``x ++ onehot(y)`` (input ``d + C``).
    """

    def __init__(
        self,
        members: int,
        d: int,
        *,
        generator: torch.Generator,
        device: torch.device,
        classes: int = 0,
    ) -> None:
        super().__init__()
        self.classes = classes
        spec = MLPSpec(
            n_in=d + classes,
            hidden=(d,),
            n_out=1,
            activation="leaky_relu",
            out_activation="linear",
        )
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

    def __init__(
        self,
        members: int,
        latent: int,
        d: int,
        *,
        generator: torch.Generator,
        device: torch.device,
        classes: int = 0,
    ) -> None:
        super().__init__()
        self.classes = classes
        spec = MLPSpec(
            n_in=latent + classes,
            hidden=(d, max(d // 2, 1), d),
            n_out=d,
            activation="relu",
            out_activation="sigmoid",
        )
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

    def __init__(
        self,
        members: int,
        classes: int,
        width: int,
        *,
        generator: torch.Generator,
        device: torch.device,
    ) -> None:
        super().__init__()
        self.classes, self.width = classes, width
        kw = {
            "kernel": 4,
            "stride": 2,
            "padding": 1,
            "transpose": False,
            "generator": generator,
            "device": device,
        }
        self.conv1 = _BatchedConv(members, 1 + classes, width, **kw)  # type: ignore[arg-type]
        self.conv2 = _BatchedConv(members, width, 2 * width, **kw)  # type: ignore[arg-type]
        self.out = BatchedLinear(
            members, 2 * width * 49, 1, generator=generator, device=device
        )

    def forward(self, x: Tensor, cond: Tensor) -> Tensor:
        e, b = x.shape[:2]
        img = x.reshape(e, b, 1, IMAGE_SIDE, IMAGE_SIDE)
        if self.classes:
            planes = cond.reshape(e, b, self.classes, 1, 1).expand(
                e, b, self.classes, IMAGE_SIDE, IMAGE_SIDE
            )
            img = torch.cat([img, planes], dim=2)
        h = img.transpose(0, 1).reshape(
            b, e * (1 + self.classes), IMAGE_SIDE, IMAGE_SIDE
        )
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

    def __init__(
        self,
        members: int,
        latent: int,
        classes: int,
        width: int,
        *,
        generator: torch.Generator,
        device: torch.device,
    ) -> None:
        super().__init__()
        self.width = width
        self.fc = BatchedLinear(
            members,
            latent + classes,
            2 * width * 49,
            generator=generator,
            device=device,
        )
        kw = {
            "kernel": 4,
            "stride": 2,
            "padding": 1,
            "transpose": True,
            "generator": generator,
            "device": device,
        }
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


def concat_members(modules: Sequence[nn.Module]) -> nn.Module:
    """One ensemble whose members are those of ``modules``, in order (every
    parameter has its member axis first)."""
    out = copy.deepcopy(modules[0])
    sources = [dict(m.named_parameters()) for m in modules]
    with torch.no_grad():
        for name, param in out.named_parameters():
            param.data = torch.cat([s[name].detach() for s in sources], dim=0)
    return out


def load_member(
    template: nn.Module, ensemble: nn.Module, index: int, members: int
) -> None:
    """Copies member ``index`` of ``ensemble`` into the one-member ``template``."""
    source = dict(ensemble.named_parameters())
    with torch.no_grad():
        for name, param in template.named_parameters():
            param.data = source[name].detach().chunk(members, dim=0)[index].clone()


def select_members(
    ensemble: nn.Module, index: Sequence[int], members: int
) -> nn.Module:
    """The ensemble of members ``index`` (in that order) of ``ensemble`` (which has
    ``members`` members). A run of consecutive members shares ``ensemble``'s memory;
    other selections copy. Nothing is traversed per member."""
    index = list(index)
    require(
        bool(index) and all(0 <= i < members for i in index),
        "index",
        f"member indices in [0, {members})",
        index,
    )
    contiguous = index == list(range(index[0], index[0] + len(index)))
    if contiguous and len(index) == members:
        return ensemble
    rows = (
        None
        if contiguous
        else torch.as_tensor(
            index, dtype=torch.long, device=next(ensemble.parameters()).device
        )
    )
    memo: dict[int, object] = {}
    for param in ensemble.parameters():
        per, rest = divmod(param.shape[0], members)
        require(
            rest == 0,
            "members",
            f"a divisor of every parameter's first axis ({param.shape[0]})",
            members,
        )
        data = param.detach()
        if rows is None:
            part = data[index[0] * per : (index[-1] + 1) * per]
        else:
            part = data.reshape(members, per, *data.shape[1:])[rows].reshape(
                len(index) * per, *data.shape[1:]
            )
        memo[id(param)] = nn.Parameter(part, requires_grad=False)
    # The module structure is copied; its parameters are replaced by their selection.
    return copy.deepcopy(ensemble, memo)


def row_floats(generators: nn.Module) -> int:
    """About how many floats a generator ensemble's forward pass holds per generated
    row and member (its input and every layer's output): sizes a batched release."""
    if isinstance(generators, _MlpGenerators):
        spec = generators.net.spec
        return spec.n_in + sum(spec.hidden) + spec.n_out
    if isinstance(generators, _ConvGenerators):
        w = generators.width
        return (
            generators.fc.weight.shape[1] + 2 * w * 49 + 2 * w * 196 + 2 * IMAGE_SIDE**2
        )
    return sum(p[0].numel() for p in generators.parameters())


def latent_dim(config: GPateConfig, layout: Layout) -> int:
    if config.latent_dim is not None:
        return config.latent_dim
    return layout.width if config.architecture == "mlp" else 100


def make_teachers(
    config: GPateConfig,
    layout: Layout,
    members: int,
    *,
    generator: torch.Generator,
    device: torch.device,
) -> nn.Module:
    if config.architecture == "mlp":
        return _MlpTeachers(
            members,
            layout.width,
            generator=generator,
            device=device,
            classes=layout.classes,
        )
    return _ConvTeachers(
        members,
        layout.classes,
        config.image_channels,
        generator=generator,
        device=device,
    )


def make_generators(
    config: GPateConfig,
    layout: Layout,
    members: int,
    *,
    generator: torch.Generator,
    device: torch.device,
) -> nn.Module:
    latent = latent_dim(config, layout)
    if config.architecture == "mlp":
        return _MlpGenerators(
            members,
            latent,
            layout.width,
            generator=generator,
            device=device,
            classes=layout.classes,
        )
    return _ConvGenerators(
        members,
        latent,
        layout.classes,
        config.image_channels,
        generator=generator,
        device=device,
    )
