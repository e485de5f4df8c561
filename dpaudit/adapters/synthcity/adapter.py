"""Adapters for synthcity 0.2.12's DP plug-ins: PATE-GAN, DPGAN, PrivBayes, AIM
(docs/adapters.md).

synthcity pins torch < 2.3 and numpy < 2, so it cannot share dpaudit's environment:
build its own and audit through the worker,

    dpaudit env synthcity
    dpaudit audit --generator synthcity-pategan \\
        --python ~/.cache/dpaudit/envs/synthcity/bin/python \\
        --dataset worst-case --dataset-rows 2000

This module imports only the standard library, numpy and pandas; synthcity is imported
when a model is fitted. These four are synthcity's plug-ins that claim a formal DP
guarantee (``adsgan`` and ``decaf`` claim no epsilon).

Preprocessing: ``library`` (synthcity's own path, what its users run) everywhere;
``public`` for DPGAN and PATE-GAN. synthcity's ``Plugin.fit`` learns a schema from
the private records (each column's set of values and range), fits its encoders on
them, and in its default ``strict`` mode drops every generated row outside that schema
and every duplicate row. PrivBayes and AIM have no public route around their encoders
(PrivBayes label-encodes each column's values in the records; AIM sizes each column's
domain by its number of distinct values in the records), so ``preprocessing=public``
is refused there rather than faked (their ``column_domains=corrected`` controls patch the
library instead, docs/findings.md 8). DPGAN and PATE-GAN take a fitted ``encoder``:
with ``public`` the adapter fits synthcity's ``TabularEncoder`` on a table of the
domain's values alone, codes categorical columns by their public categories, and turns
``strict`` off (the schema filter is the records').

Seeding: synthcity seeds ``random``, numpy and torch itself from ``random_state``; the
adapter passes one derived from ``seed`` to ``fit`` and one derived from
``public_seed`` (else ``seed``) to ``generate``. Opacus (DPGAN) draws its noise from
torch's seeded generator (``secure_mode`` off, synthcity's default). The same seeds
give the same release. AIM runs its mechanism inside ``generate``: its ``sample``
draws from ``seed`` and ignores ``public_seed`` (its noise must stay fresh).

Release size: in strict mode synthcity drops generated rows outside the schema learned
from the records and every duplicate row, so ``generate(count=n)`` can return fewer
than ``n`` rows; the adapter draws again, up to 50 times, until it has ``n`` rows.

Claims, each as synthcity computes it:

- PATE-GAN: its moments accountant's ``epsilon_hat`` at its stop, recomputed from the
  moments it accumulated (``alpha_dict``); it ignores the ``delta`` it is given and
  uses ``1 / (n sqrt(n))`` (the claim carries the delta it used).
- DPGAN: Opacus's epsilon (its PRV accountant, ``PrivacyEngine.get_epsilon``) for the
  steps the discriminator took, at the budget's delta (synthcity uses
  ``1 / len(train split)`` only when given none). synthcity calibrates the noise with
  ``make_private_with_epsilon`` for ``n_iter`` epochs, so a smaller ``n_iter`` lowers
  the cost, not the claim. Its profile: Opacus's RDP of the same steps. synthcity
  trains on 80% of the records and uses the other 20% for early stopping (a
  non-private detection score every ``n_iter_print`` = 50 epochs, unaccounted); with
  ``n_iter`` below 50 the held-out rows are never read.
- PrivBayes: pure epsilon-DP as synthcity states it (half the budget on the network,
  half on the Laplace counts), delta 0.
- AIM: ``(epsilon, delta)`` as synthcity states it (zCDP ``rho = cdp_rho(epsilon,
  delta)``). synthcity runs the whole mechanism in ``generate``, not in ``fit``: every
  ``generate`` call spends the budget again on the records. The adapter turns
  ``strict`` off by default (with it, each draw that falls short reruns AIM) and
  reports how many runs a ``sample`` took (``aim_runs`` on the adapter; the claim,
  set at ``fit``, is one run's).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpaudit.adapters._common import (
    AdapterInputError,
    columns_of,
    import_library,
    moments_rdp,
    rdp_curve,
)
from dpaudit.adapters._transcript import Transcript, patched
from dpaudit.adapters.synthcity._base import (
    PACKAGE,
    _from_codes,
    _public_values,
    _PublicEncoder,
    _Synthcity,
    _to_codes,
)
from dpaudit.adapters.synthcity._measure import record_privbayes
from dpaudit.adapters.synthcity._pate import CanaryTeachers

__all__ = [
    "SynthcityAIM",
    "SynthcityDPGAN",
    "SynthcityPATEGAN",
    "SynthcityPrivBayes",
]


class SynthcityPATEGAN(CanaryTeachers, _PublicEncoder):
    """synthcity's PATE-GAN plug-in (``synthcity.plugins.privacy.plugin_pategan``).

    Options: ``preprocessing`` (``library`` or ``public``, the library's own
    ``encoder`` argument as for DPGAN) and any argument of synthcity's
    ``PATEGANPlugin`` (``n_iter``, ``n_teachers``, ``teacher_template``, ``lamda``,
    ``batch_size``, ...), e.g. ``--option n_iter=20``; ``canary``: canary teachers
    (``--teachers canary``, :class:`~dpaudit.adapters.synthcity._pate.CanaryTeachers`).
    """

    name = "synthcity-pategan"
    module = "synthcity.plugins.privacy.plugin_pategan"
    plugin = "PATEGANPlugin"
    budget_keys = ("epsilon", "delta")

    def _plugin_claim(self, plugin: Any) -> dict[str, Any]:
        model = plugin.model
        delta = float(model.delta)
        moments = np.asarray(model.alpha_dict, dtype=float)
        orders = np.arange(1, moments.size + 1, dtype=float)
        library_epsilon = float(np.min((moments - math.log(delta)) / orders))
        claim: dict[str, Any] = {
            "epsilon": library_epsilon,
            "delta": delta,
            "accountant": "synthcity PATE moments accountant (data-dependent)",
            "library_epsilon": library_epsilon,
            "num_teachers": int(model.n_teachers),
        }
        # Its moments as the RDP curve they state (alpha(l) / l at order l + 1).
        curve, left_out = moments_rdp(moments)
        claim["rdp"] = curve
        if left_out:
            claim["rdp_orders_left_out"] = left_out
        return {**claim, **self._canary_claim()}


class SynthcityDPGAN(_PublicEncoder):
    """synthcity's DPGAN plug-in (``synthcity.plugins.privacy.plugin_dpgan``): a GAN
    whose discriminator is trained with Opacus DP-SGD.

    Options: ``preprocessing`` (``library`` or ``public``) and any argument of
    ``DPGANPlugin`` (``n_iter``, default 2,000 epochs; ``batch_size``;
    ``generator_n_units_hidden``; ``dp_max_grad_norm``; ``strict``; ...). A smaller
    ``n_iter`` makes a fit affordable without changing the claim (synthcity calibrates
    the noise to reach the budget in ``n_iter`` epochs).
    """

    name = "synthcity-dpgan"
    module = "synthcity.plugins.privacy.plugin_dpgan"
    plugin = "DPGANPlugin"
    budget_keys = ("epsilon", "delta")

    def _arguments(self, data: pd.DataFrame) -> dict[str, Any]:
        return self._approximate_budget()

    @contextlib.contextmanager
    def _recording(self, model: Any) -> Iterator[None]:
        gan = import_library("synthcity.plugins.core.models.gan", package=PACKAGE)
        original = gan.PrivacyEngine
        engines: list[Any] = []

        class Recorded(original):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                engines.append(self)

        gan.PrivacyEngine = Recorded
        self.engines_ = engines
        try:
            yield
        finally:
            gan.PrivacyEngine = original

    def _plugin_claim(self, plugin: Any) -> dict[str, Any]:
        if len(self.engines_) != 1:
            raise RuntimeError(
                f"synthcity's DPGAN created {len(self.engines_)} Opacus engines in one "
                "fit, not one: the adapter cannot read its accountant."
            )
        engine = self.engines_[0]
        epsilon = float(engine.get_epsilon(self.delta))
        history = list(engine.accountant.history)
        claim: dict[str, Any] = {
            "epsilon": epsilon,
            "delta": self.delta,
            "accountant": "Opacus PRV accountant (synthcity's PrivacyEngine)",
            "library_epsilon": epsilon,
            "steps": int(sum(int(steps) for _, _, steps in history)),
            "noise_multiplier": float(history[-1][0]) if history else None,
            "sample_rate": float(history[-1][1]) if history else None,
            "poisson_sampling": False,
        }
        rdp = import_library("opacus.accountants.analysis.rdp", package=PACKAGE)
        orders = [1.25, 1.5, 1.75, *np.arange(2, 64, 0.5).tolist(), 64.0, 128.0]
        total = np.zeros(len(orders))
        for noise, rate, steps in history:
            total += np.asarray(
                rdp.compute_rdp(
                    q=rate, noise_multiplier=noise, steps=steps, orders=orders
                ),
                dtype=float,
            )
        curve, left_out = rdp_curve(orders, total)
        claim["rdp"] = curve
        if left_out:
            claim["rdp_orders_left_out"] = left_out
        return claim


class SynthcityPrivBayes(_Synthcity):
    """synthcity's PrivBayes plug-in (``synthcity.plugins.privacy.plugin_privbayes``):
    a Bayesian network chosen by the exponential mechanism, Laplace counts.

    Options: ``preprocessing`` (only ``library``), ``count_scale`` and any argument
    of ``PrivBayesPlugin`` (``K``, ``n_bins``, ``mi_thresh``, ``target_usefulness``,
    ``strict``, ...).

    ``count_scale``: ``library`` (default: synthcity 0.2.12 as shipped) or
    ``corrected``, which PATCHES THE LIBRARY inside the worker for the fit: its
    ``PrivBayes._laplace_noise_parameter`` (plugin_privbayes.py:260-265, ``2 (d - K)
    / (n epsilon)``, a probability's scale added to counts) returns ``(d - K + 1) /
    epsilon`` instead, the Laplace scale for ``d - K + 1`` count tables that one
    record changes by one each, at the half budget the library keeps for them
    (``epsilon / 2``, :90). Nothing else changes: a control that isolates that
    defect (docs/findings.md, 9), not a fix of the others (the network, the groups
    counted, the encoders).

    ``column_domains``: ``library`` (default) or ``corrected``, which PATCHES THE
    LIBRARY inside the worker for the fit: the columns' values are taken from the
    public domain (discrete columns only) where synthcity reads them from the
    records: the label encoders (plugin_privbayes.py:146-168, fitted on the records'
    values at :157), the variables' sizes (``data.nunique()``, :333-336 and :346)
    and the groups counted (only those present in the records, :271-275; with the
    patch every group of public values, an absent one counting 0, gets the
    library's own noise and clip). ``strict`` defaults to false with it (the
    plug-in's schema filter is the records'); no transcript is recorded. Nothing
    else changes (the noise scale is ``count_scale``'s; the network's selection,
    including its sensitivity's test of binary columns on the records' values,
    :404, is the library's): a control that isolates the domain (docs/findings.md,
    8).
    """

    name = "synthcity-privbayes"
    module = "synthcity.plugins.privacy.plugin_privbayes"
    plugin = "PrivBayesPlugin"
    scales: ClassVar[tuple[str, ...]] = ("library", "corrected")

    def __init__(
        self,
        *,
        count_scale: str = "library",
        column_domains: str = "library",
        **options: Any,
    ) -> None:
        for key, value in (
            ("count_scale", count_scale),
            ("column_domains", column_domains),
        ):
            if value not in self.scales:
                raise AdapterInputError(
                    f"option `{key}` must be one of {', '.join(self.scales)}; "
                    f"got {value!r}."
                )
        if column_domains != "library":
            # The plug-in's strict schema filter is one more read of the records.
            options = {"strict": False, **options}
        super().__init__(**options)
        self.count_scale = count_scale
        self.column_domains = column_domains

    def _table(self, data: pd.DataFrame) -> pd.DataFrame:
        table = data.reset_index(drop=True)
        if self.column_domains == "library":
            return table
        return _to_codes(table, _public_values(self.domain_, "column_domains"))

    def _decode(self, out: pd.DataFrame) -> pd.DataFrame:
        if self.column_domains == "library":
            return out
        return _from_codes(out, _public_values(self.domain_, "column_domains"))

    omits = (
        "the network, selected by the exponential mechanism with half the budget "
        "(plugin_privbayes.py:189-258); which groups of values are counted: only "
        "those present in the records (plugin_privbayes.py:271-275)"
    )

    @contextlib.contextmanager
    def _recording(self, model: Any) -> Iterator[None]:
        """Its noisy counts, as ``privacy_transcript`` (:mod:`._measure`)."""

        def keep(transcript: Transcript) -> None:
            self.transcript_ = transcript

        names = [c["name"] for c in columns_of(self.domain_)]
        if self.column_domains != "library":
            with self._domain_patch(), self._scale_patch():
                yield
            return
        with record_privbayes(names, self.domain_, keep), self._scale_patch():
            yield

    @contextlib.contextmanager
    def _domain_patch(self) -> Iterator[None]:
        """``column_domains=corrected``: the class docstring. The table reaches the
        library as the positions of its values among the public values (``_table``);
        the encoders are fitted on every position, the frame they return reports
        the public number of values of each column (``nunique``, read at
        plugin_privbayes.py:333-336 and :346), and every group of public values is
        counted, an absent one as 0, before the library's own noise and clip."""
        cls = import_library(self.module, package=PACKAGE).PrivBayes
        sizes = {
            str(name): len(v)
            for name, v in _public_values(self.domain_, "column_domains").items()
        }
        preprocessing = import_library("sklearn.preprocessing", package=PACKAGE)

        class PublicSeries(pd.Series):  # type: ignore[misc]
            @property
            def _constructor(self) -> type:
                return PublicSeries

            @property
            def _constructor_expanddim(self) -> type:
                return PublicFrame

            def nunique(self, dropna: bool = True) -> int:
                name = str(self.name)
                return sizes[name] if name in sizes else int(super().nunique(dropna))

        class PublicFrame(pd.DataFrame):  # type: ignore[misc]
            @property
            def _constructor(self) -> type:
                return PublicFrame

            @property
            def _constructor_sliced(self) -> type:
                return PublicSeries

            def nunique(self, axis: Any = 0, dropna: bool = True) -> pd.Series:
                return pd.Series(
                    {c: PublicSeries(self[c], name=c).nunique() for c in self.columns}
                )

        def encode(model: Any, data: pd.DataFrame) -> Any:
            encoders = {
                col: {
                    "type": "categorical",
                    "model": preprocessing.LabelEncoder().fit(
                        np.arange(sizes[str(col)])
                    ),
                }
                for col in data.columns
            }
            return PublicFrame(data.copy()), encoders

        def counts(model: Any, raw_data: Any, attributes: list[Any]) -> pd.DataFrame:
            data = raw_data.loc[:, attributes]
            groups = pd.MultiIndex.from_product(
                [range(sizes[str(a)]) for a in attributes], names=attributes
            )
            found = data.groupby(attributes).size()
            if len(attributes) == 1:
                found.index = pd.MultiIndex.from_arrays([found.index], names=attributes)
            stats = (
                found.reindex(groups, fill_value=0)
                .astype(float)
                .reset_index()
                .rename(columns={0: "count"})
            )
            scale = model._laplace_noise_parameter(*raw_data.shape)
            # The library's own draw (plugin_privbayes.py:279), from the global
            # generator synthcity seeds from random_state (as _measure.py reads it).
            library_laplace = np.random.laplace
            noise = library_laplace(0, scale=scale, size=stats.index.size)
            stats["count"] += noise
            stats.loc[stats["count"] < 0, "count"] = 0
            return pd.DataFrame(stats)

        with patched(cls, _encode=encode, _get_noisy_counts_for_attributes=counts):
            yield

    @contextlib.contextmanager
    def _scale_patch(self) -> Iterator[None]:
        """With ``count_scale=corrected``, the library's count scale patched for the
        fit (the class docstring); else nothing."""
        if self.count_scale == "library":
            yield
            return
        cls = import_library(self.module, package=PACKAGE).PrivBayes

        def corrected(model: Any, n_items: int, n_features: int) -> float:
            return float(n_features - model.K + 1) / float(model.epsilon)

        with patched(cls, _laplace_noise_parameter=corrected):
            yield

    def _plugin_claim(self, plugin: Any) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": 0.0,
            "accountant": "synthcity PrivBayes: pure DP, epsilon / 2 for the network "
            "and epsilon / 2 for the Laplace counts (its statement, nominal)",
            "degree_k": int(plugin.model.K),
            "count_scale": self.count_scale
            + (
                " (library patched by dpaudit)" if self.count_scale != "library" else ""
            ),
        } | (
            {"column_domains": "corrected (library patched by dpaudit)"}
            if self.column_domains != "library"
            else {}
        )


