"""The analysis of a finished audit: per-attack bounds, the claim, the verdict.

Soundness (docs/soundness.md, rule 4): classifiers train on train rounds, thresholds
are chosen on validation rounds and the bound is computed on test rounds only. With
several attacks each bound is taken at ``alpha / n_attacks`` (Bonferroni) and the
headline is the attack with the largest bound; ties go to the attack that separates
the worlds best on the VALIDATION rounds, never to one whose scores are constant.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from types import MappingProxyType
from typing import Any, cast

import numpy as np

import dpaudit
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.split import unused_training_warning
from dpaudit.audit.games.claims import active_flags, plain, summarise_claims
from dpaudit.audit.games.estimate import attainable_maximum as est_attainable_maximum
from dpaudit.audit.games.estimate import per_attack_alpha
from dpaudit.audit.games.execution import cpu_cores
from dpaudit.audit.games.looks import LookPlan, look_test_sizes
from dpaudit.audit.games.plan import SPLIT_CODES, GamePlan
from dpaudit.audit.games.scores import (
    analyse_scores,
    ceiling_of,
    claimed_profile,
    ratio_attainable,
    refutable,
    region_decides,
)
from dpaudit.audit.games.scores import tpr_at_low_fpr as tpr_at_low_fpr
from dpaudit.audit.games.setup import AuditSetup
from dpaudit.audit.games.verdict import decide, saturated, tightness, verdict_reason
from dpaudit.audit.result.model import (
    AttackResult,
    AuditResult,
    AuditWarning,
    Claim,
    ClassifierChoice,
    Estimator,
    Power,
    Randomness,
    Rounds,
    SequentialLook,
    SequentialLooks,
    TargetCandidate,
    freeze,
)
from dpaudit.audit.stats import calibrated
from dpaudit.audit.stats import estimators as est
from dpaudit.audit.stats.ceiling import profile_rounds_needed
from dpaudit.audit.stats.claimnotes import over_budget_note
from dpaudit.audit.stats.profile import ClaimedProfile
from dpaudit.audit.storage.store import ResultStore
from dpaudit.generators.foreign.pool import python_section

Scores = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""An attack's validation scores and labels, then its test scores and labels."""


def score_attack(name: str, attack: Any, store: ResultStore, plan: GamePlan) -> Scores:
    """Fits the attack on train rounds (none: it learns nothing) and scores the
    validation and test rounds (disjoint sets: rule 4)."""
    idx = {s: plan.indices(s) for s in SPLIT_CODES}
    labels = {s: plan.bits[i] for s, i in idx.items()}
    x_train = (
        store.features(name, idx["train"])
        if idx["train"].size
        else np.empty((0, attack.n_features), dtype=np.float64)
    )
    attack.fit(x_train, labels["train"])
    s_val = attack.score(store.features(name, idx["validation"]))
    s_test = attack.score(store.features(name, idx["test"]))
    return s_val, labels["validation"], s_test, labels["test"]


def analyse_attack(
    name: str,
    attack: Any,
    store: ResultStore,
    plan: GamePlan,
    *,
    delta: float,
    alpha: float,
    method: est.EstimatorMethod,
    profile: ClaimedProfile | None = None,
) -> AttackResult:
    """Fits the attack on train rounds, picks the threshold on validation rounds and
    bounds epsilon on test rounds (disjoint sets: rule 4)."""
    return analyse_scores(
        name,
        *score_attack(name, attack, store, plan),
        delta=delta,
        alpha=alpha,
        method=method,
        profile=profile,
    )


def classifier_choice(attack: Any) -> ClassifierChoice | None:
    """The model a classifier attack trained (its ``choice_``,
    :mod:`dpaudit.attacks.classifiers`); ``None`` for an attack that trains none."""
    choice = getattr(attack, "choice_", None)
    if choice is None:
        return None
    return ClassifierChoice(
        model=choice.model,
        forest_auc=choice.forest_auc,
        logistic_auc=choice.logistic_auc,
    )


def cannot_separate(s_val: np.ndarray) -> str | None:
    """Why validation scores cannot separate the worlds (``None``: they may).

    Constant scores leave one threshold, which guesses every round the same way:
    its test point is a corner on the diagonal (TPR = FPR), inside every claim.

    >>> print(cannot_separate(np.zeros(6)))
    constant scores (0) on all 6 validation rounds: no threshold separates the worlds
    >>> cannot_separate(np.arange(6.0)) is None
    True
    """
    if s_val.size and np.ptp(s_val) > 0:
        return None
    value = f" ({float(s_val[0]):.6g})" if s_val.size else ""
    return (
        f"constant scores{value} on all {s_val.size} validation rounds: no threshold "
        "separates the worlds"
    )


