"""The audit's stable names, each declared once (scripts, CI policies and the
command line's choices depend on them). No heavy imports: the command line's parser
reads them before anything is trained; :mod:`dpaudit.audit.config.model` and
:mod:`dpaudit.audit.result.model` type their fields with them."""

from __future__ import annotations

import enum
from typing import Literal, get_args

__all__ = [
    "BACKENDS",
    "GAMES",
    "GUESS_RULES",
    "ONERUN_BOUNDS",
    "RANDOMNESS_MODES",
    "RELEASES",
    "RESULT_FILE",
    "TEACHERS",
    "Backend",
    "Game",
    "GuessRule",
    "OneRunBound",
    "Randomness",
    "ReleaseKind",
    "TeacherKind",
    "Verdict",
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

TeacherKind = Literal["trained", "canary"]
"""The teachers of a transcript release: ``trained`` as implemented, or ``canary``:
the adversary's teachers, each voting "real" exactly when it has trained on the target
(PATE-GAN's and G-PATE's proofs hold for any teachers; docs/soundness.md, "Canary
teachers")."""
TEACHERS: tuple[TeacherKind, ...] = get_args(TeacherKind)

GuessRule = Literal["count", "threshold", "both"]
"""How the one-run game guesses: ``count`` (a number of guesses fixed in advance),
``threshold`` (every canary whose score reaches a threshold fixed in advance) or
``both`` (each at half of alpha; :mod:`dpaudit.audit.games.one_run.rules`)."""
GUESS_RULES: tuple[GuessRule, ...] = get_args(GuessRule)

OneRunBound = Literal["auto", "steinke", "fdp", "order"]
"""The one-run game's bound: ``steinke`` (Steinke, Nasr and Jagielski 2023), ``fdp``
(the claim's trade-off curve tested against the guess count), ``order`` (``fdp`` at
nested guess counts of the ordered scores, a union bound over them) or ``auto`` (the
strongest sound choice, fixed before any fit; :mod:`dpaudit.audit.games.one_run.rules`)."""
ONERUN_BOUNDS: tuple[OneRunBound, ...] = get_args(OneRunBound)

RESULT_FILE = "result.json"
"""The file of an audit directory that holds the result
(:meth:`dpaudit.audit.result.model.AuditResult.to_json`)."""

Game = Literal["two-world", "one-run"]
"""``two-world``: the distinguishing game (many fits, with and without one target);
``one-run``: canaries each included with probability 1/2 in one fit or a few, their
inclusion guessed from the release (Steinke, Nasr and Jagielski 2023;
:mod:`dpaudit.audit.games.one_run`)."""
GAMES: tuple[Game, ...] = get_args(Game)


class Verdict(enum.StrEnum):
    """The outcome of an audit (a ``str``: ``Verdict.VIOLATION == "VIOLATION"``).

    VIOLATION iff the bounded test point lies outside the region the claim allows
    (eps_emp above the claimed epsilon, or outside a stated GDP, RDP or zCDP
    profile); else INCONCLUSIVE when there is no estimate or the audit could not have
    refuted the claim; else CONSISTENT (docs/soundness.md, "The verdicts").
    """

    CONSISTENT = "CONSISTENT"
    VIOLATION = "VIOLATION"
    INCONCLUSIVE = "INCONCLUSIVE"
