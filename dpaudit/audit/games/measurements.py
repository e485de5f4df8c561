"""The measurement-transcript release's machinery (its class,
:class:`~dpaudit.audit.games.releases.MeasurementRelease`, delegates here): what
``--release transcript`` releases for a plug-in or adapter that states its
measurements (``privacy_transcript``, docs/plugins.md), and the exact privacy of
those measurements beside the audit.

A round fits the generator (in its worker) and releases the measurement records it
states; nothing is sampled. The attack (:mod:`dpaudit.attacks.measurements`) knows
each answer's exact count in both worlds and scores the round by the exact
log-likelihood ratio under the stated noise; it fits nothing. :func:`summarise`
turns the rounds' features into the result's ``measurements`` section: the exact
mu (Gaussian) and epsilon (dp-accounting) of the stated measurements, the ceiling
of the best possible test at the audit's test size, and what the measurements spend
against what the generator claims. docs/soundness.md, "The measurement transcript",
argues why leaving private selection steps out keeps the verdict sound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.streams import Streams
from dpaudit.audit.result.measurements import MeasurementSummary
from dpaudit.audit.result.model import AttackResult, Claim
from dpaudit.audit.stats.ceiling import mu_ceiling
from dpaudit.errors import InvalidParameterError, PluginError
from dpaudit.generators.base import Generator
from dpaudit.rng import Rngs

if TYPE_CHECKING:
    from dpaudit.audit.games.traits import Traits

__all__ = [
    "LEAVES_OUT",
    "canary_options",
    "check_measurements",
    "describe",
    "fit_and_read",
    "spend_in_claim_terms",
    "summarise",
    "summary_of",
]

#: What every measurement transcript leaves out, in words (the result's
#: ``leaves_out``; a plug-in names its own steps in its claim's ``transcript_omits``).
LEAVES_OUT = (
    "every private step that is not a stated measurement (private selection, such "
    "as MST's tree or AIM's exponential mechanism, and anything else the privacy "
    "claim pays for): such steps only add privacy loss this audit does not test, so "
    "a VIOLATION stays proven and CONSISTENT speaks of the measurements alone"
)
#: Relative tolerance of "the measurements spend more than the claim" (dp-accounting's
#: pessimistic discretisation and float rounding in the plug-in's own calibration).
_SPEND_TOLERANCE = 1e-3


def fit_and_read(
    setup: Any,
    datasets: Sequence[pd.DataFrame],
    round_rngs: Sequence[Rngs],
    make_generator: Callable[[], Generator],
) -> tuple[list[Any], list[Any]]:
    """``(models, transcripts)``: one model per dataset, fitted one at a time (a
    worker holds one fitted model), its stated transcript read, then forgotten by
    its worker; nothing is sampled (the transcript is the release).

    Raises:
        PluginError: a model states no transcript, or a record breaks the contract.
    """
    public = setup.public_streams()
    fit_public = {} if public is None else {"public_rng": public[0]}
    models: list[Any] = []
    transcripts = []
    # The memory the game's plan leaves the transcripts held at once
    # (:func:`~dpaudit.audit.games.memory.transcript_memory`), shared by this group's.
    budget = setup.transcript_memory
    max_bytes = None if budget is None else budget // max(1, len(datasets))
    for data, round_rng in zip(datasets, round_rngs):
        fit_rng = Streams.fit_and_sample(round_rng)[0]
        model: Any = make_generator().fit(
            data, domain=setup.domain, rng=fit_rng, **fit_public
        )
        records = model.read_transcript(max_bytes=max_bytes)
        forget = getattr(model, "forget", None)
        if callable(forget):
            forget()
        if records is None:
            raise PluginError(
                f"generator {setup.config.generator!r} states no "
                "`privacy_transcript` after fit: `--release transcript` audits the "
                'measurements a plug-in states (docs/plugins.md, "The measurement '
                'transcript"); state them, or use --release table.'
            )
        models.append(model)
        transcripts.append(records)
    return models, transcripts


def check_measurements(config: AuditConfig, traits: Traits, *, canary: bool) -> None:
    """Refuses canary teachers (``canary``: the release asks for them) for a
    generator that does not declare them (``canary_teachers``) and a generator that
    cannot hand over a transcript, before anything is written."""
    if canary and not traits.canary_teachers:
        raise InvalidParameterError(
            "`teachers` canary replaces the teachers of dpaudit's own pategan and "
            "gpate, and of the library adapters that declare canary teachers "
            f"(smartnoise-pategan, smartnoise-patectgan, synthcity-pategan); "
            f"{config.generator!r} releases the measurements it "
            "states: drop --teachers canary."
        )
    if not traits.reads_transcript:
        raise InvalidParameterError(
            f"`release` transcript: {config.generator!r} cannot hand over a "
            "measurement transcript; use --release table."
        )


def canary_options(options: Any, target: pd.DataFrame | None) -> dict[str, Any]:
    """The generator's options, with canary teachers (``target``, one row) the option
    ``canary``: the target record as JSON values, which an adapter that declares
    ``canary_teachers`` votes for (docs/adapters.md, "Canary teachers inside the
    libraries").

    >>> canary_options({"x": 1}, pd.DataFrame({"a": [np.int64(1)], "b": ["u"]}))
    {'x': 1, 'canary': {'a': 1, 'b': 'u'}}
    """
    if target is None:
        return dict(options)
    row = target.iloc[0]
    record = {
        str(c): v.item() if isinstance(v, np.generic) else v for c, v in row.items()
    }
    return {**options, "canary": record}


def describe(*, canary: bool) -> str:
    """The release's description in the result."""
    teachers = (
        "; canary teachers: the adversary's, each voting 'real' exactly when its "
        "model trains on the target, inside the library's own partition, noise and "
        "accountant"
        if canary
        else ""
    )
    return (
        "transcript: the noisy measurements the generator states "
        "(privacy_transcript), attacked by the exact likelihood ratio under the "
        f"stated noise, each answer's exact count known in both worlds{teachers}"
    )


def summarise(
    setup: Any, store: Any, *, head: AttackResult, claim: Claim, alpha: float
) -> MeasurementSummary:
    """The ``measurements`` section of a finished audit, from every round's
    features in ``store``."""
    from dpaudit.attacks.measurements import FEATURES, MEASUREMENT_RATIO

    rounds = np.arange(setup.plan.n_rounds, dtype=np.int64)
    x = store.features(MEASUREMENT_RATIO, rounds)
    return summary_of(
        {name: x[:, i] for i, name in enumerate(FEATURES)},
        head=head,
        claim=claim,
        delta=setup.config.delta,
        alpha=alpha,
        method=setup.config.estimator,
    )


def summary_of(
    col: dict[str, Any],
    *,
    head: AttackResult,
    claim: Claim,
    delta: float,
    alpha: float,
    method: Any,
) -> MeasurementSummary:
    """The ``measurements`` section from every round's features (by name)."""
    gaussian = int(col["gaussian_answers"].max(initial=0))
    laplace = int(col["laplace_answers"].max(initial=0))
    mu2 = col["gaussian_mu_squared"]
    mu = math.sqrt(float(mu2.max(initial=0.0))) if gaussian else None
    only_gaussian = gaussian > 0 and laplace == 0
    rho = mu * mu / 2.0 if only_gaussian and mu is not None else None
    eps = float(col["eps_exact"].max(initial=0.0))
    ceiling = None
    if only_gaussian and mu is not None and mu > 0:
        n0, n1 = head.counts.n_non_members, head.counts.n_members
        ceiling = mu_ceiling(mu, n0, n1, alpha=alpha, method=method)
    term, claimed, spent = spend_in_claim_terms(claim, mu=mu, rho=rho, eps=eps)
    omits = claim.extra.get("transcript_omits", {}).get("values")
    stated = f"; the generator names: {omits[0]}" if omits else ""
    return MeasurementSummary(
        records=int(col["records"].max(initial=0)),
        gaussian_answers=gaussian,
        laplace_answers=laplace,
        answers_changed=int(col["answers_changed"].max(initial=0)),
        varies=bool(np.ptp(mu2) > 0 or np.ptp(col["eps_exact"]) > 0),
        mu_exact=mu,
        rho_exact=rho,
        eps_exact=eps,
        eps_delta=float(delta),
        mu_ceiling=ceiling,
        mu_to_ceiling=(head.mu_emp or 0.0) / ceiling if ceiling else None,
        term=term,
        claimed=claimed,
        spent=spent,
        spends_more_than_claimed=None
        if claimed is None or spent is None
        else spent > claimed * (1.0 + _SPEND_TOLERANCE),
        covers=(
            f"the stated measurements: {gaussian} Gaussian and {laplace} Laplace "
            "noisy count(s) per round (the most in any round), each scored against "
            "its exact count in both worlds"
        ),
        leaves_out=LEAVES_OUT + stated,
    )


def spend_in_claim_terms(
    claim: Claim, *, mu: float | None, rho: float | None, eps: float
) -> tuple[str, float | None, float | None]:
    """``(term, claimed, spent)``: the claim's strongest stated term that the
    measurements' exact privacy is known in (rho where both state one, then mu,
    then epsilon).

    >>> spend_in_claim_terms(Claim(epsilon=1.0, zcdp_rho=0.5), mu=1.0, rho=0.5, eps=3.0)
    ('rho', 0.5, 0.5)
    >>> spend_in_claim_terms(Claim(epsilon=1.0), mu=None, rho=None, eps=0.5)
    ('epsilon', 1.0, 0.5)
    """
    if claim.zcdp_rho is not None and rho is not None:
        return "rho", claim.zcdp_rho, rho
    if claim.gdp_mu is not None and rho is not None:
        return "mu", claim.gdp_mu, mu
    return "epsilon", claim.epsilon, eps
