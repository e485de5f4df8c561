"""The one validation helper set (dpaudit/validation.py): NumPy scalars are numbers,
booleans never are, and every message follows the template."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_positive_int, check_scalar


@pytest.mark.parametrize("value", [3, np.int64(3), np.int32(3), np.uint8(3)])
def test_integers_of_any_kind_pass_as_python_ints(value: object) -> None:
    out = check_scalar(value, "rounds", kind=int, min_val=1)
    assert out == 3 and type(out) is int
    assert type(check_positive_int(value, name="rounds")) is int


@pytest.mark.parametrize("value", [0.5, np.float64(0.5), np.float32(0.5), np.int64(0)])
def test_reals_of_any_kind_pass_as_python_numbers(value: object) -> None:
    out = check_scalar(value, "delta", min_val=0, max_val=1, closed="left")
    assert out == float(value) and type(out) in (int, float)


@pytest.mark.parametrize(
    "value", [True, np.bool_(True), "3", None, 3.0, np.float64(3.0), math.nan]
)
def test_non_integers_are_refused_where_an_integer_is_asked(value: object) -> None:
    with pytest.raises(
        InvalidParameterError,
        match=r"^`rounds` must be an integer in "
        r"\[1, inf\)\. Got ",
    ):
        check_scalar(value, "rounds", kind=int, min_val=1)


@pytest.mark.parametrize(
    "value",
    [np.float64(math.inf), np.float32(math.nan), np.bool_(False), -1, np.int64(2)],
)
def test_out_of_range_or_non_finite_reals_are_refused(value: object) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"^`delta` must be a number in \[0, 1\)"
    ):
        check_scalar(value, "delta", min_val=0, max_val=1, closed="left")


@pytest.mark.parametrize("value", [0, -2, True, np.bool_(True), 1.0, "2"])
def test_positive_int_refuses(value: object) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"^`bins` must be a positive integer\. Got "
    ):
        check_positive_int(value, name="bins")
