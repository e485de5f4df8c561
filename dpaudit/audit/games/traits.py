"""What a built generator object declares, read in one place: :func:`generator_traits`
(the audit reads it once, through
:meth:`~dpaudit.audit.games.resolved.ResolvedAudit.traits`).

Nothing is imported here: the releases' checks name :class:`Traits` without
importing the resolver.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Traits", "generator_traits"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Traits:
    """What a built generator object declares (read once: :func:`generator_traits`).

    Attributes:
        public_randomness: its proof holds for any fixed public stream
            (``supports_public_randomness``).
        canary_teachers: it takes the target record as canary teachers
            (``supports_canary_teachers``: adapters that declare them).
        reads_transcript: it hands over a stated measurement transcript
            (``read_transcript``: plug-ins and adapters).
        transcript_support: ``f(*, canary) -> reason or None`` of a generator that
            records its noisy answers (dpaudit's PATE-GAN and G-PATE), else None.
        batched: it trains several models as one program (``fit_many``; the
            registry entry's ``batched`` for the generators it builds).
    """

    public_randomness: bool
    canary_teachers: bool
    reads_transcript: bool
    transcript_support: Callable[..., str | None] | None
    batched: bool = False


def generator_traits(generator: object) -> Traits:
    """The capabilities ``generator`` declares: the one place they are read."""
    support = getattr(generator, "transcript_support", None)
    return Traits(
        public_randomness=bool(getattr(generator, "supports_public_randomness", False)),
        canary_teachers=bool(getattr(generator, "supports_canary_teachers", False)),
        reads_transcript=callable(getattr(generator, "read_transcript", None)),
        transcript_support=support if callable(support) else None,
        batched=callable(getattr(generator, "fit_many", None)),
    )
