"""The releases of several fitted G-PATE models in one generator pass.

Each model's release draws its latents and classes from its own public stream, in
the order :meth:`GPate.sample` draws them (a fresh torch generator on the stream's
seed: latents, then class uniforms). The draws of models sharing a stream (the audit's
``fixed_public`` game gives every model the same one) are drawn once. The models'
generators then run as members of the ensemble they were trained in (one
``fit_many``; :func:`~dpaudit.generators.g_pate.networks.select_members`): one
batched forward pass per chunk of rows instead of one per model. Every member
computes on exactly the rows and shapes of its own ``sample`` (the same chunks of
:data:`SAMPLE_CHUNK` rows), so on the CPU the release is bitwise what per-model
sampling gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor, nn
from torch.nn import functional as F

from dpaudit.generators.aligned import (
    activate_members,
    aligned_copy,
    aligned_empty,
    aligned_weights,
    ordered_unit,
)
from dpaudit.generators.g_pate.layout import Layout
from dpaudit.generators.g_pate.networks import (
    _MlpGenerators,
    row_floats,
    select_members,
)
from dpaudit.generators.g_pate.trainer import Fitted
from dpaudit.generators.nets import BatchedLinear
from dpaudit.rng import Rngs
from dpaudit.validation import require

SAMPLE_CHUNK = 4096
"""Rows per model and forward pass (``sample`` and ``sample_many`` alike)."""

PASS_FLOATS = 1 << 26
"""About how many floats one batched forward pass may hold (256 MiB in float32):
bounds the number of members run together."""


@dataclass(frozen=True, slots=True)
class Encoded:
    """Model outputs of a release: the generated coordinates and the class indices."""

    free: NDArray[np.float32]
    classes: NDArray[np.int64] | None


def _draw(fitted: Fitted, n: int, public: Rngs) -> tuple[Tensor, Tensor | None]:
    """A model's latents ``[n, latent]`` and classes ``[n]`` from ``public``."""
    layout, device = fitted.layout, fitted.device
    g = public.torch(device)
    z = torch.randn(1, n, fitted.latent, generator=g, device=device)
    if not layout.classes:
        return z[0], None
    u = torch.rand(1, n, generator=g, device=device)
    return z[0], (u * layout.classes).long().clamp_(max=layout.classes - 1)[0]


def encoded_releases(
    fitted: Sequence[Fitted], n: int, publics: Sequence[Rngs]
) -> list[Encoded]:
    """Each model's ``n`` released rows (before decoding), model ``i`` drawn from
    ``publics[i]``, in order; models of one architecture run as one ensemble.

    Returns:
        One :class:`Encoded` per model (views into one array per ensemble).
    """
    draws: dict[
        tuple[object, ...], tuple[Tensor, Tensor | None, NDArray[np.int64] | None]
    ] = {}
    z_of: list[Tensor] = []
    cls_of: list[Tensor | None] = []
    cls_np: list[NDArray[np.int64] | None] = []
    for f, public in zip(fitted, publics):
        # Models given one public stream (the audit's fixed_public game) share its
        # draws: drawn once (the Rngs objects are alive in `publics` throughout).
        key = (id(public), str(f.device), f.latent, f.layout.classes)
        if key not in draws:
            z, cls = _draw(f, n, public)
            draws[key] = (z, cls, None if cls is None else cls.cpu().numpy())
        z_of.append(draws[key][0])
        cls_of.append(draws[key][1])
        cls_np.append(draws[key][2])
    # Models of one fit_many run as members of the ensemble they were trained in.
    groups: dict[int, list[int]] = {}
    for i, f in enumerate(fitted):
        groups.setdefault(id(f.ensemble), []).append(i)
    out: list[Encoded | None] = [None] * len(fitted)
    for members in groups.values():
        lead = fitted[members[0]]
        if isinstance(lead.generator, _MlpGenerators):
            per_pass = max(
                1,
                PASS_FLOATS
                // (max(1, min(n, SAMPLE_CHUNK)) * row_floats(lead.generator)),
            )
        else:
            # A grouped convolution's result depends on its number of groups in the
            # last bits: convolutional generators run model by model.
            per_pass = 1
        for start in range(0, len(members), per_pass):
            part = members[start : start + per_pass]
            ensemble = (
                fitted[part[0]].generator
                if len(part) == 1
                else select_members(
                    lead.ensemble, [fitted[i].member for i in part], lead.members
                )
            )
            z = torch.stack([z_of[i] for i in part])
            classes = [c for i in part if (c := cls_of[i]) is not None]
            free = _forward(
                lead.layout, ensemble, z, torch.stack(classes) if classes else None
            )
            for j, i in enumerate(part):
                out[i] = Encoded(free[j], cls_np[i])
    return [e for e in out if e is not None]


