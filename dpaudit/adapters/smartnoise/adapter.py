"""Adapters for the synthesizers of smartnoise-synth 1.0.8 (docs/adapters.md).

Each class is a plain plug-in (docs/plugins.md) around one synthesizer of
``snsynth.Synthesizer.create``: ``smartnoise-pategan``, ``smartnoise-mst``,
``smartnoise-aim``, ``smartnoise-mwem``, ``smartnoise-dpctgan``,
``smartnoise-patectgan``, ``smartnoise-dpgan`` and ``smartnoise-pacsynth``. The module imports only the
standard library, numpy and pandas; ``snsynth`` (and torch, which it brings) are
imported when a model is fitted, so the classes load, and their signatures can be
read, where smartnoise is not installed. Install it with ``pip install
'dpaudit[smartnoise]'``, or in its own environment and pass ``--python``.

Options (``--option KEY=VALUE``):

- ``preprocessing``: ``public`` (default) builds the library's own transformer from the
  public domain and fits it on a table made of the domain's categories and bounds, so
  nothing is read from the private records; ``library`` calls the library's fit with
  the column hints its users pass (binary and categorical columns as
  ``categorical_columns``, integer ones as ``ordinal_columns``, continuous ones as
  ``continuous_columns``): the library then learns each column's set of values from
  the private data, which is what its users actually run.
- ``preprocessor_eps``: the budget the library spends inferring bounds of continuous
  columns under ``preprocessing=library`` (default 0: the library refuses continuous
  columns without it).
- ``bins``: bins per continuous column for the marginal-based synthesizers (MST,
  AIM, MWEM) under ``preprocessing=public`` (default 10).
- ``measure_only``: MST only (default false): the fit stops once its last measurement
  is recorded (``privacy_transcript``), before the estimation that builds the model;
  such a model cannot sample (docs/adapters.md, "White-box transcripts").
- ``canary``, ``train_teachers``: PATEGAN's, PATECTGAN's canary teachers (--teachers).
- anything else goes to the synthesizer's constructor (e.g. ``epochs=5`` for the GANs).

Seeding: before every ``fit`` and ``sample`` the adapter seeds the global generators
the library draws from (``random``, numpy's legacy generator, torch). What cannot be
seeded is said per class: MST's, AIM's and MWEM's measurement noise comes from
OpenDP's own generator (``snsynth.utils.gaussian_noise`` and ``laplace_noise`` call an
OpenDP measurement, which draws from the operating system's CSPRNG); DPCTGAN's and
DPGAN's Opacus engine reseeds torch from ``os.urandom``; pac-synth draws from its own
Rust generator. Two fits with the same seed differ there (the audit stays sound:
every round's randomness is fresh anyway).

``public_seed``: every class accepts it (docs/plugins.md). ``sample`` draws from it:
sampling rows from a fitted model is post-processing, so the guarantee holds for every
fixed value. ``fit`` draws everything from ``seed``: DP-SGD's accountant (DPCTGAN,
DPGAN) relies on secret random batches; the marginal-based synthesizers and synthcity
mix their privacy noise with their other draws in one generator; and PATEGAN's teacher
count ``int(n / 1000)`` makes the use of torch's stream depend on the data size (see
:class:`SmartnoisePATEGAN`). For auditing; the library's documentation governs its use.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpaudit.adapters._common import (
    AdapterInputError,
    import_library,
)
from dpaudit.adapters._ledgers import MomentsLedger, OpacusLedger
from dpaudit.adapters._transcript import (
    patched,
)
from dpaudit.adapters.smartnoise._base import _Smartnoise
from dpaudit.adapters.smartnoise._measure import (
    cdp_rho,
    known_rho,
    record_aim,
    record_mst,
    record_mwem,
)
from dpaudit.adapters.smartnoise._pate import CanaryTeachers

__all__ = [
    "SmartnoiseAIM",
    "SmartnoiseDPCTGAN",
    "SmartnoiseDPGAN",
    "SmartnoiseMST",
    "SmartnoiseMWEM",
    "SmartnoisePACSynth",
    "SmartnoisePATECTGAN",
    "SmartnoisePATEGAN",
]


class SmartnoisePATEGAN(CanaryTeachers, _Smartnoise):
    """smartnoise-synth's PATEGAN (``snsynth.pytorch.nn.pategan.PATEGAN``).

    Claim: the library's own moments-accountant epsilon at its stop (e.g. 1.0074 for
    a budget of 1 on 2,000 rows), with ``iterations`` (generator steps), ``queries``
    (noisy votes charged) and ``num_teachers``: ``int(n / 1000)``, so it needs 1,000
    rows. Fully seedable, from ``seed`` (vote noise from numpy, the rest from torch).

    ``fit`` takes nothing from ``public_seed``: the teacher count depends on the number
    of records, so how many torch draws the teachers' initialisation consumes, and with
    it every later draw, depends on the data. With torch's seed held fixed, worlds D
    (1,999 rows, one teacher) and D + target (2,000 rows, two) separated perfectly
    (measured: VIOLATION, eps_emp 1.308, AUC 1.0 at 50 rounds per world, even with
    public preprocessing). ``canary``, ``train_teachers``: :class:`CanaryTeachers`.
    """

    synth, pate_module = "pategan", "snsynth.pytorch.nn.pategan"
    style = "gan"
    accountant = "smartnoise PATE moments accountant (data-dependent)"
    min_rows = 1000

    def _too_few_rows(self, rows: int) -> str:
        return (
            f"smartnoise's PATEGAN splits the table into int(n / 1000) teachers and "
            f"needs at least 1,000 rows. Got {rows}. Audit it on a larger table "
            "(e.g. --dataset worst-case --dataset-rows 2000)."
        )

    def _fit_model(
        self, model: Any, data: pd.DataFrame, kwargs: dict[str, Any]
    ) -> None:
        module = __import__("snsynth.pytorch.nn.pategan", fromlist=["moments_acc"])
        with MomentsLedger(module) as ledger, self._canary_fit(model, data):
            model.fit(data, **kwargs)
        self.ledger_ = {"ledger": ledger}

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        ledger: MomentsLedger = self.ledger_["ledger"]
        delta = float(model.delta)
        library_epsilon = ledger.epsilon(delta)
        student_iters = int(model.student_iters)
        extras: dict[str, Any] = {
            "iterations": ledger.calls // max(student_iters, 1),
            "queries": ledger.queries,
            "num_teachers": int(model.num_teachers),
            "library_delta": delta,
            **self._canary_claim(),
        }
        if library_epsilon is not None:
            extras["library_epsilon"] = library_epsilon
            extras["epsilon"] = library_epsilon
        return extras

    def _profile(self, model: Any) -> dict[str, Any]:
        ledger: MomentsLedger = self.ledger_["ledger"]
        return ledger.profile()


class SmartnoisePATECTGAN(CanaryTeachers, _Smartnoise):
    """smartnoise-synth's PATECTGAN: CTGAN trained with PATE teachers.

    Claim: the library's moments-accountant epsilon at its stop, ``queries`` charged and
    ``accountant_updates``. Fully seedable (numpy and torch global generators, from
    ``seed``); ``public_seed`` only for ``sample``. ``canary``: as PATEGAN's.
    """

    synth, pate_module = "patectgan", "snsynth.pytorch.nn.patectgan"
    style = "gan"
    accountant = "smartnoise PATE moments accountant (data-dependent)"

    def _fit_model(
        self, model: Any, data: pd.DataFrame, kwargs: dict[str, Any]
    ) -> None:
        module = __import__("snsynth.pytorch.nn.patectgan", fromlist=["moments_acc"])
        with MomentsLedger(module) as ledger, self._canary_fit(model, data):
            model.fit(data, **kwargs)
        self.ledger_ = {"ledger": ledger}

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        ledger: MomentsLedger = self.ledger_["ledger"]
        extras: dict[str, Any] = {
            "accountant_updates": ledger.calls,
            "queries": ledger.queries,
            **self._canary_claim(),
        }
        library_epsilon = ledger.epsilon(float(model.delta))
        if library_epsilon is not None:
            extras["library_epsilon"] = library_epsilon
            extras["epsilon"] = library_epsilon
        return extras

    def _profile(self, model: Any) -> dict[str, Any]:
        ledger: MomentsLedger = self.ledger_["ledger"]
        return ledger.profile()


_OPACUS_RESEEDS = (
    "Not reproducible: Opacus 0.14's PrivacyEngine (secure_rng off, smartnoise's "
    "setting) reseeds torch's global generator from os.urandom when it is created, so "
    "the DP-SGD noise, the batches and every later torch draw of the fit come from the "
    "operating system, whatever the seed."
)


class SmartnoiseDPCTGAN(_Smartnoise):
    """smartnoise-synth's DPCTGAN: CTGAN trained with DP-SGD (Opacus).

    Claim: the last epsilon of the library's Opacus RDP accountant
    (``epsilon_list``) and the number of accountant reads as ``iterations``.
    Not reproducible: Opacus 0.14's ``PrivacyEngine`` (``secure_rng`` off, as smartnoise
    creates it) reseeds torch's global generator from ``os.urandom``, so the DP-SGD
    noise and batches come from the operating system. ``public_seed`` only for
    ``sample``: DP-SGD's amplification needs secret batches.
    """

    synth = "dpctgan"
    style = "gan"
    accountant = "Opacus RDP (DP-SGD)"

    def _fit_model(
        self, model: Any, data: pd.DataFrame, kwargs: dict[str, Any]
    ) -> None:
        with OpacusLedger() as ledger:
            model.fit(data, **kwargs)
        self.ledger_ = {"opacus": ledger}

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        spent = [float(e) for e in getattr(model, "epsilon_list", [])]
        extras: dict[str, Any] = {
            "iterations": len(spent),
            "unseeded_noise": _OPACUS_RESEEDS,
        }
        if spent:
            extras["library_epsilon"] = spent[-1]
            extras["epsilon"] = spent[-1]
        ledger: OpacusLedger = self.ledger_["opacus"]
        if ledger.engines:
            extras["opacus_steps"] = int(ledger.engines[-1].steps)
        return extras

    def _profile(self, model: Any) -> dict[str, Any]:
        ledger: OpacusLedger = self.ledger_["opacus"]
        return ledger.profile()


class SmartnoiseDPGAN(_Smartnoise):
    """smartnoise-synth's DPGAN: a GAN trained with DP-SGD (Opacus). The library keeps
    no record of what it spent, so the claim is the nominal budget. Not reproducible
    (Opacus reseeds torch from ``os.urandom``, as for DPCTGAN); ``public_seed`` only
    for ``sample``."""

    synth = "dpgan"
    style = "gan"
    accountant = "Opacus RDP (DP-SGD)"

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        return {"unseeded_noise": _OPACUS_RESEEDS}


class SmartnoisePACSynth(_Smartnoise):
    """smartnoise-synth's ``pacsynth`` (``AggregateSeededSynthesizer``, the Rust
    pac-synth library's DP aggregate-seeded synthesizer) for discrete columns.

    Claim: the nominal budget. Not reproducible: pac-synth draws its noise and its
    samples from its own Rust generator, which Python cannot seed.
    """

    synth = "pacsynth"
    style = "cube"
    accountant = "pac-synth (epsilon, delta) composition"
    # pac-synth leaves a cell empty where a synthesized record lacks the attribute
    # (about 3% of 2,000 rows on the worst case); the library decodes it as None with
    # its own nullable encoders (its `fit` passes nullable=True), and so must the
    # public ones. `cast_release` writes the column's first public value there.
    nullable = True

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        return {"unseeded_noise": "pac-synth's own Rust generator (fit and sample)"}


class SmartnoiseMST(_Smartnoise):
    """smartnoise-synth's MST (Private-PGM's winning NIST mechanism).

    Claim: the nominal budget, converted by the library to zero-concentrated DP with
    OpenDP (``rho``). Not reproducible: the Gaussian measurements come from OpenDP's
    own CSPRNG; the exponential-mechanism selections and the sampling (numpy's global
    generator) are seeded. Transcript: the one-way and the tree's two-way marginals
    (:func:`record_mst`); ``measure_only`` stops before the final estimation.
    """

    synth = "mst"
    style = "cube"
    accountant = "zCDP (OpenDP), converted to (epsilon, delta)"
    records = "Gaussian marginals (one-way, then the tree's two-way)"
    stops = True
    omits = (
        "the exponential-mechanism selection of the tree's edges (rho / 3; "
        "snsynth/mst/mst.py:122, 190-218)"
    )

    def _fit_model(
        self, model: Any, data: pd.DataFrame, kwargs: dict[str, Any]
    ) -> None:
        with (
            known_rho("snsynth.mst.mst"),
            record_mst(
                model, lambda: self._transcript_of(model), stop=self.measure_only
            ),
        ):
            model.fit(data, **kwargs)

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        return {
            "rho": cdp_rho(self.epsilon, self.delta),
            "unseeded_noise": "OpenDP Gaussian measurements",
        }

    def _profile(self, model: Any) -> dict[str, Any]:
        """``zcdp_rho``: the rho MST spends (``cdp_rho(epsilon, delta)``, split in
        three: one-way measurements, exponential-mechanism selections, the selected
        marginals' Gaussian measurements)."""
        return {"zcdp_rho": cdp_rho(self.epsilon, self.delta)}


class SmartnoiseAIM(_Smartnoise):
    """smartnoise-synth's AIM (adaptive and iterative marginal selection).

    Claim: the nominal budget, with the library's ``rho`` and the number of selection
    rounds as ``iterations``. Not reproducible: the Gaussian measurements come from
    OpenDP's own CSPRNG; the selections and the sampling are seeded. Transcript: every
    Gaussian marginal it measures (:func:`record_aim`).
    """

    synth = "aim"
    style = "cube"
    accountant = "zCDP (OpenDP), converted to (epsilon, delta)"
    records = "Gaussian marginals (one-way, then each selected one)"
    omits = (
        "the exponential-mechanism selection of each round's marginal (a tenth of "
        "each round's rho; snsynth/aim/aim.py:148-160, 198)"
    )

    def _fit_model(
        self, model: Any, data: pd.DataFrame, kwargs: dict[str, Any]
    ) -> None:
        select = model._worst_approximated
        rounds = [0]

        def counted(*args: Any, **kw: Any) -> Any:
            rounds[0] += 1
            return select(*args, **kw)

        with (
            patched(model, _worst_approximated=counted),  # this instance only
            known_rho("snsynth.aim.aim"),
            record_aim(model, lambda: self._transcript_of(model)),
        ):
            model.fit(data, **kwargs)
        self.ledger_ = {"rounds": rounds[0]}

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        return {
            "rho": float(model.rho),
            "iterations": int(self.ledger_["rounds"]),
            "unseeded_noise": "OpenDP Gaussian measurements",
        }

    def _profile(self, model: Any) -> dict[str, Any]:
        """``zcdp_rho``: the rho AIM budgets (``model.rho``; its rounds stop before
        spending more)."""
        rho = float(model.rho)
        return {"zcdp_rho": rho} if rho > 0 else {}


class SmartnoiseMWEM(_Smartnoise):
    """smartnoise-synth's MWEM (multiplicative weights, exponential mechanism).

    Pure epsilon-DP (delta 0). Claim: the nominal budget, with the library's own sum of
    what it spent (``library_epsilon``) and ``iterations``. Not reproducible: the
    Laplace measurements come from OpenDP's own CSPRNG. Transcript: every Laplace
    answer it measures (:func:`record_mwem`).
    """

    synth = "mwem"
    style = "cube"
    accountant = "pure epsilon-DP composition (MWEM)"
    takes_delta = False
    records = "Laplace query answers (each selected cuboid's marginal queries)"
    omits = (
        "the exponential-mechanism selection of each query (half the budget; "
        "snsynth/mwem.py:503), and the histogram's range of codes, read from the "
        "records without noise (snsynth/mwem.py:541-581)"
    )

    range_choices: ClassVar[tuple[str, ...]] = ("library", "corrected")

    def __init__(self, *, ranges: str = "library", **options: Any) -> None:
        if ranges not in self.range_choices:
            raise AdapterInputError(
                f"option `ranges` must be one of {', '.join(self.range_choices)}; "
                f"got {ranges!r}."
            )
        super().__init__(**options)
        self.ranges = ranges

    def _fit_model(
        self, model: Any, data: pd.DataFrame, kwargs: dict[str, Any]
    ) -> None:
        with (
            record_mwem(model, lambda: self._transcript_of(model)),
            self._ranges_patch(model),
        ):
            model.fit(data, **kwargs)

    @contextlib.contextmanager
    def _ranges_patch(self, model: Any) -> Iterator[None]:
        """With ``ranges=corrected``, PATCHES THE LIBRARY for the fit: MWEM's
        ``_histogram_from_data_attributes`` (snsynth/mwem.py:541-583), which sizes
        each column's histogram from the records' min and max of the encoded column,
        is replaced on this model by the same code with each column's range
        ``0 .. cardinality - 1`` of the fitted transformer (under
        ``preprocessing=public``, the public domain). Nothing else changes: a control
        that isolates that defect (docs/findings.md, 2); else nothing."""
        if self.ranges == "library":
            yield
            return
        mwem = import_library("snsynth.mwem", package=self.library.package)

        def public_ranges(data: Any, splits: Any = ()) -> list[Any]:
            cards = model._transformer.cardinality
            if any(card is None for card in cards):
                raise AdapterInputError(
                    "option `ranges=corrected` needs every column categorical or "
                    "binned (a transformer cardinality); got a continuous column."
                )
            histograms = []
            for split in splits:
                sizes = [int(cards[i]) for i in split]
                for i, size in zip(split, sizes, strict=True):
                    model.mins_maxes[str(i)] = (0, size - 1)
                    model.scale[str(i)] = 1
                histogram, bins = np.histogramdd(
                    data[:, split],
                    bins=sizes,
                    range=[(0, size - 1) for size in sizes],
                )
                histograms.append(mwem.Histogram(histogram, sizes, bins, split))
            return histograms

        with patched(model, _histogram_from_data_attributes=public_ranges):
            yield

    def _claim_extras(self, model: Any) -> dict[str, Any]:
        return {
            "library_epsilon": float(model.spent),
            "iterations": int(getattr(model, "max_iterations", 0)),
            "unseeded_noise": "OpenDP Laplace measurements",
        } | (
            {"ranges": "corrected (library patched by dpaudit)"}
            if self.ranges != "library"
            else {}
        )