def dropped_attacks(scores: Mapping[str, Scores]) -> dict[str, str]:
    """The attacks dropped before the test, with why: those whose VALIDATION scores
    cannot separate the worlds (:func:`cannot_separate`; docs/soundness.md,
    "Dropping an attack that cannot separate"). The test rounds are not read. None
    is dropped when every attack would be (the verdict then rests on them all, as
    before: none can reject)."""
    out = {n: r for n, s in scores.items() if (r := cannot_separate(s[0])) is not None}
    return {} if len(out) == len(scores) else out


#: The fewest released rows per round an audit should use. Every feature of the
#: attacks is a fraction of the released rows (query answers, moments, histogram
#: cells, a fingerprint's frequencies), so on ``n`` rows it moves in steps of
#: ``1 / n``: below 100 rows a step exceeds 1%, coarser than the differences one
#: record makes on a real table. The worst-case audits release 100 rows.
MIN_RELEASE_ROWS = 100


def release_warnings(
    *, synthetic_rows: int, training_rows: int, explicit: bool
) -> tuple[AuditWarning, ...]:
    """Warnings about a release too small for the attacks (``small_release``).

    >>> [w.code for w in release_warnings(synthetic_rows=4, training_rows=4,
    ...                                   explicit=False)]
    ['small_release']
    >>> release_warnings(synthetic_rows=100, training_rows=4, explicit=True)
    ()
    """
    if synthetic_rows >= MIN_RELEASE_ROWS:
        return ()
    source = (
        "set with --synthetic-rows"
        if explicit
        else f"by default |D| = {training_rows}, the size of the training table"
    )
    return (
        AuditWarning(
            code="small_release",
            message=(
                f"the release has {synthetic_rows} rows per round ({source}), fewer than "
                f"the {MIN_RELEASE_ROWS} the attacks are built for: their features are fractions "
                f"of the released rows, which move in steps of 1/{synthetic_rows}, so an "
                "audit this small can miss a leak a larger release shows. Release more "
                f"rows with --synthetic-rows {MIN_RELEASE_ROWS} (or more; both worlds "
                "release the same number)."
            ),
        ),
    )


def split_warnings(
    split: tuple[float, float, float], attacks: Sequence[str]
) -> tuple[AuditWarning, ...]:
    """A warning (``unused_training``) when the split trains attacks that learn
    nothing (:func:`dpaudit.audit.config.split.unused_training_warning`).

    >>> [w.code for w in split_warnings((0.4, 0.2, 0.4), ["likelihood-ratio"])]
    ['unused_training']
    >>> split_warnings((0.0, 0.2, 0.8), ["likelihood-ratio"])
    ()
    """
    text = unused_training_warning(split, tuple(attacks))
    return () if text is None else (AuditWarning(code="unused_training", message=text),)


def headline_attack(
    per_attack: Mapping[str, AttackResult], *, by_ratio: bool = False
) -> str:
    """The attack the verdict reports: the largest eps_emp (with ``by_ratio``, for a
    claim that states a profile: the largest refutation ratio, the statistic the
    verdict uses); ties go to an attack
    whose scores vary, then to the largest validation-round AUC, then to the first
    attack. Test-round AUC never decides (it would favour chance), and a constant
    guess never beats an attack that separates the worlds at all.

    >>> none = est.AttackCounts(tp=0, fp=0, tn=0, fn=0)
    >>> headline_attack({
    ...     "const": AttackResult(name="const", eps_emp=0.0, constant_scores=True,
    ...                           validation_auc=0.5, auc=0.9, counts=none),
    ...     "real": AttackResult(name="real", eps_emp=0.0, validation_auc=0.6,
    ...                          auc=0.5, counts=none)})
    'real'
    """
    names = list(per_attack)

    def key(name: str) -> tuple[float, bool, float, int]:
        a = per_attack[name]
        val = 0.5 if a.validation_auc is None else a.validation_auc
        stat = (a.refutation_ratio if by_ratio else a.eps_emp) or 0.0
        return (stat, not a.constant_scores, val, -names.index(name))

    return max(names, key=key)


