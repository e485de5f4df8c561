"""The template every library adapter follows (docs/adapters.md, docs/design.md).

An adapter is a plain plug-in (docs/plugins.md): ``__init__`` takes the budget and the
options, ``fit`` trains on the records and states ``privacy_claim`` (and, where the
adapter records one, ``privacy_transcript``), ``sample`` draws rows. The steps every
adapter takes in the same order are :class:`LibraryAdapter`'s; what differs from one
library to the next is a hook a library's base class fills in:

``__init__``
    1. ``epsilon`` checked (a finite number > 0);
    2. ``delta`` checked (:meth:`~LibraryAdapter._check_delta`);
    3. ``preprocessing`` checked (:meth:`~LibraryAdapter._check_preprocessing`);
    4. the other options kept for the library.
``fit``
    5. the library imported, or one line saying how to get it (the declaration's
       import check, :meth:`~LibraryAdapter._import`);
    6. the domain checked and kept (``domain_``), no transcript yet;
    7. what the library needs of the table and budget (:meth:`~LibraryAdapter._check_fit`);
    8. the globals the library draws from seeded (:meth:`~LibraryAdapter._seed_fit`);
    9. the table handed to the library (:meth:`~LibraryAdapter._table`);
    10. the model built, options the library refuses said as bad input
        (:meth:`~LibraryAdapter._build`);
    11. trained, with what it prints sent to standard error and its recorders (the
        transcript recorder, the ledgers) around it; a fit stopped after its last
        measurement (``measure_only``) noted (:meth:`~LibraryAdapter._train`);
    12. the claim: the library's own reading (:meth:`~LibraryAdapter._claim`), with
        the library's installed version, the nominal budget, the preprocessing and
        what the transcript covers; the transcript stated.
``sample``
    13. refused before ``fit`` and after a fit stopped after its measurements;
    14. the draws' seed chosen (``public_seed`` when given: sampling is
        post-processing; :meth:`~LibraryAdapter._sample_seed`) and the globals seeded
        from it (:meth:`~LibraryAdapter._seed_sample`);
    15. the rows drawn, quietly (:meth:`~LibraryAdapter._draw`) and decoded
        (:meth:`~LibraryAdapter._decode`);
    16. cast to the domain's columns and kinds (post-processing).

Standard library, numpy and pandas only (the module runs in the library's own
interpreter).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

import pandas as pd

from dpaudit.adapters._common import (
    cast_release,
    check_epsilon,
    check_preprocessing,
    columns_of,
    import_library,
    installed,
    quiet,
    seed_globals,
)
from dpaudit.adapters._transcript import (
    MeasurementsDone,
    Transcript,
    refuse_stopped,
    transcript_claim,
)
from dpaudit.adapters.libraries import Library

__all__ = ["LibraryAdapter"]


class LibraryAdapter:
    """One synthesizer of a library behind the plug-in protocol: the steps every
    adapter shares (the module's docstring lists them), and the hooks a library's
    base class fills in."""

    library: ClassVar[Library]
    """The library's declaration (``dpaudit/adapters/NAME/__init__.py``)."""
    # What its transcript records (None: no transcript) and whether `measure_only`
    # can stop its fit after the last measurement; the private steps it leaves out.
    records: ClassVar[str | None] = None
    stops: ClassVar[bool] = False
    omits: ClassVar[str] = ""

    epsilon: float
    delta: float
    preprocessing: str
    options: dict[str, Any]
    domain_: dict[str, Any]
    model_: Any
    transcript_: Transcript | None
    stopped_: bool
    privacy_claim: dict[str, Any]
    privacy_transcript: list[dict[str, Any]]

    def __init__(
        self, *, epsilon: float, delta: float, preprocessing: str, **options: Any
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = self._check_delta(delta)
        self.preprocessing = self._check_preprocessing(preprocessing)
        self.options = dict(options)

    # -- the protocol ----------------------------------------------------------------

    def fit(
        self,
        data: pd.DataFrame,
        *,
        domain: dict[str, Any],
        seed: int,
        public_seed: int | None = None,
    ) -> LibraryAdapter:
        """Fits the model on ``data``; sets ``privacy_claim`` (and
        ``privacy_transcript`` where the adapter records one)."""
        library = self._import()
        columns_of(domain)
        self.domain_ = domain
        self.transcript_ = None
        self.stopped_ = False
        self._check_fit(data)
        self._seed_fit(seed, public_seed)
        table = self._table(data)
        with quiet():
            model = self._build(library, table, seed)
            try:
                model = self._train(model, table, seed)
            except MeasurementsDone:
                self.stopped_ = True
        self.model_ = model
        claim: dict[str, Any] = {
            "library": installed(self.library.distribution),
            "nominal_epsilon": self.epsilon,
            "preprocessing": self.preprocessing,
        }
        claim.update(self._claim(model))
        claim.update(
            transcript_claim(self.transcript_, stopped=self.stopped_, omits=self.omits)
        )
        self.privacy_claim = claim
        if self.transcript_ is not None:
            self.privacy_transcript = self.transcript_.records
        return self

    def sample(
        self, n: int, *, seed: int, public_seed: int | None = None
    ) -> pd.DataFrame:
        """``n`` rows drawn from the fitted model (post-processing: the draws come
        from ``public_seed`` when given)."""
        if not hasattr(self, "model_"):
            raise RuntimeError("call `fit` first.")
        refuse_stopped(self)
        chosen = self._sample_seed(seed, public_seed)
        self._seed_sample(chosen)
        with quiet():
            out = self._draw(int(n), chosen)
        return cast_release(self._decode(out), self.domain_)

    # -- the hooks -------------------------------------------------------------------

    def _check_delta(self, delta: Any) -> float:
        """``delta``, checked (a number in [0, 1) unless the library needs more)."""
        return float(delta)

    def _check_preprocessing(self, value: Any) -> str:
        """The ``preprocessing`` option, checked."""
        return check_preprocessing(value)

    def _import(self) -> Any:
        """The library (its declared import check's module)."""
        return import_library(
            self.library.module, package=self.library.package, extra=self.library.extra
        )

    def _check_fit(self, data: pd.DataFrame) -> None:
        """Refuses a table or budget the library cannot fit (nothing by default)."""

    def _seed_fit(self, seed: int, public_seed: int | None) -> None:
        """Seeds the globals the fit draws from: everything from ``seed``."""
        seed_globals(seed)

    def _table(self, data: pd.DataFrame) -> Any:
        """The records as the library takes them."""
        return data.reset_index(drop=True)

    def _build(self, library: Any, table: Any, seed: int) -> Any:
        """The library's model, unfitted (bad options are AdapterInputErrors)."""
        raise NotImplementedError

    def _train(self, model: Any, table: Any, seed: int) -> Any:
        """Trains ``model`` on ``table`` under the adapter's recorders and returns the
        fitted model."""
        with self._recording(model):
            model.fit(table)
        return model

    @contextlib.contextmanager
    def _recording(self, model: Any) -> Iterator[None]:
        """What the fit needs recorded (a transcript, a ledger): nothing by default."""
        yield

    def _claim(self, model: Any) -> dict[str, Any]:
        """The claim as the library computed it (``epsilon``, ``delta``,
        ``accountant`` and what else it states)."""
        raise NotImplementedError

    def _sample_seed(self, seed: int, public_seed: int | None) -> int:
        """The seed of the draws: ``public_seed`` when given (post-processing)."""
        return seed if public_seed is None else public_seed

    def _seed_sample(self, seed: int) -> None:
        """Seeds the globals the draws come from."""
        seed_globals(seed)

    def _draw(self, n: int, seed: int) -> Any:
        """``n`` rows from the fitted model, as the library returns them."""
        return self.model_.sample(n)

    def _decode(self, out: Any) -> Any:
        """The library's rows in the domain's values (as they are by default)."""
        return out

    def _transcript(self) -> Transcript:
        """The fit's transcript, once made (for the recorders' callbacks)."""
        assert self.transcript_ is not None
        return self.transcript_