def _forward(
    layout: Layout, ensemble: nn.Module, z: Tensor, classes: Tensor | None
) -> NDArray[np.float32]:
    """The generated coordinates ``[G, n, width]`` of the ``G`` members of
    ``ensemble`` on the latents ``z[G, n, latent]`` and classes ``[G, n]``."""
    members, n, device = z.shape[0], z.shape[1], z.device
    result = np.empty((members, n, layout.width), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, n, SAMPLE_CHUNK):
            stop = min(start + SAMPLE_CHUNK, n)
            cond = (
                torch.zeros(members, stop - start, 0, device=device)
                if classes is None
                else F.one_hot(classes[:, start:stop], layout.classes).float()
            )
            piece = _generate(ensemble, z[:, start:stop].contiguous(), cond)
            result[:, start:stop] = piece.cpu().numpy()
    return result


def _generate(generators: nn.Module, z: Tensor, cond: Tensor) -> Tensor:
    """``generators(z, cond)``; for MLP generators computed so that each member's
    rows are bitwise independent of how many members run together
    (:func:`mlp_forward`)."""
    if isinstance(generators, _MlpGenerators):
        return mlp_forward(generators, z, cond)
    out: Tensor = generators(z, cond)
    return out


def mlp_forward(generators: _MlpGenerators, z: Tensor, cond: Tensor) -> Tensor:
    """The forward pass of MLP generators (``[G, n, latent]`` -> ``[G, n, width]``).

    The layers of :class:`~dpaudit.generators.nets.BatchedMLP` (batched matmul,
    activation), computed so that a model releases the same bits alone and in a batch
    of any size. Three kernels round differently with a member's place in the batch,
    and are kept from doing so:

    - the CPU matmul (MKL) depends on where a member's matrices sit in memory: every
      member's inputs, weights and outputs start on an ``ALIGN``-float boundary
      (views of buffers with padded strides; the matrices themselves keep their
      shapes, so a model alone computes exactly what the module's forward pass does);
    - a one-unit layer (hidden width ``d // 2 = 1`` for ``d <= 3`` generated
      coordinates, as on the worst case) is a multiply-and-reduce in the ensemble: here
      an explicit sum over its inputs, in order;
    - the output sigmoid has a vectorised body and a scalar tail: it runs member by
      member, on the shape a model alone has (:mod:`dpaudit.generators.aligned`).

    For ``d >= 4`` this is bitwise the module's forward pass of each member alone;
    with a one-unit layer, equal to it up to rounding.
    """
    spec = generators.net.spec
    require(
        not spec.layer_norm and not spec.residual and spec.dropout == 0.0,
        "generators",
        "plain MLP generators (no layer norm, residual or dropout)",
        spec,
    )
    x = torch.cat([z, cond], dim=-1) if generators.classes else z
    h = aligned_copy(x)
    layers = list(generators.net.layers)
    for i, layer in enumerate(layers):
        assert isinstance(layer, BatchedLinear)
        weight: Tensor = layer.weight
        bias: Tensor = layer.bias
        if weight.shape[2] == 1:
            pre = ordered_unit(h, weight, bias)
        else:
            pre = aligned_empty(h, width=weight.shape[2])
            torch.baddbmm(bias, h, aligned_weights(weight), out=pre)
        last = i == len(layers) - 1
        h = activate_members(
            pre, spec.out_activation if last else spec.activation, slope=spec.slope
        )
    return h


def stack(encoded: Sequence[Encoded]) -> Encoded:
    """The outputs of several models (of one layout), one after the other."""
    require(bool(encoded), "encoded", "at least one release", len(encoded))
    free = (
        encoded[0].free
        if len(encoded) == 1
        else np.concatenate([e.free for e in encoded])
    )
    parts = [e.classes for e in encoded if e.classes is not None]
    classes = (
        None if not parts else parts[0] if len(parts) == 1 else np.concatenate(parts)
    )
    return Encoded(free, classes)
