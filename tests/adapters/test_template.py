"""The adapters' template (``LibraryAdapter``), run on a toy library of numpy alone:
the steps every adapter shares, without any real library."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from dpaudit.adapters._common import AdapterInputError
from dpaudit.adapters._template import LibraryAdapter
from dpaudit.adapters._transcript import MeasurementsDone, Transcript
from dpaudit.adapters.libraries import Library

TOY = Library(
    name="toy",
    distribution="toy-dist",
    version="0.0.1",
    package="toy-dist==0.0.1",
    module="toy",
    check="import toy",
    adapters=(("toy-counts", "ToyCounts"),),
)
DOMAIN = {
    "columns": [
        {"name": "b", "kind": "binary"},
        {"name": "c", "kind": "categorical", "categories": ["x", "y"]},
    ]
}
DATA = pd.DataFrame({"b": [0, 1, 1, 0], "c": ["x", "y", "y", "x"]})


class _Model:
    """A toy library's model: noisy counts of ``b``; samples ``b`` from them."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def fit(self, table: pd.DataFrame) -> None:
        print("toy library: fitting")  # what a library prints goes to stderr
        counts = np.bincount(table["b"].to_numpy(), minlength=2).astype(float)
        self.noisy = counts + np.random.laplace(0, self.scale, 2)  # noqa: NPY002

    def sample(self, n: int) -> pd.DataFrame:
        weights = np.clip(self.noisy, 1e-9, None)
        b = np.random.choice(2, size=n, p=weights / weights.sum())  # noqa: NPY002
        return pd.DataFrame({"b": b, "c": ["x"] * n})


class ToyCounts(LibraryAdapter):
    """A library adapter on the template, as a new library would write it."""

    library = TOY
    records: ClassVar[str | None] = "Laplace counts of b"
    stops: ClassVar[bool] = True
    omits: ClassVar[str] = "nothing"

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        preprocessing: str = "public",
        measure_only: bool = False,
        **options: Any,
    ) -> None:
        self.measure_only = measure_only
        super().__init__(
            epsilon=epsilon, delta=delta, preprocessing=preprocessing, **options
        )

    def _import(self) -> Any:
        return SimpleNamespace(Model=_Model)

    def _build(self, library: Any, table: Any, seed: int) -> Any:
        if self.options:
            raise AdapterInputError(f"no options. Got {sorted(self.options)}.")
        return library.Model(scale=1.0 / self.epsilon)

    def _train(self, model: Any, table: Any, seed: int) -> Any:
        model.fit(table)
        self.transcript_ = Transcript(["b"], [[0, 1]])
        self.transcript_.add_marginal([0], model.noisy, {"laplace": model.scale})
        if self.measure_only:
            raise MeasurementsDone
        return model

    def _claim(self, model: Any) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": 0.0, "accountant": "Laplace"}


def _fit(**options: Any) -> ToyCounts:
    return ToyCounts(epsilon=1.0, **options).fit(
        DATA, domain=DOMAIN, seed=3, public_seed=5
    )


def test_the_template_checks_the_budget_and_the_preprocessing() -> None:
    with pytest.raises(AdapterInputError, match="epsilon"):
        ToyCounts(epsilon=0.0)
    with pytest.raises(AdapterInputError, match="preprocessing"):
        ToyCounts(epsilon=1.0, preprocessing="private")
    with pytest.raises(AdapterInputError, match="no options"):
        _fit(rounds=2)
    with pytest.raises(RuntimeError, match="fit"):
        ToyCounts(epsilon=1.0).sample(3, seed=0)


def test_the_template_assembles_the_claim_and_the_transcript(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = _fit()
    printed = capsys.readouterr()
    assert printed.out == ""  # standard output carries the worker's protocol
    assert "toy library: fitting" in printed.err
    claim = model.privacy_claim
    assert claim["library"] == "toy-dist (version unknown)"  # not installed here
    assert claim["nominal_epsilon"] == 1.0 and claim["preprocessing"] == "public"
    assert claim["accountant"] == "Laplace" and claim["epsilon"] == 1.0
    assert claim["transcript_records"] == 1 and claim["transcript_omits"] == "nothing"
    assert claim["measure_only"] is False
    assert model.privacy_transcript[0]["columns"] == ["b"]


def test_the_template_seeds_the_fit_from_seed_and_the_draws_from_public_seed() -> None:
    first, again = _fit(), _fit()
    assert first.privacy_transcript == again.privacy_transcript
    rows = first.sample(20, seed=7, public_seed=11)
    assert rows.equals(again.sample(20, seed=8, public_seed=11))
    assert list(rows.columns) == ["b", "c"] and rows["b"].dtype == np.int64


def test_a_fit_stopped_after_its_measurements_has_no_model_to_sample() -> None:
    model = _fit(measure_only=True)
    assert model.privacy_claim["measure_only"] is True
    with pytest.raises(AdapterInputError, match="measure_only"):
        model.sample(3, seed=0)


def test_a_missing_library_is_one_line_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "toy", None)  # as if not installed

    class Bare(ToyCounts):
        _import = LibraryAdapter._import  # the declaration's import check

    with pytest.raises(ImportError, match=r"toy-dist==0\.0\.1.*--python"):
        Bare(epsilon=1.0).fit(DATA, domain=DOMAIN, seed=0)
