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

Where it runs: the registry runs every plug-in in a foreign worker process
(:class:`~dpaudit.generators.foreign.generator.ForeignGenerator`), which never imports
it here. :class:`PluginAdapter` is the same adaptation in this process, for a class
at hand (library use, tests); both check claims and releases with
:func:`check_claim` and :func:`check_release`, and seed with :func:`plugin_seeds`.

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
import json
import math
from collections.abc import Callable
from typing import Any, Self

import pandas as pd

from dpaudit.data import Domain
from dpaudit.errors import DataError, NotFittedError, PluginError
from dpaudit.generators.base import (
    PROFILE_KEYS,
    PrivacyClaim,
    RdpCurve,
    profile_problem,
)
from dpaudit.generators.entry_points import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from dpaudit.generators.entry_points import plugin_entry_points as plugin_entry_points
from dpaudit.generators.foreign import columnar
from dpaudit.generators.foreign.contract import PUBLIC_SEED as PUBLIC_SEED
from dpaudit.generators.foreign.contract import accepts_epsilon as accepts_epsilon
from dpaudit.generators.foreign.contract import (
    accepts_public_seed as accepts_public_seed,
)
from dpaudit.generators.foreign.contract import (
    contract_problem,
    python_number,
)
from dpaudit.generators.foreign.contract import (
    supports_public_seed as supports_public_seed,
)
from dpaudit.generators.foreign.transcript import (
    TRANSCRIPT_ATTRIBUTE,
    Measurement,
    check_transcript,
)
from dpaudit.rng import Rngs, public_and_privacy


def load_plugin_class(name: str) -> type:
    """Imports ``module:Class`` or the entry point ``name``; checks the contract.

    Raises:
        PluginError: the module, the class or the entry point cannot be found, or the
            class lacks ``fit`` or ``sample``.
    """
    if ":" in name:
        module_name, _, attr = name.partition(":")
        if not module_name or not attr:
            raise PluginError(
                f"generator {name!r}: a plug-in is named package.module:Class."
            )
        try:
            module = importlib.import_module(module_name)
        except (ImportError, ValueError) as err:
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
        points = [
            ep
            for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
            if ep.name == name
        ]
        if not points:
            raise PluginError(
                f"unknown generator {name!r}: not a built-in (`dpaudit list generators`), "
                f"not `module:Class`, and no entry point in group {ENTRY_POINT_GROUP!r}."
            )
        try:
            cls = points[0].load()
        except Exception as err:
            raise PluginError(
                f"generator {name!r}: its entry point {points[0].value!r} cannot be loaded "
                f"({type(err).__name__}: {err}). Reinstall the package that provides it, "
                "or fix its entry point."
            ) from err
    problem = contract_problem(cls, name)
    if problem is not None:
        raise PluginError(problem)
    plugin: type = cls
    return plugin


def plugin_seeds(public: bool, rng: Rngs, public_rng: Rngs | None) -> dict[str, int]:
    """The seeds a plug-in's ``fit`` or ``sample`` gets: ``seed`` from the round's
    stream, or, for a plug-in that accepts ``public_seed`` (``public``), ``seed`` from
    the privacy stream and ``public_seed`` from the public one."""
    if not public:
        # All of the plug-in's randomness from the round's own stream.
        return {"seed": rng.int_seed()}
    public_stream, privacy = public_and_privacy(rng, public_rng)
    return {"seed": privacy.int_seed(), PUBLIC_SEED: public_stream.int_seed()}


