"""A setting declared as data: :class:`Key` (a setting), its constraint
(:class:`Interval`, a number, or :class:`Choices`, one of fixed names) and what it
requires of other settings (:class:`Requires`). :data:`dpaudit.audit.config.keys.AUDIT_KEYS` declares each
setting's; the command line's help text and choices are derived from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpaudit.audit.config.names import GAMES
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import Closed, check_choice, check_scalar, require

__all__ = [
    "ALL_GAMES",
    "GROUPS",
    "ONE_RUN",
    "TWO_WORLD",
    "Choices",
    "Constraint",
    "Interval",
    "Key",
    "Requires",
]


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


@dataclass(frozen=True, kw_only=True, slots=True)
class Requires:
    """A condition one setting puts on another: ``key`` must be one of ``values``
    (or, with ``negate``, none of them) for the setting that requires it to apply.

    Attributes:
        key: the other setting (a configuration field).
        values: the values that meet the condition (or, negated, that do not).
        negate: the condition is "not one of ``values``".
        fix: the other setting as a user writes it (``--backend dask``).
    """

    key: str
    values: tuple[Any, ...]
    negate: bool = False
    fix: str

    def met(self, value: Any) -> bool:
        """Whether the other setting's ``value`` meets the condition."""
        return (value in self.values) != self.negate


Group = str
GROUPS: tuple[Group, ...] = (
    "what is audited",
    "data and target",
    "the game",
    "the one-run game",
    "attacks and statistics",
    "execution",
    "output",
)
"""The option groups of ``dpaudit audit --help``, in order."""

ALL_GAMES: tuple[str, ...] = GAMES
TWO_WORLD: tuple[str, ...] = ("two-world",)
ONE_RUN: tuple[str, ...] = ("one-run",)


@dataclass(frozen=True, kw_only=True, slots=True)
class Key:
    """One setting: a TOML key, the flag of the same name and, unless it is a
    setting of the command only (``out``, ``force``, ``quiet``), a configuration
    field.

    Attributes:
        name: the TOML key; the flag is ``--`` + ``name`` with dashes.
        help: the flag's help text (what it does; the constraint, the game and the
            requirements are added from the other attributes).
        group: its option group (:data:`GROUPS`).
        kind: the value's type: ``str``, ``int``, ``float``, ``bool`` (a switch),
            ``list`` (a repeatable flag; a TOML list), ``options`` (repeatable
            ``KEY=VALUE``; a TOML table), ``split`` (``TRAIN,VALIDATION,TEST``; a
            TOML list of three numbers) or ``record`` (JSON text; a TOML table).
        field: the :class:`~dpaudit.audit.config.model.AuditConfig` field it sets
            (``""``: the field called ``name``), or ``None`` for a setting of the
            command.
        constraint: the value's interval or choices, checked on construction.
        aliases: other TOML names of the key (the configuration's field names).
        metavar: the flag's value in ``--help`` (default: from ``kind``).
        games: the games that use it: set with another game, it is refused.
        requires: conditions on other settings; set while one is unmet, it is
            refused (a setting is set when it differs from its default).
        requires_any: conditions of which at least one must be met.
        requires_games: the games in which ``requires`` and ``requires_any``
            apply (default: every game that uses the key).
        run_setting: where and how the audit runs, not what it computes: left out
            of the audit's identity, and ``--resume`` may change it.
        resume_repeat: ``--resume`` may name it again, equal to the stored value
            (a plug-in's ``--generator``, so that no module is imported unasked).
    """

    name: str
    help: str
    group: Group
    kind: str = "str"
    field: str | None = ""
    constraint: Constraint | None = None
    aliases: tuple[str, ...] = ()
    metavar: str | None = None
    games: tuple[str, ...] = ALL_GAMES
    requires: tuple[Requires, ...] = ()
    requires_any: tuple[Requires, ...] = ()
    requires_games: tuple[str, ...] = ALL_GAMES
    run_setting: bool = False
    resume_repeat: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def target(self) -> str | None:
        """The configuration field (its own name unless told otherwise)."""
        return self.name if self.field == "" else self.field

    def full_help(self) -> str:
        """The help text with what the table adds: the constraint, the game and
        the requirements."""
        text = self.help
        if isinstance(self.constraint, Interval):
            text = f"{text}; {self.constraint.describe()}"
        if self.games != ALL_GAMES:
            text = f"{text} [--game {', '.join(self.games)} only]"
        where = (
            ""
            if self.requires_games == ALL_GAMES
            else f" with --game {', '.join(self.requires_games)}"
        )
        for need in self.requires:
            text = f"{text} [needs {need.fix}{where}]"
        if self.requires_any:
            needs = " or ".join(n.fix for n in self.requires_any)
            text = f"{text} [needs {needs}{where}]"
        return text
