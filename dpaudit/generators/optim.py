"""Optimisers and masked training steps for ensembles of models (one member per
model): torch's Adam/RMSprop updates run over a member axis, with a mask that keeps
stopped members unchanged."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Literal

import torch
from torch import Tensor, nn


class BatchedOptimizer:
    """Adam or RMSprop on an ensemble's parameters, with a member mask built in.

    Bit for bit the update of ``torch.optim.Adam(fused=True)`` (one fused kernel over
    all parameters) or ``torch.optim.RMSprop(foreach=True)`` (the same ``_foreach_``
    kernels in the same order), called directly: the first use of ``torch.optim``'s
    ``Optimizer`` imports ``torch._dynamo`` (about 1.4 s per process, paid by every
    audit worker). Element-wise, so each member is updated as if trained alone.

    Like ``torch.optim``, a parameter without a gradient is skipped (its step count
    does not advance). :meth:`step` with an ``active`` mask keeps the parameters of
    inactive members unchanged; their moments still move (with the zero gradient
    their masked loss gives), exactly as a full step followed by restoring the old
    parameters would.

    Args:
        params: the parameters, each ``[E, ...]`` with the member axis first.
        name: ``adam`` or ``rmsprop``.
        lr: learning rate.
        betas: Adam's ``(beta1, beta2)``.
        weight_decay: L2 penalty added to the gradient (torch's ``weight_decay``).
        eps: the denominator's epsilon (torch's default 1e-8).
        alpha: RMSprop's smoothing constant (torch's default 0.99).
    """

    def __init__(
        self,
        params: Iterable[nn.Parameter],
        *,
        name: Literal["adam", "rmsprop"],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        weight_decay: float = 0.0,
        eps: float = 1e-8,
        alpha: float = 0.99,
    ) -> None:
        if name not in ("adam", "rmsprop"):
            raise ValueError(f"`name` must be adam or rmsprop. Got {name!r}.")
        self.params: list[Tensor] = [p for p in params if p.requires_grad]
        self.name = name
        self.lr, self.betas, self.weight_decay = float(lr), betas, float(weight_decay)
        self.eps, self.alpha = float(eps), float(alpha)
        # The state torch.optim would create lazily (zeros), made up front.
        self.moment1 = [torch.zeros_like(p) for p in self.params]
        self.moment2 = [torch.zeros_like(p) for p in self.params]
        # Adam's per-parameter step counts: float32 scalars on the device, as fused
        # Adam keeps them (RMSprop's count is never read).
        self.steps = [
            torch.zeros((), dtype=torch.float32, device=p.device) for p in self.params
        ]
        self._saved: list[Tensor] | None = None

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drops (or zeroes) every parameter's gradient."""
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self, active: Tensor | None = None) -> None:
        """One update of every member; with ``active`` (``[E]`` bool), inactive
        members' parameters stay as they were."""
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        params = [self.params[i] for i in live]
        grads = [g for g in (p.grad for p in params) if g is not None]
        if active is None or bool(active.all()):
            self._update(live, params, grads)
            return
        if self._saved is None:
            self._saved = [torch.empty_like(p) for p in self.params]
        saved = [self._saved[i] for i in live]
        torch._foreach_copy_(saved, params)
        self._update(live, params, grads)
        for p, old in zip(params, saved):
            torch.where(active.view(-1, *([1] * (p.dim() - 1))), p, old, out=p)

    def _update(
        self,
        live: list[int],
        params: list[Tensor],
        grads: list[Tensor] | tuple[Tensor, ...],
    ) -> None:
        m1 = [self.moment1[i] for i in live]
        m2 = [self.moment2[i] for i in live]
        if self.name == "adam":
            steps = [self.steps[i] for i in live]
            torch._foreach_add_(steps, 1)
            torch._fused_adam_(
                params,
                grads,
                m1,
                m2,
                [],
                steps,
                amsgrad=False,
                lr=self.lr,
                beta1=self.betas[0],
                beta2=self.betas[1],
                weight_decay=self.weight_decay,
                eps=self.eps,
                maximize=False,
                grad_scale=None,
                found_inf=None,
            )
            return
        # torch.optim.RMSprop's _multi_tensor_rmsprop (no momentum, not centered).
        if self.weight_decay != 0:
            grads = torch._foreach_add(grads, params, alpha=self.weight_decay)
        torch._foreach_mul_(m2, self.alpha)
        torch._foreach_addcmul_(m2, grads, grads, value=1 - self.alpha)
        avg = torch._foreach_sqrt(m2)
        torch._foreach_add_(avg, self.eps)
        torch._foreach_addcdiv_(params, grads, avg, value=-self.lr)


def make_optimizer(
    params: Iterable[nn.Parameter],
    *,
    name: Literal["adam", "rmsprop"],
    lr: float,
    betas: tuple[float, float] = (0.9, 0.999),
    weight_decay: float = 0.0,
) -> BatchedOptimizer:
    """Adam (as torch's fused kernel) or RMSprop (as torch's foreach path) on an
    ensemble's parameters: see :class:`BatchedOptimizer`."""
    return BatchedOptimizer(
        params, name=name, lr=lr, betas=betas, weight_decay=weight_decay
    )


class MaskedStep:
    """Runs an optimiser step and keeps the parameters of inactive members unchanged.

    Members that reached their privacy budget stop updating while the others go on, so
    a batch of models needs no common stopping time. (Adam's moments of a frozen member
    still move; its parameters do not, and it is never trained again.)
    """

    def __init__(self, module: nn.Module, optimizer: BatchedOptimizer) -> None:
        self.params = optimizer.params
        self.optimizer = optimizer

    def step(self, active: Tensor | None) -> None:
        self.optimizer.step(active)


@contextmanager
def frozen(module: nn.Module) -> Iterator[None]:
    """Within the block, ``module``'s parameters take no gradient (autograd still
    passes gradients through the module to its inputs, with the same values): for a
    step that updates only another network, e.g. the generator's step through the
    student, whose own parameter gradients would be discarded."""
    params = [p for p in module.parameters() if p.requires_grad]
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in params:
            p.requires_grad_(True)


def member_losses(per_element: Tensor) -> Tensor:
    """Mean over all axes but the first: one loss per member."""
    return per_element.reshape(per_element.shape[0], -1).mean(dim=1)


def train_step(
    step: MaskedStep, loss_fn: Callable[[], Tensor], active: Tensor | None
) -> Tensor:
    """One masked update: zero grads, backward the summed member losses, step.

    ``loss_fn`` returns one loss per member; inactive members contribute nothing.
    Returns the detached per-member losses.
    """
    step.optimizer.zero_grad(set_to_none=True)
    losses = loss_fn()
    total = losses.sum() if active is None else (losses * active.to(losses.dtype)).sum()
    total.backward()  # type: ignore[no-untyped-call]
    step.step(active)
    return losses.detach()
