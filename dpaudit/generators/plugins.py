"""Loading a user's own generator (a plug-in) and adapting it to the protocol.

A plug-in needs nothing from dpaudit (DESIGN.md)::

    class MyGenerator:
        def __init__(self, *, epsilon: float, delta: float, **options): ...
        def fit(self, data: pandas.DataFrame, *, domain: dict, seed: int) -> "MyGenerator": ...
        def sample(self, n: int, *, seed: int) -> pandas.DataFrame: ...
        privacy_claim: dict   # set by fit: {"epsilon": float, "delta": float, "accountant": str}

It is named ``package.module:ClassName`` (importable from the current environment) or
by an entry point in group ``dpaudit.generators``. A plug-in that breaks the contract
is refused with an error naming the missing part.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable
from typing import Any, Self

import pandas as pd

from dpaudit.data import Domain
from dpaudit.errors import NotFittedError, PluginError
from dpaudit.generators.base import Generator, PrivacyClaim
from dpaudit.rng import Rngs

ENTRY_POINT_GROUP = "dpaudit.generators"


def load_plugin_class(name: str) -> type:
    """Imports ``module:Class`` or the entry point ``name``; checks the contract."""
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            raise PluginError(
                f"generator {name!r}: cannot import module {module_name!r} ({err}). "
                "Install it or add it to PYTHONPATH."
            ) from err
        try:
            cls = getattr(module, attr)
        except AttributeError as err:
            raise PluginError(
                f"generator {name!r}: module {module_name!r} has no {attr!r}."
            ) from err
    else:
        points = [ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
                  if ep.name == name]
        if not points:
            raise PluginError(
                f"unknown generator {name!r}: not a built-in (`dpaudit list generators`), "
                f"not `module:Class`, and no entry point in group {ENTRY_POINT_GROUP!r}."
            )
        cls = points[0].load()
    missing = [m for m in ("fit", "sample") if not callable(getattr(cls, m, None))]
    if missing:
        raise PluginError(
            f"generator {name!r} breaks the plug-in contract: missing method(s) "
            f"{missing} (see DESIGN.md, 'Core contracts')."
        )
    plugin: type = cls
    return plugin


class PluginAdapter:
    """Wraps a plain-types plug-in into dpaudit's generator protocol."""

    def __init__(self, cls: type, name: str, **kwargs: Any) -> None:
        self.cls, self.name, self.kwargs = cls, name, kwargs

    def fit(self, data: pd.DataFrame, *, domain: Domain, rng: Rngs) -> Self:
        self.inner_ = self.cls(**self.kwargs)
        fitted = self.inner_.fit(data.copy(), domain=domain.to_json(), seed=rng.int_seed())
        if fitted is not None:
            self.inner_ = fitted
        claim = getattr(self.inner_, "privacy_claim", None)
        if not isinstance(claim, dict) or "epsilon" not in claim:
            raise PluginError(
                f"generator {self.name!r} breaks the plug-in contract: after fit, "
                "`privacy_claim` must be a dict with 'epsilon', 'delta' and 'accountant'."
            )
        self.columns_ = list(data.columns)
        self.claim_ = PrivacyClaim(
            epsilon=float(claim["epsilon"]), delta=float(claim.get("delta", 0.0)),
            accountant=str(claim.get("accountant", "plug-in")))
        return self

    def sample(self, n: int, *, rng: Rngs) -> pd.DataFrame:
        if not hasattr(self, "inner_"):
            raise NotFittedError("call `fit` first.")
        out = self.inner_.sample(n, seed=rng.int_seed())
        if not isinstance(out, pd.DataFrame) or list(out.columns) != self.columns_:
            got = list(out.columns) if isinstance(out, pd.DataFrame) else type(out).__name__
            raise PluginError(
                f"generator {self.name!r} breaks the plug-in contract: `sample` must "
                f"return a DataFrame with columns {self.columns_}. Got {got}."
            )
        return out

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "claim_"):
            raise NotFittedError("call `fit` first.")
        return self.claim_


def load_plugin_factory(name: str) -> Callable[..., Generator]:
    cls = load_plugin_class(name)

    def factory(**kwargs: Any) -> PluginAdapter:
        return PluginAdapter(cls, name, **kwargs)

    return factory
