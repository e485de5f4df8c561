"""One validation helper for every public boundary (scikit-learn ``check_scalar`` style).

Every message follows one template: ``"`name` must be <constraint>. Got <value>."``,
so a user reads the same shape of error from every command, config and plug-in.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Mapping
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


def check_scalar(
    value: Any,
    name: str,
    *,
    kind: type | tuple[type, ...] = (int, float),
    min_val: float | None = None,
    max_val: float | None = None,
    closed: Closed = "both",
    allow_none: bool = False,
) -> Any:
    """Checks a number's type, finiteness and range; returns it as a Python number.

    Any integer (``numbers.Integral``: ``int``, NumPy integers) is accepted where
    ``kind`` is ``int``; any real number (``numbers.Real``: ``float``, NumPy floats
    and integers) elsewhere. Booleans (Python's and NumPy's) are refused where numbers
    are asked for (``True`` is an ``int``). The value comes back as a Python ``int``
    (integers) or ``float``, so that a NumPy scalar from a user's script can go into
    a config and its JSON.

    Args:
        value: the value to check.
        name: the parameter's user-facing name.
        kind: ``int`` for integers; ``float`` or ``(int, float)`` for real numbers.
        min_val, max_val: bounds (None: unbounded on that side).
        closed: which bounds are included.
        allow_none: accept ``None`` (returned as is).

    Raises:
        InvalidParameterError: naming ``name``, the constraint and the value.

    >>> check_scalar(3, "rounds", kind=int, min_val=1)
    3
    >>> import numpy as np
    >>> check_scalar(np.int64(3), "rounds", kind=int, min_val=1)
    3
    >>> check_scalar(np.float32(0.5), "delta", min_val=0, max_val=1)
    0.5
    >>> check_scalar(0.0, "epsilon", min_val=0, closed="neither")
    Traceback (most recent call last):
    ...
    dpaudit.errors.InvalidParameterError: `epsilon` must be a number in (0, inf). Got 0.0.
    """
    if value is None and allow_none:
        return value
    kinds = kind if isinstance(kind, tuple) else (kind,)
    integers = kinds == (int,)
    noun = "an integer" if integers else "a number"
    lo = "-inf" if min_val is None else f"{min_val:g}"
    hi = "inf" if max_val is None else f"{max_val:g}"
    left = "[" if closed in ("both", "left") and min_val is not None else "("
    right = "]" if closed in ("both", "right") and max_val is not None else ")"
    constraint = f"{noun} in {left}{lo}, {hi}{right}"
    if min_val is None and max_val is None:
        constraint = f"a finite {noun[2:] if noun.startswith('a ') else noun[3:]}"
    number: int | float | None = None
    if not _is_bool(value):
        if isinstance(value, numbers.Integral):
            number = int(value)
        elif not integers and isinstance(value, numbers.Real):
            number = float(value)
    ok = number is not None and math.isfinite(number)
    if ok and min_val is not None:
        assert number is not None
        ok = number >= min_val if closed in ("both", "left") else number > min_val
    if ok and max_val is not None:
        assert number is not None
        ok = number <= max_val if closed in ("both", "right") else number < max_val
    require(ok, name, constraint, value)
    return number


def check_positive_int(value: Any, *, name: str) -> int:
    """``value`` as a Python ``int`` when it is an integer >= 1 (a NumPy integer
    too; never a bool).

    >>> check_positive_int(2, name="bins")
    2
    >>> check_positive_int(0, name="bins")
    Traceback (most recent call last):
    ...
    dpaudit.errors.InvalidParameterError: `bins` must be a positive integer. Got 0.
    """
    ok = not _is_bool(value) and isinstance(value, numbers.Integral) and int(value) >= 1
    require(ok, name, "a positive integer", value)
    return int(value)


def _is_bool(value: Any) -> bool:
    """Python's and NumPy's booleans (NumPy's is no ``bool`` subclass)."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def check_choice(value: T, name: str, choices: Collection[T]) -> T:
    """Checks that ``value`` is one of ``choices``; returns it.

    >>> check_choice("cpu", "device", ("auto", "cpu", "cuda"))
    'cpu'
    """
    require(value in choices, name, "one of " + ", ".join(map(str, choices)), value)
    return value


def is_text(value: Any) -> bool:
    """Whether ``value`` is a string that can be written as UTF-8: no lone surrogate
    (JSON's ``"\\ud800"`` escape, or a byte that is not UTF-8 in a command-line
    argument), which no report, CSV or terminal could write.

    >>> is_text("café"), is_text("a" + chr(0xD800)), is_text(3)
    (True, False, False)
    """
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


BUDGET_KEYS = ("epsilon", "delta")
"""The privacy budget: set with ``--epsilon`` and ``--delta``, never as an option."""


def check_no_budget_option(options: Mapping[str, Any]) -> None:
    """Refuses ``--option epsilon=...`` (or ``delta``): the budget is the claim an
    audit checks, passed to every generator as ``epsilon`` and ``delta``; an option of
    the same name would reach the generator twice.

    >>> check_no_budget_option({"lam": 0.1})
    >>> check_no_budget_option({"epsilon": 5})
    Traceback (most recent call last):
    ...
    dpaudit.errors.InvalidParameterError: `--option epsilon=5`: epsilon is set with --epsilon, not as a generator option; pass --epsilon 5 instead.

    Raises:
        InvalidParameterError: naming the option and the flag to use.
    """
    for key in BUDGET_KEYS:
        if key in options:
            value = options[key]
            raise InvalidParameterError(
                f"`--option {key}={value}`: {key} is set with --{key}, not as a "
                f"generator option; pass --{key} {value} instead."
            )
