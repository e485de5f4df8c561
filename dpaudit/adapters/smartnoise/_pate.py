"""Canary teachers inside smartnoise-synth 1.0.8's PATEGAN and PATECTGAN
(``--teachers canary``; docs/adapters.md, "Canary teachers inside the libraries"; line
numbers are the library's, snsynth/pytorch/nn/pategan.py, patectgan.py and
privacy_utils.py).

PATEGAN splits the encoded table with ``np.array_split`` into ``int(n / 1000)``
partitions (pategan.py:80-86), one ``DataLoader`` per teacher; teacher ``i``'s own
discriminator trains on ``loader[i]`` only (pategan.py:108-111, 147-175). PATECTGAN
splits it into ``int(n / sample_per_teacher) + 1`` partitions (patectgan.py:201, 218)
and teacher ``i`` trains on partition ``i`` (patectgan.py:318-323), but every teacher
is one and the same discriminator object (``[discriminator for i in ...]``,
patectgan.py:255; the student too, :252). Every student step asks ``pate(fake_data,
teacher_disc, noise_multiplier)`` (pategan.py:181, patectgan.py:425): each teacher's
``output > 0.5`` is its vote, ``votes`` their sum, ``noise`` numpy's global Laplace
draw at scale ``1 / lap_scale`` (privacy_utils.py:12-31), the label ``votes + noise >
k / 2``; ``moments_acc`` charges it.

:func:`canary_pate` wraps, for one fit, the library module's ``np`` (its
``array_split`` is read: the partitions, compared with the target encoded by the
library's own fitted transformer) and ``pate`` (the library's function runs, on canary
teachers: teacher ``i`` outputs 1 exactly when a partition whose rows train its model
holds the target; with one model for all teachers, all of them). The Laplace draw is
read from the library's own call of ``np.random.laplace`` (its value and scale) and the
vote recorded as ``votes + noise``, what the label thresholds. Teacher training is
skipped (``teacher_iters`` is 0 for the fit, so the teacher loop runs no step): a
canary's vote ignores its weights. In PATEGAN the teacher loop draws only from torch
and the vote noise only from numpy's global generator, so the transcript is the same
with the teachers trained (tested); PATECTGAN's loop also shuffles with numpy, so its
noise values differ (the same law, fresh draws).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpaudit.adapters._canary import (
    CanaryVotes,
    RecordingNumpy,
    check_canary,
    target_mask,
)
from dpaudit.adapters._common import AdapterInputError
from dpaudit.adapters._transcript import Transcript, patched

__all__ = ["CanaryTeachers", "canary_pate"]

_UTILS = "snsynth.pytorch.nn.privacy_utils"


class _Canary:
    """A canary teacher: outputs 1 for every row exactly when it holds the target."""

    def __init__(self, holds: bool) -> None:
        self.holds = holds

    def __call__(self, x: Any) -> Any:
        torch: Any = importlib.import_module("torch")
        return torch.full((x.shape[0], 1), 1.0 if self.holds else 0.0, dtype=x.dtype)


def _share(teachers: list[Any]) -> tuple[list[int], int]:
    """``(owner, m)``: for each teacher, the first teacher with the same model
    object, and ``m``, the number of teachers per model (uniform, else refused)."""
    owner = [next(j for j, u in enumerate(teachers) if u is t) for t in teachers]
    sizes = {owner.count(o) for o in owner}
    if len(sizes) != 1:
        raise RuntimeError(f"teachers share models unevenly: {owner}.")
    return owner, sizes.pop()


class _Split:
    """numpy, for a library module's ``np`` during its fit: ``array_split``, the
    library's partition, is numpy's, its parts recorded; every other name is
    numpy's."""

    def __init__(self, parts: list[list[Any]]) -> None:
        self._parts = parts

    def array_split(self, *args: Any, **kw: Any) -> Any:
        out = np.array_split(*args, **kw)
        self._parts.append(list(out))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


def _encode(model: Any, target: pd.DataFrame) -> np.ndarray:
    """The target as the library's fitted transformer encodes a row (a missing value
    as 0.0, as PATECTGAN writes it, patectgan.py:214-216)."""
    row = model._transformer.transform(target)[0]
    return np.asarray([0.0 if x is None else float(x) for x in row], dtype=np.float64)


