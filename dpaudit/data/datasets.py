"""The datasets an audit runs on: the bundled Cervical Cancer table, the named tables
of the data folder, a user's CSV with its domain, and the audit study's worst case.

Each loader returns a :class:`Dataset`: the training table with its public
:class:`~dpaudit.data.domain.Domain` (and, for the utility benchmark, a test table and
a label).
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.data.domain import Column, Domain
from dpaudit.data.infer import infer_domain
from dpaudit.datasets.files import read_csv_table
from dpaudit.datasets.names import (
    BUILTIN_FILES,
    DATASET_NAMES,
    ONE_RUN_NAMES,
    WORST_CASE_NAMES,
)
from dpaudit.errors import DpauditWarning, InvalidParameterError
from dpaudit.validation import check_scalar, is_text, require


@dataclass(frozen=True, kw_only=True, slots=True)
class Dataset:
    """A loaded dataset: the training table, its public domain and, where the
    dataset has one, the held-out test table and the label column."""

    name: str
    train: pd.DataFrame
    domain: Domain
    test: pd.DataFrame | None = None
    label: str | None = None
    citation: str = ""


CERVICAL_DROPPED = (
    # The seven STD indicator columns with at most two positive records among 858
    # (two of them are constant): "near-empty" as in the audit study.
    "STDs_cervical_condylomatosis",
    "STDs_AIDS",
    "STDs_pelvic_inflammatory_disease",
    "STDs_genital_herpes",
    "STDs_molluscum_contagiosum",
    "STDs_Hepatitis_B",
    "STDs_HPV",
)
CERVICAL_CITATION = (
    "Cervical cancer (Risk Factors), K. Fernandes, J. S. Cardoso, J. Fernandes, UCI "
    "Machine Learning Repository, 2017, CC BY 4.0."
)

WORST_CASE_COLUMNS = ("a", "b", "c")


def worst_case_domain(n_columns: int = 3, *, continuous: bool = False) -> Domain:
    """The worst case's public domain: ``n_columns`` binary columns, or in [0, 1]."""
    names = (
        WORST_CASE_COLUMNS
        if n_columns == 3
        else tuple(f"x{i}" for i in range(n_columns))
    )
    return Domain(
        tuple(
            Column(name=n, kind="continuous", lower=0.0, upper=1.0)
            if continuous
            else Column(name=n, kind="binary")
            for n in names
        )
    )


def worst_case_dataset(
    *, n_rows: int = 4, n_columns: int = 3, continuous: bool = False
) -> Dataset:
    """The study's worst case D (target: ``worst_case_target``); ``continuous``: [0, 1]."""
    check_scalar(n_rows, "n_rows", kind=int, min_val=1)
    domain = worst_case_domain(n_columns, continuous=continuous)
    train = pd.DataFrame(
        0.0 if continuous else 0, index=range(n_rows), columns=domain.names
    )
    return Dataset(
        name=WORST_CASE_NAMES[continuous],
        train=train,
        domain=domain,
        citation="Worst case of Ganev, Annamalai and De Cristofaro (2024).",
    )


def default_data_dir() -> Path:
    """``$DPAUDIT_DATA_DIR``, else ``../shared/data`` next to the working directory."""
    env = os.environ.get("DPAUDIT_DATA_DIR")
    if env:
        return Path(env)
    return Path.cwd().parent / "shared" / "data"