class PluginAdapter:
    """Wraps a plain-types plug-in into dpaudit's generator protocol."""

    def __init__(self, cls: type, name: str, **kwargs: Any) -> None:
        self.cls, self.name, self.kwargs = cls, name, kwargs

    @property
    def supports_public_randomness(self) -> bool:
        """True exactly when the plug-in's ``fit`` and ``sample`` accept ``public_seed``."""
        return supports_public_seed(self.cls)

    def _seeds(self, rng: Rngs, public_rng: Rngs | None) -> dict[str, int]:
        return plugin_seeds(self.supports_public_randomness, rng, public_rng)

    def _call(
        self, what: str, method: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> Any:
        """Calls the plug-in; an exception inside it becomes one :class:`PluginError`
        naming the plug-in and the method (the traceback with ``--debug``)."""
        try:
            return method(*args, **kwargs)
        except Exception as err:
            raise PluginError(
                f"generator {self.name!r}: its `{what}` raised {type(err).__name__}: "
                f"{' '.join(str(err).split())}. Fix the plug-in (rerun with --debug for "
                "the traceback; see docs/plugins.md)."
            ) from err

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: Domain,
        rng: Rngs,
        public_rng: Rngs | None = None,
    ) -> Self:
        """Constructs and fits the plug-in; reads and checks its ``privacy_claim``.

        Raises:
            PluginError: the plug-in raised, or its claim is missing or invalid
                (:func:`check_claim`).
        """
        self.inner_ = self._call("__init__", self.cls, **self.kwargs)
        fitted = self._call(
            "fit",
            self.inner_.fit,
            data.copy(),
            domain=domain.to_json(),
            **self._seeds(rng, public_rng),
        )
        if fitted is not None:
            self.inner_ = fitted
        self.columns_ = list(data.columns)
        self.domain_ = domain
        self.claim_ = check_claim(
            getattr(self.inner_, "privacy_claim", None), self.name
        )
        return self

    def sample(
        self, n: int, *, rng: Rngs, public_rng: Rngs | None = None
    ) -> pd.DataFrame:
        """``n`` rows from the fitted plug-in, checked (:func:`check_release`).

        Raises:
            NotFittedError: before ``fit``.
            PluginError: the plug-in raised, or its release is not ``n`` rows of the
                training columns inside the public domain.
        """
        if not hasattr(self, "inner_"):
            raise NotFittedError("call `fit` first.")
        out = self._call(
            "sample", self.inner_.sample, n, **self._seeds(rng, public_rng)
        )
        # The number of rows is checked by the caller (the audit's `release` for every
        # generator, with its own message).
        return check_release(out, self.name, columns=self.columns_, domain=self.domain_)

    @property
    def privacy_claim_(self) -> PrivacyClaim:
        if not hasattr(self, "claim_"):
            raise NotFittedError("call `fit` first.")
        return self.claim_

    def read_transcript(
        self, *, max_bytes: int | None = None, exact: bool = False
    ) -> tuple[Measurement, ...] | None:
        """The fitted plug-in's ``privacy_transcript``, checked
        (:func:`~dpaudit.generators.foreign.transcript.check_transcript`, which
        refuses one over ``max_bytes``; with ``exact``: noise absent or 0 read as
        exact answers); ``None`` when it states none.

        Raises:
            NotFittedError: before ``fit``.
            PluginError: a record breaks the contract.
        """
        if not hasattr(self, "inner_"):
            raise NotFittedError("call `fit` first.")
        # As from a worker (columnar.py): well-shaped records in columns.
        raw = columnar.join(
            *columnar.split(getattr(self.inner_, TRANSCRIPT_ATTRIBUTE, None))
        )
        return check_transcript(
            raw, self.name, domain=self.domain_, max_bytes=max_bytes, exact=exact
        )


def load_plugin_factory(name: str) -> Callable[..., PluginAdapter]:
    """The factory ``factory(epsilon=, delta=, **options)`` of the plug-in ``name``."""
    cls = load_plugin_class(name)

    def factory(**kwargs: Any) -> PluginAdapter:
        return PluginAdapter(cls, name, **kwargs)

    return factory


CLAIM_KEYS = ("epsilon", "delta", "accountant", "iterations", *PROFILE_KEYS)
"""The claim keys with a field of their own; any other key goes to ``extra``."""


