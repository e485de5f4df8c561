"""The audit's stable names, each declared once (scripts, CI policies and the
command line's choices depend on them). No heavy imports: the command line's parser
reads them before anything is trained; :mod:`dpaudit.audit.config` and
:mod:`dpaudit.audit.result` type their fields with them."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "BACKENDS",
    "RANDOMNESS_MODES",
    "RELEASES",
    "RESULT_FILE",
    "Backend",
    "Randomness",
    "ReleaseKind",
]

Randomness = Literal["fixed_public", "independent"]
"""``fixed_public``: the public stream held fixed for the whole audit, a fresh privacy
stream per round; ``independent``: every draw fresh per round (docs/soundness.md)."""
RANDOMNESS_MODES: tuple[Randomness, ...] = get_args(Randomness)

Backend = Literal["loky", "threading", "dask"]
"""The joblib backend that runs the rounds."""
BACKENDS: tuple[Backend, ...] = get_args(Backend)

ReleaseKind = Literal["table", "transcript"]
"""What a round releases to the attacks: ``table``, the synthetic table (black box);
``transcript``, every noisy answer of the generator's private mechanism (PATE-GAN's
noisy votes; docs/soundness.md, "The transcript release")."""
RELEASES: tuple[ReleaseKind, ...] = get_args(ReleaseKind)

RESULT_FILE = "result.json"
"""The file of an audit directory that holds the result
(:meth:`dpaudit.audit.result.AuditResult.to_json`)."""
