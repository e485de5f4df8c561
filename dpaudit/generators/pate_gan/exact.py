"""The exact privacy of PATE-GAN's canary transcript under one fixed public stream.

Under canary teachers (:mod:`.canary`) a query's clean votes are the number of
teachers that have trained on the target, which the public stream (the partition, the
rows each teacher draws) and the data fix; the privacy noise only decides the noisy
answers. One fit per world under the public stream therefore reads every answered
query's clean votes in both worlds, and :func:`.canary.canary_privacy` turns the pairs
into the transcript's exact epsilon and GDP mu (docs/soundness.md, "Canary
teachers"). ``--public-seed auto`` ranks public candidates by it
(:mod:`dpaudit.audit.games.two_world.exact_selection`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from numpy.typing import NDArray

from dpaudit.data import Domain
from dpaudit.generators.pate_gan.canary import CanaryPrivacy, canary_privacy
from dpaudit.generators.pate_gan.model import PateGan, _with_canary
from dpaudit.generators.pate_gan.transcript import Recorder, vote_noise
from dpaudit.rng import Rngs

__all__ = ["CanaryVotes", "canary_transcript_privacy", "canary_votes"]

CanaryVotes = tuple[list[NDArray[np.int64]], list[int], int]
"""``(votes, steps, k)``: each world's clean "real" votes of its answered queries
(flattened, step by step), its answered steps, and the teachers per model."""


def canary_votes(
    generator: PateGan,
    worlds: Sequence[pd.DataFrame],
    *,
    domain: Domain,
    canary: pd.DataFrame,
    public_rng: Rngs,
    rngs: Sequence[Rngs],
) -> CanaryVotes:
    """One fit per table of ``worlds`` (in one trainer, as the audit batches its
    rounds) under canary teachers for ``canary`` and the shared fit public stream
    ``public_rng``; ``rngs``: each fit's privacy stream (the clean votes do not
    depend on it). Returns :data:`CanaryVotes`."""
    trainer = generator._trainer(
        list(worlds),
        domain=domain,
        rngs=list(rngs),
        public_rngs=[public_rng] * len(worlds),
    )
    _with_canary(trainer, list(worlds), canary)
    trainer.recorder = Recorder(keep_votes=True)
    trainer.run()
    transcripts = trainer.recorder.transcripts()
    n1 = torch.stack(trainer.recorder.votes, dim=1).numpy()  # [M, S, B]
    votes, steps = [], []
    for m, t in enumerate(transcripts):
        votes.append(n1[m, : len(t.used)][t.used].ravel().astype(np.int64))
        steps.append(int(t.used.sum()))
    return votes, steps, int(trainer.k)


def canary_transcript_privacy(
    generator: PateGan,
    with_target: pd.DataFrame,
    without: pd.DataFrame,
    *,
    domain: Domain,
    canary: pd.DataFrame,
    public_rng: Rngs,
    rngs: Sequence[Rngs],
    delta: float,
) -> CanaryPrivacy | str:
    """The exact privacy (:class:`.canary.CanaryPrivacy`, at ``delta``) of the canary
    transcript of ``generator`` on the pair ``with_target`` / ``without`` under the
    fit public stream ``public_rng``: two fits (:func:`canary_votes`, ``rngs`` their
    privacy streams). A string says why it has no closed form here: the worlds
    answer different numbers of queries (the stopping time depends on the data)."""
    (with_votes, without_votes), steps, k = canary_votes(
        generator,
        [with_target, without],
        domain=domain,
        canary=canary,
        public_rng=public_rng,
        rngs=rngs,
    )
    if steps[0] != steps[1]:
        return (
            f"the worlds answer different numbers of student steps ({steps[0]} with "
            f"the target, {steps[1]} without)"
        )
    beta, single = vote_noise(generator.config)
    return canary_privacy(
        with_votes, without_votes, k=k, beta=beta, single_draw=single, delta=delta
    )
