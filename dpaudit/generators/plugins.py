"""Loading a user's own generator (a plug-in) and adapting it to the protocol.

A plug-in needs nothing from dpaudit (docs/plugins.md)::

    class MyGenerator:
        def __init__(self, *, epsilon: float, delta: float, **options): ...
        def fit(self, data: pandas.DataFrame, *, domain: dict, seed: int) -> "MyGenerator": ...
        def sample(self, n: int, *, seed: int) -> pandas.DataFrame: ...
        privacy_claim: dict   # set by fit: {"epsilon": float, "delta": float, "accountant": str}

It is named ``package.module:ClassName`` (importable from the current environment) or
by an entry point in group ``dpaudit.generators``. A plug-in that breaks the contract
is refused with an error naming the missing part.

Public randomness (docs/soundness.md): a plug-in whose ``fit`` and ``sample`` both
accept a ``public_seed: int`` keyword opts in. It then gets ``seed`` from the privacy
stream and ``public_seed`` from the public one, and promises that its privacy proof
holds for every fixed ``public_seed``; the adapter declares
``supports_public_randomness`` exactly then. A plug-in without ``public_seed`` gets all
its randomness from ``seed``, the round's own stream, as before.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
from collections.abc import Callable
from typing import Any, Self

import pandas as pd

from dpaudit.data import Domain
from dpaudit.errors import NotFittedError, PluginError
from dpaudit.generators.base import PrivacyClaim
from dpaudit.rng import Rngs, public_and_privacy

ENTRY_POINT_GROUP = "dpaudit.generators"
PUBLIC_SEED = "public_seed"


def plugin_entry_points() -> dict[str, str]:
    """The installed entry points of group ``dpaudit.generators``: name -> ``module:attr``.

    Nothing is imported: listing the plug-ins never runs their code.
    """
    points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep.value for ep in sorted(points, key=lambda ep: ep.name)}


def load_plugin_class(name: str) -> type:
    """Imports ``module:Class`` or the entry point ``name``; checks the contract.

    Raises:
        PluginError: the module, the class or the entry point cannot be found, or the
            class lacks ``fit`` or ``sample``.
    """
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
            f"{missing} (see docs/plugins.md)."
        )
    plugin: type = cls
    return plugin


def accepts_public_seed(method: Callable[..., Any]) -> bool:
    """Whether ``method`` names a ``public_seed`` parameter (``**kwargs`` does not count:
    opting in is a promise, made explicitly)."""
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    parameter = parameters.get(PUBLIC_SEED)
    return parameter is not None and parameter.kind in (
        inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def supports_public_seed(cls: type) -> bool:
    """Whether the plug-in class opts in to public randomness: both its ``fit`` and its
    ``sample`` accept ``public_seed``."""
    return all(accepts_public_seed(getattr(cls, method)) for method in ("fit", "sample"))


class PluginAdapter:
    """Wraps a plain-types plug-in into dpaudit's generator protocol."""

    def __init__(self, cls: type, name: str, **kwargs: Any) -> None:
        self.cls, self.name, self.kwargs = cls, name, kwargs

    @property
    def supports_public_randomness(self) -> bool:
        """True exactly when the plug-in's ``fit`` and ``sample`` accept ``public_seed``."""
        return supports_public_seed(self.cls)

    def _seeds(self, rng: Rngs, public_rng: Rngs | None) -> dict[str, int]:
        if not self.supports_public_randomness:
            # All of the plug-in's randomness from the round's own stream.
            return {"seed": rng.int_seed()}
        public, privacy = public_and_privacy(rng, public_rng)
        return {"seed": privacy.int_seed(), PUBLIC_SEED: public.int_seed()}

    def fit(self, data: pd.DataFrame, *, domain: Domain, rng: Rngs,
            public_rng: Rngs | None = None) -> Self:
        """Constructs and fits the plug-in; reads its ``privacy_claim``.

        Raises:
            PluginError: the claim is missing or not a dict with ``epsilon``.
        """
        self.inner_ = self.cls(**self.kwargs)
        fitted = self.inner_.fit(data.copy(), domain=domain.to_json(),
                                 **self._seeds(rng, public_rng))
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

    def sample(self, n: int, *, rng: Rngs, public_rng: Rngs | None = None) -> pd.DataFrame:
        """``n`` rows from the fitted plug-in, checked against the training columns.

        Raises:
            NotFittedError: before ``fit``.
            PluginError: the plug-in returned something else than those columns.
        """
        if not hasattr(self, "inner_"):
            raise NotFittedError("call `fit` first.")
        out = self.inner_.sample(n, **self._seeds(rng, public_rng))
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


def load_plugin_factory(name: str) -> Callable[..., PluginAdapter]:
    """The factory ``factory(epsilon=, delta=, **options)`` of the plug-in ``name``."""
    cls = load_plugin_class(name)

    def factory(**kwargs: Any) -> PluginAdapter:
        return PluginAdapter(cls, name, **kwargs)

    return factory
