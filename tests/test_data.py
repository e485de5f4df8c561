"""Domain, encoding and dataset loading."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpaudit.data import (
    Column,
    Domain,
    infer_domain,
    load_cervical_cancer,
    load_dataset,
)
from dpaudit.errors import DataError, DpauditWarning, InvalidParameterError


@pytest.fixture
def domain() -> Domain:
    return Domain(
        (
            Column(name="age", kind="integer", lower=0, upper=100),
            Column(name="score", kind="continuous", lower=-1.0, upper=1.0),
            Column(name="flag", kind="binary"),
            Column(
                name="colour", kind="categorical", categories=("red", "green", "blue")
            ),
        )
    )


@pytest.fixture
def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [0, 37, 100],
            "score": [-1.0, 0.25, 1.0],
            "flag": [0, 1, 1],
            "colour": ["blue", "red", "green"],
        }
    )


def test_round_trip(domain: Domain, table: pd.DataFrame) -> None:
    encoded = domain.encode(table)
    assert encoded.shape == (3, 6)
    assert encoded.min() >= 0.0
    assert encoded.max() <= 1.0
    decoded = domain.decode(encoded)
    pd.testing.assert_frame_equal(decoded, domain.cast(table), check_dtype=False)
    assert decoded["age"].dtype == np.int64


def test_decode_rounds_and_clips(domain: Domain) -> None:
    encoded = np.array([[0.374, 1.7, 0.49, 0.1, 0.9, 0.2]])
    row = domain.decode(encoded).iloc[0]
    assert row["age"] == 37
    assert row["score"] == 1.0
    assert row["flag"] == 0
    assert row["colour"] == "green"
    assert domain.decode(encoded, integer_rounding="floor").iloc[0]["age"] == 37
    assert domain.decode(np.array([[0.379, 0, 0, 1, 0, 0]])).iloc[0]["age"] == 38
    assert (
        domain.decode(
            np.array([[0.379, 0, 0, 1, 0, 0]]), integer_rounding="floor"
        ).iloc[0]["age"]
        == 37
    )


def test_json_round_trip(domain: Domain, tmp_path) -> None:
    path = tmp_path / "d.json"
    domain.save(path)
    assert Domain.load(path) == domain
    assert Domain.from_json(json.loads(path.read_text())) == domain


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.assign(age=[1.0, np.nan, 3.0]), "missing values"),
        (lambda t: t.assign(age=["1", "x", "3"]), "non-numeric value 'x'"),
        (lambda t: t.drop(columns=["flag"]), "missing \\['flag'\\]"),
        (lambda t: t.assign(extra=1), "unexpected \\['extra'\\]"),
        (lambda t: t.assign(age=[1, 2, 101]), "101.0.*outside the domain's bounds"),
        (lambda t: t.assign(flag=[0, 2, 1]), "binary"),
        (lambda t: t.assign(colour=["red", "pink", "red"]), "'pink'"),
    ],
)
def test_bad_input_names_column_and_fix(
    domain: Domain, table: pd.DataFrame, change, message: str
) -> None:
    with pytest.raises(DataError, match=message):
        domain.validate(change(table))


def test_too_few_rows(domain: Domain, table: pd.DataFrame) -> None:
    with pytest.raises(DataError, match="at least 5 are needed"):
        domain.validate(table, min_rows=5)


def test_bad_domain_json() -> None:
    with pytest.raises(InvalidParameterError, match="needs public `lower` and `upper`"):
        Domain.from_json({"columns": [{"name": "x", "kind": "integer"}]})
    with pytest.raises(InvalidParameterError, match=r"`x\.kind` must be one of"):
        Domain.from_json({"columns": [{"name": "x", "kind": "weird"}]})
    with pytest.raises(InvalidParameterError, match="unique"):
        Domain((Column(name="x", kind="binary"), Column(name="x", kind="binary")))


def test_infer_warns_bounds_not_private(table: pd.DataFrame) -> None:
    with pytest.warns(DpauditWarning, match="not private"):
        domain = infer_domain(table)
    assert domain["age"].kind == "integer"
    assert domain["flag"].kind == "binary"
    assert domain["colour"].kind == "categorical"


def test_data_bounds_domain_reads_extremes(domain: Domain, table: pd.DataFrame) -> None:
    narrowed = domain.with_data_bounds(table.iloc[1:2])
    assert narrowed["age"].lower == narrowed["age"].upper == 37


def test_cervical_cancer_as_the_study() -> None:
    ds = load_cervical_cancer()
    assert ds.train.shape == (686, 29)
    assert ds.test is not None
    assert ds.test.shape == (172, 29)
    assert ds.train["Biopsy"].sum() + ds.test["Biopsy"].sum() == 55
    assert not ds.train.isna().any().any()
    ds.domain.validate(ds.train)
    assert "CC BY 4.0" in ds.citation


def test_named_dataset_from_data_dir(tmp_path) -> None:
    with pytest.raises(InvalidParameterError, match="DPAUDIT_DATA_DIR"):
        load_dataset("isolet5", data_dir=tmp_path)


def test_csv_needs_domain(tmp_path, domain: Domain, table: pd.DataFrame) -> None:
    csv = tmp_path / "t.csv"
    table.to_csv(csv, index=False)
    with pytest.raises(InvalidParameterError, match="needs a public domain"):
        load_dataset(str(csv))
    domain.save(tmp_path / "d.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = load_dataset(str(csv), domain=tmp_path / "d.json")
    assert len(ds.train) == 3


@pytest.mark.parametrize("continuous", [False, True])
def test_worst_cases_validate_in_their_domain(continuous: bool) -> None:
    """Both worst cases' D and target lie in their public domain; the unknown-name
    message lists them."""
    name = "worst-case-continuous" if continuous else "worst-case"
    ds = load_dataset(name)
    ds.domain.validate(ds.train, name=name)
    target = pd.DataFrame([dict.fromkeys(ds.domain.names, 1)])
    ds.domain.validate(target, name="target")
    assert (ds.domain.columns[0].kind == "continuous") is continuous
    with pytest.raises(
        InvalidParameterError, match="worst-case, worst-case-continuous"
    ):
        load_dataset("no-such-dataset")


def test_a_release_outside_the_bounds_names_the_generator_fix() -> None:
    """A released value outside the public bounds is the generator's to fix (its
    `sample`), not the domain's or the data's."""
    from dpaudit.data import Column, Domain

    domain = Domain([Column(name="a", kind="continuous", lower=0.0, upper=1.0)])
    with pytest.raises(DataError, match="clamp or resample in its `sample`") as err:
        domain.validate(pd.DataFrame({"a": [0.5, 1.5]}), name="release", min_rows=0)
    assert "Widen" not in str(err.value)
    with pytest.raises(DataError, match="Widen the public bounds"):
        domain.validate(pd.DataFrame({"a": [0.5, 1.5]}), name="data")