def stratified_split(
    data: pd.DataFrame, *, label: str, test_size: float = 0.2, seed: int = 13
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """80/20 stratified split with scikit-learn (the study's seed 13 by default)."""
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(
        data, test_size=test_size, stratify=data[label], random_state=seed
    )
    return train.reset_index(drop=True), test.reset_index(drop=True)


def clean_cervical(raw: pd.DataFrame) -> pd.DataFrame:
    """The study's cleaning: drop 7 near-empty STD columns, fill NaN with the column
    mode, cast integer-valued columns to int (29 columns left)."""
    data = raw.drop(columns=list(CERVICAL_DROPPED))
    data = data.apply(pd.to_numeric, errors="coerce")
    for name in data.columns:
        if data[name].isna().any():
            data[name] = data[name].fillna(data[name].mode().iloc[0])
    for name in data.columns:
        values = data[name].to_numpy(dtype=float)
        if np.all(values == np.round(values)):
            data[name] = values.astype(np.int64)
    return data


def _read_gz_csv(path: Path | Any) -> pd.DataFrame:
    with path.open("rb") as fh, gzip.open(fh, "rt") as text:
        return pd.read_csv(text, na_values=["?"])


def _bundled(name: str) -> Any:
    return resources.files("dpaudit") / "datasets" / name


def load_cervical_cancer() -> Dataset:
    """The bundled Kaggle/UCI Cervical Cancer data, cleaned and split as the study did:
    686 training rows, 29 columns, with its public domain (bounds of the full 858-row
    file, declared as public metadata)."""
    full = clean_cervical(_read_gz_csv(_bundled("cervical_cancer.csv.gz")))
    domain = Domain.from_json(
        json.loads(_bundled("cervical_cancer.domain.json").read_text())
    )
    full = domain.cast(full)
    train, test = stratified_split(full, label="Biopsy")
    return Dataset(
        name="cervical_cancer",
        train=train,
        test=test,
        domain=domain,
        label="Biopsy",
        citation=CERVICAL_CITATION,
    )


def _binarise(name: str, raw: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    if name == "epileptic_seizure":
        raw = raw.drop(columns=[c for c in raw.columns if c.startswith("Unnamed")])
        raw["y"] = (raw["y"] == 1).astype(np.int64)
        return raw, "y"
    if name == "isolet5":
        raw["class"] = raw["class"].isin([1, 5, 9, 15, 21]).astype(np.int64)
        return raw, "class"
    if name == "credit_sample":
        raw["Class"] = raw["Class"].astype(np.int64)
        return raw, "Class"
    raise InvalidParameterError(f"unknown dataset {name!r}.")


def load_dataset(
    name_or_path: str,
    *,
    domain: str | os.PathLike[str] | Domain | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    rows: int | None = None,
) -> Dataset:
    """Loads a dataset by name (:data:`DATASET_NAMES`) or a CSV path with a domain.

    Named datasets other than the bundled one are read from ``data_dir`` (default
    :func:`default_data_dir`). Their domains are drafted from the full file (public
    metadata by declaration: the file's extremes), like the bundled one.

    ``rows`` (worst cases, ``--dataset-rows N``): ``D`` is ``N - 1`` base records (default 4).

    A name or path that is not valid text (a file name in another encoding) is
    refused here: it would be stored in the audit's result and break its report.
    """
    for flag, value in (("--dataset", name_or_path), ("--domain", domain)):
        if isinstance(value, str | os.PathLike):
            require(
                is_text(os.fspath(value)),
                flag,
                "a name or path that is valid UTF-8 text (rename the file)",
                os.fspath(value),
            )
    if name_or_path in ONE_RUN_NAMES:
        raise InvalidParameterError(
            f"`--dataset` {name_or_path} is a canary design of the one-run game (a "
            "value of its own per canary in every column), not a table: use it with "
            "--game one-run, or --dataset worst-case."
        )
    if name_or_path in WORST_CASE_NAMES:
        require(
            domain is None,
            "--domain",
            f"unset for the {name_or_path} dataset (its "
            "domain is fixed: columns a, b, c)",
            str(domain),
        )
        require(
            rows is None or (isinstance(rows, int) and rows >= 2),
            "--dataset-rows",
            "an integer >= 2 (N - 1 copies of the base record plus the target)",
            rows,
        )
        return worst_case_dataset(
            n_rows=4 if rows is None else int(rows) - 1,
            continuous=name_or_path == WORST_CASE_NAMES[1],
        )
    require(rows is None, "--dataset-rows", "unset: it sizes the worst cases", rows)
    if name_or_path == "cervical_cancer" and domain is None:
        return load_cervical_cancer()
    if name_or_path in BUILTIN_FILES:
        directory = Path(data_dir) if data_dir is not None else default_data_dir()
        path = directory / BUILTIN_FILES[name_or_path]
        if not path.exists():
            raise InvalidParameterError(
                f"dataset {name_or_path!r} not found at {str(path)!r}. Pass --data-dir "
                "or set DPAUDIT_DATA_DIR to the folder that holds it."
            )
        raw = _read_gz_csv(path)
        raw, label = _binarise(name_or_path, raw)
        raw = raw.dropna().reset_index(drop=True)
        if domain is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DpauditWarning)
                dom = infer_domain(raw)
        else:
            dom = domain if isinstance(domain, Domain) else Domain.load(domain)
            dom.validate(raw, name=f"dataset {name_or_path}")
        raw = dom.cast(raw)
        train, test = stratified_split(raw, label=label)
        return Dataset(
            name=name_or_path, train=train, test=test, domain=dom, label=label
        )
    path = Path(name_or_path)
    if not path.exists():
        raise InvalidParameterError(
            f"`--dataset` {name_or_path!r} is neither a known dataset "
            f"({', '.join(DATASET_NAMES)}) nor an existing CSV file."
        )
    if domain is None:
        raise InvalidParameterError(
            f"dataset {name_or_path!r} is a CSV file and needs a public domain: pass "
            "--domain DOMAIN.json (`dpaudit domain infer` drafts one for review)."
        )
    dom = domain if isinstance(domain, Domain) else Domain.load(domain)
    table = read_csv_table(path)
    dom.validate(table, name=str(path))
    return Dataset(name=path.stem, train=dom.cast(table), domain=dom)
