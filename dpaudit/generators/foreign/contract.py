"""The plug-in contract's checks on a class, with the standard library alone.

Shared by the in-process :class:`~dpaudit.generators.plugins.PluginAdapter` and the
foreign worker (:mod:`dpaudit.generators.foreign.worker`), which runs under an
interpreter that may lack dpaudit's dependencies: this module imports nothing but
``inspect`` and ``numbers``.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

PUBLIC_SEED = "public_seed"


def python_number(value: Any) -> Any:
    """A NumPy number in a claim (``numpy.float32(1.0)``, ``numpy.int64(1)``) as the
    Python number it holds; any other value as it is. A number is a number
    (scikit-learn's rule): the claim stores Python numbers.

    >>> from fractions import Fraction
    >>> python_number(3), python_number("x"), python_number(Fraction(1, 2))
    (3, 'x', Fraction(1, 2))
    """
    if isinstance(value, numbers.Real) and not isinstance(value, int | float):
        item = getattr(value, "item", None)
        plain = item() if callable(item) else value
        if isinstance(plain, int | float):
            return plain
    return value


def plain_json(value: Any) -> Any:
    """``value`` with NumPy arrays and numbers (``.tolist()``, ``.item()``) and tuples
    made plain lists and Python numbers, recursively; anything else as it is (the
    caller's ``json.dumps`` refuses what is not JSON).

    >>> plain_json({"a": (1, 2.5), "b": [None, "x"]})
    {'a': [1, 2.5], 'b': [None, 'x']}
    """
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, (str, bytes)):
        value = tolist()
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return python_number(value)


def accepts_epsilon(cls: type) -> bool:
    """Whether the class's ``__init__`` takes an ``epsilon`` keyword (by name or
    through ``**kwargs``); a signature that cannot be read is given the benefit."""
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return True
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    ) or (
        "epsilon" in parameters
        and parameters["epsilon"].kind
        in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )


def init_keywords(cls: type) -> list[str] | None:
    """The keyword arguments the class's ``__init__`` accepts, by name; ``None`` when
    it takes ``**kwargs`` or its signature cannot be read (anything may be passed)."""
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return [
        name
        for name, p in parameters.items()
        if p.kind
        in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]


def accepts_public_seed(method: Callable[..., Any]) -> bool:
    """Whether ``method`` names a ``public_seed`` parameter (``**kwargs`` does not count:
    opting in is a promise, made explicitly)."""
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    parameter = parameters.get(PUBLIC_SEED)
    return parameter is not None and parameter.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def supports_public_seed(cls: type) -> bool:
    """Whether the plug-in class opts in to public randomness: both its ``fit`` and its
    ``sample`` accept ``public_seed``."""
    return all(
        accepts_public_seed(getattr(cls, method)) for method in ("fit", "sample")
    )


def contract_problem(cls: Any, name: str) -> str | None:
    """The message of the first contract rule ``cls`` breaks, or None: a class, whose
    ``__init__`` accepts ``epsilon`` and ``delta``, with callable ``fit`` and
    ``sample``."""
    if not isinstance(cls, type):
        return (
            f"generator {name!r} is a {type(cls).__name__}, not a class; name the "
            "plug-in's class (see docs/plugins.md)."
        )
    if not accepts_epsilon(cls):
        return (
            f"generator {name!r} breaks the plug-in contract: its `__init__` must "
            "accept the keyword arguments `epsilon` and `delta` (see docs/plugins.md)."
        )
    missing = [m for m in ("fit", "sample") if not callable(getattr(cls, m, None))]
    if missing:
        return (
            f"generator {name!r} breaks the plug-in contract: missing method(s) "
            f"{missing} (see docs/plugins.md)."
        )
    return None
