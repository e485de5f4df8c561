"""One validation helper for every public boundary (scikit-learn ``check_scalar`` style).

Every message follows one template: ``"`name` must be <constraint>. Got <value>."``,
so a user reads the same shape of error from every command, config and plug-in.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, Literal, TypeVar

from dpaudit.errors import InvalidParameterError

T = TypeVar("T")
Closed = Literal["both", "left", "right", "neither"]


def require(ok: bool, name: str, constraint: str, value: Any) -> None:
    """Raises :class:`InvalidParameterError` with the template unless ``ok``.

    >>> require(True, "delta", "in [0, 1)", 0.5)
    >>> require(False, "delta", "in [0, 1)", 1.5)
    Traceback (most recent call last):
    ...
    dpaudit.errors.InvalidParameterError: `delta` must be in [0, 1). Got 1.5.
    """
    if not ok:
        raise InvalidParameterError(f"`{name}` must be {constraint}. Got {value!r}.")


def check_scalar(value: Any, name: str, *, kind: type | tuple[type, ...] = (int, float),
                 min_val: float | None = None, max_val: float | None = None,
                 closed: Closed = "both", allow_none: bool = False) -> Any:
    """Checks a number's type, finiteness and range; returns it unchanged.

    Booleans are refused where numbers are asked for (``True`` is an ``int``).

    Args:
        value: the value to check.
        name: the parameter's user-facing name.
        kind: the accepted type(s), ``int`` for integers.
        min_val, max_val: bounds (None: unbounded on that side).
        closed: which bounds are included.
        allow_none: accept ``None`` (returned as is).

    Raises:
        InvalidParameterError: naming ``name``, the constraint and the value.

    >>> check_scalar(3, "rounds", kind=int, min_val=1)
    3
    >>> check_scalar(0.0, "epsilon", min_val=0, closed="neither")
    Traceback (most recent call last):
    ...
    dpaudit.errors.InvalidParameterError: `epsilon` must be a number in (0, inf). Got 0.0.
    """
    if value is None and allow_none:
        return value
    kinds = kind if isinstance(kind, tuple) else (kind,)
    noun = "an integer" if kinds == (int,) else "a number"
    lo = "-inf" if min_val is None else f"{min_val:g}"
    hi = "inf" if max_val is None else f"{max_val:g}"
    left = "[" if closed in ("both", "left") and min_val is not None else "("
    right = "]" if closed in ("both", "right") and max_val is not None else ")"
    constraint = f"{noun} in {left}{lo}, {hi}{right}"
    if min_val is None and max_val is None:
        constraint = f"a finite {noun[2:] if noun.startswith('a ') else noun[3:]}"
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if ok and isinstance(value, float):
        ok = math.isfinite(value)
    if ok and min_val is not None:
        ok = value >= min_val if closed in ("both", "left") else value > min_val
    if ok and max_val is not None:
        ok = value <= max_val if closed in ("both", "right") else value < max_val
    require(ok, name, constraint, value)
    return value


def check_choice(value: T, name: str, choices: Collection[T]) -> T:
    """Checks that ``value`` is one of ``choices``; returns it.

    >>> check_choice("cpu", "device", ("auto", "cpu", "cuda"))
    'cpu'
    """
    require(value in choices, name, "one of " + ", ".join(map(str, choices)), value)
    return value