def power_of(
    *,
    head: AttackResult,
    claim: Claim,
    config: AuditConfig,
    delta: float,
    alpha: float,
    constant_release: bool = False,
) -> Power:
    """The audit's power: attainable maximum, rounds needed, saturation, tightness,
    and whether the release was the same in every round of both worlds."""
    eps_claimed = float(claim.epsilon if claim.epsilon is not None else math.nan)
    needed = (
        (
            calibrated.rounds_needed(
                eps_claimed=eps_claimed,
                delta=delta,
                alpha=alpha,
                split=config.fractions,
            )
            if config.estimator == "clopper_pearson"  # the exact test's
            else est.rounds_needed(
                eps_claimed=eps_claimed,
                delta=delta,
                alpha=alpha,
                split=config.fractions,
                method=config.estimator,
            )
        )
        if np.isfinite(eps_claimed)
        else None
    )
    eps_emp = head.eps_emp or 0.0
    top = head.eps_max_attainable or 0.0
    profile = claimed_profile(claim, delta=delta) if np.isfinite(eps_claimed) else None
    ceiling = ceiling_of(head, claim, delta=delta, alpha=alpha, method=config.estimator)
    return Power(
        eps_max_attainable=head.eps_max_attainable,
        rounds_needed=needed,
        saturated=saturated(eps_emp=eps_emp, eps_max_attainable=top),
        tightness=tightness(
            eps_emp=eps_emp,
            eps_reference=claim.reference_epsilon,
            eps_claimed=eps_claimed,
        ),
        constant_release=constant_release,
        mu_max_attainable=head.mu_max_attainable,
        profile_rounds_needed=profile_rounds_needed(
            profile, alpha=alpha, split=config.fractions, method=config.estimator
        )
        if profile is not None and profile.has_profile
        else None,
        ratio_max_attainable=ratio_attainable(head, profile, config.estimator)
        if profile is not None
        else None,
        **ceiling,
    )


def _constant(features: np.ndarray) -> bool:
    """Whether every row of ``features`` equals the first (NaN equal to NaN)."""
    return bool(
        np.all(
            (features == features[:1]) | (np.isnan(features) & np.isnan(features[:1]))
        )
    )


