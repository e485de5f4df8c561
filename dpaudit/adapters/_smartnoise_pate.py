"""Canary teachers inside smartnoise-synth 1.0.8's PATEGAN (``--teachers canary``;
docs/adapters.md, "Canary teachers inside the libraries"; line numbers are the
library's, snsynth/pytorch/nn/pategan.py and privacy_utils.py).

PATEGAN splits the encoded table with ``np.array_split`` into ``int(n / 1000)``
partitions (pategan.py:80-86), one ``TensorDataset`` and ``DataLoader`` per teacher;
teacher ``i``'s discriminator trains on ``loader[i]`` only (pategan.py:147-175). Every
student step asks ``pate(fake_data, teacher_disc, noise_multiplier)``
(pategan.py:181): each teacher's ``output > 0.5`` is its vote, ``votes`` their sum,
``noise = np.random.laplace(0, 1 / lap_scale)`` (privacy_utils.py:12-31), the label
``votes + noise > k / 2``; ``moments_acc`` charges it (pategan.py:185).

:func:`canary_pategan` wraps, for one fit: ``TensorDataset`` in the pategan module (to
read which of the library's partitions holds the target: each partition tensor is
compared with the target encoded by the library's own fitted transformer) and
``pate`` (the library's function runs, on canary teachers: teacher ``i`` outputs 1
exactly when a partition whose rows train its model holds the target). The Laplace
draw is read from the library's own call of ``np.random.laplace`` (its value and
scale) and the vote recorded as ``votes + noise``, what the label thresholds.
Teacher training is skipped (``teacher_iters`` is 0 for the fit, so the loop of
pategan.py:147 runs no step): a canary's vote ignores its weights. The teacher loop
draws only from torch, the vote noise only from numpy's global generator, so the
transcript is the same with the teachers trained (tested).
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

__all__ = ["CanaryTeachers", "canary_pategan"]

_MODULE = "snsynth.pytorch.nn.pategan"
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


@contextmanager
def canary_pategan(
    model: Any, target: pd.DataFrame, votes: CanaryVotes, *, train_teachers: bool
) -> Iterator[None]:
    """Canary teachers for one ``model.fit`` of PATEGAN (``target``: the target as
    a one-row table in the fitted table's columns); ``votes`` records every noisy
    vote. ``train_teachers``: run the library's teacher training anyway."""
    module: Any = importlib.import_module(_MODULE)
    utils: Any = importlib.import_module(_UTILS)
    real_dataset, real_pate = module.TensorDataset, module.pate
    holds: list[bool] = []
    encoded: list[Any] = []

    def dataset(*tensors: Any) -> Any:
        # The library's partition, in teacher order (pategan.py:83-86), compared with
        # the target as the library's fitted transformer encodes it.
        if votes.copies == 0:  # no row equals the target (nor can encode as it)
            holds.append(False)
            return real_dataset(*tensors)
        if not encoded:
            row = model._transformer.transform(target)
            encoded.append(np.asarray(row, dtype=np.float64)[0])
        rows = tensors[0].detach().cpu().numpy()
        holds.append(bool(np.any(np.all(rows == encoded[0], axis=1))))
        return real_dataset(*tensors)

    def pate(data: Any, teachers: Any, lap_scale: Any, *args: Any, **kw: Any) -> Any:
        teachers = list(teachers)
        if len(teachers) != len(holds):
            raise RuntimeError(
                f"{len(teachers)} teachers for {len(holds)} partitions: the library's "
                "partition was not read."
            )
        owner, share = _share(teachers)
        # A model trained on any partition that holds the target votes "real"
        # (teacher i's model trains on loader[i], pategan.py:150-160).
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
        patched(module, TensorDataset=dataset, pate=pate),
        patched(model, **replacements),
    ):
        yield


class CanaryTeachers:
    """What smartnoise's PATEGAN adapter adds for ``--teachers canary``: the options
    ``canary`` (the target record, passed by the audit) and ``train_teachers``
    (default false: the library's teacher training is skipped, changing nothing of
    the transcript), the fit's wrapper and the claim's ``canary_*`` keys. Without
    ``canary`` the fit is the library's, and no transcript is stated."""

    canary_teachers: ClassVar[bool] = True
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
        with canary_pategan(model, target, votes, train_teachers=self.train_teachers):
            yield
        self.canary_votes_ = votes
        transcript = Transcript(votes.columns, [None] * len(votes.columns))
        transcript.records.extend(votes.records())
        self.transcript_ = transcript

    def _canary_claim(self) -> dict[str, Any]:
        votes = self.canary_votes_
        return {} if votes is None else votes.claim()