class SynthcityAIM(_Synthcity):
    """synthcity's AIM plug-in (``synthcity.plugins.privacy.plugin_aim``), on its
    bundled copy of private-pgm.

    Options: ``preprocessing`` (only ``library``), ``strict`` (default ``false`` here,
    see the module's docstring), ``column_domains`` and any argument of ``AIMPlugin``
    (``degree``, ``max_model_size``, ``num_marginals``, ``max_cells``).

    ``column_domains``: ``library`` (default: synthcity 0.2.12 as shipped) or
    ``corrected``, which PATCHES THE LIBRARY inside the worker for the fit: AIM's
    model domain, which synthcity sizes by each column's number of distinct values in
    the records (core/models/tabular_aim.py:87), is sized by the column's public
    values instead (discrete columns only). Nothing else changes: a control that
    isolates that defect (docs/findings.md, 8), not a fix of the others.
    """

    name = "synthcity-aim"
    module = "synthcity.plugins.privacy.plugin_aim"
    plugin = "AIMPlugin"
    budget_keys = ("epsilon", "delta")
    defaults: ClassVar[dict[str, Any]] = {"strict": False}
    domain_choices: ClassVar[tuple[str, ...]] = ("library", "corrected")

    def __init__(self, *, column_domains: str = "library", **options: Any) -> None:
        if column_domains not in self.domain_choices:
            raise AdapterInputError(
                "option `column_domains` must be one of "
                f"{', '.join(self.domain_choices)}; got {column_domains!r}."
            )
        super().__init__(**options)
        self.column_domains = column_domains

    def _arguments(self, data: pd.DataFrame) -> dict[str, Any]:
        return self._approximate_budget()

    def _table(self, data: pd.DataFrame) -> pd.DataFrame:
        table = data.reset_index(drop=True)
        if self.column_domains == "library":
            return table
        return _to_codes(table, _public_values(self.domain_, "column_domains"))

    def _decode(self, out: pd.DataFrame) -> pd.DataFrame:
        if self.column_domains == "library":
            return out
        return _from_codes(out, _public_values(self.domain_, "column_domains"))

    @contextlib.contextmanager
    def _recording(self, model: Any) -> Iterator[None]:
        """With ``column_domains=corrected``, PATCHES THE LIBRARY for the fit: the
        ``Domain`` that ``TabularAIM.fit`` builds from ``X.nunique()``
        (core/models/tabular_aim.py:87-88, each column's number of distinct values
        in the records) gets each column's number of public values instead (the
        table is handed over as the positions of its values among them, and the
        release decoded back). Nothing else changes: a control that isolates that
        defect (docs/findings.md, 8); else nothing."""
        if self.column_domains == "library":
            yield
            return
        aim = import_library(
            "synthcity.plugins.core.models.tabular_aim", package=PACKAGE
        )
        sizes = {
            name: len(v)
            for name, v in _public_values(self.domain_, "column_domains").items()
        }
        original = aim.Domain

        def public_domain(attrs: Any, shape: Any) -> Any:
            return original(attrs, [sizes[str(a)] for a in attrs])

        with patched(aim, Domain=public_domain):
            yield

    def _plugin_claim(self, plugin: Any) -> dict[str, Any]:
        rho = float(plugin.model.model.rho)
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accountant": "synthcity AIM: zCDP rho = cdp_rho(epsilon, delta) per run "
            "of the mechanism (it runs in generate)",
            "rho": rho,
            "zcdp_rho": rho,
        } | (
            {"column_domains": "corrected (library patched by dpaudit)"}
            if self.column_domains != "library"
            else {}
        )

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        """``n`` rows; ``aim_runs`` counts the runs of the mechanism they took.

        synthcity runs AIM's privacy mechanism here, so every draw comes from
        ``seed`` (fresh in every round) and ``public_seed`` is ignored: noise held
        fixed by a public seed would be no privacy noise (docs/plugins.md)."""
        self.aim_runs = 0
        return super().sample(n, seed=seed, public_seed=None)

    def _generate(self, n: int, random_state: int) -> pd.DataFrame:
        mechanism = self.model_.model.model
        original = mechanism.run
        runs = 0

        def counted(*args: Any, **kwargs: Any) -> Any:
            nonlocal runs
            runs += 1
            return original(*args, **kwargs)

        mechanism.run = counted
        try:
            out = super()._generate(n, random_state)
        finally:
            mechanism.run = original
        self.aim_runs = getattr(self, "aim_runs", 0) + runs
        return out
