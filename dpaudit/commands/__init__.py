"""The ``dpaudit`` sub-commands, one module each, and what they share.

Each module offers ``run(args) -> int`` (an exit code); ``dpaudit.cli`` parses the
arguments and dispatches. The commands name no generator: they ask
:mod:`dpaudit.generators.registry`.

Exit codes: 0 success (for ``check``: no violation), 1 violation found (``check``),
2 bad input or a failed run.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from dpaudit.generators.base import DEFAULT_DELTA, DEFAULT_EPSILON
from dpaudit.validation import require

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR = 0, 1, 2

__all__ = ["DEFAULT_DELTA", "DEFAULT_EPSILON", "EXIT_ERROR", "EXIT_OK", "EXIT_VIOLATION",
           "budget", "parse_option", "parse_options"]


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> ``(key, value)``: the value parsed as JSON when it is JSON
    (numbers, booleans, lists), else kept as text; dashes in the key become
    underscores.

    >>> parse_option("max-iterations=3")
    ('max_iterations', 3)

    Raises:
        InvalidParameterError: ``text`` has no ``=`` or no key.
    """
    key, sep, raw = text.partition("=")
    require(bool(sep and key), "--option", "KEY=VALUE", text)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.replace("-", "_"), value


def parse_options(texts: list[str] | None) -> dict[str, Any]:
    """Every ``--option KEY=VALUE`` as a dict (later keys win)."""
    return dict(parse_option(text) for text in (texts or []))


def budget(args: argparse.Namespace) -> tuple[float, float]:
    """``(epsilon, delta)`` of the command line, :data:`DEFAULT_EPSILON` and
    :data:`DEFAULT_DELTA` where unset."""
    epsilon = DEFAULT_EPSILON if args.epsilon is None else args.epsilon
    delta = DEFAULT_DELTA if args.delta is None else args.delta
    return epsilon, delta
