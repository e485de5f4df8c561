"""Every generator and variant on a device (issue 15: nothing tested the variants on
CUDA, and ``smartnoise`` crashed there).

The checks are written once, for any device (:func:`check_on_device`): the generator
contract (``fit`` returns self, the release keeps the schema, the same seed gives the
same release), every tensor of the fitted model on the device, and ``fit_many`` +
``sample_many`` giving each model what its own ``sample`` gives. They run on
``cuda`` for the reference PATE-GAN, every variant and G-PATE (marked ``gpu``: skipped
where CUDA is absent, never deselected), and on ``cpu`` for two of them, so that the
test logic itself runs everywhere.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import torch
from torch import Tensor, nn

import dpaudit.generators.g_pate as g_pate
from dpaudit.data import load_cervical_cancer
from dpaudit.generators.bugs import variants
from dpaudit.generators.registry import generator_factory
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)

GENERATORS = ("pategan", "gpate")
CASES = [
    (name, v)
    for name in GENERATORS
    for v in (None, *(v for v, s in variants().items() if s.generator == name))
]
# Variants that release the model's [0, 1] space by design keep the columns but not
# the integer dtypes.
RESCALING_BUG = {
    v for v, spec in variants().items() if "output_not_rescaled" in spec.flags
}


def make(name: str, variant: str | None, device: str) -> Any:
    options: dict[str, Any] = {"max_iterations": 2, "num_teachers": 2, "device": device}
    if variant:
        options["variant"] = variant
    return generator_factory(name)(epsilon=1.0, delta=1e-5, **options)


def fitted_tensors(obj: Any, depth: int = 0) -> list[Tensor]:
    """Every tensor a fitted model holds: its modules' parameters and buffers and
    its plain tensors, found by walking its attributes (dataclasses, containers)."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, nn.Module):
        return [*obj.parameters(), *obj.buffers()]
    if depth > 3:
        return []
    if isinstance(obj, dict):
        children: list[Any] = list(obj.values())
    elif isinstance(obj, list | tuple):
        children = list(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        children = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("dpaudit"):
        children = list(vars(obj).values())
    else:
        return []
    return [t for child in children for t in fitted_tensors(child, depth + 1)]


def worst_case_with_target() -> tuple[Any, pd.DataFrame]:
    ds = worst_case_dataset()
    _, table = neighbouring_pair(
        ds.train, worst_case_target(ds.domain), domain=ds.domain
    )
    return ds.domain, table


def check_on_device(
    name: str, variant: str | None, device: str, domain: Any, table: pd.DataFrame
) -> None:
    """The generator contract on ``device``, every fitted tensor on it, and batched
    training and release equal to one model at a time."""
    gen = make(name, variant, device)
    assert gen.fit(table, domain=domain, rng=Rngs.from_seed(0)) is gen
    out = gen.sample(30, rng=Rngs.from_seed(1))
    assert list(out.columns) == list(table.columns) and len(out) == 30
    if variant not in RESCALING_BUG:
        assert (out.dtypes == table.dtypes).all()
        domain.validate(out)
    assert gen.privacy_claim_.epsilon >= 0
    tensors = fitted_tensors(gen)
    assert tensors, "the walk found no tensor (the check could not fail)"
    assert {t.device.type for t in tensors} == {torch.device(device).type}
    again = make(name, variant, device).fit(table, domain=domain, rng=Rngs.from_seed(0))
    pd.testing.assert_frame_equal(out, again.sample(30, rng=Rngs.from_seed(1)))
    # fit_many + sample_many: each model's own release. On CUDA the batched and
    # the one-member kernels may round differently in the last bits: floats are
    # compared to 1e-5 (decoded integers exactly).
    models = make(name, variant, device).fit_many(
        [table] * 3, domain=domain, rngs=Rngs.from_seed(2).spawn(3)
    )
    rngs = Rngs.from_seed(3).spawn(3)
    batched = type(models[0]).sample_many(models, 20, rngs=rngs)
    alone = pd.concat(
        [m.sample(20, rng=r) for m, r in zip(models, rngs)], ignore_index=True
    )
    exact = torch.device(device).type == "cpu"
    pd.testing.assert_frame_equal(
        batched, alone, check_exact=exact, rtol=1e-5, atol=1e-6
    )
    assert all(
        {t.device.type for t in fitted_tensors(m)} == {torch.device(device).type}
        for m in models
    )


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


def factory_calls_without_device(package: Path) -> list[str]:
    """``torch.<factory>(...)`` calls of a package's modules that name no device (a
    tensor made there lands on the CPU and breaks a CUDA run: the smartnoise crash)."""
    missing = []
    for path in sorted(package.glob("*.py")):
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


def test_every_g_pate_tensor_factory_names_its_device(tmp_path: Path) -> None:
    assert factory_calls_without_device(Path(g_pate.__file__).parent) == []
    (tmp_path / "m.py").write_text("import torch\nx = torch.zeros(3)\n")
    assert factory_calls_without_device(tmp_path) == ["m.py:2 torch.zeros"]


@pytest.mark.parametrize(
    ("name", "variant"), [("pategan", "smartnoise"), ("gpate", None)]
)
def test_the_device_checks_run_on_cpu(name: str, variant: str | None) -> None:
    check_on_device(name, variant, "cpu", *worst_case_with_target())


def test_the_tensor_walk_finds_every_fitted_network() -> None:
    """The walk reaches PATE-GAN's generator and G-PATE's generator and ensemble (a
    check over an empty list could not fail)."""
    domain, table = worst_case_with_target()
    pg = make("pategan", None, "cpu").fit(table, domain=domain, rng=Rngs.from_seed(0))
    assert {id(p) for p in pg.generator_.parameters()} <= {
        id(t) for t in fitted_tensors(pg)
    }
    gp = make("gpate", None, "cpu").fit(table, domain=domain, rng=Rngs.from_seed(0))
    found = {id(t) for t in fitted_tensors(gp)}
    assert {id(p) for p in gp._fitted.generator.parameters()} <= found
    assert {id(p) for p in gp._fitted.ensemble.parameters()} <= found


@pytest.mark.gpu
@pytest.mark.parametrize(("name", "variant"), CASES)
def test_every_generator_and_variant_on_cuda(name: str, variant: str | None) -> None:
    check_on_device(name, variant, "cuda", *worst_case_with_target())


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_smartnoise_teacher_targets_are_made_on_the_device(
    device: str, monkeypatch
) -> None:
    """Regression (issue 15): ``smartnoise``'s teacher loss made its label targets with
    ``torch.as_tensor(y_real)`` on the CPU and crashed on CUDA ("Expected all tensors
    to be on the same device"). Every ``torch.as_tensor`` of its training must name
    the training device; on CUDA, training and release on Cervical Cancer (the
    crashing setting) must run."""
    calls: list[Any] = []
    as_tensor = torch.as_tensor

    def spy(*args: Any, **kwargs: Any) -> Tensor:
        calls.append(kwargs.get("device"))
        return as_tensor(*args, **kwargs)

    monkeypatch.setattr(torch, "as_tensor", spy)
    ds = load_cervical_cancer()
    gen = generator_factory("pategan")(
        epsilon=1.0,
        delta=1e-5,
        variant="smartnoise",
        num_teachers=5,
        max_iterations=2,
        device=device,
    )
    models = gen.fit_many(
        [ds.train] * 2, domain=ds.domain, rngs=Rngs.from_seed(0).spawn(2)
    )
    assert calls, "smartnoise's teacher loss made no target (the spy saw nothing)"
    assert all(c is not None and torch.device(c).type == device for c in calls), calls
    out = type(models[0]).sample_many(models, 50, rngs=Rngs.from_seed(1).spawn(2))
    assert len(out) == 100
    ds.domain.validate(out)
