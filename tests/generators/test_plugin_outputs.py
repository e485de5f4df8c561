"""A plug-in's outputs are checked at the boundary: its claim and its release are
refused with one error naming the plug-in and the field, before any result."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpaudit.data import worst_case_domain
from dpaudit.errors import PluginError
from dpaudit.generators.plugins import PluginAdapter, check_claim, check_release
from dpaudit.rng import Rngs


@pytest.mark.parametrize(
    ("claim", "field"),
    [
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": "abc"}, "epsilon"),
        ({"epsilon": math.nan}, "epsilon"),
        ({"epsilon": math.inf}, "epsilon"),
        ({"epsilon": True}, "epsilon"),
        ({"epsilon": None}, "epsilon"),
        ({"epsilon": 1.0, "delta": 5}, "delta"),
        ({"epsilon": 1.0, "delta": 1.0}, "delta"),
        ({"epsilon": 1.0, "delta": -1e-9}, "delta"),
        ({"epsilon": 1.0, "delta": "0"}, "delta"),
        ({"epsilon": 1.0, "delta": math.nan}, "delta"),
    ],
)
def test_invalid_claims_name_the_plugin_and_the_field(claim, field: str) -> None:
    with pytest.raises(
        PluginError, match=rf"generator 'my:Gen'.*privacy_claim\['{field}'\]"
    ):
        check_claim(claim, "my:Gen")


@pytest.mark.parametrize("claim", [None, [], {"delta": 0.0}, "epsilon=1"])
def test_a_missing_claim_is_refused(claim) -> None:
    with pytest.raises(PluginError, match="must be a dict with 'epsilon'"):
        check_claim(claim, "my:Gen")


def test_a_valid_claim_is_kept() -> None:
    claim = check_claim({"epsilon": 2, "delta": 1e-5, "accountant": "rdp"}, "my:Gen")
    assert (claim.epsilon, claim.delta, claim.accountant) == (2.0, 1e-5, "rdp")
    assert check_claim({"epsilon": 0}, "my:Gen").delta == 0.0


def _release() -> pd.DataFrame:
    return pd.DataFrame({"a": [0, 1, 1], "b": [0, 0, 1], "c": [1, 0, 1]})


def _bad(column: str, row: int, value: object) -> pd.DataFrame:
    out = _release().astype(object)
    out.loc[row, column] = value
    return out


@pytest.mark.parametrize(
    ("release", "message"),
    [
        (_bad("a", 0, math.nan), "missing values"),
        (_bad("b", 1, 7), "binary but has the value 7.0"),
        (_bad("c", 2, "x"), "non-numeric value 'x'"),
        (_release().iloc[:2], "the 3 rows asked for. Got 2"),
        (_release()[["b", "a", "c"]], "columns ['a', 'b', 'c']"),
        (np.zeros((3, 3)), "Got ndarray"),
    ],
)
def test_invalid_releases_are_refused(release, message: str) -> None:
    with pytest.raises(PluginError, match="generator 'my:Gen'") as info:
        check_release(
            release,
            "my:Gen",
            columns=["a", "b", "c"],
            domain=worst_case_domain(),
            rows=3,
        )
    assert message in str(info.value)


def test_a_valid_release_passes_unchanged() -> None:
    release = _release()
    assert (
        check_release(
            release,
            "my:Gen",
            columns=["a", "b", "c"],
            domain=worst_case_domain(),
            rows=3,
        )
        is release
    )


class _Raises:
    def __init__(self, *, epsilon: float, delta: float = 0.0) -> None:
        pass

    def fit(self, data: pd.DataFrame, *, domain: dict, seed: int) -> None:
        raise KeyError("column")

    def sample(self, n: int, *, seed: int) -> pd.DataFrame:
        raise AssertionError


def test_an_exception_inside_the_plugin_becomes_a_plugin_error() -> None:
    adapter = PluginAdapter(_Raises, "my:Raises", epsilon=1.0, delta=0.0)
    data = pd.DataFrame(np.zeros((4, 3), dtype=np.int64), columns=["a", "b", "c"])
    with pytest.raises(PluginError, match=r"'my:Raises': its `fit` raised KeyError"):
        adapter.fit(data, domain=worst_case_domain(), rng=Rngs.from_seed(0))
    with pytest.raises(PluginError, match=r"its `__init__` raised TypeError"):
        PluginAdapter(_Raises, "my:Raises", lam=1.0).fit(
            data, domain=worst_case_domain(), rng=Rngs.from_seed(0)
        )
