"""The generator protocol, privacy claims and the generator registry.

A generator is trained by ``fit(data, *, domain, rng)``, releases data with
``sample(n, *, rng)``, and states what it spent in ``privacy_claim_``. A generator may
also offer ``fit_many(datasets, *, domain, rngs)`` that trains several independent
models as one tensor program; the audit's runner uses it when present.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, runtime_checkable

import pandas as pd

from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs


@dataclass(frozen=True, kw_only=True, slots=True)
class PrivacyClaim:
    """What a trained generator claims it spent.

    Attributes:
        epsilon: the claimed epsilon (what the implementation's own accountant says, or
            the nominal epsilon for an implementation without an accountant).
        delta: the claimed delta.
        accountant: the name of the accountant that produced ``epsilon``.
        epsilon_data_independent: the data-independent bound for the same queries,
            where the accountant has one (a data-dependent epsilon is itself a
            function of the data and is not a DP statement on its own).
        reference_epsilon: what dpaudit's correct accountant charges for the queries
            the implementation actually performed (bug variants), or None.
        iterations: training iterations run.
        trace: per-iteration values and other ledger details (JSON-serialisable).
    """

    epsilon: float
    delta: float
    accountant: str
    epsilon_data_independent: float | None = None
    reference_epsilon: float | None = None
    iterations: int | None = None
    trace: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "accountant": self.accountant,
            "epsilon_data_independent": _opt(self.epsilon_data_independent),
            "reference_epsilon": _opt(self.reference_epsilon),
            "iterations": self.iterations,
            "trace": dict(self.trace),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PrivacyClaim:
        return cls(
            epsilon=float(obj["epsilon"]),
            delta=float(obj["delta"]),
            accountant=str(obj["accountant"]),
            epsilon_data_independent=_opt(obj.get("epsilon_data_independent")),
            reference_epsilon=_opt(obj.get("reference_epsilon")),
            iterations=obj.get("iterations"),
            trace=dict(obj.get("trace", {})),
        )


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)


@runtime_checkable
class Generator(Protocol):
    """What the distinguishing game needs from anything it audits."""

    def fit(self, data: pd.DataFrame, *, domain: Domain, rng: Rngs) -> Self: ...

    def sample(self, n: int, *, rng: Rngs) -> pd.DataFrame: ...

    @property
    def privacy_claim_(self) -> PrivacyClaim: ...


class BatchedGenerator(Generator, Protocol):
    """A generator that trains several independent models as one tensor program."""

    def fit_many(
        self, datasets: Sequence[pd.DataFrame], *, domain: Domain, rngs: Sequence[Rngs]
    ) -> list[Generator]: ...


GeneratorFactory = Callable[..., Generator]
_REGISTRY: dict[str, tuple[GeneratorFactory, str]] = {}


def register_generator(name: str, factory: GeneratorFactory, *, description: str) -> None:
    """Registers a generator factory ``factory(epsilon=, delta=, **options)``.

    Raises:
        InvalidParameterError: if ``name`` is taken.
    """
    if name in _REGISTRY:
        raise InvalidParameterError(f"a generator named {name!r} is already registered.")
    _REGISTRY[name] = (factory, description)


def registered_generators() -> dict[str, str]:
    """Names and one-line descriptions of the registered generators."""
    _load_builtin()
    return {name: desc for name, (_, desc) in sorted(_REGISTRY.items())}


def generator_factory(name: str) -> GeneratorFactory:
    """The factory of a registered generator, or of a plug-in ``module:Class`` or entry
    point in group ``dpaudit.generators``."""
    _load_builtin()
    if name in _REGISTRY:
        return _REGISTRY[name][0]
    from dpaudit.generators.plugins import load_plugin_factory

    return load_plugin_factory(name)


def _load_builtin() -> None:
    # Importing the modules registers them (once).
    import importlib

    for module in ("pate_gan", "g_pate", "toy"):
        importlib.import_module(f"dpaudit.generators.{module}")
