"""synthcity's adapters' shared base: the template's steps for synthcity's plugins
(:class:`_Synthcity`), the public encoder of the GANs (:class:`_PublicEncoder`) and
the public values' codes the domain controls use (docs/adapters.md, "synthcity")."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpaudit.adapters._common import (
    AdapterInputError,
    category_values,
    check_preprocessing,
    columns_of,
    import_library,
)
from dpaudit.adapters._template import LibraryAdapter
from dpaudit.adapters.synthcity import LIBRARY

PACKAGE = LIBRARY.package
_MAX_DRAWS = 50
_PUBLIC_POINTS = 21  # values per numeric column in the public encoder's table


def _random_state(seed: int) -> int:
    """A 31-bit ``random_state`` for synthcity, derived from ``seed``."""
    word = np.random.SeedSequence([int(seed), 3]).generate_state(1, dtype=np.uint32)[0]
    return int(word) >> 1


def _public_values(domain: dict[str, Any], option: str) -> dict[str, list[Any]]:
    """Each column's public values (its categories, 0 and 1, or its integers), for a
    control that takes the columns' domains from the public domain; a continuous
    column is refused."""
    values: dict[str, list[Any]] = {}
    for col in columns_of(domain):
        cats = category_values(col)
        if cats is None:
            raise AdapterInputError(
                f"option `{option}=corrected` takes discrete columns only (binary, "
                f"categorical, small integer); column {col['name']!r} is "
                f"{col['kind']}: bin it from public bounds first."
            )
        values[col["name"]] = list(cats)
    return values


def _to_codes(table: pd.DataFrame, values: dict[str, list[Any]]) -> pd.DataFrame:
    """Each column as the positions of its values among its public values."""
    out = table.reset_index(drop=True).copy()
    for name, public in values.items():
        codes = pd.Index(public).get_indexer(out[name])
        if (codes < 0).any():
            raise AdapterInputError(
                f"column {name!r} holds a value outside its public values: fix the "
                "data or the domain."
            )
        out[name] = codes.astype(np.int64)
    return out


def _from_codes(out: pd.DataFrame, values: dict[str, list[Any]]) -> pd.DataFrame:
    """The inverse of :func:`_to_codes` (a code out of range is clipped)."""
    out = out.copy()
    for name, public in values.items():
        codes = np.clip(
            np.rint(pd.to_numeric(out[name]).to_numpy(dtype=float)), 0, len(public) - 1
        ).astype(np.int64)
        out[name] = [public[i] for i in codes]
    return out


class _Synthcity(LibraryAdapter):
    """One synthcity plug-in on the adapters' template."""

    library = LIBRARY
    name: ClassVar[str]  # the generator name, for messages
    module: ClassVar[str]  # the plug-in's module
    plugin: ClassVar[str]  # its class
    modes: ClassVar[tuple[str, ...]] = ("library",)
    budget_keys: ClassVar[tuple[str, ...]] = ("epsilon",)  # the budget's options
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        preprocessing: str = "library",
        **options: Any,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=delta, preprocessing=preprocessing)
        for key in ("random_state", *self.budget_keys, "encoder"):
            if key in options:
                raise AdapterInputError(f"option `{key}` is set by dpaudit; remove it.")
        self.options = {**self.defaults, **options}

    def _arguments(self, data: pd.DataFrame) -> dict[str, Any]:
        """The plug-in's budget arguments."""
        return {"epsilon": self.epsilon}

    def _approximate_budget(self) -> dict[str, Any]:
        """``epsilon`` and ``delta``, for a plug-in whose guarantee needs a delta."""
        if not 0 < self.delta < 1:
            raise AdapterInputError(
                f"{self.name} needs `delta` in (0, 1) (its guarantee is (epsilon, "
                f"delta)); got {self.delta!r}: pass --delta."
            )
        return {"epsilon": self.epsilon, "delta": self.delta}

    def _plugin_claim(self, plugin: Any) -> dict[str, Any]:
        """The claim as the plug-in computed it."""
        raise NotImplementedError

    def _public_arguments(self, table: pd.DataFrame) -> dict[str, Any]:
        raise NotImplementedError

    def _generate(self, n: int, random_state: int) -> pd.DataFrame:
        """One call of the plug-in's ``generate``."""
        return pd.DataFrame(
            self.model_.generate(count=n, random_state=random_state).dataframe()
        )

    # -- the template's steps --------------------------------------------------------

    def _check_preprocessing(self, value: Any) -> str:
        mode = check_preprocessing(value)
        if mode not in self.modes:
            raise AdapterInputError(
                f"{self.name} supports only `preprocessing={'|'.join(self.modes)}`: "
                f"synthcity 0.2.12 fits its encoders on the records, with no public "
                "route (docs/adapters.md)."
            )
        return mode

    def _import(self) -> Any:
        return import_library(self.module, package=PACKAGE)

    def _build(self, library: Any, table: Any, seed: int) -> Any:
        extra = self._public_arguments(table) if self.preprocessing == "public" else {}
        try:
            return getattr(library, self.plugin)(
                random_state=_random_state(seed),
                **self._arguments(table),
                **extra,
                **self.options,
            )
        except (TypeError, ValueError) as err:  # pydantic's errors are ValueErrors
            raise AdapterInputError(
                f"synthcity's {self.plugin} refused the options "
                f"{sorted(self.options)}: {' '.join(str(err).split())[:300]}"
            ) from err

    def _claim(self, model: Any) -> dict[str, Any]:
        return {"requested_delta": self.delta, **self._plugin_claim(model)}

    def _draw(self, n: int, seed: int) -> pd.DataFrame:
        parts: list[pd.DataFrame] = []
        kept = 0
        # In strict mode synthcity drops generated rows outside the schema it
        # learned from the records (and duplicates), so one call may return
        # fewer than asked for: draw again, as a user wanting n rows would.
        for attempt in range(_MAX_DRAWS):
            part = self._generate(n, _random_state(seed + attempt))
            parts.append(part)
            kept += len(part)
            if kept >= n:
                break
        if kept < n:
            raise ValueError(
                f"synthcity kept only {kept} of the {n} rows asked for in {_MAX_DRAWS} "
                "draws (its strict mode drops generated rows outside the schema learned "
                "from the records, and duplicates)."
            )
        return pd.concat(parts, ignore_index=True).head(n)


