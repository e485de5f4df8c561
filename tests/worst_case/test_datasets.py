"""The named worst cases: ``worst-case`` (binary) and ``worst-case-continuous``."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpaudit.attacks.registry import (
    DEFAULT_REAL,
    DEFAULT_WORST_CASE,
    DEFAULT_WORST_CASE_CONTINUOUS,
    expand_attacks,
)
from dpaudit.audit import AuditConfig, run_audit
from dpaudit.audit.games import build_setup
from dpaudit.commands import listing
from dpaudit.data import (
    DATASET_NAMES,
    WORST_CASE_NAMES,
    load_dataset,
    worst_case_dataset,
)
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.registry import WORST_CASE_ITERATIONS
from dpaudit.worst_case.datasets import worst_case_domain, worst_case_target

COPY = "dpaudit.generators.toy_plugins:CopyData"


def test_continuous_worst_case_resolves_by_name() -> None:
    ds = load_dataset("worst-case-continuous")
    assert ds.name == "worst-case-continuous"
    assert [c.kind for c in ds.domain.columns] == ["continuous"] * 3
    assert [(c.lower, c.upper) for c in ds.domain.columns] == [(0.0, 1.0)] * 3
    assert list(ds.domain.names) == ["a", "b", "c"]
    expected = pd.DataFrame(np.zeros((4, 3)), columns=["a", "b", "c"])
    pd.testing.assert_frame_equal(ds.train, expected)
    assert ds.train.dtypes.tolist() == [np.dtype(float)] * 3


def test_binary_worst_case_unchanged() -> None:
    ds = load_dataset("worst-case")
    assert ds.name == "worst-case"
    assert [c.kind for c in ds.domain.columns] == ["binary"] * 3
    expected = pd.DataFrame(np.zeros((4, 3), dtype=np.int64), columns=["a", "b", "c"])
    pd.testing.assert_frame_equal(ds.train, expected)
    assert ds.citation == worst_case_dataset(continuous=True).citation


def test_worst_case_names_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert WORST_CASE_NAMES == ("worst-case", "worst-case-continuous")
    assert set(WORST_CASE_NAMES) <= set(DATASET_NAMES)
    listing.run(argparse.Namespace(what="datasets"))
    assert capsys.readouterr().out.split() == list(DATASET_NAMES)


@pytest.mark.parametrize("name", WORST_CASE_NAMES)
def test_worst_case_refuses_a_domain(name: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=f"unset for the {name} dataset"):
        load_dataset(name, domain=tmp_path / "d.json")


def test_target_is_typed_by_the_domain() -> None:
    binary = worst_case_target(worst_case_domain())
    continuous = worst_case_target(worst_case_domain(continuous=True))
    assert binary.to_numpy().tolist() == continuous.to_numpy().tolist() == [[1, 1, 1]]
    assert binary.dtypes.tolist() == [np.dtype(np.int64)] * 3
    assert continuous.dtypes.tolist() == [np.dtype(float)] * 3


def test_continuous_setup_uses_worst_case_defaults() -> None:
    """The pair differs by exactly the target row; the worst case's defaults apply
    (iteration cap 100, 100 released rows, the continuous default attack set)."""
    setup = build_setup(
        AuditConfig(dataset="worst-case-continuous", rounds=10, jobs=1, device="cpu")
    )
    assert len(setup.with_target) == len(setup.without) + 1 == 5
    pd.testing.assert_frame_equal(setup.with_target.iloc[:-1], setup.without)
    assert setup.with_target.iloc[-1].tolist() == [1.0, 1.0, 1.0]
    assert setup.without.to_numpy().tolist() == [[0.0] * 3] * 4
    assert setup.target.dtypes.tolist() == [np.dtype(float)] * 3
    assert setup.domain.columns[0].kind == "continuous"
    assert setup.generator_options["max_iterations"] == WORST_CASE_ITERATIONS == 100
    assert setup.synthetic_rows == 100
    assert setup.attacks == DEFAULT_WORST_CASE_CONTINUOUS


def test_default_attack_set_per_dataset_kind() -> None:
    binary = build_setup(
        AuditConfig(dataset="worst-case", rounds=10, jobs=1, device="cpu")
    )
    assert binary.attacks == DEFAULT_WORST_CASE
    assert binary.generator_options["max_iterations"] == 100
    assert expand_attacks("default", worst_case=True, continuous=True) == list(
        DEFAULT_WORST_CASE_CONTINUOUS
    )
    # ``continuous`` only qualifies a worst case: real tables keep their set.
    assert expand_attacks("default", worst_case=False, continuous=True) == list(
        DEFAULT_REAL
    )


def test_copy_plugin_violates_on_the_continuous_worst_case(tmp_path: Path) -> None:
    """A generator that copies its data is a VIOLATION at 60 rounds per world.

    Failure probability 0: under fixed public randomness CopyData's release is a
    deterministic function of the world (its data and the audit's public seed), so the
    default attacks separate the worlds without error on every test round, and the
    attainable maximum at 60 rounds per world (1.51: 24 + 24 test rounds, alpha 0.05/3) is
    above the claimed epsilon 1.
    """
    result = run_audit(
        AuditConfig(
            dataset="worst-case-continuous", generator=COPY, rounds=60, jobs=1, seed=3
        ),
        out_dir=tmp_path,
    )
    assert result.randomness == "fixed_public"
    assert str(result.verdict) == "VIOLATION"
    assert result.auc == 1.0
