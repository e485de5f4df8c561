"""Batched network ensembles: many small networks as one tensor program.

Every network here is a stack of weight tensors with a leading member axis: a layer
holds ``weight[E, in, out]`` and ``bias[E, 1, out]`` and maps ``x[E, B, in]`` to
``[E, B, out]`` with one batched matmul. PATE-GAN's ``k`` teachers of ``M`` models are
one ensemble of ``E = M * k`` members; the students and generators of ``M`` models are
ensembles of ``E = M``. Members are independent: the training loss is the *sum* of
the members' losses, so each member's gradient is exactly its own, and element-wise
optimisers (Adam, RMSProp) update each member as if it were trained alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from dpaudit.rng import ModelStreams

Activation = Literal["relu", "leaky_relu", "tanh", "sigmoid", "linear"]


def activate(
    x: Tensor, name: Activation, *, slope: float = 0.2, inplace: bool = False
) -> Tensor:
    """The activation ``name``; ``inplace`` overwrites ``x`` where the kernel allows
    (ReLU, leaky ReLU: for fresh layer outputs, saving an allocation per layer)."""
    if name == "relu":
        return torch.relu_(x) if inplace else torch.relu(x)
    if name == "leaky_relu":
        return nn.functional.leaky_relu(x, slope, inplace=inplace and slope > 0)
    if name == "tanh":
        return torch.tanh(x)
    if name == "sigmoid":
        return torch.sigmoid(x)
    return x


class BatchedLinear(nn.Module):
    """``E`` independent linear layers ``in -> out`` applied with one ``baddbmm``.

    Initialised like :class:`torch.nn.Linear` (uniform in +-1/sqrt(in)), from an
    explicit generator, or from per-model :class:`~dpaudit.rng.ModelStreams`: then the
    ``members`` come in ``members / M`` consecutive members per model (the ``k``
    teachers of model ``m`` are members ``m * k .. m * k + k - 1``) and each model's
    weights come from its own stream.
    """

    def __init__(
        self,
        members: int,
        n_in: int,
        n_out: int,
        *,
        generator: torch.Generator | ModelStreams,
        device: torch.device | str = "cpu",
    ) -> None:
        super().__init__()
        bound = 1.0 / math.sqrt(n_in)
        if isinstance(generator, ModelStreams):
            groups = members // generator.m
            if groups * generator.m != members:
                raise ValueError(
                    f"{members} members are not a multiple of {generator.m} streams"
                )
            w = (
                generator.rand((groups, n_in, n_out))
                .to(device)
                .view(members, n_in, n_out)
            )
            b = generator.rand((groups, 1, n_out)).to(device).view(members, 1, n_out)
            w = w.mul_(2.0 * bound).sub_(bound)
            b = b.mul_(2.0 * bound).sub_(bound)
        else:
            w = torch.empty(members, n_in, n_out, device=device)
            b = torch.empty(members, 1, n_out, device=device)
            w.uniform_(-bound, bound, generator=generator)
            b.uniform_(-bound, bound, generator=generator)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(b)

    def forward(self, x: Tensor, *, member: int | None = None) -> Tensor:
        weight: Tensor = self.weight
        bias: Tensor = self.bias
        if member is not None:
            weight, bias = weight[member : member + 1], bias[member : member + 1]
        if weight.shape[2] == 1:
            # A one-unit output (a discriminator's logit) as a multiply-and-sum: a
            # batched matmul with one output column (and its rank-1 backward) runs
            # several times slower than these element-wise kernels.
            return (x * weight.transpose(1, 2)).sum(dim=2, keepdim=True) + bias
        return torch.baddbmm(bias, x, weight)

    def forward_shared(self, x: Tensor, groups: int) -> Tensor:
        """Applies members ``g * groups .. (g + 1) * groups - 1`` to ``x[g]``.

        Equal to ``forward(x.repeat_interleave(groups, dim=0))`` without the copies:
        the ``groups`` members that share an input are applied as one wider matmul,
        ``x[G, B, in] @ W[G, in, groups * out]``. Returns ``[G, B, groups, out]``
        (member ``g * groups + j`` at ``[g, :, j]``).
        """
        g, n_in, n_out = x.shape[0], self.weight.shape[1], self.weight.shape[2]
        w = self.weight.view(g, groups, n_in, n_out).transpose(1, 2)
        b = self.bias.view(g, 1, groups * n_out)
        z = torch.baddbmm(b, x, w.reshape(g, n_in, groups * n_out))
        return z.view(g, x.shape[1], groups, n_out)

    def forward_grouped(self, h: Tensor) -> Tensor:
        """This layer on ``h[G, B, groups, in]`` (member ``g * groups + j`` at
        ``[g, :, j]``, as :meth:`forward_shared` returns) -> ``[G, B, groups, out]``.

        Only for one output unit, where it is a multiply-and-sum needing no transpose.
        """
        g, _, groups, n_in = h.shape
        if self.weight.shape[2] != 1:
            raise ValueError("forward_grouped needs a layer with one output unit")
        w = self.weight.view(g, 1, groups, n_in)
        return (h * w).sum(dim=3, keepdim=True) + self.bias.view(g, 1, groups, 1)


@dataclass(frozen=True, kw_only=True, slots=True)
class MLPSpec:
    """Architecture of one member of an ensemble.

    Args:
        n_in: input width.
        hidden: hidden layer widths.
        n_out: output width.
        activation: hidden activation.
        out_activation: output activation (``linear`` leaves logits).
        slope: leaky-ReLU slope.
        dropout: dropout rate after each hidden activation (training only).
        layer_norm: LayerNorm (no affine) before each hidden activation.
        residual: add each hidden layer's input to its output where widths match.
    """

    n_in: int
    hidden: tuple[int, ...]
    n_out: int
    activation: Activation = "relu"
    out_activation: Activation = "sigmoid"
    slope: float = 0.2
    dropout: float = 0.0
    layer_norm: bool = False
    residual: bool = False


class BatchedMLP(nn.Module):
    """An ensemble of ``members`` MLPs of the same :class:`MLPSpec`."""

    def __init__(
        self,
        members: int,
        spec: MLPSpec,
        *,
        generator: torch.Generator | ModelStreams,
        device: torch.device | str = "cpu",
    ) -> None:
        super().__init__()
        self.members = members
        self.spec = spec
        sizes = [spec.n_in, *spec.hidden, spec.n_out]
        self.layers = nn.ModuleList(
            BatchedLinear(members, a, b, generator=generator, device=device)
            for a, b in itertools.pairwise(sizes)
        )

    def forward(
        self,
        x: Tensor,
        *,
        logits: bool = False,
        generator: torch.Generator | ModelStreams | None = None,
        member: int | None = None,
    ) -> Tensor:
        """Maps ``x[E, B, n_in]`` to ``[E, B, n_out]``.

        Args:
            logits: return the pre-activation output (for numerically stable losses).
            generator: draws the dropout masks; dropout is applied only when given
                (:class:`~dpaudit.rng.ModelStreams`: one stream per member).
            member: run only this member on ``x[1, B, n_in]``.
        """
        h = self._hidden(x, self.layers[:-1], generator=generator, member=member)
        return self._output(self.layers[-1](h, member=member), logits=logits)

    def _hidden(
        self,
        h: Tensor,
        layers: Iterable[nn.Module],
        *,
        generator: torch.Generator | ModelStreams | None = None,
        member: int | None = None,
    ) -> Tensor:
        """The hidden ``layers`` (each: linear, layer norm, activation, dropout,
        residual) applied to ``h``."""
        spec = self.spec
        for layer in layers:
            z = layer(h, member=member)
            if spec.layer_norm:
                z = nn.functional.layer_norm(z, z.shape[-1:])
            z = activate(z, spec.activation, slope=spec.slope, inplace=True)
            if spec.dropout > 0 and generator is not None:
                if isinstance(generator, ModelStreams):
                    u = generator.rand(tuple(z.shape[1:])).to(z.device)
                else:
                    u = torch.rand(z.shape, generator=generator, device=z.device)
                keep = u >= spec.dropout
                z = z * keep / (1.0 - spec.dropout)
            h = h + z if spec.residual and z.shape == h.shape else z
        return h

    def _output(self, out: Tensor, *, logits: bool) -> Tensor:
        if logits:
            return out
        return activate(out, self.spec.out_activation, slope=self.spec.slope)

    def forward_shared(self, x: Tensor, groups: int, *, logits: bool = False) -> Tensor:
        """Equal to ``forward(x.repeat_interleave(groups, dim=0))``, faster.

        For ensembles whose members come in groups that see the same input (the ``k``
        teachers of one PATE-GAN model on its generated rows): ``x[G, B, n_in]`` ->
        ``[G * groups, B, n_out]``. The first layer runs as one matmul per group
        (:meth:`BatchedLinear.forward_shared`); no dropout.
        """
        spec = self.spec
        first = self.layers[0]
        assert isinstance(first, BatchedLinear)
        if spec.residual and len(self.layers) > 1 and spec.hidden[0] == spec.n_in:
            # The first layer's residual needs each member's own copy of the input.
            same: Tensor = self(x.repeat_interleave(groups, dim=0), logits=logits)
            return same
        g, rows = x.shape[0], x.shape[1]

        def members_first(t: Tensor) -> Tensor:  # [G, B, groups, n] -> [G*groups, B, n]
            return t.transpose(1, 2).reshape(g * groups, rows, t.shape[3])

        h = first.forward_shared(x, groups)
        if len(self.layers) == 1:
            return self._output(members_first(h), logits=logits)
        if spec.layer_norm:
            h = nn.functional.layer_norm(h, h.shape[-1:])
        # Not in place: ``h`` is a view, and autograd would copy its base back.
        h = activate(h, spec.activation, slope=spec.slope)
        last = self.layers[-1]
        assert isinstance(last, BatchedLinear)
        if len(self.layers) == 2 and last.weight.shape[2] == 1:
            # One hidden layer and a logit (PATE-GAN's teachers): stay in the grouped
            # layout and transpose only the one-column output.
            return self._output(members_first(last.forward_grouped(h)), logits=logits)
        h = self._hidden(members_first(h), self.layers[1:-1])
        return self._output(last(h), logits=logits)

    def clamp_(self, limit: float) -> None:
        """Clips every weight to ``[-limit, limit]`` (WGAN-style weight clipping)."""
        with torch.no_grad():
            for p in self.parameters():
                p.clamp_(-limit, limit)


def is_relu_logit(net: BatchedMLP) -> bool:
    """Whether ``net`` is one ReLU hidden layer and one logit (PATE-GAN's teachers):
    the architecture whose BCE gradient :func:`relu_logit_bce_grad_` writes by hand."""
    spec = net.spec
    return (
        len(spec.hidden) == 1
        and spec.n_out == 1
        and spec.activation == "relu"
        and not spec.layer_norm
        and not spec.residual
    )


def with_ones(x: Tensor) -> Tensor:
    """``x[..., n]`` with a column of ones appended, ``[..., n + 1]``: a layer's bias
    then rides in its matmul (no broadcast pass over the output, and the bias
    gradient comes out of the weight gradient's matmul). (A copy and a fill: ``torch.cat``
    along a last axis this narrow runs about twice as slow.)"""
    out = x.new_empty((*x.shape[:-1], x.shape[-1] + 1))
    out[..., :-1] = x
    out[..., -1] = 1.0
    return out


def _first_layer(net: BatchedMLP) -> Tensor:
    """The first layer's weight over its bias: ``[E, n_in + 1, h]``."""
    first = net.layers[0]
    assert isinstance(first, BatchedLinear)
    return torch.cat([first.weight, first.bias], dim=1)


def _first_layer_t(a: Tensor, groups: int) -> Tensor:
    """:func:`_first_layer`'s ``a``, transposed: ``[E, h, n_in + 1]``, or for inputs
    shared by ``groups`` members ``[E / groups, groups * h, n_in + 1]``."""
    if groups == 1:
        return a.transpose(1, 2)
    e, n1, h = a.shape
    return (
        a.view(e // groups, groups, n1, h)
        .transpose(2, 3)
        .reshape(e // groups, groups * h, n1)
    )


def relu_logits(
    net: BatchedMLP, x1: Tensor, groups: int = 1, *, first: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Logits ``[E, 1, B]`` and hidden activations ``[E, h, B]`` (transposed: one
    member's hidden units are rows, so that the logit is a matrix-vector product) of a
    :func:`is_relu_logit` ensemble on ``x1 = with_ones(x)``: ``x1[E, B, n_in + 1]``, or
    ``x1[E / groups, B, n_in + 1]`` shared by consecutive groups of members as in
    :meth:`BatchedMLP.forward_shared`. Equal to ``forward(x, logits=True)``. ``first``:
    the first layer as :func:`_first_layer` returns it, when the caller has it."""
    last = net.layers[-1]
    assert isinstance(last, BatchedLinear)
    rows = x1.shape[1]
    a = _first_layer(net) if first is None else first
    hidden = torch.relu_(torch.bmm(_first_layer_t(a, groups), x1.transpose(1, 2)))
    hidden = hidden.view(net.members, -1, rows)
    return logit_layer(last.weight, last.bias, hidden), hidden


def logit_layer(w2: Tensor, b2: Tensor, hidden: Tensor) -> Tensor:
    """``b2 + w2^T hidden``: ``[E, 1, B]`` from ``w2[E, h, 1]``, ``b2[E, 1, 1]`` and
    ``hidden[E, h, B]``, bit for bit ``torch.baddbmm(b2, w2.transpose(1, 2), hidden)``.

    For the small shapes where torch's CPU ``baddbmm`` runs its own loop (``acc = 0;
    acc += w2[k] * hidden[k]`` for ``k = 0, 1, ...``; then ``b2 + acc``), the same sums
    as ``h`` element-wise passes over ``[E, 1, B]``: several times faster than that
    loop for thousands of members. Used only where a probe (:func:`_loop_matches`)
    found the two bitwise equal on this machine; elsewhere ``baddbmm`` itself.
    """
    h, rows = hidden.shape[1], hidden.shape[2]
    if not _loop_matches(h, rows, hidden.dtype, hidden.device):
        return torch.baddbmm(b2, w2.transpose(1, 2), hidden)
    return _logit_by_passes(w2, b2, hidden)


def _logit_by_passes(w2: Tensor, b2: Tensor, hidden: Tensor) -> Tensor:
    acc = hidden.new_zeros((hidden.shape[0], 1, hidden.shape[2]))
    for k in range(hidden.shape[1]):
        acc.add_(hidden[:, k : k + 1] * w2[:, k : k + 1])
    return acc.add_(b2)


_LOOP_MATCHES: dict[tuple[int, int, torch.dtype, str], bool] = {}


def _loop_matches(h: int, rows: int, dtype: torch.dtype, device: torch.device) -> bool:
    """Whether :func:`_logit_by_passes` reproduces ``baddbmm`` bit for bit (signed
    zeros included) at this shape: probed once per shape on random members (with
    inactive ReLU units) and cached. Only small CPU shapes are probed (below torch's
    own-loop threshold of 400 multiply-adds per member)."""
    if (
        device.type != "cpu"
        or h * rows >= 400
        or h > 8
        or dtype not in (torch.float32, torch.float64)
    ):
        return False
    key = (h, rows, dtype, device.type)
    if key not in _LOOP_MATCHES:
        gen = torch.Generator().manual_seed(h * 1000 + rows)
        w2 = torch.randn(64, h, 1, generator=gen, dtype=dtype)
        b2 = torch.randn(64, 1, 1, generator=gen, dtype=dtype)
        b2[:4] = 0.0  # signed zeros: all-inactive members with a zero bias
        hidden = torch.relu(torch.randn(64, h, rows, generator=gen, dtype=dtype))
        hidden[:8] = 0.0
        bits = torch.int64 if dtype == torch.float64 else torch.int32
        ours = _logit_by_passes(w2, b2, hidden).view(bits)
        theirs = torch.baddbmm(b2, w2.transpose(1, 2), hidden).view(bits)
        _LOOP_MATCHES[key] = bool(torch.equal(ours, theirs))
    return _LOOP_MATCHES[key]


@torch.no_grad()
def relu_logit_bce_grad_(
    net: BatchedMLP,
    batches: Sequence[tuple[Tensor, int, Tensor | float]],
    weight: Tensor,
    batch_weights: Sequence[Tensor | None] | None = None,
) -> None:
    """Sets the ``.grad`` of a :func:`is_relu_logit` ensemble's parameters to the
    gradient of ``sum_e weight[e] * sum_batches mean_b BCE(logit[e, b], y[e, b])``.

    The gradient autograd would compute (tests compare them in float64), written out so
    that each pass over the ``[E, h, B]`` activations is one kernel: with ``z`` the
    hidden pre-activation, ``d = weight * (sigmoid(logit) - y) / B``,
    ``dL/dw2 = relu(z) d``, ``dL/db2 = sum d``, ``dL/d[W1; b1] = x1^T (1[z > 0] d) w2``
    (the row scaling by ``w2`` after the matmul). Autograd's graph makes about twice as
    many passes over the activations, and at thousands of teachers these passes, not
    the matmuls, bound a training step.

    Args:
        batches: ``(x1, groups, y)``: inputs with a ones column (:func:`with_ones`), as
            :func:`relu_logits` takes them, and targets broadcastable to ``[E, 1, B]``.
        weight: ``[E]``, each member's weight in the sum (0 for stopped members).
        batch_weights: per batch, ``[E]`` weights replacing ``weight`` for that batch
            (None: ``weight``), e.g. 0 for a teacher without real rows.
    """
    first, last = net.layers
    assert isinstance(first, BatchedLinear) and isinstance(last, BatchedLinear)
    e = net.members
    grad_a: Tensor | None = None
    grad_w2: Tensor | None = None
    grad_b2: Tensor | None = None
    a = _first_layer(net)
    per_batch = (
        list(batch_weights) if batch_weights is not None else [None] * len(batches)
    )
    for (x1, groups, y), bw in zip(batches, per_batch):  # the real and generated batch
        logits, hidden = relu_logits(net, x1, groups, first=a)
        w = weight if bw is None else bw
        d = (torch.sigmoid(logits) - y).mul_((w / x1.shape[1]).view(e, 1, 1))
        g_w2 = torch.bmm(d, hidden.transpose(1, 2))  # [E, 1, h]
        g_b2 = d.sum(dim=2, keepdim=True)
        g_z = torch.ops.aten.threshold_backward(d.expand_as(hidden), hidden, 0.0)
        g_a = torch.bmm(g_z.view(e // groups, -1, x1.shape[1]), x1).view(
            e, -1, x1.shape[2]
        )
        grad_a = g_a if grad_a is None else grad_a.add_(g_a)
        grad_w2 = g_w2 if grad_w2 is None else grad_w2.add_(g_w2)
        grad_b2 = g_b2 if grad_b2 is None else grad_b2.add_(g_b2)
    assert grad_a is not None and grad_w2 is not None and grad_b2 is not None
    grad_a.mul_(last.weight)  # [E, h, n_in + 1] scaled by w2[E, h, 1]
    first.weight.grad = grad_a[:, :, :-1].transpose(1, 2).contiguous()
    first.bias.grad = grad_a[:, :, -1:].transpose(1, 2).contiguous()
    last.weight.grad = grad_w2.transpose(1, 2).contiguous()
    last.bias.grad = grad_b2


def gather_rows(table: Tensor, index: Tensor) -> Tensor:
    """``table[E, N, d]`` gathered at ``index[E, B]`` -> ``[E, B, d]``.

    One ``index_select`` of whole rows from the flattened table (``torch.gather``
    with an index expanded over ``d`` runs an order of magnitude slower on CPU).
    """
    e, n, d = table.shape
    offset = torch.arange(e, device=index.device)[:, None] * n
    flat = (index + offset).reshape(-1)
    return table.reshape(e * n, d).index_select(0, flat).view(index.shape[0], -1, d)
