"""Sized worst cases: ``--dataset worst-case --dataset-rows N`` is N - 1 copies of the
base record plus the target (for libraries with a minimum table size)."""

from __future__ import annotations

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.setup import build_setup
from dpaudit.cli import main
from dpaudit.data import load_dataset
from dpaudit.errors import InvalidParameterError


@pytest.mark.parametrize("dataset", ["worst-case", "worst-case-continuous"])
@pytest.mark.parametrize("rows", [2, 5, 2000])
def test_n_rows_are_n_minus_one_base_records_and_the_target(
    dataset: str, rows: int
) -> None:
    setup = build_setup(
        AuditConfig(generator="copy", dataset=dataset, dataset_rows=rows, rounds=5)
    )
    assert len(setup.without) == rows - 1 and len(setup.with_target) == rows
    assert (setup.without.to_numpy() == 0).all()
    assert (setup.with_target.iloc[-1].to_numpy() == 1).all()
    assert setup.synthetic_rows == 100  # the worst case's release size is unchanged


def test_the_default_is_the_study_s_five_rows() -> None:
    assert len(load_dataset("worst-case").train) == 4
    assert len(load_dataset("worst-case", rows=5).train) == 4


@pytest.mark.parametrize("rows", [1, 0, -3])
def test_fewer_than_two_rows_are_refused(rows: int, capsys) -> None:
    with pytest.raises(
        InvalidParameterError, match="`dataset_rows` must be an integer >= 2"
    ):
        AuditConfig(dataset_rows=rows)
    with pytest.raises(InvalidParameterError, match="`--dataset-rows` must be"):
        load_dataset("worst-case", rows=rows)
    code = main(
        [
            "audit",
            "--generator",
            "copy",
            "--dataset-rows",
            str(rows),
            "--rounds",
            "5",
            "--quiet",
            "--out",
            "unused-never-written",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "dataset_rows" in err, err


def test_only_the_worst_cases_are_sized() -> None:
    with pytest.raises(InvalidParameterError, match="sizes the worst cases"):
        load_dataset("cervical_cancer", rows=10)
