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

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, runtime_checkable

import pandas as pd

from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs
from dpaudit.validation import require

PROFILE_KEYS = ("gdp_mu", "zcdp_rho", "rdp", "reference_rdp")
"""The keys of a claim's privacy profile (:class:`PrivacyClaim`), in its JSON and in a
plug-in's ``privacy_claim`` dict."""


def _number(value: Any) -> bool:
    """An int or float (not a bool) that a float can hold (an integer of 400 digits
    is not: ``math.isfinite`` would overflow on it)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def profile_problem(key: str, value: Any) -> str | None:
    """What is wrong with the profile value ``value`` of claim key ``key`` (one of
    :data:`PROFILE_KEYS`), as ``"must be ... Got ..."``, or None (valid, or None: not
    stated).

    ``gdp_mu`` and ``zcdp_rho``: a finite number > 0. ``rdp`` and ``reference_rdp``:
    ``{"orders": [...], "epsilons": [...]}`` of equal, non-zero length, the orders
    finite numbers > 1 strictly increasing, the epsilons finite numbers >= 0. An order
    at which the RDP is infinite is left out (a curve stated at fewer orders is a
    weaker statement, still true); JSON has no infinity.

    >>> profile_problem("gdp_mu", 0.5) is None
    True
    >>> profile_problem("rdp", {"orders": [2, 1.5], "epsilons": [0.1, 0.2]})
    'must have `orders` strictly increasing. Got [2, 1.5].'
    """
    if value is None:
        return None
    if key in ("gdp_mu", "zcdp_rho"):
        if _number(value) and math.isfinite(value) and value > 0:
            return None
        return f"must be a finite number > 0 (or null). Got {value!r:.80}."
    shape = '{"orders": [...], "epsilons": [...]} (or null)'
    if not isinstance(value, Mapping) or set(value) != {"orders", "epsilons"}:
        return f"must be {shape}. Got {value!r:.80}."
    orders, epsilons = value["orders"], value["epsilons"]
    for name, seq in (("orders", orders), ("epsilons", epsilons)):
        if not isinstance(seq, list | tuple) or not seq:
            return f"must have `{name}` a non-empty list. Got {seq!r:.80}."
        if not all(_number(v) and math.isfinite(v) for v in seq):
            return (
                f"must have `{name}` finite numbers (leave out an order whose RDP is "
                f"infinite). Got {list(seq)!r:.80}."
            )
    if len(orders) != len(epsilons):
        return (
            f"must have one epsilon per order. Got {len(orders)} orders and "
            f"{len(epsilons)} epsilons."
        )
    if any(a <= 1 for a in orders):
        return f"must have every order > 1. Got {list(orders)!r:.80}."
    if any(b <= a for a, b in itertools.pairwise(orders)):
        return f"must have `orders` strictly increasing. Got {list(orders)!r:.80}."
    if any(e < 0 for e in epsilons):
        return f"must have every epsilon >= 0. Got {list(epsilons)!r:.80}."
    return None


@dataclass(frozen=True, kw_only=True, slots=True)
class RdpCurve:
    """Renyi DP (Mironov 2017) at each of ``orders``, add/remove neighbours: the
    mechanism is ``(a, epsilons[i])``-RDP at ``a = orders[i]`` (both directions).

    >>> RdpCurve(orders=(2.0, 3.0), epsilons=(0.5, 0.75)).to_json()
    {'orders': [2.0, 3.0], 'epsilons': [0.5, 0.75]}
    >>> RdpCurve(orders=(1.0,), epsilons=(0.5,))
    Traceback (most recent call last):
    ...
    dpaudit.errors.InvalidParameterError: `rdp` must have every order > 1. Got [1.0].
    """

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]

    def __post_init__(self) -> None:
        problem = profile_problem("rdp", self.to_json())
        if problem is not None:
            raise InvalidParameterError(f"`rdp` {problem}")

    def to_json(self) -> dict[str, list[float]]:
        return {
            "orders": [float(a) for a in self.orders],
            "epsilons": [float(e) for e in self.epsilons],
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> RdpCurve:
        return cls(
            orders=tuple(float(a) for a in obj["orders"]),
            epsilons=tuple(float(e) for e in obj["epsilons"]),
        )

    @classmethod
    def of(cls, orders: Sequence[float], epsilons: Sequence[float]) -> RdpCurve:
        """The curve at the orders where ``epsilons`` is finite (an infinite RDP
        states nothing at that order).

        >>> RdpCurve.of([2.0, 3.0], [0.1, float("inf")]).orders
        (2.0,)
        """
        pairs = [
            (float(a), float(e))
            for a, e in zip(orders, epsilons, strict=True)
            if math.isfinite(float(e))
        ]
        return cls(
            orders=tuple(a for a, _ in pairs), epsilons=tuple(e for _, e in pairs)
        )


def _opt_rdp(obj: Any) -> RdpCurve | None:
    return None if obj is None else RdpCurve.from_json(obj)


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
            beyond ``epsilon``, ``delta``, ``accountant``, ``iterations`` and the
            profile keys: its own accountant's final value, its settings...), JSON
            values, kept as given.
        gdp_mu: the mechanism is ``mu``-GDP (Dong, Roth, Su 2022), or None.
        zcdp_rho: the mechanism is ``rho``-zCDP (Bun and Steinke 2016), or None.
        rdp: the RDP curve the claimed accountant computed (:class:`RdpCurve`; bugs
            included for a variant), or None.
        reference_rdp: the RDP curve of dpaudit's correct accountant on the same
            ledger (beside ``reference_epsilon``), or None.

    The profile (``gdp_mu``, ``zcdp_rho``, ``rdp``) is what the claim states beyond
    its ``(epsilon, delta)`` point; the audit tests every stated part (docs/plugins.md,
    "The claim's profile"). JSON keys: ``gdp_mu``, ``zcdp_rho``, ``rdp`` and
    ``reference_rdp`` (``{"orders": [...], "epsilons": [...]}``), null when absent.
    """

    epsilon: float
    delta: float
    accountant: str
    epsilon_data_independent: float | None = None
    reference_epsilon: float | None = None
    iterations: int | None = None
    trace: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    gdp_mu: float | None = None
    zcdp_rho: float | None = None
    rdp: RdpCurve | None = None
    reference_rdp: RdpCurve | None = None

    def __post_init__(self) -> None:
        for key in ("gdp_mu", "zcdp_rho"):
            problem = profile_problem(key, getattr(self, key))
            if problem is not None:
                raise InvalidParameterError(f"`{key}` {problem}")

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
            "gdp_mu": _opt(self.gdp_mu),
            "zcdp_rho": _opt(self.zcdp_rho),
            "rdp": None if self.rdp is None else self.rdp.to_json(),
            "reference_rdp": (
                None if self.reference_rdp is None else self.reference_rdp.to_json()
            ),
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
            gdp_mu=_opt(obj.get("gdp_mu")),
            zcdp_rho=_opt(obj.get("zcdp_rho")),
            rdp=_opt_rdp(obj.get("rdp")),
            reference_rdp=_opt_rdp(obj.get("reference_rdp")),
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
