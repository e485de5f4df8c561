"""Attack names (stable: scripts and CI policies depend on them) and construction.

``querybased`` (Houssiau et al. 2022, TAPAS), ``groundhog`` with all three feature sets
and ``groundhog-naive``, ``groundhog-histogram``, ``groundhog-correlation`` (Stadler et
al., USENIX Security 2022), ``distance`` (distance to closest record), ``moments``
(per-column moments and quantiles of the raw release), ``fingerprint`` (exact match of
the release), ``nearest`` (the target's k nearest distances); ``all``, which expands to
every one of them, and ``default``, the set the audit uses unless told otherwise, per
dataset kind (:func:`default_attacks`; chosen from the measured power of
``benchmarks/attack_power.py`` under fixed public randomness).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from dpaudit.attacks.base import Attack
from dpaudit.attacks.distance import DistanceAttack, NearestDistancesAttack
from dpaudit.attacks.fingerprint import FingerprintAttack
from dpaudit.attacks.groundhog import GroundHogAttack
from dpaudit.attacks.moments import MomentsAttack
from dpaudit.attacks.names import ALL as ALL
from dpaudit.attacks.names import ATTACK_NAMES as ATTACK_NAMES
from dpaudit.attacks.names import DEFAULT as DEFAULT
from dpaudit.attacks.names import DEFAULT_REAL as DEFAULT_REAL
from dpaudit.attacks.names import DEFAULT_WORST_CASE as DEFAULT_WORST_CASE
from dpaudit.attacks.names import (
    DEFAULT_WORST_CASE_CONTINUOUS as DEFAULT_WORST_CASE_CONTINUOUS,
)
from dpaudit.attacks.names import SET_NAMES as SET_NAMES
from dpaudit.attacks.names import TRANSCRIPT_ATTACKS
from dpaudit.attacks.querybased import QueryBasedAttack
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError, did_you_mean
from dpaudit.rng import Rngs

# The default sets, with the measurements behind them: dpaudit.attacks.names.


# name -> (class, fixed keyword arguments)
_FACTORIES: Mapping[str, tuple[Callable[..., Attack], Mapping[str, Any]]] = {
    "querybased": (QueryBasedAttack, {}),
    "groundhog": (GroundHogAttack, {"feature_set": "all"}),
    "groundhog-naive": (GroundHogAttack, {"feature_set": "naive"}),
    "groundhog-histogram": (GroundHogAttack, {"feature_set": "histogram"}),
    "groundhog-correlation": (GroundHogAttack, {"feature_set": "correlation"}),
    "distance": (DistanceAttack, {}),
    "moments": (MomentsAttack, {}),
    "fingerprint": (FingerprintAttack, {}),
    "nearest": (NearestDistancesAttack, {}),
}
_FIXED = frozenset({"domain", "target", "rng", "name"})


def _unknown(name: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"`attack` must be one of {', '.join((*ATTACK_NAMES, *SET_NAMES))}. "
        f"Got {name!r}{did_you_mean(name, (*ATTACK_NAMES, *SET_NAMES))}."
    )


def attack_options(name: str) -> tuple[str, ...]:
    """The keyword options :func:`make_attack` accepts for attack ``name``.

    >>> attack_options("distance")
    ()
    >>> attack_options("groundhog-naive")
    ('bins', 'n_estimators', 'n_jobs')
    """
    if name not in _FACTORIES:
        raise _unknown(name)
    cls, fixed = _FACTORIES[name]
    params = inspect.signature(cls).parameters
    return tuple(p for p in params if p not in _FIXED and p not in fixed)


def attack_class(name: str) -> type:
    """The class of attack ``name``: a black-box attack of :data:`ATTACK_NAMES`, or
    a transcript release's white-box attack (:data:`TRANSCRIPT_ATTACKS`); its class
    attributes say what it needs (``trains_classifier``; ``fits = False``: it learns
    nothing from training rounds).

    >>> attack_class("measurement-ratio").fits
    False
    """
    if name in TRANSCRIPT_ATTACKS:
        module, _, attr = TRANSCRIPT_ATTACKS[name].partition(":")
        cls: type = getattr(importlib.import_module(module), attr)
        return cls
    if name not in _FACTORIES:
        raise _unknown(name)
    factory = _FACTORIES[name][0]
    assert isinstance(factory, type)  # every factory is a class
    return factory


def default_attacks(*, worst_case: bool, continuous: bool = False) -> tuple[str, ...]:
    """The attacks of ``default`` for a dataset kind (the worst case, the continuous
    worst case ``worst-case-continuous`` (``continuous``), or a real table).

    >>> default_attacks(worst_case=True)
    ('querybased', 'moments', 'fingerprint')
    """
    if worst_case:
        return DEFAULT_WORST_CASE_CONTINUOUS if continuous else DEFAULT_WORST_CASE
    return DEFAULT_REAL


def expand_attacks(
    name: str, *, worst_case: bool = False, continuous: bool = False
) -> list[str]:
    """``all`` -> every name in :data:`ATTACK_NAMES`; ``default`` ->
    :func:`default_attacks` of the dataset kind; a known name -> ``[name]``.

    Raises:
        InvalidParameterError: an unknown name (the message lists the valid ones).

    >>> expand_attacks("distance")
    ['distance']
    >>> expand_attacks("default", worst_case=False)
    ['querybased', 'moments', 'fingerprint']
    """
    if name == ALL:
        return list(ATTACK_NAMES)
    if name == DEFAULT:
        return list(default_attacks(worst_case=worst_case, continuous=continuous))
    if name not in _FACTORIES:
        raise _unknown(name)
    return [name]


def make_attack(
    name: str,
    *,
    domain: Domain,
    target: pd.DataFrame,
    rng: Rngs,
    **options: Any,
) -> Attack:
    """Builds attack ``name`` for ``target`` on ``domain``.

    Everything random (random query choice, the forest's ``random_state``) is drawn
    from ``rng.numpy`` here, so an ``rng`` built from the same seed gives the same
    attack.

    Args:
        name: one of :data:`ATTACK_NAMES`.
        domain: the public domain.
        target: the target record, a one-row DataFrame in the domain's columns.
        rng: the attack's random stream.
        **options: attack options (:func:`attack_options` lists them), e.g.
            ``n_queries``, ``bins``, ``tolerance``, ``n_estimators``.

    Returns:
        An object satisfying :class:`dpaudit.attacks.base.Attack`.

    Raises:
        InvalidParameterError: unknown name, unknown option or bad option value.
    """
    if name not in _FACTORIES:
        if name in SET_NAMES:
            raise InvalidParameterError(
                f"`attack` {name!r} names several attacks; call "
                f"`expand_attacks({name!r})` and build each one."
            )
        raise _unknown(name)
    accepted = attack_options(name)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InvalidParameterError(
            f"attack {name!r} does not take the option(s) {unknown}"
            f"{did_you_mean(unknown[0], accepted)}. "
            f"Accepted: {list(accepted) or 'none'}."
        )
    cls, fixed = _FACTORIES[name]
    return cls(domain=domain, target=target, rng=rng, name=name, **fixed, **options)
