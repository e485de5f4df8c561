"""Every PATE-GAN tensor on the trainer's device (issue: the smartnoise variant crashed
on CUDA, a label tensor made on the CPU in the teacher loss).

The static test runs anywhere: every torch factory call in the PATE-GAN package names
its device (or derives from a tensor). The CUDA tests train every variant on CUDA and
compare the per-model streams with the CPU; they are marked ``gpu`` and skipped where
CUDA is absent.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

import dpaudit.generators.pate_gan as pg
from dpaudit.data import load_cervical_cancer
from dpaudit.generators.bugs import variants
from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.rng import Rngs

FACTORIES = {
    "tensor",
    "as_tensor",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "rand",
    "randn",
    "randint",
    "eye",
    "linspace",
}


def _factory_calls_without_device() -> list[str]:
    missing = []
    for path in sorted(Path(pg.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "torch"
                and node.func.attr in FACTORIES
                and not any(kw.arg == "device" for kw in node.keywords)
            ):
                missing.append(f"{path.name}:{node.lineno} torch.{node.func.attr}")
    return missing


def test_every_tensor_factory_names_its_device() -> None:
    """A tensor made without ``device=`` lands on the CPU and breaks a CUDA run (the
    smartnoise crash: ``torch.as_tensor(y_real)``)."""
    assert _factory_calls_without_device() == []


def test_the_static_check_finds_a_missing_device(tmp_path, monkeypatch) -> None:
    bad = tmp_path / "pate_gan"
    bad.mkdir()
    (bad / "__init__.py").write_text("")
    (bad / "m.py").write_text("import torch\nx = torch.as_tensor(1.0)\n")
    monkeypatch.setattr(pg, "__file__", str(bad / "__init__.py"))
    assert _factory_calls_without_device() == ["m.py:2 torch.as_tensor"]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("variant", [None, *variants()])
def test_every_variant_trains_and_samples_on_cuda(variant) -> None:
    ds = load_cervical_cancer()
    cfg = config_from_options(
        epsilon=1.0,
        delta=1e-5,
        variant=variant,
        num_teachers=5,
        max_iterations=2,
        fixed_iterations=2,
        device="cuda",
    )
    models = PateGan(cfg).fit_many(
        [ds.train] * 2, domain=ds.domain, rngs=Rngs.from_seed(0).spawn(2)
    )
    for model in models:
        out = model.sample(50, rng=Rngs.from_seed(1))
        assert len(out) == 50 and list(out.columns) == ds.domain.names
        assert model.privacy_claim_.iterations >= 1


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_initial_weights_equal_cpu() -> None:
    """The streams are integer arithmetic: a model's initial weights are the same on
    CUDA as on the CPU."""
    from dpaudit.generators.pate_gan.trainer import Trainer

    ds = load_cervical_cancer()
    nets = []
    for device in ("cpu", "cuda"):
        cfg = config_from_options(
            epsilon=1.0, delta=1e-5, num_teachers=5, device=device
        )
        t = Trainer(cfg, ds.domain, 5, [ds.train], [Rngs.from_seed(2)])
        t.build()
        nets.append([p.detach().cpu() for p in t.generator.parameters()])
    for a, b in zip(*nets, strict=True):
        assert torch.equal(a, b)
