"""The analysis of a finished audit: per-attack bounds, the claim, the verdict.

Soundness (docs/soundness.md, rule 4): classifiers train on train rounds, thresholds
are chosen on validation rounds and the bound is computed on test rounds only. With
several attacks each bound is taken at ``alpha / n_attacks`` (Bonferroni) and the
headline is the attack with the largest bound; ties go to the attack that separates
the worlds best on the VALIDATION rounds, never to one whose scores are constant.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

import dpaudit
from dpaudit.audit import estimators as est
from dpaudit.audit.config import AuditConfig
from dpaudit.audit.estimate import per_attack_alpha
from dpaudit.audit.execution import cpu_cores
from dpaudit.audit.game import SPLIT_CODES, GamePlan
from dpaudit.audit.result import SCHEMA_VERSION
from dpaudit.audit.setup import AuditSetup
from dpaudit.audit.store import ResultStore
from dpaudit.audit.thresholds import roc_auc, roc_curve, select_threshold
from dpaudit.audit.verdict import decide, saturated, tightness, verdict_reason


def analyse_attack(name: str, attack: Any, store: ResultStore, plan: GamePlan, *,
                   delta: float, alpha: float, method: est.EstimatorMethod
                   ) -> dict[str, Any]:
    """Fits the attack on train rounds, picks the threshold on validation rounds and
    bounds epsilon on test rounds (disjoint sets: rule 4)."""
    idx = {s: plan.indices(s) for s in SPLIT_CODES}
    labels = {s: plan.bits[i] for s, i in idx.items()}
    x_train = store.features(name, idx["train"])
    attack.fit(x_train, labels["train"])
    s_val = attack.score(store.features(name, idx["validation"]))
    s_test = attack.score(store.features(name, idx["test"]))
    threshold, direction = select_threshold(s_val, labels["validation"],
                                            delta=delta, alpha=alpha, method=method)
    counts = est.AttackCounts.from_scores(s_test, labels["test"], threshold=threshold,
                                          direction=direction)
    eps = est.eps_lower_bound(counts, delta=delta, alpha=alpha, method=method)
    n0, n1 = plan.world_sizes("test")
    oriented = direction * s_test
    fpr, tpr = roc_curve(oriented, labels["test"])
    return {
        "eps_emp": float(eps),
        "eps_max_attainable": float(est.eps_max_attainable(n0, n1, delta=delta,
                                                           alpha=alpha, method=method)),
        "auc": float(roc_auc(oriented, labels["test"])),
        "validation_auc": float(roc_auc(direction * s_val, labels["validation"])),
        "constant_scores": bool(np.ptp(s_val) == 0 and np.ptp(s_test) == 0),
        "counts": counts.to_json(),
        "threshold": float(threshold),
        "direction": int(direction),
        "alpha": float(alpha),
        "roc": {"fpr": fpr, "tpr": tpr},
        "scores": {"member": s_test[labels["test"] == 1].tolist(),
                   "non_member": s_test[labels["test"] == 0].tolist()},
    }


def headline_attack(per_attack: Mapping[str, Mapping[str, Any]]) -> str:
    """The attack the verdict reports: the largest eps_emp; ties go to an attack
    whose scores vary, then to the largest validation-round AUC, then to the first
    attack. Test-round AUC never decides (it would favour chance), and a constant
    guess never beats an attack that separates the worlds at all.

    >>> headline_attack({"const": {"eps_emp": 0.0, "constant_scores": True,
    ...                            "validation_auc": 0.5, "auc": 0.9},
    ...                  "real": {"eps_emp": 0.0, "constant_scores": False,
    ...                           "validation_auc": 0.6, "auc": 0.5}})
    'real'
    """
    names = list(per_attack)

    def key(name: str) -> tuple[float, bool, float, int]:
        a = per_attack[name]
        return (float(a["eps_emp"]), not a.get("constant_scores", False),
                float(a.get("validation_auc", 0.5)), -names.index(name))

    return max(names, key=key)


def summarise_claims(claims: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """The claim the verdict is judged against: the largest epsilon any round claimed
    (the generator's most generous statement about itself), and the largest reference
    epsilon (None when a correct accountant finds no finite bound)."""
    values = list(claims.values())
    eps = [float(c["epsilon"]) for c in values]
    refs = [c.get("reference_epsilon") for c in values]
    worst = values[int(np.argmax(eps))]
    return {
        "epsilon": max(eps),
        "epsilon_min": min(eps),
        "delta": max(float(c["delta"]) for c in values),
        "accountant": worst.get("accountant"),
        "epsilon_data_independent": worst.get("epsilon_data_independent"),
        "reference_epsilon": (None if any(r is None for r in refs)
                              else max(float(r) for r in refs if r is not None)),
        "reference_note": worst.get("trace", {}).get("reference_note"),
        "iterations": worst.get("iterations"),
        "iterations_mean": float(np.mean([c.get("iterations") or 0 for c in values])),
        "records_seen": worst.get("trace", {}).get("records_seen"),
    }


def power_of(*, head: Mapping[str, Any], claim: Mapping[str, Any], config: AuditConfig,
             delta: float, alpha: float, constant_release: bool = False) -> dict[str, Any]:
    """The audit's power: attainable maximum, rounds needed, saturation, tightness,
    and whether the release was the same in every round of both worlds."""
    eps_claimed = float(claim["epsilon"])
    needed = (est.rounds_needed(eps_claimed=eps_claimed, delta=delta, alpha=alpha,
                                split=config.split, method=config.estimator)
              if np.isfinite(eps_claimed) else None)
    return {
        "eps_max_attainable": head["eps_max_attainable"],
        "rounds_needed": needed,
        "saturated": saturated(eps_emp=head["eps_emp"],
                               eps_max_attainable=head["eps_max_attainable"]),
        "tightness": tightness(eps_emp=head["eps_emp"],
                               eps_reference=claim["reference_epsilon"],
                               eps_claimed=eps_claimed),
        "constant_release": constant_release,
    }


def _constant(features: np.ndarray) -> bool:
    """Whether every row of ``features`` equals the first (NaN equal to NaN)."""
    return bool(np.all((features == features[:1]) | (np.isnan(features)
                                                     & np.isnan(features[:1]))))


def analyse(setup: AuditSetup, store: ResultStore) -> dict[str, Any]:
    """The result of a finished audit (the content of ``result.json``)."""
    config = setup.config
    n_attacks = len(setup.attacks)
    # Taking the best of several attacks is a multiple comparison: each attack's
    # bound is computed at alpha / n_attacks per rate (Bonferroni).
    alpha = per_attack_alpha(config.alpha, n_attacks)
    claim = summarise_claims(store.claims())
    # The claim is (epsilon, delta_claimed): a violation of it must be shown at the
    # claimed delta. An implementation that claims a larger delta than asked
    # (delta_override) is judged at its own, weaker, delta.
    delta = max(config.delta, claim["delta"])
    attacks = setup.make_attacks()
    store.prefetch(attacks)

    def one(name: str) -> dict[str, Any]:
        return analyse_attack(name, attacks[name], store, setup.plan, delta=delta,
                              alpha=alpha, method=config.estimator)

    # The attacks' classifiers are independent (each has its own stream) and
    # scikit-learn's tree building releases the GIL: they train side by side.
    workers = min(len(attacks), cpu_cores())
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers,
                                thread_name_prefix="dpaudit-analysis") as pool:
            per_attack = dict(zip(attacks, pool.map(one, attacks)))
    else:
        per_attack = {name: one(name) for name in attacks}
    every_round = np.arange(setup.plan.n_rounds, dtype=np.int64)
    constant = all(_constant(store.features(name, every_round)) for name in attacks)
    best = headline_attack(per_attack)
    head = per_attack[best]
    verdict = decide(eps_emp=head["eps_emp"], eps_claimed=claim["epsilon"],
                     eps_max_attainable=head["eps_max_attainable"])
    power = power_of(head=head, claim=claim, config=config, delta=delta, alpha=alpha,
                     constant_release=constant)
    approximate = config.estimator == "jeffreys"
    n0, n1 = setup.plan.world_sizes("test")
    splits = {s: len(setup.plan.indices(s)) for s in SPLIT_CODES}
    return {
        "schema_version": SCHEMA_VERSION,
        "version": dpaudit.__version__,
        "verdict": verdict.value,
        "verdict_reason": verdict_reason(
            verdict, eps_emp=head["eps_emp"], eps_claimed=claim["epsilon"],
            eps_max_attainable=head["eps_max_attainable"],
            rounds_needed=power["rounds_needed"], approximate=approximate,
            is_saturated=power["saturated"], constant_release=constant),
        "eps_emp": head["eps_emp"],
        "eps_claimed": claim["epsilon"],
        "eps_reference": claim["reference_epsilon"],
        "eps_max_attainable": head["eps_max_attainable"],
        "power": power,
        "approximate": approximate,
        "randomness": setup.randomness,
        "auc": head["auc"],
        "counts": head["counts"],
        "attack": best,
        "estimator": {"method": config.estimator, "alpha": alpha,
                      "confidence": 1.0 - alpha,
                      "correction": "bonferroni" if n_attacks > 1 else "none",
                      "n_attacks": n_attacks, "test_non_members": n0,
                      "test_members": n1, "overall_alpha": config.alpha,
                      "overall_confidence": 1.0 - config.alpha},
        "delta": delta,
        "delta_requested": config.delta,
        "attacks": per_attack,
        "generator": config.generator,
        "variant": config.variant,
        "bugs": _active_flags(config),
        "bugs_added": sorted(set(config.bugs)),
        "dataset": setup.dataset.name,
        "target": {k: _plain(v) for k, v in setup.target.iloc[0].items()},
        "target_index": setup.target_index,
        "target_selection": None if setup.target_selection is None else [
            {"row": int(r), "auc": float(a)} for r, a in setup.target_selection],
        "public_selection": None if setup.public_selection is None else [
            {"candidate": int(c), "auc": float(a)} for c, a in setup.public_selection],
        "synthetic_rows": setup.synthetic_rows,
        "claim": claim,
        "config": config.to_json(),
        "generator_options": {k: _plain(v) for k, v in setup.generator_options.items()},
        "seed": config.seed,
        "rounds": {"total": setup.plan.n_rounds, "per_world": config.rounds,
                   "train": splits["train"], "validation": splits["validation"],
                   "test": splits["test"]},
    }


def _active_flags(config: AuditConfig) -> list[str]:
    """Every bug flag switched on: the variant's and the ones added with --bug."""
    flags = set(config.bugs)
    if config.variant:
        from dpaudit.generators.bugs import get_variant

        flags |= get_variant(config.variant).flags
    return sorted(flags)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
