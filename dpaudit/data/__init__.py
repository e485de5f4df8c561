"""Tables and their public domain (:mod:`dpaudit.data.domain`), and the datasets an
audit runs on (:mod:`dpaudit.data.datasets`). Every name is importable from
``dpaudit.data``."""

from __future__ import annotations

from dpaudit.data.datasets import (
    CERVICAL_CITATION,
    CERVICAL_DROPPED,
    WORST_CASE_COLUMNS,
    Dataset,
    clean_cervical,
    default_data_dir,
    load_cervical_cancer,
    load_dataset,
    stratified_split,
    worst_case_dataset,
    worst_case_domain,
)
from dpaudit.data.domain import KINDS, Column, ColumnKind, Domain
from dpaudit.data.infer import infer_domain
from dpaudit.datasets.names import DATASET_NAMES, WORST_CASE_NAMES

__all__ = [
    "CERVICAL_CITATION",
    "CERVICAL_DROPPED",
    "DATASET_NAMES",
    "KINDS",
    "WORST_CASE_COLUMNS",
    "WORST_CASE_NAMES",
    "Column",
    "ColumnKind",
    "Dataset",
    "Domain",
    "clean_cervical",
    "default_data_dir",
    "infer_domain",
    "load_cervical_cancer",
    "load_dataset",
    "stratified_split",
    "worst_case_dataset",
    "worst_case_domain",
]
