"""Canary teachers inside synthcity 0.2.12's PATE-GAN (``--teachers canary``;
docs/adapters.md, "Canary teachers inside the libraries"; line numbers are the
library's, synthcity/plugins/privacy/plugin_pategan.py).

Every iteration of ``PATEGAN.fit`` (plugin_pategan.py:257-309) creates ``Teachers``
and fits them (:271): ``Teachers.fit`` draws a fresh permutation of the encoded rows
(:72) and gives teacher ``t`` the slice ``[t * spt, (t + 1) * spt)``, ``spt = int(n /
n_teachers)`` (:74-80, :247), then fits a fresh model on those rows (label 1) and as
many generated rows (label 0) (:82-105). Every discriminator step asks
``teachers.pate_lamda(batch)`` (:282): each teacher's ``predict``, ``n1`` the count of
1s, ``lap_noise`` numpy's global Laplace draw at scale ``1 / lamda`` (:134), the label
``(n1 + noise) / (n0 + n1) > 0.5``; the batch is charged (``_update_alpha``, :287) only when fewer than
half its labels say "real" (:283-284).

:func:`canary_pategan` replaces, for one fit, ``Teachers`` in the module by a subclass
whose models are canaries: ``Teachers.fit`` runs as shipped (its permutation, slices
and generated rows), but the model it fits records whether the rows it is given as
"real" hold the target, and predicts 1 for every row exactly then. ``pate_lamda``
runs as shipped, its ``np.random.laplace`` read (value and scale); every answered
query is recorded as ``n1 + noise``, what the label thresholds. ``_update_alpha`` is
counted, so the claim states how many answered queries the accountant charged.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpaudit.adapters._canary import (
    CanaryVotes,
    RecordingNumpy,
    check_canary,
    target_mask,
)
from dpaudit.adapters._transcript import Transcript, patched, transcript_claim

__all__ = ["CanaryTeachers", "canary_pategan"]

_MODULE = "synthcity.plugins.privacy.plugin_pategan"


class _CanaryModel:
    """A canary teacher's model: fitted, it holds the target exactly when the rows
    labelled 1 ("real") include one equal to an encoded target row."""

    def __init__(self, targets: np.ndarray) -> None:
        self.targets = targets
        self.holds = False

    def fit(self, x: Any, y: Any) -> _CanaryModel:
        real = np.asarray(x, dtype=np.float64)[np.asarray(y) == 1]
        self.holds = any(bool(np.any(np.all(real == t, axis=1))) for t in self.targets)
        return self

    def predict(self, x: Any) -> np.ndarray:
        return np.full(len(x), 1 if self.holds else 0, dtype=np.int64)


@contextlib.contextmanager
def canary_pategan(mask: np.ndarray, votes: CanaryVotes) -> Iterator[dict[str, int]]:
    """Canary teachers for one PATE-GAN fit on a table whose rows equal to the target
    are ``mask``; ``votes`` records every answered query. Yields the counts of
    ``queries_charged`` (by ``_update_alpha``)."""
    module: Any = importlib.import_module(_MODULE)
    real_teachers, real_update = module.Teachers, module.PATEGAN._update_alpha
    counts = {"queries_charged": 0}

    class Teachers(real_teachers):  # type: ignore[misc, valid-type]
        def fit(self, X: np.ndarray, generator: Any) -> Any:
            if len(X) != len(mask):
                raise RuntimeError(
                    f"synthcity encoded {len(X)} rows of a {len(mask)}-row table."
                )
            targets = np.asarray(X, dtype=np.float64)[mask]
            self.model_template = lambda **_: _CanaryModel(targets)
            self.model_args: dict[str, Any] = {}
            return super().fit(X, generator)

        def pate_lamda(self, x: np.ndarray) -> Any:
            draws: list[tuple[Any, float]] = []
            with patched(module, np=RecordingNumpy(draws)):
                n0, n1, out = super().pate_lamda(x)
            if len(draws) != 1:
                raise RuntimeError(f"pate_lamda drew {len(draws)} noise arrays.")
            noise, scale = draws[0]
            votes.add(np.asarray(n1), noise, scale, 1)  # a model per teacher (:104)
            return n0, n1, out

    def update(self: Any, n0: Any, n1: Any) -> Any:
        counts["queries_charged"] += int(np.asarray(n0).size)
        return real_update(self, n0, n1)

    with (
        patched(module, Teachers=Teachers),
        patched(module.PATEGAN, _update_alpha=update),
    ):
        yield counts


class CanaryTeachers:
    """What synthcity's PATE-GAN adapter adds for ``--teachers canary``: the option
    ``canary`` (the target record, passed by the audit), the fit's wrapper, the
    transcript and the claim's ``canary_*`` keys. Without ``canary`` the fit is the
    library's, and no transcript is stated."""

    canary_teachers: ClassVar[bool] = True
    domain_: dict[str, Any]

    def __init__(self, *, canary: Any = None, **options: Any) -> None:
        self.canary = check_canary(canary)
        super().__init__(**options)

    def _arguments(self, data: pd.DataFrame) -> dict[str, Any]:
        self.table_ = data  # the table the plug-in fits (its rows, in order)
        return super()._arguments(data)  # type: ignore[misc, no-any-return]

    @contextlib.contextmanager
    def _recording(self, model: Any) -> Iterator[None]:
        self.canary_: dict[str, Any] | None = None
        if self.canary is None:
            yield
            return
        mask = target_mask(self.table_, self.canary)
        votes = CanaryVotes(self.canary, self.domain_, int(mask.sum()))
        with canary_pategan(mask, votes) as counts:
            yield
        transcript = Transcript(votes.columns, [None] * len(votes.columns))
        transcript.records.extend(votes.records())
        self.privacy_transcript = transcript.records
        omits = (
            "nothing answered: every query the teachers answered is recorded (its "
            "noisy count n1 + noise, which the library thresholds into the label, "
            "plugin_pategan.py:134-137), charged or not (plugin_pategan.py:283-287); "
            "teacher training is the adversary's"
        )
        self.canary_ = {
            **votes.claim(),
            "canary_queries_charged": counts["queries_charged"],
            **transcript_claim(transcript, stopped=False, omits=omits),
        }

    def _canary_claim(self) -> dict[str, Any]:
        """The claim's ``canary_*`` and ``transcript_*`` keys (none without)."""
        return dict(self.canary_ or {})
