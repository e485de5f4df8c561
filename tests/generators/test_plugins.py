"""The plug-in adapter and installed plug-ins: seeds from the right streams,
``public_seed`` only to plug-ins that accept it, entry points listed and built."""

from __future__ import annotations

import importlib.metadata
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError, PluginError
from dpaudit.generators import registry
from dpaudit.generators.plugins import (
    ENTRY_POINT_GROUP,
    PluginAdapter,
    accepts_public_seed,
    supports_public_seed,
)
from dpaudit.rng import Rngs, public_and_privacy
from dpaudit.worst_case.datasets import worst_case_dataset


class PlainPlugin:
    """A plug-in of the original contract: ``seed`` only. Records what it got."""

    def __init__(self, *, epsilon: float, delta: float, **options: Any) -> None:
        self.epsilon, self.delta, self.options = epsilon, delta, options
        self.calls: list[tuple[str, dict[str, int]]] = []

    def fit(
        self, data: pd.DataFrame, *, domain: dict[str, Any], seed: int
    ) -> PlainPlugin:
        self.calls.append(("fit", {"seed": seed}))
        self.data = data
        self.privacy_claim = {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": "plain",
        }
        return self

    def sample(self, n: int, *, seed: int) -> pd.DataFrame:
        self.calls.append(("sample", {"seed": seed}))
        return self.data.sample(n=n, replace=True, random_state=seed % 2**32)


class PublicPlugin(PlainPlugin):
    """A plug-in that opts in to public randomness in both methods."""

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,  # type: ignore[override]
        public_seed: int,
    ) -> PublicPlugin:
        super().fit(data, domain=domain, seed=seed)
        self.calls[-1][1]["public_seed"] = public_seed
        return self

    def sample(self, n: int, *, seed: int, public_seed: int) -> pd.DataFrame:  # type: ignore[override]
        out = super().sample(n, seed=seed)
        self.calls[-1][1]["public_seed"] = public_seed
        return out


class HalfPlugin(PlainPlugin):
    """Accepts ``public_seed`` in ``fit`` only: not an opt-in (sample would draw the
    release from the round's stream alone)."""

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,  # type: ignore[override]
        public_seed: int = 0,
    ) -> HalfPlugin:
        super().fit(data, domain=domain, seed=seed)
        self.calls[-1][1]["public_seed"] = public_seed
        return self


class KwargsPlugin(PlainPlugin):
    """``**kwargs`` is no promise: not an opt-in."""

    def fit(
        self, data: pd.DataFrame, *, domain: dict[str, Any], seed: int, **kwargs: Any
    ) -> KwargsPlugin:
        return super().fit(data, domain=domain, seed=seed)  # type: ignore[return-value]

    def sample(self, n: int, *, seed: int, **kwargs: Any) -> pd.DataFrame:
        return super().sample(n, seed=seed)


@pytest.fixture
def table() -> tuple[pd.DataFrame, Any]:
    ds = worst_case_dataset()
    return ds.train, ds.domain


def _fit_sample(cls: type, table: Any, public_rng: Rngs | None) -> PluginAdapter:
    data, domain = table
    adapter = PluginAdapter(cls, cls.__name__, epsilon=1.0, delta=1e-5)
    rng = Rngs.from_seed(11)
    adapter.fit(data, domain=domain, rng=rng, public_rng=public_rng)
    adapter.sample(5, rng=Rngs.from_seed(12), public_rng=public_rng)
    return adapter


def test_signature_detection() -> None:
    assert accepts_public_seed(PublicPlugin.fit)
    assert not accepts_public_seed(PlainPlugin.fit)
    assert not accepts_public_seed(KwargsPlugin.fit)
    assert supports_public_seed(PublicPlugin)
    assert not supports_public_seed(PlainPlugin)
    assert not supports_public_seed(HalfPlugin)
    assert not supports_public_seed(KwargsPlugin)


@pytest.mark.parametrize("cls", [PlainPlugin, HalfPlugin, KwargsPlugin])
@pytest.mark.parametrize("fixed", [False, True])
def test_plain_plugin_gets_the_round_stream_only(cls: type, fixed: bool, table) -> None:
    public = Rngs.from_seed(99) if fixed else None
    adapter = _fit_sample(cls, table, public)
    assert adapter.supports_public_randomness is False
    calls = adapter.inner_.calls
    assert calls == [
        (
            "fit",
            {"seed": Rngs.from_seed(11).int_seed()}
            | ({"public_seed": 0} if cls is HalfPlugin else {}),
        ),
        ("sample", {"seed": Rngs.from_seed(12).int_seed()}),
    ]