def check_claim(claim: Any, name: str) -> PrivacyClaim:
    """The plug-in's ``privacy_claim`` as a :class:`PrivacyClaim`, checked: a dict with
    ``epsilon`` a finite number >= 0, ``delta`` (default 0) a number in [0, 1),
    ``iterations`` (optional) an integer >= 0; the profile (optional, null when
    absent): ``gdp_mu`` and ``zcdp_rho`` finite numbers > 0, ``rdp`` and
    ``reference_rdp`` ``{"orders": [...], "epsilons": [...]}``
    (:func:`~dpaudit.generators.base.profile_problem`); every other key is kept in
    :attr:`PrivacyClaim.extra` and must be a string whose value is JSON (numbers
    finite).

    Raises:
        PluginError: naming the plug-in and the field (before any result is written).
    """
    where = f"generator {name!r} breaks the plug-in contract"
    if not isinstance(claim, dict) or "epsilon" not in claim:
        raise PluginError(
            f"{where}: after fit, `privacy_claim` must be a dict with 'epsilon', 'delta' "
            f"and 'accountant'. Got {type(claim).__name__}."
        )
    # NumPy numbers (numpy.float32(1.0), numpy.int64(1)) are numbers: kept as Python's.
    claim = {key: python_number(value) for key, value in claim.items()}
    for key, upper in (("epsilon", math.inf), ("delta", 1.0)):
        value = claim.get(key, 0.0)
        try:  # an integer of 400 digits overflows a float: not a usable number
            ok = (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and math.isfinite(value)
                and 0 <= value < upper
            )
        except OverflowError:
            ok = False
        if not ok:
            constraint = (
                "a finite number >= 0" if key == "epsilon" else "a number in [0, 1)"
            )
            raise PluginError(
                f"{where}: `privacy_claim['{key}']` must be {constraint}. "
                f"Got {value!r:.80}."
            )
    iterations = claim.get("iterations")
    if iterations is not None and (
        not isinstance(iterations, int)
        or isinstance(iterations, bool)
        or iterations < 0
    ):
        raise PluginError(
            f"{where}: `privacy_claim['iterations']` must be an integer "
            f">= 0 (or absent). Got {iterations!r}."
        )
    for key in PROFILE_KEYS:
        problem = profile_problem(key, claim.get(key))
        if problem is not None:
            raise PluginError(
                f"{where}: `privacy_claim['{key}']` {problem} See docs/plugins.md, "
                '"The claim\'s profile".'
            )
    extra = {}
    for key, value in claim.items():
        if key in CLAIM_KEYS:
            continue
        try:
            json.dumps(value, allow_nan=False)
            ok = isinstance(key, str)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise PluginError(
                f"{where}: `privacy_claim[{key!r}]` must be a JSON value under a string "
                "key (number, string, boolean, null, list or dict of them; numbers "
                f"finite). Got a {type(value).__name__}: {value!r:.80}."
            )
        extra[key] = value
    return PrivacyClaim(
        epsilon=float(claim["epsilon"]),
        delta=float(claim.get("delta", 0.0)),
        accountant=str(claim.get("accountant", "plug-in")),
        iterations=iterations,
        extra=extra,
        gdp_mu=None if claim.get("gdp_mu") is None else float(claim["gdp_mu"]),
        zcdp_rho=None if claim.get("zcdp_rho") is None else float(claim["zcdp_rho"]),
        rdp=None if claim.get("rdp") is None else RdpCurve.from_json(claim["rdp"]),
        reference_rdp=(
            None
            if claim.get("reference_rdp") is None
            else RdpCurve.from_json(claim["reference_rdp"])
        ),
    )


def check_release(
    out: Any, name: str, *, columns: list[str], domain: Domain, rows: int | None = None
) -> pd.DataFrame:
    """The plug-in's release, checked: a DataFrame (of ``rows`` rows, if given), the training
    ``columns`` in order, every value inside the public ``domain`` (no NaN, numbers in
    numeric columns, values within the bounds or categories).

    Raises:
        PluginError: naming the plug-in and what is wrong (before any result is written).
    """
    where = f"generator {name!r} breaks the plug-in contract: `sample`"
    if not isinstance(out, pd.DataFrame) or list(out.columns) != columns:
        got = list(out.columns) if isinstance(out, pd.DataFrame) else type(out).__name__
        raise PluginError(
            f"{where} must return a DataFrame with columns {columns}. Got {got}."
        )
    if rows is not None and len(out) != rows:
        raise PluginError(
            f"{where} must return the {rows} rows asked for. Got {len(out)}."
        )
    try:
        domain.validate(out, name="release", min_rows=0)
    except DataError as err:
        raise PluginError(
            f"{where} released data outside the public domain: {err}"
        ) from err
    return out
