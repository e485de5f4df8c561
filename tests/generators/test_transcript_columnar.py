"""A transcript moved in columns (``columnar.py``: arrays as raw bytes, checked with
NumPy) is read exactly as the same transcript stated in JSON: the same records, or
the same one-line refusal. Differential: every case is checked both ways, the JSON
way being the plain per-value checks of ``transcript.py``."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.attacks.measurements import MeasurementAttack
from dpaudit.data import Domain
from dpaudit.errors import PluginError
from dpaudit.generators.foreign import columnar, wire
from dpaudit.generators.foreign.contract import plain_json
from dpaudit.generators.foreign.transcript import (
    Cells,
    Measurement,
    check_transcript,
)

DOMAIN = Domain.from_json(
    {
        "columns": [
            {"name": "a", "kind": "binary"},
            {"name": "c", "kind": "categorical", "categories": ["x", "y", "1"]},
            {"name": "d", "kind": "integer", "lower": 0, "upper": 10},
            {"name": "e", "kind": "continuous", "lower": -1.0, "upper": 1.0},
        ]
    }
)


def _outcome(raw: Any, *, exact: bool = False) -> Any:
    """What the checks make of ``raw``: the records' (columns, cells, noisy, noise,
    scale, sets), or the refusal's line."""
    try:
        records = check_transcript(raw, "g", domain=DOMAIN, exact=exact)
    except PluginError as err:
        return str(err)
    if records is None:
        return None
    return [
        (m.columns, list(m.cells), m.noisy, m.noise, m.scale, m.sets) for m in records
    ]


def _over_the_wire(value: Any) -> Any:
    """``value`` split, its header through JSON and its arrays through bytes, as
    the worker sends it, then joined as the parent reads it."""
    header, arrays = columnar.split(value)
    message = wire.pack(
        {"t": header}, [np.ascontiguousarray(a).tobytes() for a in arrays]
    )
    buffer = wire.MessageBuffer()
    buffer.feed(message)
    found = buffer.message()
    assert found is not None
    reply, blobs = found
    return columnar.join(reply["t"], blobs)


def _both(value: Any, *, exact: bool = False) -> tuple[Any, Any]:
    """(the JSON way's outcome, the columnar way's outcome)."""
    old = _outcome(plain_json(value), exact=exact)
    new = _outcome(_over_the_wire(value), exact=exact)
    return old, new


def _record(cells: Any, noisy: Any = None, **extra: Any) -> dict[str, Any]:
    columns = extra.pop("columns", ["d"])
    if noisy is None:
        noisy = [0.5] * len(cells)
    return {
        "columns": columns,
        "cells": cells,
        "noisy": noisy,
        "noise": {"gaussian": 1.0},
        **extra,
    }