def test_public_plugin_gets_both_streams(table) -> None:
    public = Rngs.from_seed(99)
    adapter = _fit_sample(PublicPlugin, table, public)
    assert adapter.supports_public_randomness is True
    assert adapter.inner_.calls == [
        (
            "fit",
            {"seed": Rngs.from_seed(11).int_seed(), "public_seed": public.int_seed()},
        ),
        (
            "sample",
            {"seed": Rngs.from_seed(12).int_seed(), "public_seed": public.int_seed()},
        ),
    ]
    # Without a public stream both come from the round's stream (the independent game).
    adapter = _fit_sample(PublicPlugin, table, None)
    pub, priv = public_and_privacy(Rngs.from_seed(11))
    assert adapter.inner_.calls[0] == (
        "fit",
        {"seed": priv.int_seed(), "public_seed": pub.int_seed()},
    )
    assert priv.int_seed() != pub.int_seed()


@dataclass
class FakeEntryPoint:
    name: str
    value: str
    target: type
    group: str = ENTRY_POINT_GROUP

    def load(self) -> type:
        return self.target


REPO = Path(__file__).resolve().parents[2]
SOURCE = (
    "from __future__ import annotations\nfrom typing import Any\nimport pandas as pd\n\n"
    + inspect.getsource(PlainPlugin)
    + "\n"
    + inspect.getsource(PublicPlugin)
)


def _importable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Writes this file's plug-ins as ``module`` under ``tmp_path``, importable by the
    foreign workers (plug-ins run there, never in this process)."""
    path = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    for folder in path.parents:
        if folder == tmp_path:
            break
        (folder / "__init__.py").touch()
    path.write_text(SOURCE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO)]))


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _importable(tmp_path, monkeypatch, "fakepkg.gen")
    points = [
        FakeEntryPoint("public-toy", "fakepkg.gen:PublicPlugin", PublicPlugin),
        FakeEntryPoint("plain-toy", "fakepkg.gen:PlainPlugin", PlainPlugin),
        FakeEntryPoint("copy", "fakepkg.gen:Shadow", PlainPlugin),
    ]

    def entry_points(*, group: str) -> list[FakeEntryPoint]:
        return [ep for ep in points if ep.group == group]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_entry_points_are_registered_and_listed(installed, capsys, table) -> None:
    names = registry.registered_generators()
    assert names["public-toy"] == "plug-in fakepkg.gen:PublicPlugin (entry point)"
    assert "plain-toy" in names
    assert names["copy"].startswith("toy:"), "a plug-in never shadows a built-in"
    assert main(["list", "generators"]) == 0
    out = capsys.readouterr().out
    assert "public-toy" in out and "fakepkg.gen:PlainPlugin" in out
    spec = registry.get_spec("public-toy")
    assert spec.plugin and spec.supports_public_randomness and not spec.batched
    assert not registry.get_spec("plain-toy").supports_public_randomness
    gen = registry.generator_factory("public-toy")(epsilon=2.0, delta=1e-5)
    data, domain = table
    gen.fit(data, domain=domain, rng=Rngs.from_seed(0))
    assert gen.privacy_claim_.epsilon == 2.0
    assert len(gen.sample(3, rng=Rngs.from_seed(1))) == 3


def test_module_class_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _importable(tmp_path, monkeypatch, "dpaudit_fake_plugins")
    spec = registry.get_spec("dpaudit_fake_plugins:PlainPlugin")
    assert spec.plugin and spec.variants == () and spec.bug_flags == ()
    options = registry.audit_options(
        "dpaudit_fake_plugins:PlainPlugin",
        {"k": 1},
        n_rows=4,
        worst_case=True,
        epsilon=1.0,
        delta=1e-5,
        device="cpu",
        variant=None,
        bugs=(),
    )
    assert options == {"k": 1}, "no device, no audit defaults for a plug-in"
    with pytest.raises(InvalidParameterError, match="`variant/bugs` must be unset"):
        registry.audit_options(
            "dpaudit_fake_plugins:PlainPlugin",
            {},
            n_rows=4,
            worst_case=True,
            epsilon=1.0,
            delta=1e-5,
            device="cpu",
            variant="original",
            bugs=(),
        )
    # The worker imports the plug-in (this process never does) when the factory
    # builds the generator.
    factory = registry.generator_factory("dpaudit_fake_plugins:Nope")
    with pytest.raises(PluginError, match="has no 'Nope'"):
        factory(epsilon=1.0, delta=0)


def test_unknown_generator(installed) -> None:
    with pytest.raises(PluginError, match="unknown generator 'nope'"):
        registry.get_spec("nope")
