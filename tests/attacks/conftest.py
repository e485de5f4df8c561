"""Fixtures of the attack tests: small domains, targets and random released tables."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from dpaudit.data import Column, Domain
from dpaudit.worst_case.datasets import worst_case_domain, worst_case_target

TableFactory = Callable[[np.random.Generator, int, int], list[pd.DataFrame]]


@pytest.fixture
def mixed_domain() -> Domain:
    """One column of each kind: x continuous [0, 10], y integer [0, 4], z binary,
    c categorical (a, b, c)."""
    return Domain(
        (
            Column(name="x", kind="continuous", lower=0.0, upper=10.0),
            Column(name="y", kind="integer", lower=0.0, upper=4.0),
            Column(name="z", kind="binary"),
            Column(name="c", kind="categorical", categories=("a", "b", "c")),
        )
    )


@pytest.fixture
def mixed_table() -> pd.DataFrame:
    """Four rows in ``mixed_domain`` whose features the tests compute by hand."""
    return pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, 10.0],
            "y": [0, 4, 4, 0],
            "z": [0, 1, 1, 1],
            "c": ["a", "c", "c", "b"],
        }
    )


@pytest.fixture
def mixed_target() -> pd.DataFrame:
    return pd.DataFrame({"x": [5.0], "y": [2], "z": [1], "c": ["a"]})


@pytest.fixture
def worst_domain() -> Domain:
    """The study's worst case: three binary columns a, b, c."""
    return worst_case_domain()


@pytest.fixture
def worst_target(worst_domain: Domain) -> pd.DataFrame:
    """The worst case's target (1, 1, 1)."""
    return worst_case_target(worst_domain)


@pytest.fixture
def random_tables(mixed_domain: Domain) -> TableFactory:
    """``factory(gen, count, n)``: ``count`` random tables of ``n`` rows in
    ``mixed_domain`` (uniform x, uniform integer y, fair z, uniform c)."""

    def factory(gen: np.random.Generator, count: int, n: int) -> list[pd.DataFrame]:
        tables = []
        for _ in range(count):
            tables.append(
                pd.DataFrame(
                    {
                        "x": gen.uniform(0.0, 10.0, n),
                        "y": gen.integers(0, 5, n),
                        "z": gen.integers(0, 2, n),
                        "c": gen.choice(np.array(["a", "b", "c"], dtype=object), n),
                    }
                )
            )
        return tables

    return factory
