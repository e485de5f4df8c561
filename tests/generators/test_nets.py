"""Batched ensembles: the fast paths equal the plain computation, values and gradients."""

from __future__ import annotations

import pytest
import torch

from dpaudit.allocator import keep_freed_memory
from dpaudit.generators.nets import (
    BatchedLinear,
    BatchedMLP,
    MLPSpec,
    gather_rows,
    is_relu_logit,
    logit_layer,
    relu_logit_bce_grad_,
    relu_logits,
    with_ones,
)
from dpaudit.generators.optim import BatchedOptimizer, frozen
from dpaudit.rng import ModelStreams, Rngs


def _net(hidden: tuple[int, ...], n_out: int, **kw: object) -> BatchedMLP:
    gen = torch.Generator().manual_seed(3)
    return BatchedMLP(
        12,
        MLPSpec(n_in=6, hidden=hidden, n_out=n_out, **kw),  # type: ignore[arg-type]
        generator=gen,
    )


@pytest.mark.parametrize("hidden", [(), (7,), (5, 3), (6, 6)])
@pytest.mark.parametrize("n_out", [1, 2])
@pytest.mark.parametrize(
    "extra",
    [{}, {"layer_norm": True}, {"residual": True}, {"activation": "leaky_relu"}],
)
def test_forward_shared_equals_repeated_input(hidden, n_out, extra) -> None:
    """Groups of members on one shared input: same outputs and same gradients as the
    input copied once per member (in float64, so that summation order cannot hide a
    difference)."""
    torch.manual_seed(0)
    x = torch.randn(4, 10, 6, dtype=torch.float64)
    net_a = _net(hidden, n_out, **extra).double()
    net_b = _net(hidden, n_out, **extra).double()
    a = net_a(x.repeat_interleave(3, dim=0), logits=True)
    b = net_b.forward_shared(x, 3, logits=True)
    assert b.shape == a.shape == (12, 10, n_out)
    torch.testing.assert_close(b, a)
    weights = torch.randn_like(a)
    (a * weights).sum().backward()
    (b * weights).sum().backward()
    for pa, pb in zip(net_a.parameters(), net_b.parameters(), strict=True):
        torch.testing.assert_close(pb.grad, pa.grad)
    torch.testing.assert_close(
        net_b.forward_shared(x, 3), net_a(x.repeat_interleave(3, 0))
    )


def test_one_unit_layer_equals_matmul_and_member_slice() -> None:
    gen = torch.Generator().manual_seed(1)
    layer = BatchedLinear(5, 4, 1, generator=gen)
    x = torch.randn(5, 7, 4)
    expected = torch.baddbmm(layer.bias, x, layer.weight)
    torch.testing.assert_close(layer(x), expected)
    torch.testing.assert_close(layer(x[2:3], member=2), expected[2:3])


def test_forward_grouped_refuses_wide_layers() -> None:
    layer = BatchedLinear(6, 4, 2, generator=torch.Generator().manual_seed(1))
    with pytest.raises(ValueError, match="one output unit"):
        layer.forward_grouped(torch.randn(2, 5, 3, 4))


def test_inplace_activation_keeps_gradients() -> None:
    """ReLU applied in place on fresh layer outputs: gradients equal torch.func's of
    the same network written out of place."""
    net = _net((7, 5), 1)
    x = torch.randn(12, 9, 6)
    net(x, logits=True).sum().backward()
    params = {n: p.detach() for n, p in net.named_parameters()}

    def plain(p: dict[str, torch.Tensor]) -> torch.Tensor:
        h = x
        for i in range(2):
            h = torch.relu(
                torch.baddbmm(p[f"layers.{i}.bias"], h, p[f"layers.{i}.weight"])
            )
        return torch.baddbmm(p["layers.2.bias"], h, p["layers.2.weight"]).sum()

    grads = torch.func.grad(plain)(params)
    for name, p in net.named_parameters():
        torch.testing.assert_close(p.grad, grads[name])


def test_gather_rows_equals_torch_gather() -> None:
    table = torch.randn(3, 8, 4)
    index = torch.randint(0, 8, (3, 5), generator=torch.Generator().manual_seed(2))
    expected = torch.gather(table, 1, index.unsqueeze(-1).expand(-1, -1, 4))
    torch.testing.assert_close(gather_rows(table, index), expected)


