"""The records adapters build from a library's measurements (no library needed)."""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.adapters._common import AdapterInputError
from dpaudit.adapters._transcript import Transcript, check_measure_only, public_value


def test_a_marginal_is_written_in_public_values_in_c_order() -> None:
    t = Transcript(["a", "k"], [[0, 1], ["u", "v", "w"]])
    t.add_marginal([1, 0], np.arange(6.0), {"gaussian": 2.0})
    (record,) = t.records
    assert record == {
        "columns": ["k", "a"],
        "cells": [["u", 0], ["u", 1], ["v", 0], ["v", 1], ["w", 0], ["w", 1]],
        "noisy": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        "noise": {"gaussian": 2.0},
    }


def test_merged_codes_become_sets_of_distinct_cells() -> None:
    t = Transcript(["k"], [["u", "v", "w"]])
    t.add_marginal([0], [5.0, 1.5], {"gaussian": 1.0}, groups=[[[0], [1, 2]]])
    (record,) = t.records
    assert record["cells"] == [["u"], ["v"], ["w"]]
    assert record["sets"] == [[0], [1, 2]]
    assert record["noisy"] == [5.0, 1.5]


def test_binned_columns_are_left_out_and_null_cells_dropped() -> None:
    t = Transcript(["a", "x"], [[0, 1, None], None])
    t.add_marginal([1], [1.0, 2.0], {"laplace": 1.0})
    t.add_marginal([0, 1], [1.0] * 6, {"laplace": 1.0})
    assert t.records == [] and t.left_out == 2
    t.add_marginal([0], [3.0, 4.0, 0.5], {"laplace": 1.0})
    assert t.records[0]["cells"] == [[0], [1]]
    assert t.records[0]["noisy"] == [3.0, 4.0]


def test_a_misread_measurement_is_refused() -> None:
    t = Transcript(["a"], [[0, 1]])
    with pytest.raises(ValueError, match="noisy values"):
        t.add_marginal([0], [1.0, 2.0, 3.0], {"gaussian": 1.0})


def test_library_values_map_to_the_domains() -> None:
    assert public_value(np.float64(1.0), [0, 1]) == 1
    assert type(public_value(np.int64(1), [0, 1])) is int
    assert public_value("2", [1, 2]) == 2
    assert public_value("z", ["x", "y"]) == "z"


def test_measure_only_is_checked() -> None:
    class Stops:
        stops, records = True, "x"

    class Runs:
        stops, records = False, "x"

    assert check_measure_only(True, Stops()) is True
    with pytest.raises(AdapterInputError, match="interleave"):
        check_measure_only(True, Runs())
    with pytest.raises(AdapterInputError, match="true or false"):
        check_measure_only("yes", Stops())
