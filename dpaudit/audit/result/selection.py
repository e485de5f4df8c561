"""The record of ``--public-seed auto``'s choice (``public_selection`` of
``result.json``, best first): each public randomness candidate and what ranked it.

A table release ranks the candidates by their attacks' AUC on selection rounds
(``auc``); a transcript release with canary teachers ranks them by the exact privacy
of the canary transcript under each candidate (``exact``), computed from the
candidate's public stream and the pair of datasets without any round of the game
(docs/soundness.md, "Choosing the public randomness").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["CandidatePrivacy", "PublicCandidate"]

_OMIT: Mapping[str, Any] = MappingProxyType({"omit_if": None})


@dataclass(frozen=True, kw_only=True, slots=True)
class CandidatePrivacy:
    """The exact privacy of the release under one public candidate.

    Attributes:
        epsilon: the transcript's exact epsilon at ``delta`` (the larger of its two
            directions); ``None`` where it has no closed form (``why``).
        delta: the delta of ``epsilon`` (the claim's).
        mu: the transcript's central-limit GDP mu; ``None`` with ``epsilon``.
        queries: answered queries (votes) of the transcript.
        differing: those whose clean votes differ between the worlds (0: identical
            transcripts, no test of any size separates the worlds).
        method: how ``epsilon`` was computed (``enumeration`` or ``pld``:
            :class:`dpaudit.generators.pate_gan.canary.CanaryPrivacy`).
        fits: models trained to compute it (one per world), none of them a round
            of the game.
        why: why ``epsilon`` has no closed form under this candidate, or ``None``.
    """

    epsilon: float | None
    delta: float
    mu: float | None = None
    queries: int | None = None
    differing: int | None = None
    method: str | None = None
    fits: int = 0
    why: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PublicCandidate:
    """Public randomness ``--public-seed auto`` scored (an entry of
    ``public_selection``, best first).

    Attributes:
        candidate: the public seed.
        auc: the candidate's pooled AUC on the selection rounds (a table release);
            ``None`` where the candidates are ranked by ``exact``.
        exact: the release's exact privacy under the candidate (a transcript
            release with canary teachers), or ``None`` (not written).
    """

    candidate: int
    auc: float | None
    exact: CandidatePrivacy | None = field(default=None, metadata=_OMIT)
