"""The audit configuration's simple constraints, declared once as data (scikit-learn's
``_parameter_constraints``): each field's interval or choices.
:meth:`dpaudit.audit.config.model.AuditConfig.__post_init__` checks them, and the command
line's help text and choices are derived from them. No heavy imports: the parser
reads this table before anything is trained. Constraints between fields (``split``,
``scheduler`` with ``dask``, ``public_seed``, ``target``) stay in ``__post_init__``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from dpaudit.attacks.names import ATTACK_NAMES, SET_NAMES
from dpaudit.audit.config.names import (
    BACKENDS,
    GAMES,
    RANDOMNESS_MODES,
    RELEASES,
    TEACHERS,
)
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.names import DEVICES
from dpaudit.validation import Closed, check_choice, check_scalar, require

__all__ = ["AUDIT_CONSTRAINTS", "Choices", "Constraint", "Interval"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Interval:
    """A number in an interval.

    Attributes:
        integer: integers only (any ``numbers.Integral``: NumPy's too, never a bool).
        low, high: the bounds (None: unbounded on that side).
        closed: which bounds are included.
        optional: ``None`` is allowed (the field's default then applies).
    """

    integer: bool = False
    low: float | None = None
    high: float | None = None
    closed: Closed = "both"
    optional: bool = False

    def describe(self) -> str:
        """The constraint in words, as error messages and ``--help`` say it.

        >>> Interval(integer=True, low=5).describe()
        'an integer >= 5'
        >>> Interval(low=0, high=0.5, closed="neither").describe()
        'a number in (0, 0.5)'
        """
        if self.integer and self.high is None and self.low is not None:
            sign = ">=" if self.closed in ("both", "left") else ">"
            return f"an integer {sign} {self.low:g}"
        noun = "an integer" if self.integer else "a number"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = (
            "]" if self.closed in ("both", "right") and self.high is not None else ")"
        )
        return f"{noun} in {left}{lo}, {hi}{right}"

    def check(self, value: Any, name: str) -> Any:
        """``value`` as a Python number (or None when optional).

        Raises:
            InvalidParameterError: ``value`` is not such a number (naming ``name``).
        """
        if value is None and self.optional:
            return None
        if not self.integer:
            return check_scalar(
                value, name, min_val=self.low, max_val=self.high, closed=self.closed
            )
        try:
            number: int | None = check_scalar(value, name, kind=int)
        except InvalidParameterError:
            number = None
        # One message for every failure: the constraint as --help says it.
        ok = number is not None and self._contains(number)
        require(ok, name, self.describe(), value)
        return number

    def _contains(self, number: float) -> bool:
        include_low = self.closed in ("both", "left")
        include_high = self.closed in ("both", "right")
        above = (
            self.low is None
            or number > self.low
            or (include_low and number == self.low)
        )
        below = (
            self.high is None
            or number < self.high
            or (include_high and number == self.high)
        )
        return above and below


@dataclass(frozen=True, kw_only=True, slots=True)
class Choices:
    """One of fixed names.

    Attributes:
        values: the allowed names (a ``Literal``'s ``get_args``, declared where the
            name is owned).
    """

    values: tuple[str, ...]

    def describe(self) -> str:
        """``one of a, b, c``."""
        return "one of " + ", ".join(self.values)

    def check(self, value: Any, name: str) -> Any:
        """``value`` when it is one of :attr:`values`.

        Raises:
            InvalidParameterError: naming ``name`` and the choices.
        """
        return check_choice(value, name, self.values)


Constraint = Interval | Choices

AUDIT_CONSTRAINTS: Mapping[str, Constraint] = MappingProxyType(
    {
        "attack": Choices(values=(*ATTACK_NAMES, *SET_NAMES)),
        "rounds": Interval(integer=True, low=5),
        "epsilon": Interval(low=0, closed="neither"),
        "delta": Interval(low=0, high=1, closed="left"),
        "synthetic_rows": Interval(integer=True, low=1, optional=True),
        "batch_size": Interval(integer=True, low=1),
        "backend": Choices(values=BACKENDS),
        "device": Choices(values=DEVICES),
        "seed": Interval(integer=True, low=0),
        "alpha": Interval(low=0, high=0.5, closed="neither"),
        "candidates": Interval(integer=True, low=1),
        "selection_rounds": Interval(integer=True, low=5),
        "randomness": Choices(values=RANDOMNESS_MODES),
        "public_candidates": Interval(integer=True, low=2),
        "dataset_rows": Interval(integer=True, low=2, optional=True),
        "fit_timeout": Interval(low=0, closed="neither"),
        "max_memory": Interval(integer=True, low=1, optional=True),
        "release": Choices(values=RELEASES),
        "game": Choices(values=GAMES),
        "canaries": Interval(integer=True, low=2),
        "fits": Interval(integer=True, low=1),
        "guesses": Interval(integer=True, low=1, optional=True),
        "guesses_out": Interval(integer=True, low=0, optional=True),
        "teachers": Choices(values=TEACHERS),
    }
)
"""Field of :class:`~dpaudit.audit.config.model.AuditConfig` -> its constraint."""
