"""The release forward pass of PATE-GAN generators: one model or many, same bits.

:meth:`PateGan.sample` (a batch of one) and :meth:`PateGan.sample_many` (the
members of a trained ensemble together) both run :func:`release_forward`, so a
model's released floats do not depend on its batch mates, their number or its
place among them. The training forward pass
(:class:`~dpaudit.generators.nets.BatchedMLP`) is not used here: its batched
matmul, one-unit layer and output sigmoid round differently with a member's place
in the batch. This pass keeps each member's computation independent of the batch
(:mod:`dpaudit.generators.aligned`): every member's inputs, weights and outputs
start on an aligned boundary, a one-unit layer is an explicit ordered sum, and the
transcendental activations and the layer norm run member by member on the shape a
model alone has.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from dpaudit.generators.aligned import (
    activate_members,
    aligned_copy,
    aligned_empty,
    aligned_weights,
    ordered_unit,
)
from dpaudit.generators.nets import BatchedLinear, BatchedMLP
from dpaudit.validation import require

PASS_FLOATS = 1 << 26
"""About how many floats one forward pass may hold per layer (256 MiB in float32):
bounds the number of members run together."""


def release_forward(net: BatchedMLP, index: Sequence[int], z: Tensor) -> Tensor:
    """Members ``index`` of the generator ensemble ``net`` on ``z[len(index), n,
    latent]`` (member ``index[j]`` on ``z[j]``), clamped to [0, 1].

    Each member's rows are bitwise what it gives alone (``index`` of one member) and
    in any batch; members run in passes of at most about :data:`PASS_FLOATS` floats
    per layer.

    Returns:
        ``[len(index), n, n_out]`` float32.
    """
    index = [int(i) for i in index]
    require(
        len(index) == z.shape[0],
        "z",
        f"one latent block per member ({len(index)})",
        tuple(z.shape),
    )
    require(
        all(0 <= i < net.members for i in index),
        "index",
        f"members of the ensemble (0 .. {net.members - 1})",
        index,
    )
    spec = net.spec
    widest = max(spec.n_in, spec.n_out, *spec.hidden)
    per_pass = max(1, PASS_FLOATS // max(1, z.shape[1] * widest))
    with torch.no_grad():
        if per_pass >= len(index):
            return _forward(net, index, z).clamp_(0.0, 1.0)
        parts = [
            _forward(net, index[s : s + per_pass], z[s : s + per_pass])
            for s in range(0, len(index), per_pass)
        ]
        return torch.cat(parts).clamp_(0.0, 1.0)


def _forward(net: BatchedMLP, index: list[int], z: Tensor) -> Tensor:
    """:class:`BatchedMLP`'s forward pass (no dropout) of members ``index``,
    computed so that each member's result is independent of the others."""
    spec = net.spec
    every = index == list(range(net.members))
    h = aligned_copy(z)
    layers = list(net.layers)
    for i, layer in enumerate(layers):
        assert isinstance(layer, BatchedLinear)
        weight: Tensor = layer.weight if every else layer.weight[index]
        bias: Tensor = layer.bias if every else layer.bias[index]
        if weight.shape[2] == 1:
            pre = ordered_unit(h, weight, bias)
        else:
            pre = aligned_empty(h, width=weight.shape[2])
            torch.baddbmm(bias, h, aligned_weights(weight), out=pre)
        if i == len(layers) - 1:
            return activate_members(pre, spec.out_activation, slope=spec.slope)
        if spec.layer_norm:
            for j in range(pre.shape[0]):  # a model's own [n, width] block
                pre[j] = nn.functional.layer_norm(pre[j], pre.shape[-1:])
        out = activate_members(pre, spec.activation, slope=spec.slope)
        h = aligned_copy(h + out) if spec.residual and out.shape == h.shape else out
    return h
