"""One model's memory: one function per generator, declared on its registry entry
(``GeneratorSpec.model_memory``), and the only figure both of the audit's plans use:
the memory plan (dpaudit/audit/games/memory.py) and the execution plan's CUDA batch
(dpaudit/audit/games/execution.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games import execution, memory
from dpaudit.audit.games.execution import estimate_model_bytes
from dpaudit.audit.games.setup import build_setup
from dpaudit.generators import model_memory
from dpaudit.generators.registry import builtin_generators, get_spec


def test_every_generator_declares_its_function() -> None:
    declared = {name: s.model_memory for name, s in builtin_generators().items()}
    teachers = "dpaudit.generators.model_memory:teacher_model_bytes"
    table = "dpaudit.generators.model_memory:table_model_bytes"
    assert declared == {
        "pategan": teachers,
        "gpate": teachers,
        "randomized-response": table,
        "copy": table,
    }
    plugin = get_spec("dpaudit.generators.toy_plugins:CopyData")
    assert plugin.model_memory == "dpaudit.generators.model_memory:release_bytes"
    # A plug-in's model lives in its worker: only its release is counted here.
    assert plugin.model_bytes(None, rows=5, width=3, released=100) == 3 * 4 * 100 * 3


@pytest.mark.parametrize("release", ["table", "transcript"])
def test_both_plans_use_the_registrys_function(
    monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    """The memory plan and the execution plan both take one model's memory from the
    function PATE-GAN's entry declares (replaced here by one that records its
    arguments), times the release's memory factor (3 under ``--release
    transcript``: the replays in both worlds)."""
    calls: list[dict[str, Any]] = []

    def declared(generator: object, **sizes: int) -> int:
        calls.append(sizes)
        assert getattr(generator, "config", None) is not None  # the built generator
        return 1_000_003

    monkeypatch.setattr(model_memory, "teacher_model_bytes", declared)
    config = AuditConfig(rounds=5, release=release)
    factor = 3 if release == "transcript" else 1
    assert memory.plan_memory(config).model_bytes == 1_000_003 * factor
    assert estimate_model_bytes(build_setup(config)) == 1_000_003 * factor
    # Both asked about the same model: D u {target} (5 rows of the continuous worst
    # case, 3 encoded columns) releasing 100 rows.
    assert calls == [{"rows": 5, "width": 3, "released": 100}] * 2
    # The execution plan on CUDA sizes its batch from that figure.
    monkeypatch.setattr(execution, "resolve_device", lambda device: "cuda")
    monkeypatch.setattr(execution, "cuda_free_bytes", lambda: 2**30)
    plan = execution.plan_for_setup(build_setup(config))
    assert f"{1_000_003 * factor / 2**20:.2f} MiB a model" in plan.reason


def test_the_teacher_figure_is_the_ensembles_with_the_configs_sizes() -> None:
    """PATE-GAN's figure is :func:`ensemble_bytes` at its config's teachers, batch
    and teacher steps, plus ``k n`` for a bug flag whose teachers draw from all
    rows."""
    factory = get_spec("pategan").make_factory()
    base = factory(epsilon=1.0, delta=1e-5, num_teachers=7, batch_size=32)
    shared = factory(
        epsilon=1.0, delta=1e-5, num_teachers=7, batch_size=32, bugs=["shared_sampling"]
    )
    sizes = {"rows": 1000, "width": 12, "released": 200}
    cfg = base.config
    expected = model_memory.ensemble_bytes(
        teachers=7, batch=32, steps=cfg.teacher_steps, **sizes
    )
    assert get_spec("pategan").model_bytes(base, **sizes) == expected
    assert get_spec("pategan").model_bytes(shared, **sizes) == expected + 7 * 1000
