"""What every adapter of a foreign library shares (docs/adapters.md).

Adapters are plain plug-ins (docs/plugins.md). They run in a worker process, possibly
under another interpreter where only the wrapped library, numpy and pandas are
installed, so this module imports only the standard library, numpy and pandas; torch
is imported where the library brought it.

Foreign libraries draw from the global generators of ``random``, numpy and torch, so
an adapter seeds them from the round's seed before every call: that is what makes a
seedable library's rounds reproducible. This is the one place in dpaudit that touches
global random state on purpose.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

PREPROCESSING = ("public", "library")


class AdapterInputError(ValueError):
    """Bad input to an adapter (an option, a budget, a table too small for the
    library): the user's to fix. dpaudit reports it as bad input (exit 2); any other
    failure inside an adapter is reported as dpaudit's own (exit 3, "report it")."""


def seed_globals(seed: int) -> None:
    """Seeds every global generator a foreign library draws from: ``random``, numpy's
    legacy global generator and torch's (where torch is installed), each from its own
    word of a :class:`numpy.random.SeedSequence` of ``seed``."""
    seed_numpy(seed)
    seed_torch(seed)


def seed_torch(seed: int) -> None:
    """Seeds only torch's global generator (where torch is installed)."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return
    word = np.random.SeedSequence([int(seed), 1]).generate_state(1, dtype=np.uint64)[0]
    torch.manual_seed(int(word) >> 1)


def seed_numpy(seed: int) -> None:
    """Seeds only numpy's legacy global generator (and ``random``)."""
    words = np.random.SeedSequence([int(seed), 2]).generate_state(2, dtype=np.uint32)
    importlib.import_module("random").seed(int(words[0]))
    np.random.seed(int(words[1]))  # noqa: NPY002 (the library's global generator)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Sends what the library prints to standard error: standard output may carry the
    worker's protocol, and libraries print progress (AIM prints its sigma)."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def import_library(module: str, *, package: str, extra: str | None = None) -> Any:
    """Imports the wrapped library, or says in one line how to get it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        how = f"pip install 'dpaudit[{extra}]'" if extra else f"pip install {package}"
        raise ImportError(
            f"{package} is not importable by {sys.executable} ({err}). Install it "
            f"({how}), or build its own environment (`dpaudit env NAME`, "
            "`dpaudit env --list`) and pass --python PATH_TO_THAT_PYTHON "
            "(docs/adapters.md)."
        ) from err


def installed(distribution: str) -> str:
    """``smartnoise-synth 1.0.8``: the distribution's name and its installed version
    (read from the interpreter that runs the adapter), for the claim's ``library``
    key and every report's versions line."""
    try:
        version = importlib.import_module("importlib.metadata").version(distribution)
    except Exception:
        return f"{distribution} (version unknown)"
    return f"{distribution} {version}"


def check_epsilon(epsilon: Any) -> float:
    """The budget ``epsilon``, checked: a finite number > 0."""
    if not (
        isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0
    ):
        raise AdapterInputError(
            f"`epsilon` must be a finite number > 0. Got {epsilon!r}."
        )
    return float(epsilon)


def check_preprocessing(value: Any) -> str:
    """The ``preprocessing`` option, checked."""
    if value not in PREPROCESSING:
        raise AdapterInputError(
            f"`preprocessing` must be one of {list(PREPROCESSING)}. Got {value!r}."
        )
    return str(value)


def columns_of(domain: dict[str, Any]) -> list[dict[str, Any]]:
    """The domain's columns (the plug-in protocol's JSON form)."""
    columns = domain.get("columns")
    if not isinstance(columns, list) or not columns:
        raise AdapterInputError(
            "`domain` must be {'columns': [...]} with at least one column."
        )
    return columns


def small_integer_range(col: dict[str, Any], limit: int = 150) -> list[int] | None:
    """The values of an integer column with public bounds, when they are few enough to
    be treated as categories (the libraries' own rule for ordinals: under 150)."""
    lower, upper = col.get("lower"), col.get("upper")
    if lower is None or upper is None:
        return None
    lo, hi = math.ceil(float(lower)), math.floor(float(upper))
    if hi < lo or hi - lo + 1 > limit:
        return None
    return list(range(lo, hi + 1))


def category_values(col: dict[str, Any]) -> list[Any] | None:
    """The public values of a discrete column (binary, categorical, small integer);
    None for a column treated as continuous."""
    kind = col["kind"]
    if kind == "binary":
        return [0, 1]
    if kind == "categorical":
        return list(col["categories"])
    if kind == "integer":
        return small_integer_range(col)
    return None


def public_frame(domain: dict[str, Any]) -> pd.DataFrame:
    """A table built from the public domain alone: every category of every discrete
    column and both bounds of every numeric one, cycled to a common length.

    Fitting a library's encoders on this table instead of on the private data makes
    them a function of the domain: nothing is read from the records.
    """
    columns = columns_of(domain)
    values: dict[str, list[Any]] = {}
    for col in columns:
        cats = category_values(col)
        if cats is None:
            cats = [col["lower"], col["upper"]]
        values[col["name"]] = cats
    rows = max(len(v) for v in values.values())
    return pd.DataFrame(
        {name: [v[i % len(v)] for i in range(rows)] for name, v in values.items()}
    )


