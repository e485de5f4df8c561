"""Running the one-run game: canaries, one fit or a few, guesses, the bound.

:data:`GAME` is the game's declared part; :func:`dpaudit.audit.run.run_audit` runs
the shared prologue (the output folder, the lock, the cleanup) and calls it. The game (docs/soundness.md,
"The one-run game"; Steinke, Nasr and Jagielski, NeurIPS 2023):

1. The canaries are designed for the dataset (:mod:`dpaudit.worst_case.canaries`);
   the plan (:mod:`dpaudit.audit.games.one_run.plan`) draws each canary's inclusion bit
   from the game's privacy stream and fixes the guess counts.
2. Fit ``f`` trains on the base table plus its included canaries, from its own
   streams, and releases ``synthetic_rows`` rows (the same for every fit, fixed
   before training). Every draw of a fit is fresh (the ``independent`` randomness):
   with one fit all canaries share its randomness anyway, and holding public
   randomness fixed would need a proof for canaries at any position of the table.
3. Each canary is scored from its fit's release (:mod:`dpaudit.audit.games.one_run.scoring`);
   the guess rule (:mod:`dpaudit.audit.games.one_run.rules`) makes the guesses: the
   top ``guesses_in`` scores "in" and the bottom ``guesses_out`` "out" (``count``),
   "in" for every score at a threshold fixed in advance (``threshold``), or both,
   each at half of alpha.
4. The correct guesses become eps_emp (:mod:`dpaudit.audit.stats.onerun_bound`), judged
   against the largest epsilon any fit claimed.

The audit directory gets ``result.json`` only (written atomically, once the result
exists): a failed or interrupted run leaves the directory as it found it. No store is
kept, so there is nothing to resume: the game is run again.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

import dpaudit
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.names import RESULT_FILE
from dpaudit.audit.games.claims import active_flags, plain, summarise_claims
from dpaudit.audit.games.memory import MemoryPlan, check_one_run_memory
from dpaudit.audit.games.one_run.counts import GuessCounts, count_alpha, plan_counts
from dpaudit.audit.games.one_run.plan import OneRunPlan
from dpaudit.audit.games.one_run.rules import THRESHOLDS, every_bound, resolve_bound
from dpaudit.audit.games.one_run.scoring import SCORE_NAMES, score_canaries
from dpaudit.audit.games.one_run.transcript import SCORE_NAME as TRANSCRIPT_SCORE
from dpaudit.audit.games.one_run.transcript import (
    CanaryAnswers,
    exact_privacy,
    transcript_note,
)
from dpaudit.audit.games.progress import progress_bar
from dpaudit.audit.games.releases import compact_claim, train_and_release
from dpaudit.audit.games.resolved import ResolvedAudit, resolve_one_run
from dpaudit.audit.games.verdict import decide, tightness
from dpaudit.audit.result.model import (
    AttackResult,
    AuditResult,
    Counts,
    Estimator,
    Power,
    Rounds,
    Timing,
    Verdict,
    freeze,
)
from dpaudit.audit.result.onerun import OneRunBoundFigure, OneRunRule, OneRunSummary
from dpaudit.audit.stats.auc import auc as stats_auc
from dpaudit.audit.stats.onerun_curves import profile_curve
from dpaudit.audit.storage.outdir import Session
from dpaudit.audit.storage.store import ResultStore
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.base import Generator
from dpaudit.generators.foreign.pool import python_section
from dpaudit.io import write_atomic
from dpaudit.worst_case.canaries import CanaryDesign, canary_design

__all__ = ["GAME", "METHOD", "OneRunGame", "one_run_reason"]

#: ``estimator.method`` of a one-run result.
METHOD = "one_run"
#: A score whose AUC is within this of 1/2 is reported as not seeing the generator
#: (descriptive: the AUC reads the bits after the verdict, which it does not change).
CHANCE_AUC = 0.05


def _prepare(out: Path, *, force: bool) -> None:
    """Refuses an ``out`` that holds a two-world store, or a result without
    ``force``."""
    if (out / ResultStore.FILENAME).exists():
        raise InvalidParameterError(
            f"`--out` {str(out)!r} holds a two-world audit (audit.sqlite); a one-run "
            "audit does not replace it: choose another --out."
        )
    if (out / RESULT_FILE).exists() and not force:
        raise InvalidParameterError(
            f"`--out` {str(out)!r} already holds an audit (result.json); choose "
            "another --out, or pass --force to replace it."
        )


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """A one-run audit checked and designed, before anything is written."""

    config: AuditConfig
    design: CanaryDesign
    plan: OneRunPlan
    rows: int
    options: dict[str, Any]
    make_generator: Callable[[], Generator]
    started: float
    resolved: ResolvedAudit
    memory: MemoryPlan | None = None


class OneRunGame:
    """The one-run game as a declared part (:class:`~dpaudit.audit.games.base.Game`)."""

    name = "one-run"

    def check(self, config: AuditConfig, *, resume: bool) -> None:
        """Refuses ``--resume``: the game keeps no store to continue. (Every
        setting it does not use was refused before: the key table's ``games``.)"""
        if resume:
            raise InvalidParameterError(
                "`--resume` must be unset with `--game one-run`: the game keeps no "
                "store to continue; run it again."
            )

    def prepare(self, config: AuditConfig) -> Prepared:
        """The canaries' design, the plan and the generator's options, fixed
        before any bit is drawn (the audit resolved once:
        :func:`~dpaudit.audit.games.resolved.resolve_one_run`), and the memory
        plan (``--max-memory``, else the memory available now), refused before
        any fit; bad generator options are refused here."""
        started = time.perf_counter()
        base_rows = 4 if config.dataset_rows is None else int(config.dataset_rows) - 1
        design = canary_design(
            config.dataset, canaries=config.canaries, base_rows=base_rows
        )
        plan = OneRunPlan.create(
            fits=config.fits,
            canaries=config.canaries,
            guesses=config.guesses,
            guesses_out=config.guesses_out,
            seed=config.seed,
            counts=planned_counts(config, design),
        )
        resolved = resolve_one_run(config, design=design)
        memory = check_one_run_memory(config, resolved)
        options = dict(resolved.generator_options)

        def make_generator() -> Generator:
            return resolved.build(options)

        generator = make_generator()  # refuses bad generator options now
        if config.release == "transcript":
            from dpaudit.audit.games.one_run.transcript import check_generator

            check_generator(
                config.generator,
                resolved.traits(generator).reads_transcript,
                resolved.transcript,
            )
        return Prepared(
            config=config,
            design=design,
            plan=plan,
            rows=resolved.synthetic_rows,
            options=options,
            make_generator=make_generator,
            started=started,
            resolved=resolved,
            memory=memory,
        )

    def run(
        self,
        prepared: Prepared,
        out: Path,
        session: Session,
        *,
        resume: bool,
        force: bool,
        progress: bool,
    ) -> AuditResult:
        """Fits, scores and bounds; writes ``out/result.json`` (atomically, once the
        result exists)."""
        config = prepared.config
        _prepare(out, force=force)
        trained = time.perf_counter()
        fit = _fit_transcripts if config.release == "transcript" else _fit_all
        claims, scores, answers = fit(
            prepared.make_generator,
            prepared.design,
            prepared.plan,
            rows=prepared.rows,
            config=config,
            progress=progress,
        )
        trained = time.perf_counter() - trained
        result = analyse_one_run(
            config,
            design=prepared.design,
            plan=prepared.plan,
            claims=claims,
            scores=scores,
            rows=prepared.rows,
            options=prepared.options,
            answers=answers,
        )
        result = replace(
            result,
            source=out / RESULT_FILE,
            timing=Timing(
                train_seconds=trained,
                total_seconds=time.perf_counter() - prepared.started,
                sessions=1,
                resumed=False,
                rounds_stored_before=0,
            ),
        )
        write_atomic(
            out / RESULT_FILE,
            json.dumps(result.to_json(), indent=2, allow_nan=False) + "\n",
        )
        return result


GAME = OneRunGame()
"""The one-run game (:data:`dpaudit.audit.games.registry.GAME_SPECS`)."""


def planned_counts(config: AuditConfig, design: CanaryDesign) -> GuessCounts | None:
    """The count rule's guesses per side planned from the configuration alone
    (:func:`~dpaudit.audit.games.one_run.counts.plan_counts`: all canaries, the
    budget's epsilon and delta, the count rule's share of alpha, the bound), or
    ``None`` when ``--guesses`` is given or the count rule does not run. The score's
    name (whether it has a threshold) comes from the canary design and the release
    kind, both configuration."""
    if config.guesses is not None:
        return None
    transcript = config.release == "transcript"
    score = TRANSCRIPT_SCORE if transcript else SCORE_NAMES[design.kind]
    share = count_alpha(
        alpha=config.alpha, rule=config.guess_rule, threshold=score in THRESHOLDS
    )
    if share is None:
        return None
    total = int(config.fits) * int(config.canaries)
    return plan_counts(
        canaries=total,
        epsilon=float(config.epsilon),
        delta=float(config.delta),
        alpha=share,
        bound=resolve_bound(config.onerun_bound, total),
    )


def _fit_all(
    make_generator: Callable[[], Generator],
    design: CanaryDesign,
    plan: OneRunPlan,
    *,
    rows: int,
    config: AuditConfig,
    progress: bool,
) -> tuple[list[dict[str, Any]], NDArray[np.float64], None]:
    """Trains every fit and scores its canaries: (each fit's claim, the scores of
    all canaries in plan order, ``None``: no transcript)."""

    rngs = plan.fit_rngs()
    claims: list[dict[str, Any]] = []
    scores: list[NDArray[np.float64]] = []
    with progress_bar(
        "one-run game (fits)", plan.fits, unit="fit", enabled=progress
    ) as bar:
        for f in range(plan.fits):
            models, release = train_and_release(
                make_generator,
                [design.training_table(plan.bits[f])],
                [rngs[f]],
                domain=design.domain,
                rows=rows,
                public=None,
                name=config.generator,
            )
            claims.append(compact_claim(models[0].privacy_claim_.to_json()))
            scores.append(score_canaries(release.frames()[0], design))
            bar.update(1)
    return claims, np.concatenate(scores), None


def _fit_transcripts(
    make_generator: Callable[[], Generator],
    design: CanaryDesign,
    plan: OneRunPlan,
    *,
    rows: int,
    config: AuditConfig,
    progress: bool,
) -> tuple[list[dict[str, Any]], NDArray[np.float64], list[CanaryAnswers]]:
    """``--release transcript``: fits every model (nothing is sampled: the stated
    measurements are the release) and scores each canary by the exact
    log-likelihood ratio of its own answers
    (:mod:`dpaudit.audit.games.one_run.transcript`): (each fit's claim, the scores
    in plan order, each fit's answers)."""
    from dpaudit.audit.games.one_run.transcript import (
        fit_and_read,
        own_answers,
        score_transcript,
    )

    rngs = plan.fit_rngs()
    claims: list[dict[str, Any]] = []
    scores: list[NDArray[np.float64]] = []
    answers: list[CanaryAnswers] = []
    with progress_bar(
        "one-run game (fits)", plan.fits, unit="fit", enabled=progress
    ) as bar:
        for f in range(plan.fits):
            model, records = fit_and_read(
                make_generator,
                design.training_table(plan.bits[f]),
                rngs[f],
                design=design,
                name=config.generator,
            )
            claims.append(compact_claim(model.privacy_claim_.to_json()))
            answers.append(own_answers(records, design))
            scores.append(score_transcript(answers[-1], len(design.canaries)))
            bar.update(1)
    return claims, np.concatenate(scores), answers


def one_run_reason(
    verdict: Verdict,
    *,
    eps_emp: float,
    eps_claimed: float,
    eps_max: float,
    summary: OneRunSummary,
    auc: float | None = None,
) -> str:
    """One sentence saying why the one-run audit reached ``verdict`` (and, when it is
    no VIOLATION and the score's ``auc`` is within :data:`CHANCE_AUC` of 1/2, one
    saying that the game did not see the generator).

    >>> s = OneRunSummary(fits=1, canaries=100, canaries_per_fit=100, included=50,
    ...     canary_kind="point", score="canary-distance", guesses_in=10,
    ...     guesses_out=10, guesses=20, correct_in=10, correct_out=10, correct=20,
    ...     eps_max_attainable=1.8)
    >>> one_run_reason(Verdict.VIOLATION, eps_emp=1.8, eps_claimed=1.0, eps_max=1.8,
    ...                summary=s)  # doctest: +ELLIPSIS
    'VIOLATION: eps_emp 1.800 exceeds the claimed epsilon 1.000: 20 of 20 guesses...'
    """
    rule = f" ({summary.rule} rule)" if len(summary.rules) > 1 else ""
    bound = f"; {summary.bound} bound" if summary.bound != "steinke" else ""
    counts = (
        f"{summary.correct} of {summary.guesses} guesses{rule} about "
        f"{summary.canaries} canaries in {summary.fits} "
        f"fit{'s' if summary.fits != 1 else ''} correct{bound}"
    )
    if verdict is Verdict.VIOLATION and summary.claim_refuted:
        return (
            f"VIOLATION: the claimed trade-off curve (its epsilon {eps_claimed:.3f} "
            f"and its {summary.claim_curve or 'profile'}) is rejected by the {summary.bound} bound (mu_emp "
            f"{summary.mu_emp or 0.0:.3f}, eps_emp {eps_emp:.3f}): {counts}."
        )
    if verdict is Verdict.VIOLATION:
        return (
            f"VIOLATION: eps_emp {eps_emp:.3f} exceeds the claimed epsilon "
            f"{eps_claimed:.3f}: {counts}."
        )
    unseen = ""
    if auc is not None and math.isfinite(auc) and abs(auc - 0.5) < CHANCE_AUC:
        unseen = (
            f" The score told included from excluded canaries apart no better than "
            f"chance (AUC {auc:.3f}): the generator hides them, or it releases what "
            "this game cannot see (its scores see a canary through its own released "
            "row or value only, not through aggregates many canaries share, such as "
            "marginals or histograms); the two-world game sees both."
        )
    if verdict is Verdict.INCONCLUSIVE:
        return (
            f"INCONCLUSIVE: even all {summary.guesses} guesses correct would show at "
            f"most eps_emp {eps_max:.3f}, not above the claimed epsilon "
            f"{eps_claimed:.3f}; more canaries, fits or guesses are needed "
            f"({counts}).{unseen}"
        )
    return (
        f"CONSISTENT: eps_emp {eps_emp:.3f} does not exceed the claimed epsilon "
        f"{eps_claimed:.3f} ({counts}), although all guesses correct would have "
        f"shown {eps_max:.3f}; this is no proof of privacy.{unseen}"
    )


def analyse_one_run(
    config: AuditConfig,
    *,
    design: CanaryDesign,
    plan: OneRunPlan,
    claims: Sequence[dict[str, Any]],
    scores: NDArray[np.float64],
    rows: int,
    options: dict[str, Any],
    answers: Sequence[CanaryAnswers] | None = None,
) -> AuditResult:
    """The result of the one-run game from its fits' claims and canary scores
    (``answers``: each fit's transcript answers, under ``--release transcript``)."""

    claim = summarise_claims(dict(enumerate(claims)))
    assert claim.epsilon is not None and claim.delta is not None
    delta = max(float(config.delta), float(claim.delta))
    score_name = SCORE_NAMES[design.kind] if answers is None else TRANSCRIPT_SCORE
    bound = resolve_bound(config.onerun_bound, int(plan.bits.size))
    measurements = (
        None
        if answers is None
        else exact_privacy(answers, claim=claim, delta=float(config.delta))
    )
    # Every sound bound from the same scores and guesses; the configured one
    # decides, the others are descriptive (docs/soundness.md, "Every bound's figure
    # beside the verdict").
    decisions = every_bound(
        scores,
        plan.bits,
        rule=config.guess_rule,
        guesses_in=plan.guesses_in,
        guesses_out=plan.guesses_out,
        threshold=THRESHOLDS.get(score_name),
        tie_break=plan.tie_break(),
        delta=delta,
        alpha=config.alpha,
        claim_epsilon=claim.epsilon,
        claim_mu=claim.gdp_mu,
        claim_curve=profile_curve(zcdp_rho=claim.zcdp_rho, rdp=claim.rdp),
    )
    decided = decisions[bound]
    outcomes, chosen = decided.outcomes, decided.chosen
    made = chosen.made
    total = int(plan.bits.size)
    r = chosen.guesses
    eps_emp, eps_max, mu_emp = decided.eps_emp, decided.eps_max, decided.mu_emp
    profile, refuted = decided.refuted is not None, decided.refuted
    verdict = decide(
        eps_emp=eps_emp,
        eps_claimed=claim.epsilon,
        eps_max_attainable=eps_max,
        refutation_ratio=None if not profile else (2.0 if refuted else 0.0),
        profile_refutable=decided.refutable,
    )
    summary = OneRunSummary(
        fits=plan.fits,
        canaries=total,
        canaries_per_fit=plan.canaries_per_fit,
        included=int(plan.bits.sum()),
        canary_kind=design.kind,
        score=score_name,
        guesses_in=chosen.guesses_in,
        guesses_out=chosen.guesses_out,
        guesses=r,
        correct_in=made.correct_in,
        correct_out=made.correct_out,
        correct=made.correct,
        eps_max_attainable=eps_max,
        guess_rule=config.guess_rule,
        rule=chosen.rule,
        threshold=next(
            (THRESHOLDS[score_name] for o in outcomes if o.rule == "threshold"), None
        ),
        rules=tuple(
            OneRunRule(
                rule=o.rule,
                alpha=o.alpha,
                guesses_in=o.guesses_in,
                guesses_out=o.guesses_out,
                correct=o.made.correct,
                eps_emp=o.eps_emp,
                eps_max_attainable=o.eps_max,
                passed=o.passed,
                mu_emp=o.mu_emp,
                refutes=o.refutes if profile else None,
            )
            for o in outcomes
        ),
        bound=bound,
        mu_emp=mu_emp,
        claim_refuted=refuted,
        claim_curve=decided.curve,
        guesses_planned=plan.planned,
        planning_mu=plan.planning_mu,
        bounds=tuple(
            OneRunBoundFigure(
                bound=name,
                eps_emp=d.eps_emp,
                eps_max_attainable=d.eps_max,
                mu_emp=d.mu_emp,
                claim_refuted=d.refuted,
                decides=name == bound,
            )
            for name, d in decisions.items()
        ),
    )
    # The guesses as a confusion matrix: "in" guesses are the positives.
    counts = Counts(
        tp=made.correct_in,
        fp=chosen.guesses_in - made.correct_in,
        tn=made.correct_out,
        fn=chosen.guesses_out - made.correct_out,
    )
    flat = plan.bits.ravel()
    auc = stats_auc(scores, flat)
    name = summary.score
    # Stored as finite JSON numbers in score order: NaN (nothing to score) lowest,
    # an exact answer's +-inf as the largest floats.
    finite = np.nan_to_num(
        np.where(np.isnan(scores), -math.inf, scores),
        posinf=np.finfo(np.float64).max,
        neginf=-np.finfo(np.float64).max,
    )
    attack = AttackResult(
        name=name,
        eps_emp=eps_emp,
        eps_max_attainable=eps_max,
        auc=auc,
        counts=counts,
        alpha=config.alpha,
        scores_member=tuple(float(x) for x in finite[flat == 1]),
        scores_non_member=tuple(float(x) for x in finite[flat == 0]),
    )
    return AuditResult(
        version=dpaudit.__version__,
        verdict=verdict,
        verdict_reason=one_run_reason(
            verdict,
            eps_emp=eps_emp,
            eps_claimed=claim.epsilon,
            eps_max=eps_max,
            summary=summary,
            auc=auc if answers is None else None,
        )
        + ("" if answers is None else transcript_note(answers, measurements)),
        eps_emp=eps_emp,
        eps_claimed=claim.epsilon,
        eps_reference=claim.reference_epsilon,
        eps_max_attainable=eps_max,
        power=Power(
            eps_max_attainable=eps_max,
            rounds_needed=None,
            saturated=made.correct == r,
            tightness=tightness(
                eps_emp=eps_emp,
                eps_reference=claim.reference_epsilon,
                eps_claimed=claim.epsilon,
            ),
        ),
        approximate=False,
        randomness="independent",
        auc=auc,
        counts=counts,
        attack=name,
        estimator=Estimator(
            method=METHOD,
            alpha=config.alpha,
            correction="none",
            n_attacks=1,
            test_non_members=int((flat == 0).sum()),
            test_members=int((flat == 1).sum()),
            overall_alpha=config.alpha,
        ),
        delta=delta,
        delta_requested=config.delta,
        attacks=MappingProxyType({name: attack}),
        generator=config.generator,
        variant=config.variant,
        bugs=tuple(active_flags(config)),
        bugs_added=tuple(sorted(set(config.bugs))),
        dataset=design.dataset,
        synthetic_rows=rows,
        claim=claim,
        config=config,
        generator_options=freeze({k: plain(v) for k, v in options.items()}),
        python=python_section(config.python),
        seed=config.seed,
        rounds=Rounds(
            total=plan.fits, per_world=None, train=0, validation=0, test=plan.fits
        ),
        game="one-run",
        one_run=summary,
        measurements=measurements,
    )
