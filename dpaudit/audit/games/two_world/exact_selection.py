"""``--public-seed auto`` on a transcript release: the public candidates ranked by the
exact privacy of the canary transcript under each (docs/soundness.md, "Choosing the
public randomness").

Under canary teachers (``--release transcript --teachers canary``, dpaudit's
PATE-GAN) the clean votes of every answered query follow from the public stream and
the pair of datasets, so the transcript's exact epsilon and GDP mu under a candidate
are a function of that candidate's public stream, the pair and the configuration
(:func:`dpaudit.generators.pate_gan.exact.canary_transcript_privacy`: one fit per
world, two fits per candidate, none of them a round of the game; their privacy
streams are children of :meth:`Streams.public_selection`'s pool, which no stream of
the final game shares). The candidate with the largest exact epsilon (ties: the
larger mu, then the lower index) becomes the audit's public randomness. Nothing is
scored on selection rounds: the ranking does not depend on any round's outcome.

Elsewhere a transcript's exact privacy is not computed here (trained teachers: the
clean votes depend on the privacy noise through training; G-PATE's canary
transcript; the measurements a plug-in or adapter states, canary teachers inside
the libraries included), and ``--public-seed auto`` is refused
there with one line (the configuration's check, :mod:`dpaudit.audit.config.keys`,
refuses trained teachers; :func:`rank_by_exact_privacy` the rest).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.progress import progress_bar
from dpaudit.audit.games.resolved import ResolvedAudit, lookup
from dpaudit.audit.games.setup import build_setup
from dpaudit.audit.games.streams import Streams
from dpaudit.audit.result.selection import CandidatePrivacy, PublicCandidate
from dpaudit.data import Dataset
from dpaudit.errors import InvalidParameterError

#: Models trained per candidate to read its exact privacy (one per world).
FITS_PER_CANDIDATE = 2

#: Where no candidate's transcripts differ between the worlds, the candidates
#: examined double, up to this many times ``--public-candidates``.
EXTEND_UP_TO = 8


def _refuse(config: AuditConfig, why: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"`public_seed` auto with --release transcript ranks the public candidates "
        f"by the canary transcript's exact privacy, {why}: pass a --public-seed "
        f"index. Got --generator {config.generator} --teachers {config.teachers}."
    )


def exact_privacy(setup: Any, candidate: int) -> CandidatePrivacy:
    """The exact privacy of ``setup``'s canary transcript under public candidate
    ``candidate`` (two fits, from the public selection's pool)."""
    from dpaudit.generators.pate_gan import PateGan
    from dpaudit.generators.pate_gan.exact import canary_transcript_privacy

    config = setup.config
    generator = setup.make_generator()
    if not isinstance(generator, PateGan) or setup.canary is None:
        raise _refuse(config, "which is computed for pategan's canary teachers only")
    streams = Streams(config.seed)
    pool, _ = streams.public_selection()
    # Child 2 of the pool (the table ranking takes children 0 and 1): the same
    # privacy streams for every candidate.
    rngs = pool.spawn(3)[2].spawn(FITS_PER_CANDIDATE)
    found = canary_transcript_privacy(
        generator,
        setup.with_target,
        setup.without,
        domain=setup.domain,
        canary=setup.canary,
        public_rng=streams.public_candidate(candidate)[0],
        rngs=rngs,
        delta=config.delta,
    )
    if isinstance(found, str):
        return CandidatePrivacy(
            epsilon=None, delta=config.delta, fits=FITS_PER_CANDIDATE, why=found
        )
    return CandidatePrivacy(
        epsilon=found.epsilon,
        delta=found.delta,
        mu=found.mu,
        queries=found.queries,
        differing=found.differing,
        method=found.method,
        fits=FITS_PER_CANDIDATE,
    )


def _reveals(entry: PublicCandidate) -> bool:
    """Whether the worlds' canary transcripts differ under ``entry``."""
    exact = entry.exact
    return exact is not None and exact.epsilon is not None and exact.epsilon > 0


def _order(entry: PublicCandidate) -> tuple[float, float, int]:
    exact = entry.exact
    if exact is None or exact.epsilon is None:
        return (1.0, 0.0, entry.candidate)  # no closed form: after every other
    return (-exact.epsilon, -(exact.mu or 0.0), entry.candidate)


def rank_by_exact_privacy(
    config: AuditConfig,
    *,
    progress: bool = False,
    dataset: Dataset | None = None,
    resolved: ResolvedAudit | None = None,
) -> list[PublicCandidate]:
    """Ranks the public candidates ``0 .. public_candidates - 1`` of ``config``
    (``release = "transcript"``, target resolved) by the exact privacy of the
    canary transcript under each, most private loss first. Where every one of them
    leaves the worlds' transcripts identical (exact epsilon 0), twice as many are
    examined, up to :data:`EXTEND_UP_TO` times ``public_candidates``: the number
    examined is a function of the same public-selection fits as the ranking, so it
    sees no round of the game either.

    Raises:
        InvalidParameterError: the transcript's exact privacy is not computed for
            this configuration, or has no closed form under any candidate.
    """
    spec = lookup(config) if resolved is None else resolved.spec
    if not spec.exact_canary_privacy:  # before a plug-in's or adapter's worker starts
        raise _refuse(config, "which is computed for pategan's canary teachers only")
    base = build_setup(
        dataclasses.replace(config, public_seed=0), dataset=dataset, resolved=resolved
    )
    scored: list[PublicCandidate] = []
    wanted = config.public_candidates
    cap = EXTEND_UP_TO * config.public_candidates
    with progress_bar(
        f"public-seed selection ({wanted} candidates, exact privacy)",
        wanted,
        unit="candidate",
        enabled=progress,
    ) as bar:
        while True:
            for candidate in range(len(scored), wanted):
                exact = exact_privacy(base, candidate)
                scored.append(
                    PublicCandidate(candidate=candidate, auc=None, exact=exact)
                )
                bar.update(1)
            if wanted >= cap or any(_reveals(entry) for entry in scored):
                break
            # Every candidate so far leaves the transcripts identical (exact
            # epsilon 0: a constant release, no test possible): look at as many
            # again, up to EXTEND_UP_TO times the candidates asked for.
            wanted = min(cap, 2 * wanted)
            bar.total = wanted
    scored.sort(key=_order)
    best = scored[0].exact
    if best is None or best.epsilon is None:
        why = best.why if best is not None else None
        raise _refuse(config, f"which has no closed form under any candidate ({why})")
    return scored