CASES = {
    "good ints": [_record([[0], [3], [10]])],
    "good array": [_record(np.arange(11).reshape(-1, 1), np.zeros(11))],
    "good int answers": [_record([[1], [2]], [3, 4])],
    "two columns": [_record([[0, "x"], [1, "y"]], columns=["a", "c"])],
    "strings array": [
        _record(np.array([["x"], ["y"], ["1"]]), np.ones(3), columns=["c"])
    ],
    "floats": [_record([[0.5], [-1.0], [1.0]], columns=["e"])],
    "integer as float": [_record([[1.0], [2.0]])],
    "not an integer": [_record([[1], [2.5]])],
    "out of bounds": [_record([[1], [2], [11]])],
    "negative": [_record(np.array([[3], [-1]]), [0.0, 1.0])],
    "not binary": [_record([[0], [2]], columns=["a"])],
    "not a category": [_record([["x"], ["w"]], columns=["c"])],
    "number for a category": [_record([["x"], [1]], columns=["c"])],
    "string for a number": [_record([[1], ["2"]])],
    "all strings for a number": [_record([["1"], ["2"]])],
    "repeated": [_record([[1], [2], [1]])],
    "repeated pair": [_record([[0, "x"], [1, "x"], [0, "x"]], columns=["a", "c"])],
    "repeat before a bad value": [_record([[1], [1], [12]])],
    "bad value before a repeat": [_record([[1], [12], [1]])],
    "repeat as float": [_record([[1], [1.0]])],
    "minus zero": [_record([[0.0], [-0.0]], columns=["e"])],
    "nan cell": [_record([[0.5], [float("nan")]], columns=["e"])],
    "nan answer": [_record([[1], [2]], [0.0, float("nan")])],
    "inf answer": [_record(np.array([[1], [2]]), np.array([0.0, np.inf]))],
    "answers too few": [_record([[1], [2], [3]], list(range(50)))],
    "answers as strings": [_record([[1], [2]], ["1", "2"])],
    "bool cells": [_record([[True], [False]], columns=["a"])],
    "bool array": [_record(np.array([[True], [False]]), [1.0, 2.0], columns=["a"])],
    "bool answers": [_record([[1], [2]], [True, False])],
    "huge int": [_record([[1], [10**400]])],
    "huge int answer": [_record([[1], [2]], [1, 10**400])],
    "uint64": [_record(np.array([[1], [2**63 + 5]], dtype=np.uint64), [1.0, 2.0])],
    "numpy scalars": [_record([[np.int32(1)], [np.int64(2)]], [np.float32(0.5), 1.5])],
    "mixed answers": [_record([[1], [2]], [1, 2.5])],
    "ragged": [_record([[1], [2, 3]])],
    "wrong width": [_record([[1, 2], [2, 3]])],
    "nested cell": [_record([[[1]], [[2]]])],
    "empty cells": [_record([], [])],
    "tuple rows": [_record([(1,), (2,)])],
    "dict rows": [_record([{"d": 1}])],
    "string rows": [_record(["ab", "cd"])],
    "unknown key": [{**_record([[1]]), "extra": 1}],
    "missing noise": [{k: v for k, v in _record([[1]]).items() if k != "noise"}],
    "bad noise": [{**_record([[1]]), "noise": {"gaussian": -1.0}}],
    "sets": [{**_record([[1], [2], [3]], [0.5, 1.5]), "sets": [[0, 1], [2]]}],
    "bad sets": [{**_record([[1], [2]], [0.5]), "sets": [[0, 5]]}],
    "columns not a list": [{**_record([[1]]), "columns": "d"}],
    "repeated column": [_record([[1, 1]], columns=["d", "d"])],
    "unknown column": [_record([[1]], columns=["zz"])],
    "second record bad": [_record([[1]]), _record([[1], [99]])],
    "not a record": [_record([[1]]), 5],
    "not a list": {"columns": ["d"]},
    "none": None,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_columns_read_as_json_does(name: str) -> None:
    old, new = _both(CASES[name])
    assert new == old
    exact_old, exact_new = _both(CASES[name], exact=True)
    assert exact_new == exact_old


def test_the_cases_reach_both_outcomes_and_columns() -> None:
    """The cases above are not all refused, nor all read; most cross in columns."""
    outcomes = [_both(v)[0] for v in CASES.values()]
    assert sum(isinstance(o, str) for o in outcomes) >= 20
    assert sum(isinstance(o, list) for o in outcomes) >= 8
    crossed = [
        v
        for v in CASES.values()
        if "records" in columnar.split(v)[0]
        and any("rows" in r for r in columnar.split(v)[0]["records"])
    ]
    assert len(crossed) >= 25


def test_a_refusal_names_the_first_bad_cell() -> None:
    cells = np.arange(1000).reshape(-1, 1) % 11
    (_, line) = _both([_record(cells[:11]), _record(np.r_[cells[:11], [[4]]])])
    assert "`privacy_transcript`[1]['cells'][11] repeats ['cells'][4] ([4])" in line


VALUES = st.one_of(
    st.integers(-3, 12),
    st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, -1.0, 1.5, float("nan"), 10**30]),
    st.sampled_from(["x", "y", "1", "w", ""]),
    st.booleans(),
)


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    columns=st.lists(st.sampled_from(["a", "c", "d", "e"]), min_size=1, max_size=3),
    rows=st.lists(st.lists(VALUES, min_size=3, max_size=3), min_size=1, max_size=8),
    noisy=st.lists(
        st.one_of(st.floats(allow_nan=True), st.integers(-5, 5)), max_size=8
    ),
    as_array=st.booleans(),
)
def test_fuzzed_records_read_alike(
    columns: list[str], rows: list[list[Any]], noisy: list[Any], as_array: bool
) -> None:
    cells: Any = [row[: len(columns)] for row in rows]
    if as_array:
        with contextlib.suppress(TypeError, ValueError):
            cells = np.array(cells)
    record = {
        "columns": columns,
        "cells": cells,
        "noisy": noisy,
        "noise": {"gaussian": 1.0},
    }
    try:
        json.dumps(plain_json(record), allow_nan=False)
    except ValueError:
        return  # the worker refuses it as not JSON, before either way's checks
    old, new = _both([record])
    assert new == old


def test_cells_read_as_tuples() -> None:
    cells = Cells((np.array([0, 1]), np.array(["x", "y"], dtype=object)))
    assert cells == ((0, "x"), (1, "y")) and cells.index((1, "y")) == 1
    assert type(cells[0][0]) is int and hash(cells) == hash(((0, "x"), (1, "y")))


def test_exact_counts_alike_in_columns_and_tuples() -> None:
    """The attack counts each cell in both worlds the same whichever way the cells
    are held (codes of values, 1 and 1.0 alike, strings apart from numbers)."""
    without = pd.DataFrame({"d": [1, 1, 2, 5], "c": ["x", "y", "x", "1"]})
    with_target = pd.concat([without, without.head(1)], ignore_index=True)
    attack = MeasurementAttack(without=without, with_target=with_target, delta=1e-5)
    tuples = Measurement(
        columns=("d", "c"),
        cells=((1, "x"), (1.0, "y"), (5, 1), (5, "1"), (7, "x")),
        noisy=(0.0,) * 5,
        noise="gaussian",
        scale=1.0,
    )
    arrays = Measurement(
        columns=("d", "c"),
        cells=Cells(
            (
                np.array([1, 1, 5, 5, 7]),
                np.array(["x", "y", 1, "1", "x"], dtype=object),
            )
        ),
        noisy=(0.0,) * 5,
        noise="gaussian",
        scale=1.0,
    )
    c0, c1 = attack.exact_counts(tuples)
    assert c0.tolist() == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert c1.tolist() == [2.0, 1.0, 0.0, 1.0, 0.0]
    a0, a1 = attack.exact_counts(arrays)
    assert a0.tolist() == c0.tolist() and a1.tolist() == c1.tolist()
