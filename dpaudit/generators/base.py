"""The generator protocol, privacy claims and the default privacy budget.

A generator is trained by ``fit(data, *, domain, rng, public_rng=None)``, releases
data with ``sample(n, *, rng, public_rng=None)``, and states what it spent in
``privacy_claim_``. ``rng`` is the privacy stream, ``public_rng`` the public one (with
None both come from ``rng``: :func:`dpaudit.rng.public_and_privacy`). A generator
declaring ``supports_public_randomness = True`` promises that its privacy proof holds
for every fixed value of the public stream (docs/soundness.md). A generator may also
offer ``fit_many(datasets, *, domain, rngs, public_rngs=None)`` that trains several
independent models as one tensor program; model ``m`` depends only on its own streams.

The names of the generators, their factories and their audit defaults live in
:mod:`dpaudit.generators.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, runtime_checkable

import pandas as pd

from dpaudit.data import Domain
from dpaudit.rng import Rngs
from dpaudit.validation import require


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
        extra: what else the implementation put in its claim (a plug-in's keys
            beyond ``epsilon``, ``delta``, ``accountant`` and ``iterations``: its own
            accountant's final value, its settings...), JSON values, kept as given.
    """

    epsilon: float
    delta: float
    accountant: str
    epsilon_data_independent: float | None = None
    reference_epsilon: float | None = None
    iterations: int | None = None
    trace: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "accountant": self.accountant,
            "epsilon_data_independent": _opt(self.epsilon_data_independent),
            "reference_epsilon": _opt(self.reference_epsilon),
            "iterations": self.iterations,
            "trace": dict(self.trace),
            "extra": dict(self.extra),
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
            extra=dict(obj.get("extra") or {}),
        )


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)


@runtime_checkable
class Generator(Protocol):
    """What the distinguishing game needs from anything it audits."""

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: Domain,
        rng: Rngs,
        public_rng: Rngs | None = None,
    ) -> Self: ...

    def sample(
        self, n: int, *, rng: Rngs, public_rng: Rngs | None = None
    ) -> pd.DataFrame: ...

    @property
    def privacy_claim_(self) -> PrivacyClaim: ...


class BatchedGenerator(Generator, Protocol):
    """A generator that trains several independent models as one tensor program."""

    def fit_many(
        self,
        datasets: Sequence[pd.DataFrame],
        *,
        domain: Domain,
        rngs: Sequence[Rngs],
        public_rngs: Sequence[Rngs] | None = None,
    ) -> list[Generator]: ...


GeneratorFactory = Callable[..., Generator]
"""``factory(epsilon=, delta=, **options) -> Generator``."""


def check_release_streams(
    models: Sequence[Any],
    rngs: Sequence[Rngs],
    public_rngs: Sequence[Rngs] | None,
    *,
    kind: str,
) -> None:
    """The argument checks every ``sample_many`` shares: at least one model (``kind``
    names them in the message) and one stream, and one public stream if given, per
    model."""
    require(bool(models), "models", f"at least one fitted {kind}", len(models))
    require(
        len(rngs) == len(models),
        "rngs",
        f"one stream per model ({len(models)})",
        len(rngs),
    )
    require(
        public_rngs is None or len(public_rngs) == len(models),
        "public_rngs",
        f"one stream per model ({len(models)})",
        None if public_rngs is None else len(public_rngs),
    )