@contextmanager
def canary_pate(
    model: Any,
    module_name: str,
    target: pd.DataFrame,
    votes: CanaryVotes,
    *,
    train_teachers: bool,
) -> Iterator[None]:
    """Canary teachers for one ``model.fit`` of PATEGAN or PATECTGAN (the library
    module ``module_name``; ``target``: the target as a one-row table in the fitted
    table's columns); ``votes`` records every noisy vote. ``train_teachers``: run
    the library's teacher training anyway."""
    module: Any = importlib.import_module(module_name)
    utils: Any = importlib.import_module(_UTILS)
    real_pate = module.pate
    parts: list[list[Any]] = []
    holds: list[bool] = []

    def pate(data: Any, teachers: Any, lap_scale: Any, *args: Any, **kw: Any) -> Any:
        if not holds:
            # The library's partition, in teacher order (pategan.py:82,
            # patectgan.py:218), compared with the target as its transformer
            # encodes it (no row equals the target where it has no copy).
            if len(parts) != 1:
                raise RuntimeError(f"the library split its table {len(parts)} times.")
            encoded = _encode(model, target) if votes.copies else None
            holds.extend(
                encoded is not None
                and bool(np.any(np.all(np.asarray(p, dtype=np.float64) == encoded, 1)))
                for p in parts[0]
            )
        teachers = list(teachers)
        if len(teachers) != len(holds):
            raise RuntimeError(
                f"{len(teachers)} teachers for {len(holds)} partitions: the library's "
                "partition was not read."
            )
        owner, share = _share(teachers)
        # A model trained on any partition that holds the target votes "real"
        # (teacher i's model trains on partition i: pategan.py:150-160,
        # patectgan.py:318-323; PATECTGAN's teachers are one model, :255).
        trained = {o: False for o in owner}
        for i, o in enumerate(owner):
            trained[o] |= holds[i]
        canaries = [_Canary(trained[o]) for o in owner]
        draws: list[tuple[Any, float]] = []
        with patched(utils, np=RecordingNumpy(draws)):
            labels, clean = real_pate(data, canaries, lap_scale, *args, **kw)
        if len(draws) != 1:
            raise RuntimeError(f"the library's pate drew {len(draws)} noise arrays.")
        noise, scale = draws[0]
        votes.add(clean.detach().cpu().numpy(), noise, scale, share)
        return labels, clean

    replacements: dict[str, Any] = {} if train_teachers else {"teacher_iters": 0}
    with (
        patched(module, np=_Split(parts), pate=pate),
        patched(model, **replacements),
    ):
        yield


class CanaryTeachers:
    """What smartnoise's PATEGAN and PATECTGAN adapters add for ``--teachers
    canary``: the options ``canary`` (the target record, passed by the audit) and
    ``train_teachers`` (default false: the library's teacher training is skipped,
    which leaves PATEGAN's transcript bit for bit and PATECTGAN's in law), the fit's
    wrapper and the claim's ``canary_*`` keys. Without ``canary`` the fit is the
    library's, and no transcript is stated."""

    canary_teachers: ClassVar[bool] = True
    pate_module: ClassVar[str]  # the library module whose fit runs the vote
    records: ClassVar[str | None] = (
        "Laplace noisy vote counts under canary teachers (--teachers canary)"
    )
    omits: ClassVar[str] = (
        "nothing the accountant charges: every answered query's noisy count is "
        "recorded (the library releases its threshold, the label; "
        "snsynth/pytorch/nn/privacy_utils.py:24-29); teacher training is the "
        "adversary's"
    )
    domain_: dict[str, Any]
    transcript_: Transcript | None

    def __init__(
        self, *, canary: Any = None, train_teachers: bool = False, **options: Any
    ) -> None:
        if not isinstance(train_teachers, bool):
            raise AdapterInputError(
                f"`train_teachers` must be true or false. Got {train_teachers!r}."
            )
        self.canary = check_canary(canary)
        self.train_teachers = train_teachers
        self.canary_votes_: CanaryVotes | None = None
        super().__init__(**options)

    @contextmanager
    def _canary_fit(self, model: Any, data: pd.DataFrame) -> Iterator[None]:
        """Canary teachers for ``model.fit(data)`` (nothing without ``canary``); the
        fit's transcript after."""
        self.canary_votes_ = None
        if self.canary is None:
            yield
            return
        copies = int(target_mask(data, self.canary).sum())
        votes = CanaryVotes(self.canary, self.domain_, copies)
        target = pd.DataFrame([{c: self.canary[c] for c in data.columns}])
        with canary_pate(
            model, self.pate_module, target, votes, train_teachers=self.train_teachers
        ):
            yield
        self.canary_votes_ = votes
        transcript = Transcript(votes.columns, [None] * len(votes.columns))
        transcript.records.extend(votes.records())
        self.transcript_ = transcript

    def _canary_claim(self) -> dict[str, Any]:
        votes = self.canary_votes_
        return {} if votes is None else votes.claim()
