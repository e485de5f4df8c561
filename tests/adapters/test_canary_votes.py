"""Canary teachers inside the libraries: the vote records (dpaudit/adapters/_canary.py)
and the audit's plumbing of ``--teachers canary`` to an adapter (no library needed)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpaudit.adapters._canary import CanaryVotes, check_canary, target_mask
from dpaudit.adapters._common import AdapterInputError
from dpaudit.audit.games.measurements import canary_options
from dpaudit.generators.foreign.transcript import check_transcript
from dpaudit.worst_case.datasets import worst_case_domain

DOMAIN = {"columns": [{"name": c, "kind": "binary"} for c in ("a", "b", "c")]}
TARGET = {"a": 1, "b": 1, "c": 1}


def test_a_vote_is_recorded_as_the_library_computed_it() -> None:
    votes = CanaryVotes(TARGET, DOMAIN, copies=1)
    noise = np.array([[0.25], [-3.5]])
    votes.add(np.array([[1.0], [1.0]]), noise, 1000.0, 1)
    votes.add(np.array([[1.0]]), np.array([[7.0]]), 1000.0, 1)
    (record,) = votes.records()
    assert record == {
        "columns": ["a", "b", "c"],
        "cells": [[1, 1, 1]],
        "sets": [[0], [0], [0]],
        "noisy": [1.25, -2.5, 8.0],
        "noise": {"laplace": 1000.0},
    }
    assert votes.claim() == {
        "canary_copies": 1,
        "canary_teachers_per_row": 1,
        "canary_clean_votes": [1],
        "canary_queries": 3,
    }
    # The record passes dpaudit's own check of a plug-in's transcript.
    (checked,) = check_transcript(votes.records(), "x", domain=worst_case_domain())
    assert checked.noise == "laplace" and checked.scale == 1000.0
    assert checked.answer_cells() == ((0,), (0,), (0,))


def test_teachers_sharing_a_model_are_stated_per_record() -> None:
    """m teachers per row: the vote m x copies is stated divided by m, its scale
    too (a bijection of what the library computed)."""
    votes = CanaryVotes(TARGET, DOMAIN, copies=1)
    votes.add(np.array([3.0, 3.0]), np.array([1.5, -6.0]), 900.0, 3)
    (record,) = votes.records()
    assert record["noisy"] == [1.5, -1.0]
    assert record["noise"] == {"laplace": 300.0}
    empty = CanaryVotes(TARGET, DOMAIN, copies=0)
    empty.add(np.array([0.0]), np.array([-2.0]), 900.0, 3)
    assert empty.records()[0]["noisy"] == pytest.approx([-2.0 / 3])


def test_a_vote_that_is_not_a_count_of_the_target_is_refused() -> None:
    """A target in no teacher's data, or twice in one: the vote is not m x copies."""
    votes = CanaryVotes(TARGET, DOMAIN, copies=1)
    with pytest.raises(AdapterInputError, match=r"clean vote was \[0\], not 1"):
        votes.add(np.array([0.0]), np.array([0.5]), 1000.0, 1)
    twice = CanaryVotes(TARGET, DOMAIN, copies=2)
    with pytest.raises(AdapterInputError, match="twice in one"):
        twice.add(np.array([1.0]), np.array([0.5]), 1000.0, 1)


def test_the_canary_option_is_checked() -> None:
    assert check_canary(None) is None
    assert check_canary({"a": 1}) == {"a": 1}
    for bad in ({}, [1, 1, 1], "a=1"):
        with pytest.raises(AdapterInputError, match="`canary` must be"):
            check_canary(bad)
    with pytest.raises(AdapterInputError, match="lacks the columns"):
        CanaryVotes({"a": 1}, DOMAIN, copies=0)


def test_target_rows_are_found_by_value() -> None:
    data = pd.DataFrame({"a": [1, 0, 1], "b": [1.0, 1.0, 1.0], "c": [1, 1, 0]})
    assert target_mask(data, TARGET).tolist() == [True, False, False]
    with pytest.raises(AdapterInputError, match="columns the table lacks"):
        target_mask(data, {"z": 1})


def test_the_audit_passes_its_target_as_json_values() -> None:
    target = pd.DataFrame({"a": [np.int64(1)], "b": [np.float64(0.5)], "c": ["u"]})
    out = canary_options({"epochs": 2}, target)
    assert out == {"epochs": 2, "canary": {"a": 1, "b": 0.5, "c": "u"}}
    assert type(out["canary"]["a"]) is int
    assert canary_options({"epochs": 2}, None) == {"epochs": 2}


def test_an_adapter_that_declares_canary_teachers_gets_the_target() -> None:
    """``--teachers canary`` on smartnoise-pategan: the setup passes the worst case's
    target as the option ``canary`` (the worker reads the class's declaration; the
    library itself is not imported); smartnoise-mst declares none and is refused."""
    from dpaudit.audit import AuditConfig
    from dpaudit.audit.games.setup import build_setup
    from dpaudit.errors import InvalidParameterError

    config = AuditConfig(
        generator="smartnoise-pategan",
        release="transcript",
        teachers="canary",
        dataset="worst-case",
        dataset_rows=2000,
        rounds=5,
    )
    setup = build_setup(config)
    assert setup.generator_options["canary"] == setup.target.iloc[0].to_dict()
    assert setup.make_generator().supports_canary_teachers  # type: ignore[attr-defined]
    plain = build_setup(replace(config, teachers="trained"))
    assert "canary" not in plain.generator_options
    with pytest.raises(InvalidParameterError, match="drop --teachers canary"):
        build_setup(replace(config, generator="smartnoise-mst"))


def test_the_librarys_laplace_draw_is_read_as_drawn() -> None:
    """``RecordingNumpy`` as a module's ``np``: the draw is numpy's own global one
    (the same values a fresh seed gives), its scale read whether passed by keyword
    or position; other names are numpy's."""
    from dpaudit.adapters._canary import RecordingNumpy

    draws: list[tuple[Any, float]] = []
    fake = RecordingNumpy(draws)
    np.random.seed(7)  # noqa: NPY002 (the global draw the libraries make)
    a = fake.random.laplace(loc=0, scale=1 / 1e-3, size=(3, 1))
    b = fake.random.laplace(0.0, 250.0, 2)
    np.random.seed(7)  # noqa: NPY002
    expected = np.random.laplace(0, 1000.0, (3, 1))  # noqa: NPY002
    assert np.array_equal(a, expected)
    assert [s for _, s in draws] == [1000.0, 250.0]
    assert np.array_equal(draws[1][0], b) and fake.sum is np.sum