def cast_release(out: Any, domain: dict[str, Any]) -> pd.DataFrame:
    """The library's release as a DataFrame with the domain's columns, in order, each
    cast to its kind: the library's decoded values (bin midpoints, rescaled floats) are
    clipped into the public bounds and integer columns rounded; a missing cell (None or
    NaN: pac-synth leaves cells empty) becomes the column's first public value (0, the
    first category, the lower bound). Post-processing only.
    """
    columns = columns_of(domain)
    names = [c["name"] for c in columns]
    frame = (
        out if isinstance(out, pd.DataFrame) else pd.DataFrame(list(out), columns=names)
    )
    frame = frame.reset_index(drop=True)
    if list(frame.columns) != names:
        frame.columns = names
    result: dict[str, Any] = {}
    for col in columns:
        series = frame[col["name"]]
        kind = col["kind"]
        if kind == "categorical":
            cats = list(col["categories"])
            result[col["name"]] = pd.Series(
                [
                    cats[0] if _missing(v) else _nearest_category(v, cats)
                    for v in series
                ],
                dtype=object,
            ).infer_objects()
            continue
        numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
        if kind == "binary":
            result[col["name"]] = (np.nan_to_num(numbers) >= 0.5).astype(np.int64)
            continue
        lower, upper = float(col["lower"]), float(col["upper"])
        numbers = np.clip(np.nan_to_num(numbers, nan=lower), lower, upper)
        if kind == "integer":
            lo, hi = math.ceil(lower), math.floor(upper)
            result[col["name"]] = np.clip(np.rint(numbers), lo, hi).astype(np.int64)
        else:
            result[col["name"]] = numbers
    return pd.DataFrame(result, columns=names)


def _missing(value: Any) -> bool:
    """Whether a released cell is empty (None or a float NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _nearest_category(value: Any, categories: list[Any]) -> Any:
    """The category equal to ``value`` (numbers compared by value, so 1.0 is 1); a
    value that is no category is returned as it is, for dpaudit's check of the
    release to report."""
    for cat in categories:
        if value == cat:
            return cat
        try:
            if float(value) == float(cat):
                return cat
        except (TypeError, ValueError):
            continue
    return value


def rdp_curve(orders: Any, epsilons: Any) -> tuple[dict[str, list[float]] | None, int]:
    """A library's RDP values as a claim's ``rdp`` (docs/plugins.md): the orders
    (sorted) where the value is a finite number >= 0, and how many orders were left
    out (an infinite, NaN or negative value states nothing a claim can carry; a
    curve at fewer orders is a weaker statement of the same accountant). None when
    no order is left.

    >>> rdp_curve([3, 2, 4], [0.3, 0.2, float("nan")])
    ({'orders': [2.0, 3.0], 'epsilons': [0.2, 0.3]}, 1)
    """
    pairs = sorted(
        (float(a), float(e))
        for a, e in zip(
            np.asarray(orders, dtype=float).ravel().tolist(),
            np.asarray(epsilons, dtype=float).ravel().tolist(),
            strict=True,
        )
    )
    kept = [(a, e) for a, e in pairs if a > 1 and math.isfinite(e) and e >= 0]
    # Strictly increasing orders: a repeated order keeps its largest value.
    merged: dict[float, float] = {}
    for a, e in kept:
        merged[a] = max(e, merged.get(a, e))
    if not merged:
        return None, len(pairs)
    order = sorted(merged)
    return (
        {"orders": order, "epsilons": [merged[a] for a in order]},
        len(pairs) - len(order),
    )


def moments_rdp(moments: Any) -> tuple[dict[str, list[float]] | None, int]:
    """A PATE moments accountant's log-moments ``alpha(l)``, ``l = 1..L``, as the RDP
    curve they state: ``alpha(l) / l`` at order ``l + 1`` (docs/formulas.md).

    >>> moments_rdp([1.0, 3.0])
    ({'orders': [2.0, 3.0], 'epsilons': [1.0, 1.5]}, 0)
    """
    alpha = np.asarray(moments, dtype=float).ravel()
    ls = np.arange(1, alpha.size + 1, dtype=float)
    return rdp_curve(ls + 1.0, alpha / ls)


def compose_pure_dp(
    curve: dict[str, list[float]] | None, epsilon: float
) -> dict[str, list[float]] | None:
    """``curve`` composed with a pure ``epsilon``-DP step (a library's private bounds):
    ``+ min(epsilon, a epsilon^2 / 2)`` at each order ``a`` (pure DP implies
    ``epsilon^2 / 2``-zCDP, Bun and Steinke 2016, Prop. 3.3, and RDP at most
    ``epsilon``).

    >>> compose_pure_dp({"orders": [2.0], "epsilons": [0.1]}, 0.5)
    {'orders': [2.0], 'epsilons': [0.35]}
    """
    if curve is None or epsilon <= 0:
        return curve
    return {
        "orders": list(curve["orders"]),
        "epsilons": [
            e + min(epsilon, a * epsilon * epsilon / 2.0)
            for a, e in zip(curve["orders"], curve["epsilons"], strict=True)
        ],
    }