def test_keep_freed_memory_is_idempotent() -> None:
    first = keep_freed_memory()
    assert keep_freed_memory() is first
    # Allocation still works after the settings change.
    assert torch.ones(4_000_000).sum().item() == 4_000_000


def test_is_relu_logit() -> None:
    assert is_relu_logit(_net((7,), 1))
    assert not is_relu_logit(_net((7,), 2))
    assert not is_relu_logit(_net((7, 5), 1))
    assert not is_relu_logit(_net((), 1))
    assert not is_relu_logit(_net((7,), 1, activation="leaky_relu"))
    assert not is_relu_logit(_net((7,), 1, layer_norm=True))
    assert not is_relu_logit(_net((6,), 1, residual=True))


def test_with_ones() -> None:
    x = torch.randn(2, 3, 4)
    x1 = with_ones(x)
    assert x1.shape == (2, 3, 5)
    torch.testing.assert_close(x1[..., :4], x)
    assert bool((x1[..., 4] == 1).all())


@pytest.mark.parametrize("groups", [1, 3])
def test_relu_logits_equal_forward(groups: int) -> None:
    torch.manual_seed(0)
    net = _net((7,), 1).double()
    x = torch.randn(12 // groups, 10, 6, dtype=torch.float64)
    logits, hidden = relu_logits(net, with_ones(x), groups)
    expected = net(x.repeat_interleave(groups, dim=0), logits=True)
    assert logits.shape == (12, 1, 10) and hidden.shape == (12, 7, 10)
    torch.testing.assert_close(logits, expected.transpose(1, 2))
    assert bool((hidden >= 0).all())


@pytest.mark.parametrize("noisy_labels", [False, True])
def test_relu_logit_bce_grad_equals_autograd(noisy_labels: bool) -> None:
    """The hand-written gradient of the teachers' loss (a real batch per member, a
    generated batch shared by groups of 3, members weighted and some stopped) equals
    autograd's, in float64."""
    torch.manual_seed(1)
    net_a = _net((7,), 1).double()
    net_b = _net((7,), 1).double()
    real = torch.randn(12, 10, 6, dtype=torch.float64)
    fake = torch.randn(4, 8, 6, dtype=torch.float64)
    weight = torch.tensor([1.0, 0.0, 1.0, 2.0] * 3, dtype=torch.float64)
    y_real: torch.Tensor | float = 1.0
    y_fake: torch.Tensor | float = 0.0
    if noisy_labels:
        y_real = 1.0 + 0.7 * torch.randn(12, 1, 10, dtype=torch.float64)
        y_fake = 0.7 * torch.randn(12, 1, 8, dtype=torch.float64)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    out_r = net_a(real, logits=True).transpose(1, 2)
    out_f = net_a(fake.repeat_interleave(3, dim=0), logits=True).transpose(1, 2)
    loss = bce(
        out_r,
        torch.as_tensor(y_real, dtype=torch.float64).expand_as(out_r),
        reduction="none",
    ).mean(dim=(1, 2)) + bce(
        out_f,
        torch.as_tensor(y_fake, dtype=torch.float64).expand_as(out_f),
        reduction="none",
    ).mean(dim=(1, 2))
    (loss * weight).sum().backward()
    relu_logit_bce_grad_(
        net_b, [(with_ones(real), 1, y_real), (with_ones(fake), 3, y_fake)], weight
    )
    for pa, pb in zip(net_a.parameters(), net_b.parameters(), strict=True):
        assert pb.grad is not None and pb.grad.shape == pa.shape
        assert pb.grad.is_contiguous()
        torch.testing.assert_close(pb.grad, pa.grad)
    # A stopped member (weight 0) gets a zero gradient; the others do not.
    assert all(float(p.grad[1].abs().max()) == 0.0 for p in net_b.parameters())
    assert all(float(p.grad[0].abs().max()) > 0.0 for p in net_b.parameters())


def test_per_model_initialisation_and_dropout() -> None:
    """With per-model streams, model m's members (its k teachers: members m*k ..
    m*k + k - 1) get the same weights and dropout masks whatever the other models.

    The weights are bit for bit the same. The forward pass is the same to float32
    rounding, not bit for bit: a transcendental activation (the output sigmoid) runs
    in a kernel's vectorised body or its scalar tail depending on the member's place
    in the tensor, and the two differ by up to one ulp on some CPUs (measured on an
    AMD EPYC: 2.98e-8 at 0.39). Hence the tolerance: 4 float32 ulps, relative. (The
    audit trains fixed training groups, so its result does not depend on this:
    tests/audit/test_batch_independence.py.)"""
    rngs = Rngs.from_seed(6).spawn(3)
    spec = MLPSpec(n_in=5, hidden=(4,), n_out=1, dropout=0.5)
    big = BatchedMLP(3 * 2, spec, generator=ModelStreams.from_rngs(rngs))
    alone = BatchedMLP(2, spec, generator=ModelStreams.from_rngs([rngs[2]]))
    for pb, pa in zip(big.parameters(), alone.parameters(), strict=True):
        assert torch.equal(pb[4:6], pa)
    bound = 1 / 5**0.5
    assert float(big.layers[0].weight.detach().abs().max()) <= bound
    x = torch.rand(6, 7, 5, generator=torch.Generator().manual_seed(0))
    drop_big = ModelStreams.from_rngs(rngs)
    drop_alone = ModelStreams.from_rngs([rngs[2]])
    stu_big = BatchedMLP(3, spec, generator=ModelStreams.from_rngs(rngs))
    stu_alone = BatchedMLP(1, spec, generator=ModelStreams.from_rngs([rngs[2]]))
    out_big = stu_big(x[:3], generator=drop_big)
    out_alone = stu_alone(x[2:3], generator=drop_alone)
    # The hidden layer (a matmul, ReLU and the dropout mask) is exact.
    hid_big = stu_big._hidden(
        x[:3], stu_big.layers[:-1], generator=ModelStreams.from_rngs(rngs)
    )
    hid_alone = stu_alone._hidden(
        x[2:3], stu_alone.layers[:-1], generator=ModelStreams.from_rngs([rngs[2]])
    )
    assert torch.equal(hid_big[2], hid_alone[0])
    ulp = torch.finfo(torch.float32).eps
    torch.testing.assert_close(out_big[2], out_alone[0], rtol=4 * ulp, atol=0.0)
    with pytest.raises(ValueError, match="not a multiple"):
        BatchedMLP(4, spec, generator=ModelStreams.from_rngs(rngs))


def _torch_reference(
    name: str,
    params: list[torch.nn.Parameter],
    *,
    weight_decay: float,
    betas: tuple[float, float],
) -> torch.optim.Optimizer:
    if name == "adam":
        return torch.optim.Adam(
            params, lr=1e-2, betas=betas, weight_decay=weight_decay, fused=True
        )
    return torch.optim.RMSprop(params, lr=1e-2, weight_decay=weight_decay, foreach=True)


@pytest.mark.parametrize("name", ["adam", "rmsprop"])
@pytest.mark.parametrize("weight_decay", [0.0, 1e-3])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batched_optimizer_equals_torch_optim(
    name, weight_decay, masked, dtype
) -> None:
    """40 steps on random gradients: bit for bit the parameters of torch.optim's fused
    Adam / foreach RMSprop (followed, under a mask, by restoring the inactive members'
    parameters), including a step where one parameter has no gradient."""
    gen = torch.Generator().manual_seed(1)
    shapes = [(7, 3, 4), (7, 1, 4), (7, 4, 1)]
    ref = [
        torch.nn.Parameter(torch.randn(s, generator=gen, dtype=dtype)) for s in shapes
    ]
    ours = [torch.nn.Parameter(p.detach().clone()) for p in ref]
    betas = (0.5, 0.999) if masked else (0.9, 0.999)
    torch_opt = _torch_reference(name, ref, weight_decay=weight_decay, betas=betas)
    opt = BatchedOptimizer(
        ours, name=name, lr=1e-2, betas=betas, weight_decay=weight_decay
    )
    moved = torch.zeros(7, dtype=torch.bool)
    for step in range(40):
        active = torch.rand(7, generator=gen) > 0.3 if masked else None
        grads = [torch.randn(s, generator=gen, dtype=dtype) for s in shapes]
        if active is not None:
            grads = [g * active.view(-1, 1, 1) for g in grads]
        opt.zero_grad()
        for pr, po, g in zip(ref, ours, grads):
            pr.grad, po.grad = g.clone(), g.clone()
        if step == 5:
            ref[1].grad = ours[1].grad = None
        before = [p.detach().clone() for p in ours]
        saved = [p.detach().clone() for p in ref]
        torch_opt.step()
        if active is not None:
            with torch.no_grad():
                for p, old in zip(ref, saved):
                    p.copy_(torch.where(active.view(-1, 1, 1), p, old))
        opt.step(active)
        for pr, po, old in zip(ref, ours, before):
            assert torch.equal(po, pr)
            if active is not None:
                assert torch.equal(po[~active], old[~active])
        moved |= (ours[0] != before[0]).flatten(1).any(dim=1)
    assert bool(moved.all())


def test_batched_optimizer_refuses_unknown_names() -> None:
    with pytest.raises(ValueError, match="adam or rmsprop"):
        BatchedOptimizer([torch.nn.Parameter(torch.zeros(2, 1))], name="sgd", lr=0.1)  # type: ignore[arg-type]


def test_training_never_builds_a_torch_optimizer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The trainers never construct torch.optim's Optimizer (whose first use imports
    torch._dynamo, about 1.4 s per process)."""
    from dpaudit.data import load_cervical_cancer
    from dpaudit.generators.pate_gan import PateGan, PateGanConfig

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch.optim.Optimizer constructed")

    monkeypatch.setattr(torch.optim.Optimizer, "__init__", refuse)
    data = load_cervical_cancer()
    for optimizer in ("adam", "rmsprop"):
        cfg = PateGanConfig(
            epsilon=1.0, max_iterations=1, num_teachers=2, optimizer=optimizer
        )
        model = PateGan(cfg).fit(
            data.train.iloc[:40], domain=data.domain, rng=Rngs.from_seed(0)
        )
        assert model.privacy_claim_.iterations == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(("h", "rows"), [(1, 64), (3, 64), (6, 60), (3, 200), (29, 64)])
def test_logit_layer_equals_baddbmm_bitwise(dtype, h, rows) -> None:
    """Bit for bit torch's baddbmm (signed zeros included), on the element-wise path
    for small shapes and on baddbmm itself for large ones."""
    gen = torch.Generator().manual_seed(h + rows)
    w2 = torch.randn(300, h, 1, generator=gen, dtype=dtype)
    b2 = torch.randn(300, 1, 1, generator=gen, dtype=dtype)
    b2[:5] = 0.0
    hidden = torch.relu(torch.randn(300, h, rows, generator=gen, dtype=dtype))
    hidden[:10] = 0.0
    bits = torch.int64 if dtype == torch.float64 else torch.int32
    expected = torch.baddbmm(b2, w2.transpose(1, 2), hidden)
    assert torch.equal(logit_layer(w2, b2, hidden).view(bits), expected.view(bits))


def test_logit_layer_probe_refuses_a_different_summation_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The element-wise path is used only where the probe found it bitwise equal: a
    path summing in another order is refused (and baddbmm used)."""
    from dpaudit.generators import nets

    def reversed_order(
        w2: torch.Tensor, b2: torch.Tensor, hidden: torch.Tensor
    ) -> torch.Tensor:
        acc = hidden.new_zeros((hidden.shape[0], 1, hidden.shape[2]))
        for k in reversed(range(hidden.shape[1])):
            acc.add_(hidden[:, k : k + 1] * w2[:, k : k + 1])
        return acc.add_(b2)

    monkeypatch.setattr(nets, "_LOOP_MATCHES", {})
    monkeypatch.setattr(nets, "_logit_by_passes", reversed_order)
    assert not nets._loop_matches(5, 64, torch.float32, torch.device("cpu"))
    assert not nets._loop_matches(5, 400, torch.float32, torch.device("cpu"))  # too big


def test_frozen_keeps_input_gradients_and_skips_parameter_gradients() -> None:
    """Inside ``frozen(student)``, the generator's gradients through the student equal
    those of a plain backward, and the student's parameters get none; afterwards they
    take gradients again."""
    gen_a, gen_b = _net((5,), 6), _net((5,), 6)
    student = _net((4,), 1)
    z = torch.randn(12, 9, 6)
    student(gen_a(z)).sum().backward()
    for p in student.parameters():
        p.grad = None
    with frozen(student):
        student(gen_b(z)).sum().backward()
        assert all(p.grad is None for p in student.parameters())
    for pa, pb in zip(gen_a.parameters(), gen_b.parameters(), strict=True):
        assert torch.equal(pa.grad, pb.grad)
    assert all(p.requires_grad for p in student.parameters())