class _PublicEncoder(_Synthcity):
    """``preprocessing=public`` through the library's own ``encoder`` argument (DPGAN,
    PATE-GAN): synthcity's ``TabularEncoder`` fitted on a table of the domain's values
    alone, categorical columns coded by their public categories, ``strict`` off (the
    schema filter is the records')."""

    modes = ("library", "public")

    def _table(self, data: pd.DataFrame) -> pd.DataFrame:
        table = data.reset_index(drop=True)
        if self.preprocessing != "public":
            return table
        table = table.copy()
        for col in columns_of(self.domain_):
            if col["kind"] == "categorical":
                codes = pd.Index(list(col["categories"])).get_indexer(
                    table[col["name"]]
                )
                if (codes < 0).any():
                    raise AdapterInputError(
                        f"column {col['name']!r} holds a value outside its public "
                        "categories: fix the data or the domain."
                    )
                table[col["name"]] = codes.astype(np.int64)
        return table

    def _public_arguments(self, table: pd.DataFrame) -> dict[str, Any]:
        encoders = import_library(
            "synthcity.plugins.core.models.tabular_encoder", package=PACKAGE
        )
        values: dict[str, list[Any]] = {}
        for col in columns_of(self.domain_):
            cats = category_values(col)
            if col["kind"] == "categorical":
                values[col["name"]] = list(range(len(col["categories"])))
            elif cats is not None:
                values[col["name"]] = list(cats)
            else:
                values[col["name"]] = np.linspace(
                    float(col["lower"]), float(col["upper"]), _PUBLIC_POINTS
                ).tolist()
        rows = max(len(v) for v in values.values())
        public = pd.DataFrame(
            {name: [v[i % len(v)] for i in range(rows)] for name, v in values.items()}
        )
        public = public.astype(table.dtypes.to_dict())
        clusters = int(self.options.get("encoder_max_clusters", 5))
        encoder = encoders.TabularEncoder(max_clusters=clusters).fit(public)
        return {"encoder": encoder, "strict": False}

    def _decode(self, out: pd.DataFrame) -> pd.DataFrame:
        if self.preprocessing != "public":
            return out
        out = out.copy()
        for col in columns_of(self.domain_):
            if col["kind"] == "categorical":
                cats = list(col["categories"])
                codes = np.clip(
                    np.rint(pd.to_numeric(out[col["name"]]).to_numpy(dtype=float)),
                    0,
                    len(cats) - 1,
                ).astype(np.int64)
                out[col["name"]] = [cats[i] for i in codes]
        return out