def analyse(
    setup: AuditSetup,
    store: ResultStore,
    *,
    on_attack: Callable[[str], None] | None = None,
    level: float | None = None,
) -> AuditResult:
    """The result of a finished audit (what ``result.json`` holds; its ``timing``
    is the caller's to set); ``on_attack`` is called with each attack's name once it
    is analysed (progress).

    ``setup.plan`` is the game analysed: a sequential look passes the plan of its
    rounds (:meth:`GamePlan.at_look`) and its ``level`` (the share of ``alpha`` the
    look spends, :mod:`dpaudit.audit.games.looks`); default: ``config.alpha``."""
    config = setup.config
    overall = config.alpha if level is None else level
    n_plan = setup.plan.n_rounds
    claim = summarise_claims(
        {r: c for r, c in store.claims().items() if int(r) < n_plan}
    )
    assert claim.epsilon is not None and claim.delta is not None
    # The claim is (epsilon, delta_claimed): a violation of it must be shown at the
    # claimed delta. An implementation that claims a larger delta than asked
    # (delta_override) is judged at its own, weaker, delta.
    delta = max(config.delta, claim.delta)
    profile = claimed_profile(claim, delta=delta)
    attacks = setup.make_attacks()
    store.prefetch(attacks)

    # The attacks' classifiers are independent (each has its own stream) and
    # scikit-learn's tree building releases the GIL: they train side by side.
    workers = min(len(attacks), cpu_cores())
    if workers > 1:
        with ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="dpaudit-analysis"
        ) as pool:
            scores = dict(
                zip(
                    attacks,
                    pool.map(
                        lambda n: score_attack(n, attacks[n], store, setup.plan),
                        attacks,
                    ),
                )
            )
    else:
        scores = {n: score_attack(n, a, store, setup.plan) for n, a in attacks.items()}
    # An attack whose validation scores cannot separate the worlds is dropped before
    # the test, decided on validation rounds only; taking the best of the others is
    # a multiple comparison: each bound at alpha / (attacks kept) per rate
    # (Bonferroni).
    dropped = dropped_attacks(scores)
    kept = [name for name in attacks if name not in dropped]
    n_attacks = len(kept)
    alpha = per_attack_alpha(overall, n_attacks)
    per_attack = {}
    for name in kept:
        per_attack[name] = replace(
            analyse_scores(
                name,
                *scores[name],
                delta=delta,
                alpha=alpha,
                method=config.estimator,
                profile=profile,
            ),
            classifier=classifier_choice(attacks[name]),
        )
    if on_attack is not None:
        for name in attacks:
            on_attack(name)
    every_round = np.arange(setup.plan.n_rounds, dtype=np.int64)
    width = setup.release.feature_width  # the columns that show a constant release
    constant = all(
        _constant(store.features(name, every_round)[:, :width]) for name in attacks
    )
    # The claim's own test decides (its ratio), or the lines by eps_emp (Jeffreys,
    # test sizes beyond the exact test's).
    first = next(iter(per_attack.values())).counts
    by_region = region_decides(
        profile, config.estimator, first.n_non_members, first.n_members
    )
    best = headline_attack(per_attack, by_ratio=by_region)
    head = per_attack[best]
    verdict = decide(
        eps_emp=head.eps_emp,
        eps_claimed=claim.epsilon,
        eps_max_attainable=head.eps_max_attainable,
        refutation_ratio=head.refutation_ratio if by_region else None,
        profile_refutable=refutable(head, profile, config.estimator),
    )
    power = power_of(
        head=head,
        claim=claim,
        config=config,
        delta=delta,
        alpha=alpha,
        constant_release=constant,
    )
    approximate = config.estimator == "jeffreys"
    n0, n1 = setup.plan.world_sizes("test")
    splits = {s: len(setup.plan.indices(s)) for s in SPLIT_CODES}
    return AuditResult(
        version=dpaudit.__version__,
        verdict=verdict,
        verdict_reason=" ".join(
            [
                verdict_reason(
                    verdict,
                    eps_emp=head.eps_emp,
                    eps_claimed=claim.epsilon,
                    eps_max_attainable=head.eps_max_attainable,
                    rounds_needed=power.rounds_needed,
                    approximate=approximate,
                    is_saturated=power.saturated,
                    constant_release=constant,
                    point=head,
                    claim=claim if profile.has_profile else None,
                    profile_rounds_needed=power.profile_rounds_needed,
                ),
                # A claim above the budget asked (docs/adapters.md).
                *filter(None, [over_budget_note(claim.epsilon, config.epsilon)]),
            ]
        ),
        eps_emp=head.eps_emp,
        eps_claimed=claim.epsilon,
        eps_reference=claim.reference_epsilon,
        eps_max_attainable=head.eps_max_attainable,
        power=power,
        approximate=approximate,
        randomness=cast(Randomness, setup.randomness),
        auc=head.auc,
        counts=head.counts,
        attack=best,
        estimator=Estimator(
            method=config.estimator,
            alpha=alpha,
            correction="bonferroni" if n_attacks > 1 else "none",
            n_attacks=n_attacks,
            test_non_members=n0,
            test_members=n1,
            overall_alpha=overall,
        ),
        delta=delta,
        delta_requested=config.delta,
        attacks=MappingProxyType(per_attack),
        generator=config.generator,
        variant=config.variant,
        bugs=tuple(active_flags(config)),
        bugs_added=tuple(sorted(set(config.bugs))),
        dataset=setup.dataset.name,
        target=freeze({str(k): plain(v) for k, v in setup.target.iloc[0].items()}),
        target_index=setup.target_index,
        target_selection=None
        if setup.target_selection is None
        else tuple(
            TargetCandidate(row=int(r), auc=float(a)) for r, a in setup.target_selection
        ),
        public_selection=setup.public_selection,
        synthetic_rows=setup.synthetic_rows,
        warnings=release_warnings(
            synthetic_rows=setup.synthetic_rows,
            training_rows=len(setup.without),
            explicit=config.synthetic_rows is not None,
        )
        + split_warnings(config.fractions, setup.attacks),
        claim=claim,
        config=config,
        generator_options=freeze(
            {k: plain(v) for k, v in setup.generator_options.items()}
        ),
        python=python_section(config.python),
        seed=config.seed,
        rounds=Rounds(
            total=setup.plan.n_rounds,
            per_world=setup.plan.n_rounds // 2,
            train=splits["train"],
            validation=splits["validation"],
            test=splits["test"],
        ),
        mu_emp=head.mu_emp,
        mu_max_attainable=head.mu_max_attainable,
        eps_of_mu_emp=head.eps_of_mu_emp,
        fpr_upper=head.fpr_upper,
        fnr_upper=head.fnr_upper,
        refutation_ratio=head.refutation_ratio,
        regions_violated=head.regions_violated,
        measurements=setup.release.summarise(
            setup, store, head=head, claim=claim, alpha=alpha
        ),
        dropped_attacks=MappingProxyType(dropped) if dropped else None,
    )


def with_looks(
    reached: Sequence[AuditResult], looks: LookPlan, *, n_attacks: int
) -> AuditResult:
    """The result of a sequential audit: the last look reached (the one that
    decided), with every planned look recorded (``sequential``): the reached ones'
    eps_emp and verdict, and each look's attainable maximum at its own level."""
    last = reached[-1]
    config = last.config
    tests = look_test_sizes(looks, split=config.fractions)
    entries = []
    for k, (per_world, level) in enumerate(zip(looks.per_world, looks.alphas)):
        seen = reached[k] if k < len(reached) else None
        entries.append(
            SequentialLook(
                per_world=per_world,
                alpha=level,
                eps_max_attainable=seen.eps_max_attainable
                if seen is not None
                else est_attainable_maximum(
                    tests[k],
                    tests[k],
                    delta=last.delta,
                    alpha=level,
                    n_attacks=n_attacks,
                    method=config.estimator,
                ),
                eps_emp=None if seen is None else seen.eps_emp,
                verdict=None if seen is None else seen.verdict,
            )
        )
    return replace(
        last,
        sequential=SequentialLooks(
            planned_per_world=looks.per_world[-1],
            looks=tuple(entries),
            decided=len(reached),
            stopped_early=len(reached) < len(looks.per_world),
        ),
    )
