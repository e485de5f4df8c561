"""smartnoise-synth's adapters' shared base: the template's steps for its
synthesizers (:class:`_Smartnoise`; docs/adapters.md, "smartnoise-synth")."""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from dpaudit.adapters._common import (
    AdapterInputError,
    columns_of,
    compose_pure_dp,
)
from dpaudit.adapters._template import LibraryAdapter
from dpaudit.adapters._transcript import (
    Transcript,
    check_measure_only,
)
from dpaudit.adapters.smartnoise import LIBRARY
from dpaudit.adapters.smartnoise._measure import (
    preprocessor_spent,
    public_transformer,
)


class _Smartnoise(LibraryAdapter):
    """One smartnoise-synth synthesizer on the adapters' template."""

    library = LIBRARY
    synth: ClassVar[str]  # the key of snsynth's synth_map
    style: ClassVar[str]  # "gan" (one-hot, min-max) or "cube" (labels, bins)
    accountant: ClassVar[str]
    takes_delta: ClassVar[bool] = True
    min_rows: ClassVar[int] = 1
    nullable: ClassVar[bool] = False  # the public label encoders decode a missing cell

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        preprocessing: str = "public",
        preprocessor_eps: float = 0.0,
        bins: int = 10,
        measure_only: bool = False,
        **options: Any,
    ) -> None:
        self.measure_only = check_measure_only(measure_only, self)
        super().__init__(
            epsilon=epsilon, delta=delta, preprocessing=preprocessing, **options
        )
        if not (isinstance(bins, int) and bins >= 2):
            raise AdapterInputError(f"`bins` must be an integer >= 2. Got {bins!r}.")
        self.preprocessor_eps = float(preprocessor_eps)
        self.bins = bins

    # -- the template's steps --------------------------------------------------------

    def _check_delta(self, delta: Any) -> float:
        if not (isinstance(delta, (int, float)) and 0 <= delta < 1):
            raise AdapterInputError(f"`delta` must be in [0, 1). Got {delta!r}.")
        return float(delta)

    def _check_fit(self, data: pd.DataFrame) -> None:
        if len(data) < self.min_rows:
            raise AdapterInputError(self._too_few_rows(len(data)))
        if self.takes_delta and not self.delta > 0:
            raise AdapterInputError(
                f"{type(self).__name__} needs `delta` > 0 (its accountant "
                "converts to (epsilon, delta)). Got 0; pass --delta."
            )

    def _table(self, data: pd.DataFrame) -> pd.DataFrame:
        return data  # the library's fit takes the records as they come

    def _build(self, library: Any, table: Any, seed: int) -> Any:
        kwargs: dict[str, Any] = {"epsilon": self.epsilon, **self.options}
        if self.takes_delta:
            kwargs["delta"] = self.delta
        try:
            model = library.Synthesizer.create(self.synth, **kwargs)
        except TypeError as err:  # an option the library's constructor lacks
            raise AdapterInputError(
                f"{self.library.library}'s {self.synth} does not take these options "
                f"({' '.join(str(err).split())}); see its documentation for the "
                "constructor's arguments. Got --option "
                f"{sorted(self.options) or 'none'}."
            ) from err
        self.ledger_: dict[str, Any] = {}
        self.fit_arguments_ = self._fit_arguments(library, self.domain_)
        return model

    def _train(self, model: Any, table: Any, seed: int) -> Any:
        self._fit_model(model, table, self.fit_arguments_)
        return model

    def _claim(self, model: Any) -> dict[str, Any]:
        claim: dict[str, Any] = {
            "epsilon": self.epsilon,
            "delta": self.delta if self.takes_delta else 0.0,
            "accountant": self.accountant,
            **self._claim_extras(model),
        }
        profile = self._profile(model)
        spent = preprocessor_spent(model)
        if spent > 0:
            # The library charged its bounds to the budget and trained on the rest
            # (base.py, `_get_train_data`): a training accountant's epsilon covers the
            # training only, and the release is the composition of both.
            claim["preprocessor_epsilon"] = spent
            if claim.get("library_epsilon") == claim["epsilon"]:
                claim["epsilon"] = claim["library_epsilon"] + spent
            # The profile too: the bounds are pure `spent`-DP (Laplace), composed.
            if profile.get("rdp") is not None:
                profile["rdp"] = compose_pure_dp(profile["rdp"], spent)
            if profile.get("zcdp_rho") is not None:
                profile["zcdp_rho"] += spent * spent / 2.0
        claim.update(profile)
        return claim

    # -- what subclasses change ------------------------------------------------------

    def _fit_model(
        self, model: Any, data: pd.DataFrame, kwargs: dict[str, Any]
    ) -> None:
        model.fit(data, **kwargs)

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        return {}

    def _transcript_of(self, model: Any) -> Transcript:
        """The fit's transcript, made once the library's transformer is fitted."""
        if self.transcript_ is None:
            self.transcript_ = Transcript.of_transformer(
                model._transformer.transformers, self.domain_
            )
        return self.transcript_

    def _profile(self, model: Any) -> dict[str, Any]:
        """The claim's profile keys (docs/plugins.md) from what the library computed:
        none by default (docs/adapters.md, "The claim's profile")."""
        return {}

    def _too_few_rows(self, rows: int) -> str:
        return f"{type(self).__name__} needs at least {self.min_rows} rows. Got {rows}."

    # -- preprocessing ---------------------------------------------------------------

    def _fit_arguments(self, snsynth: Any, domain: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the library's ``fit``: a transformer fitted on the
        public domain, or the column hints (``preprocessing=library``)."""
        columns = columns_of(domain)
        if self.preprocessing == "library":
            hints: dict[str, list[str]] = {
                "categorical_columns": [],
                "ordinal_columns": [],
                "continuous_columns": [],
            }
            for col in columns:
                key = {
                    "binary": "categorical_columns",
                    "categorical": "categorical_columns",
                    "integer": "ordinal_columns",
                }.get(col["kind"], "continuous_columns")
                hints[key].append(col["name"])
            return {
                **hints,
                "preprocessor_eps": self.preprocessor_eps,
                "nullable": False,
            }
        return {
            "transformer": public_transformer(
                snsynth,
                domain,
                style=self.style,
                bins=self.bins,
                nullable=self.nullable,
            )
        }
