"""Numbers and JSON values as report text: one way to write each, in every format.

An epsilon has two decimals, other numbers three significant digits, a confidence is
a percentage and an alpha or delta is written as ``%g``; a missing value is an em
dash. HTML, Markdown, terminal text, JUnit and the figures all write numbers through
this module, so no two renderings of one result show a number differently.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "fmt_alpha",
    "fmt_eps",
    "fmt_number",
    "fmt_percent",
    "fmt_value",
    "fmt_versus",
]


def fmt_eps(value: float | None) -> str:
    """An epsilon with two decimals; an em dash when missing.

    Example:
        >>> fmt_eps(4.6789), fmt_eps(None), fmt_eps(float("inf"))
        ('4.68', '—', '∞')
    """
    if value is None or math.isnan(value):
        return "—"
    if math.isinf(value):
        return "∞"
    return f"{value:.2f}"


def fmt_versus(value: float | None, claimed: float | None) -> tuple[str, str]:
    """An epsilon (:func:`fmt_eps`) and the claim it is compared with
    (:func:`fmt_number`), with more digits where those would print a relation the
    numbers do not have: the printed pair compares as the numbers do.

    Example:
        >>> fmt_versus(1.001, 1.0), fmt_versus(0.957, 1.0), fmt_versus(0.9996, 1.0)
        (('1.001', '1'), ('0.96', '1'), ('1.00', '1'))
    """
    left, right = fmt_eps(value), fmt_number(claimed)
    if (
        value is None
        or claimed is None
        or not (math.isfinite(value) and math.isfinite(claimed))
    ):
        return left, right
    above = value > claimed
    for digits in range(2, 13):
        left = f"{value:.{digits}f}"
        right = fmt_number(claimed, max(3, digits + 1))
        if (float(left) > float(right)) == above:
            return left, right
    return repr(value), repr(claimed)


def fmt_number(value: float | None, digits: int = 3) -> str:
    """A number with ``digits`` significant digits; an em dash when missing.

    Example:
        >>> fmt_number(0.123456), fmt_number(3), fmt_number(True)
        ('0.123', '3', 'true')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}g}"


def fmt_percent(value: float) -> str:
    """``0.95`` -> ``95%`` (one decimal only when needed: ``97.5%``).

    Example:
        >>> fmt_percent(0.95), fmt_percent(0.975)
        ('95%', '97.5%')
    """
    pct = 100.0 * value
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"{pct:.3g}%"


def fmt_alpha(value: float | None) -> str:
    """An alpha or delta, as ``%g``."""
    return "—" if value is None else f"{value:g}"


def fmt_value(value: Any) -> str:
    """Any JSON value as short text (strings bare, the rest as JSON).

    Example:
        >>> fmt_value("a"), fmt_value(None), fmt_value({"k": (1, 2)})
        ('a', '—', '{"k": [1, 2]}')
    """
    if isinstance(value, str):
        return value
    if value is None:
        return "—"
    if isinstance(value, float):
        return fmt_number(value, 6)
    if isinstance(value, Mapping):
        value = dict(value)
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(_plain(value), sort_keys=False, default=str)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
