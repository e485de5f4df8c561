"""The adapters' shared parts and their registry, without the wrapped libraries."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpaudit.adapters import FOREIGN_ADAPTERS
from dpaudit.adapters._common import (
    cast_release,
    check_preprocessing,
    public_frame,
    seed_globals,
)
from dpaudit.generators.plugins import supports_public_seed

ADAPTERS = Path(__file__).resolve().parents[2] / "dpaudit" / "adapters"
ALLOWED = {
    "__future__",
    "dataclasses",
    "contextlib",
    "importlib",
    "pkgutil",
    "os",
    "pathlib",
    "functools",
    "itertools",
    "math",
    "sys",
    "typing",
    "collections",
    "numpy",
    "pandas",
    "dpaudit",
}

DOMAIN = {
    "columns": [
        {"name": "b", "kind": "binary"},
        {"name": "c", "kind": "categorical", "categories": ["x", "y", "z"]},
        {"name": "i", "kind": "integer", "lower": 0, "upper": 4},
        {"name": "f", "kind": "continuous", "lower": -1.0, "upper": 2.0},
    ]
}


def test_adapter_modules_import_only_stdlib_numpy_pandas_at_module_level() -> None:
    """The worker may run them under an interpreter with nothing but the library,
    numpy and pandas: the library itself is imported inside the methods."""
    for path in ADAPTERS.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                top = name.split(".")[0]
                assert top in ALLOWED, f"{path.name} imports {name} at module level"
                if top == "dpaudit":
                    assert name.startswith("dpaudit.adapters"), (path.name, name)


@pytest.mark.parametrize("name", sorted(FOREIGN_ADAPTERS))
def test_registry_names_load_as_plugins(name: str) -> None:
    module_name, _, attr = FOREIGN_ADAPTERS[name].partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    assert callable(cls.fit) and callable(cls.sample)
    # Every adapter samples from public_seed (post-processing), so all opt in.
    assert supports_public_seed(cls)
    with pytest.raises(ValueError, match="preprocessing"):
        cls(epsilon=1.0, delta=1e-5, preprocessing="private")


def test_public_frame_holds_every_category_and_bound_and_nothing_else() -> None:
    frame = public_frame(DOMAIN)
    assert list(frame.columns) == ["b", "c", "i", "f"]
    assert set(frame["b"]) == {0, 1}
    assert set(frame["c"]) == {"x", "y", "z"}
    assert set(frame["i"]) == {0, 1, 2, 3, 4}
    assert set(frame["f"]) == {-1.0, 2.0}


def test_cast_release_types_and_clips_to_the_domain() -> None:
    raw = pd.DataFrame(
        {"b": [0.2, 0.9], "c": ["y", "z"], "i": [3.6, 9.0], "f": [5.0, -0.5]}
    )
    out = cast_release(raw, DOMAIN)
    assert out["b"].tolist() == [0, 1] and out["b"].dtype == np.int64
    assert out["c"].tolist() == ["y", "z"]
    assert out["i"].tolist() == [4, 4] and out["i"].dtype == np.int64
    assert out["f"].tolist() == [2.0, -0.5]
    # A value that is no category is left for dpaudit's release check to report.
    assert cast_release(raw.assign(c=["w", "x"]), DOMAIN)["c"].tolist() == ["w", "x"]


def test_seed_globals_makes_global_draws_repeat() -> None:
    import random

    import torch

    def draws() -> tuple[float, float, float]:
        return (
            random.random(),
            float(np.random.random_sample()),  # noqa: NPY002
            float(torch.rand(1).item()),
        )

    seed_globals(5)
    first = draws()
    seed_globals(5)
    assert draws() == first
    seed_globals(6)
    assert draws() != first


def test_check_preprocessing() -> None:
    assert check_preprocessing("library") == "library"
    with pytest.raises(ValueError, match="`preprocessing` must be one of"):
        check_preprocessing("both")


def test_missing_library_is_one_line_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dpaudit.adapters.smartnoise.adapter import SmartnoiseMST

    monkeypatch.setitem(sys.modules, "snsynth", None)  # as if not installed
    data = pd.DataFrame({"b": [0, 1]})
    with pytest.raises(ImportError, match=r"dpaudit\[smartnoise\].*--python"):
        SmartnoiseMST(epsilon=1.0, delta=1e-5).fit(
            data, domain={"columns": [{"name": "b", "kind": "binary"}]}, seed=0
        )


def test_dpmm_adapters_check_their_input_without_the_library() -> None:
    from dpaudit.adapters._common import AdapterInputError
    from dpaudit.adapters.dpmm.adapter import DpmmMST

    for bad in ({"epsilon": 0.0}, {"epsilon": 1.0, "delta": 0.0}):
        with pytest.raises(AdapterInputError):
            DpmmMST(**bad)  # type: ignore[arg-type]
    with pytest.raises(AdapterInputError):
        DpmmMST(epsilon=1.0, proc_epsilon=-1)
    model = DpmmMST(epsilon=1.0)
    domain = model._domain(
        {
            "columns": [
                {"name": "b", "kind": "binary"},
                {"name": "x", "kind": "continuous", "lower": 0, "upper": 2},
            ]
        }
    )
    # The public domain in dpmm's form: categories, and numeric bounds.
    assert domain == {"b": {"categories": [0, 1]}, "x": {"lower": 0.0, "upper": 2.0}}
