"""What both games record of the generator's claims: the claim the verdict is
judged against (:func:`summarise_claims`), a generator's own ``extra`` keys over its
fits, and the bug flags an audit switched on."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.scores import profile_of_claims
from dpaudit.audit.result.model import Claim, freeze

__all__ = [
    "EXTRA_VALUES_CAP",
    "active_flags",
    "plain",
    "summarise_claims",
    "summarise_extra",
]

#: At most this many distinct values of a non-numeric ``extra`` key are kept.
EXTRA_VALUES_CAP = 10


def _iterations(claim: Mapping[str, Any]) -> int | None:
    """A round's training iterations: the claim's ``iterations``, else a plug-in's
    ``extra["iterations"]``."""
    for value in (
        claim.get("iterations"),
        (claim.get("extra") or {}).get("iterations"),
    ):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    return None


def summarise_extra(extras: list[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A generator's ``extra`` claim keys over the rounds: per key, numbers as
    ``{"mean", "min", "max", "rounds"}``, other values as ``{"values", "distinct",
    "rounds"}`` (the distinct values, at most :data:`EXTRA_VALUES_CAP`, in first-seen
    order; ``distinct`` counts them all). ``rounds``: the rounds that had the key.

    >>> summarise_extra([{"steps": 10, "opt": "adam"}, {"steps": 20, "opt": "adam"}])
    ... # doctest: +NORMALIZE_WHITESPACE
    {'steps': {'mean': 15.0, 'min': 10.0, 'max': 20.0, 'rounds': 2},
     'opt': {'values': ['adam'], 'distinct': 1, 'rounds': 2}}
    """
    keys: list[str] = []
    for extra in extras:
        keys += [str(k) for k in extra if str(k) not in keys]
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        values = [e[key] for e in extras if key in e]
        numbers = [
            float(v)
            for v in values
            if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        if numbers and len(numbers) == len(values):
            finite = [v for v in numbers if np.isfinite(v)]
            out[key] = {
                "mean": float(np.mean(finite)) if finite else None,
                "min": min(finite) if finite else None,
                "max": max(finite) if finite else None,
                "rounds": len(values),
            }
            continue
        seen: dict[str, Any] = {}
        for v in values:  # stored claims are parsed JSON: every value is JSON-able
            seen.setdefault(json.dumps(v, sort_keys=True, default=str), v)
        distinct = list(seen.values())
        out[key] = {
            "values": distinct[:EXTRA_VALUES_CAP],
            "distinct": len(seen),
            "rounds": len(values),
        }
    return out


def summarise_claims(claims: Mapping[int, Mapping[str, Any]]) -> Claim:
    """The claim the verdict is judged against: the largest epsilon any round claimed
    (the generator's most generous statement about itself), and the largest reference
    epsilon (None when a correct accountant finds no finite bound).

    ``iterations_mean`` is the mean over the rounds that report iterations (a
    plug-in's may come in its ``extra``), ``None`` when none does; ``extra`` the
    generator's own claim keys over the rounds (:func:`summarise_extra`)."""
    values = list(claims.values())
    eps = [float(c["epsilon"]) for c in values]
    refs = [c.get("reference_epsilon") for c in values]
    worst = values[int(np.argmax(eps))]
    iterations = [i for i in map(_iterations, values) if i is not None]
    independent = worst.get("epsilon_data_independent")
    trace = worst.get("trace") or {}
    return Claim(
        epsilon=max(eps),
        epsilon_min=min(eps),
        delta=max(float(c["delta"]) for c in values),
        accountant=None
        if worst.get("accountant") is None
        else str(worst["accountant"]),
        epsilon_data_independent=None if independent is None else float(independent),
        reference_epsilon=(
            None
            if any(r is None for r in refs)
            else max(float(r) for r in refs if r is not None)
        ),
        reference_note=trace.get("reference_note"),
        iterations=_iterations(worst),
        iterations_mean=float(np.mean(iterations)) if iterations else None,
        records_seen=freeze(trace.get("records_seen")),
        extra=freeze(summarise_extra([c.get("extra") or {} for c in values])),
        **profile_of_claims(values),
    )


def active_flags(config: AuditConfig) -> list[str]:
    """Every bug flag switched on: the variant's and the ones added with --bug."""
    flags = set(config.bugs)
    if config.variant:
        from dpaudit.generators.bugs import get_variant

        flags |= get_variant(config.variant).flags
    return sorted(flags)


def plain(value: Any) -> Any:
    """``value`` with NumPy scalars as Python numbers and sequences as lists (JSON)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
