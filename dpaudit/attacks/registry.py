"""Attack names (stable: scripts and CI policies depend on them) and construction.

``querybased`` (Houssiau et al. 2022, TAPAS), ``groundhog`` with all three feature sets
and ``groundhog-naive``, ``groundhog-histogram``, ``groundhog-correlation`` (Stadler et
al., USENIX Security 2022), ``distance`` (distance to closest record), and ``all``, which
expands to every one of them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from dpaudit.attacks.base import Attack
from dpaudit.attacks.distance import DistanceAttack, NearestDistancesAttack
from dpaudit.attacks.fingerprint import FingerprintAttack
from dpaudit.attacks.groundhog import GroundHogAttack
from dpaudit.attacks.moments import MomentsAttack
from dpaudit.attacks.querybased import QueryBasedAttack
from dpaudit.data import Domain
from dpaudit.errors import InvalidParameterError
from dpaudit.rng import Rngs

ATTACK_NAMES = (
    "querybased",
    "groundhog",
    "groundhog-naive",
    "groundhog-histogram",
    "groundhog-correlation",
    "distance",
    "moments",
    "fingerprint",
    "nearest",
)
ALL = "all"

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
        f"`attack` must be one of {', '.join((*ATTACK_NAMES, ALL))}. Got {name!r}."
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


def expand_attacks(name: str) -> list[str]:
    """``all`` -> every name in :data:`ATTACK_NAMES`; a known name -> ``[name]``.

    Raises:
        InvalidParameterError: an unknown name (the message lists the valid ones).

    >>> expand_attacks("distance")
    ['distance']
    """
    if name == ALL:
        return list(ATTACK_NAMES)
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
        if name == ALL:
            raise InvalidParameterError(
                "`attack` 'all' names several attacks; call `expand_attacks('all')` "
                "and build each one."
            )
        raise _unknown(name)
    accepted = attack_options(name)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise InvalidParameterError(
            f"attack {name!r} does not take the option(s) {unknown}. "
            f"Accepted: {list(accepted) or 'none'}."
        )
    cls, fixed = _FACTORIES[name]
    return cls(domain=domain, target=target, rng=rng, name=name, **fixed, **options)
