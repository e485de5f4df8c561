"""The key table's cross-field refusals: :func:`check_requirements` reads each key's
``games``, ``requires`` and ``requires_any``
(:data:`~dpaudit.audit.config.keys.AUDIT_KEYS`) and refuses, before anything is
loaded or built, a setting the chosen game or dataset does not use.

No heavy imports: the parser's dry run reads this before anything is trained.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpaudit.audit.config.constraints import Key, Requires
from dpaudit.audit.config.keys import AUDIT_KEYS, key_of
from dpaudit.errors import InvalidParameterError

__all__ = ["check_requirements"]


def _written(key: Key, value: Any) -> str:
    if value is None:
        return f"{key.flag} unset"
    return key.flag if key.kind == "bool" else f"{key.flag} {value}"


def check_requirements(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    """Refuses a setting that the chosen game does not use, or whose requirement
    another setting does not meet, in one line naming both settings.

    A setting is set when its value differs from its default; a setting at its
    default is never refused (it changes nothing).

    Args:
        values: field -> value of a configuration.
        defaults: field -> default value.

    Raises:
        InvalidParameterError: the first unmet requirement, in table order.
    """
    game = values.get("game", defaults.get("game"))
    for key in AUDIT_KEYS:
        field = key.target
        if field is None or field not in values:
            continue
        value = values[field]
        if value == defaults.get(field):
            continue
        if game not in key.games:
            raise InvalidParameterError(
                f"`{key.flag}` is a setting of --game {' or '.join(key.games)}; "
                f"the {game} game does not use it: unset {key.flag} or pass "
                f"--game {key.games[0]}. Got {_written(key, value)} with --game {game}."
            )
        if game not in key.requires_games:
            continue
        for need in key.requires:
            other = values.get(need.key, defaults.get(need.key))
            if not need.met(other):
                raise _unmet(key, value, (need,), values, defaults)
        if key.requires_any and not any(
            need.met(values.get(need.key, defaults.get(need.key)))
            for need in key.requires_any
        ):
            raise _unmet(key, value, key.requires_any, values, defaults)


def _unmet(
    key: Key,
    value: Any,
    needs: tuple[Requires, ...],
    values: Mapping[str, Any],
    defaults: Mapping[str, Any],
) -> InvalidParameterError:
    fix = " or ".join(need.fix for need in needs)
    others = ", ".join(
        _written(key_of(need.key), values.get(need.key, defaults.get(need.key)))
        for need in needs
    )
    return InvalidParameterError(
        f"`{key.flag}` needs {fix}: unset {key.flag} or change the other setting. "
        f"Got {_written(key, value)} with {others}."
    )
