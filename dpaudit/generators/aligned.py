"""Buffers and kernels that make a batched release bitwise independent of its batch.

A release that runs several models' generators as one batched forward pass must give
each model exactly the bits the model gives alone. Three CPU kernels round
differently with a member's place in the batch, and these helpers keep them from
doing so (used by the G-PATE and PATE-GAN release passes):

- the CPU matmul (MKL) depends on where a member's matrices sit in memory: every
  member's inputs, weights and outputs start on an :data:`ALIGN`-float boundary
  (:func:`aligned_empty`, :func:`aligned_weights`);
- a one-unit layer is an explicit sum over its inputs, in order
  (:func:`ordered_unit`);
- a transcendental activation (sigmoid, tanh) has a vectorised body and a scalar
  tail: it runs member by member, on the shape a model alone has
  (:func:`activate_members`).
"""

from __future__ import annotations

import torch
from torch import Tensor

from dpaudit.generators.nets import Activation, activate

ALIGN = 16
"""Floats (64 bytes) on whose multiples every member's matrix starts."""


def aligned(size: int) -> int:
    """``size`` rounded up to a multiple of :data:`ALIGN`."""
    return -(-size // ALIGN) * ALIGN


def aligned_empty(like: Tensor, *, width: int | None = None) -> Tensor:
    """An uninitialised ``[G, n, width]`` view (``like``'s shape by default) whose
    members start ``ALIGN``-aligned rows apart in a fresh buffer."""
    members, rows = like.shape[0], like.shape[1]
    width = like.shape[2] if width is None else width
    buffer = like.new_empty(members, aligned(rows * width))
    return buffer[:, : rows * width].view(members, rows, width)


def aligned_copy(x: Tensor) -> Tensor:
    """``x[G, n, width]`` copied into a fresh :func:`aligned_empty` buffer."""
    out = aligned_empty(x)
    out.copy_(x)
    return out


def aligned_weights(weight: Tensor) -> Tensor:
    """``weight[G, k, n]`` copied so that each member's matrix starts on an
    :data:`ALIGN`-float boundary of a fresh (aligned) buffer."""
    members, k, n = weight.shape
    stride = aligned(k * n)
    buffer = weight.new_zeros(members, stride)
    buffer[:, : k * n] = weight.reshape(members, k * n)
    return buffer.as_strided((members, k, n), (stride, n, 1))


def ordered_unit(h: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """A one-unit linear layer ``h[G, n, k] @ weight[G, k, 1] + bias[G, 1, 1]`` as
    an explicit sum over the ``k`` inputs, in order, into an aligned buffer."""
    acc = h[..., :1] * weight[:, None, 0]
    for k in range(1, weight.shape[1]):
        acc = acc + h[..., k : k + 1] * weight[:, None, k]
    pre = aligned_empty(acc)
    torch.add(acc, bias, out=pre)
    return pre


def activate_members(x: Tensor, name: Activation, *, slope: float) -> Tensor:
    """The activation ``name`` on ``x[G, ...]``, each member's result independent of
    ``G``. ReLU, leaky ReLU and the identity are exact (in place); a transcendental
    activation (sigmoid, tanh) rounds differently in a kernel's vectorised body and
    in its scalar tail, so it runs member by member, in place, on the shape a model
    alone has."""
    if name in ("relu", "leaky_relu", "linear"):
        return activate(x, name, slope=slope, inplace=True)
    in_place = {"sigmoid": Tensor.sigmoid_, "tanh": Tensor.tanh_}[name]
    for j in range(x.shape[0]):
        in_place(x[j])  # contiguous: a model's own [n, width] block
    return x
