"""Running an audit: plan, train in batches (in parallel), store, resume, estimate.

:func:`run_audit` is the library entry point the CLI and ``dpaudit check`` call. An
audit writes one directory: ``audit.sqlite`` (rounds, bits, claims and attack features,
committed batch by batch) and ``result.json``. A killed audit resumes with
``resume=True`` and gets the result an uninterrupted run would have: rounds are
batched by index, each round's randomness comes from its own stream, and finished
batches are never recomputed.

Soundness (DESIGN.md): the generator gets the public domain (rule 2); the number of
released rows is fixed by the configuration and equal in both worlds (rule 3);
classifiers train on train rounds, thresholds are chosen on validation rounds and the
bound is computed on test rounds only (rule 4).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

import dpaudit
from dpaudit.allocator import keep_freed_memory
from dpaudit.attacks.registry import ATTACK_NAMES, expand_attacks, make_attack
from dpaudit.audit import estimators as est
from dpaudit.audit.game import SPLIT_CODES, GamePlan
from dpaudit.audit.store import ResultStore
from dpaudit.audit.verdict import decide
from dpaudit.data import Dataset, Domain, load_dataset
from dpaudit.errors import InvalidParameterError, StoreError
from dpaudit.generators.base import Generator
from dpaudit.generators.registry import generator_factory
from dpaudit.io import write_atomic
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import neighbouring_pair, worst_case_target

SCHEMA_VERSION = 1
Backend = Literal["loky", "threading", "dask"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditConfig:
    """Everything that defines an audit (the keys of ``audit.toml``).

    Args:
        generator: ``pategan``, ``gpate``, a toy, or a plug-in ``module:Class``.
        variant: a bug variant of the generator (``dpaudit list variants``).
        bugs: extra bug flags switched on.
        dataset: ``worst-case``, a named dataset or a CSV path (with ``domain``).
        domain: the domain JSON of a CSV dataset.
        data_dir: folder of the named datasets.
        target: ``None`` (the dataset's default: the worst case's all-ones record),
            a row index of the dataset, or ``"auto"`` (the most vulnerable record).
        target_record: a record (column -> value) that need not be in the data.
        attack: an attack name or ``all``.
        rounds: rounds per world (``2 * rounds`` models in all).
        split: fractions of each world's rounds for train, validation and test.
        epsilon, delta: the privacy budget given to the generator.
        synthetic_rows: rows released per round (default: 100 for the worst case,
            ``|D|`` otherwise); equal in both worlds.
        batch_size: rounds trained together by ``fit_many``.
        jobs: parallel jobs (joblib); -1: one per CPU core.
        backend: joblib backend; ``dask`` runs on the cluster at ``scheduler``.
        device: ``auto``, ``cpu`` or ``cuda``.
        seed: the root seed.
        alpha: the audit's false-alarm probability: eps_emp exceeds the true epsilon
            with probability at most ``alpha`` (each error rate bounded at
            ``alpha / 2``, one-sided; 0.05 reproduces the study's 4.68 for 400 + 400
            test rounds). Split across attacks by Bonferroni with ``attack = "all"``.
        estimator: ``clopper_pearson`` or ``jeffreys``.
        generator_options: extra generator options (for example ``lam``).
        attack_options: extra attack options (for example ``n_queries``).
        candidates, selection_rounds: target selection with ``target = "auto"``.
    """

    generator: str = "pategan"
    variant: str | None = None
    bugs: tuple[str, ...] = ()
    dataset: str = "worst-case"
    domain: str | None = None
    data_dir: str | None = None
    target: int | str | None = None
    target_record: Mapping[str, Any] | None = None
    attack: str = "querybased"
    rounds: int = 1000
    split: tuple[float, float, float] = (0.4, 0.2, 0.4)
    epsilon: float = 1.0
    delta: float = 1e-5
    synthetic_rows: int | None = None
    batch_size: int = 128
    jobs: int = -1
    backend: Backend = "loky"
    scheduler: str | None = None
    device: str = "auto"
    seed: int = 0
    alpha: float = 0.05
    estimator: est.EstimatorMethod = "clopper_pearson"
    generator_options: Mapping[str, Any] = field(default_factory=dict)
    attack_options: Mapping[str, Any] = field(default_factory=dict)
    candidates: int = 64
    selection_rounds: int = 100

    def __post_init__(self) -> None:
        def need(ok: bool, name: str, what: str, value: Any) -> None:
            if not ok:
                raise InvalidParameterError(f"`{name}` must be {what}. Got {value!r}.")

        need(isinstance(self.rounds, int) and self.rounds >= 5, "rounds",
             "an integer >= 5", self.rounds)
        need(self.epsilon > 0 and math.isfinite(self.epsilon), "epsilon", "> 0",
             self.epsilon)
        need(0 <= self.delta < 1, "delta", "in [0, 1)", self.delta)
        need(self.synthetic_rows is None or (isinstance(self.synthetic_rows, int)
                                             and self.synthetic_rows >= 1),
             "synthetic_rows", "an integer >= 1", self.synthetic_rows)
        need(isinstance(self.batch_size, int) and self.batch_size >= 1, "batch_size",
             "an integer >= 1", self.batch_size)
        need(isinstance(self.jobs, int) and (self.jobs >= 1 or self.jobs == -1), "jobs",
             "an integer >= 1 (or -1 for all cores)", self.jobs)
        need(self.backend in ("loky", "threading", "dask"), "backend",
             "loky, threading or dask", self.backend)
        need(self.backend != "dask" or bool(self.scheduler), "scheduler",
             "a Dask scheduler address with --backend dask", self.scheduler)
        need(self.device in ("auto", "cpu", "cuda"), "device", "auto, cpu or cuda",
             self.device)
        need(isinstance(self.seed, int) and self.seed >= 0, "seed",
             "a non-negative integer", self.seed)
        need(0 < self.alpha < 0.5, "alpha", "in (0, 0.5)", self.alpha)
        need(self.estimator in ("clopper_pearson", "jeffreys"), "estimator",
             "clopper_pearson or jeffreys", self.estimator)
        need(self.attack == "all" or self.attack in ATTACK_NAMES, "attack",
             f"one of {', '.join((*ATTACK_NAMES, 'all'))}", self.attack)
        need(isinstance(self.candidates, int) and self.candidates >= 1, "candidates",
             "an integer >= 1", self.candidates)
        need(isinstance(self.selection_rounds, int) and self.selection_rounds >= 5,
             "selection_rounds", "an integer >= 5", self.selection_rounds)
        need(self.target is None or self.target == "auto"
             or (isinstance(self.target, int) and self.target >= 0), "target",
             "a row index, 'auto', or unset", self.target)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> AuditConfig:
        """A config from plain keys (TOML, JSON, CLI); unknown keys are refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(mapping) - known)
        if unknown:
            raise InvalidParameterError(
                f"unknown audit key(s) {unknown}; valid keys: {sorted(known)}."
            )
        values = {k: v for k, v in mapping.items() if v is not None}
        if "bugs" in values:
            bugs = values["bugs"]
            values["bugs"] = (bugs,) if isinstance(bugs, str) else tuple(bugs)
        if "split" in values:
            values["split"] = tuple(float(x) for x in values["split"])
        if isinstance(values.get("target"), str) and values["target"].isdigit():
            values["target"] = int(values["target"])
        if isinstance(values.get("target_record"), str):
            try:
                values["target_record"] = json.loads(values["target_record"])
            except json.JSONDecodeError as err:
                raise InvalidParameterError(
                    f"`target_record` must be a JSON object. Got {values['target_record']!r}."
                ) from err
        for key in ("generator_options", "attack_options"):
            if key in values:
                values[key] = dict(values[key])
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["bugs"] = list(self.bugs)
        out["split"] = list(self.split)
        out["generator_options"] = dict(self.generator_options)
        out["attack_options"] = dict(self.attack_options)
        out["target_record"] = None if self.target_record is None else dict(
            self.target_record)
        return out

    def identity(self) -> str:
        """A hash of everything that changes the result (not jobs/backend/device)."""
        data = self.to_json()
        for key in ("jobs", "backend", "scheduler", "device"):
            data.pop(key)
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


# ---------------------------------------------------------------- the setup

@dataclass(frozen=True, kw_only=True)
class AuditSetup:
    """What every job needs, rebuilt deterministically from the config."""

    config: AuditConfig
    dataset: Dataset
    without: pd.DataFrame  # D
    with_target: pd.DataFrame  # D ∪ {target}
    target: pd.DataFrame  # one row
    target_index: int | None
    target_selection: tuple[tuple[int, float], ...] | None
    synthetic_rows: int
    generator_options: Mapping[str, Any]
    attacks: tuple[str, ...]
    plan: GamePlan

    @property
    def domain(self) -> Domain:
        return self.dataset.domain

    def make_generator(self) -> Generator:
        cfg = self.config
        factory = generator_factory(cfg.generator)
        return factory(epsilon=cfg.epsilon, delta=cfg.delta, **self.generator_options)

    def make_attacks(self) -> dict[str, Any]:
        rngs = self.plan.attack_rngs(len(ATTACK_NAMES))
        return {
            name: make_attack(name, domain=self.domain, target=self.target,
                              rng=rngs[ATTACK_NAMES.index(name)],
                              **_attack_options(name, self.config.attack_options))
            for name in self.attacks
        }


def _attack_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    from dpaudit.attacks.registry import attack_options

    allowed = set(attack_options(name))
    return {k: v for k, v in options.items() if k in allowed}


def build_setup(config: AuditConfig) -> AuditSetup:
    """Loads the data, picks the target and fixes every derived setting.

    Raises :class:`InvalidParameterError` on bad input, before anything is written.
    """
    dataset = load_dataset(config.dataset, domain=config.domain, data_dir=config.data_dir)
    domain = dataset.domain
    target_index: int | None = None
    selection: tuple[tuple[int, float], ...] | None = None
    if config.target_record is not None:
        target = pd.DataFrame([dict(config.target_record)])
        base = dataset.train
    elif config.target is None and dataset.name == "worst-case":
        target = worst_case_target(domain)
        base = dataset.train
    elif config.target is None:
        raise InvalidParameterError(
            f"dataset {dataset.name!r} needs a target: pass --target ROW, --target auto "
            "or --target-record JSON."
        )
    else:
        if config.target == "auto":
            from dpaudit.worst_case.targets import rank_targets

            selection = tuple(rank_targets(dataset.train, domain=domain, config=config))
            target_index = selection[0][0]
            # Workers rebuild the setup from the config: hand them the chosen row so
            # the selection runs once.
            config = dataclasses.replace(config, target=target_index)
        else:
            target_index = int(config.target)  # type: ignore[arg-type]
        if target_index >= len(dataset.train):
            raise InvalidParameterError(
                f"`target` must be a row index below {len(dataset.train)}. "
                f"Got {target_index}."
            )
        target = dataset.train.iloc[[target_index]].reset_index(drop=True)
        base = dataset.train.drop(index=dataset.train.index[target_index])
    without, with_target = neighbouring_pair(base, target, domain=domain)
    target = with_target.iloc[[-1]].reset_index(drop=True)
    synthetic_rows = config.synthetic_rows or (
        100 if dataset.name == "worst-case" else len(without))
    options = dict(config.generator_options)
    if config.generator in ("pategan", "gpate"):
        options.setdefault("device", config.device)
        if config.variant:
            options["variant"] = config.variant
        if config.bugs:
            options["bugs"] = list(config.bugs)
    elif config.variant or config.bugs:
        raise InvalidParameterError(
            f"`variant`/`bugs` apply to pategan and gpate, not to {config.generator!r}."
        )
    if config.generator == "pategan":
        from dpaudit.generators.pate_gan import default_num_teachers

        # k is fixed from |D| for both worlds: a k that changed with the target's
        # presence would itself leak membership.
        options.setdefault("num_teachers", default_num_teachers(len(without)))
        # The study's audit settings: lambda = 0.001 for every variant, at most 100
        # iterations on the worst case and 1,000 on real data (--option overrides).
        options.setdefault("lam", 1e-3)
        options.setdefault("max_iterations", 100 if dataset.name == "worst-case" else 1000)
    if config.generator == "gpate":
        from dpaudit.generators.g_pate import with_small_table_defaults

        # The published settings are for 2,100 teachers on 284k rows: on a smaller
        # table fix k from |D| (both worlds) and calibrate the noise so that the
        # planned iterations run.
        options.setdefault("max_iterations", 100 if dataset.name == "worst-case" else 1000)
        options = with_small_table_defaults(options, len(without), epsilon=config.epsilon,
                                            delta=config.delta)
    setup = AuditSetup(
        config=config, dataset=dataset, without=without, with_target=with_target,
        target=target, target_index=target_index, target_selection=selection,
        synthetic_rows=synthetic_rows,
        generator_options=options, attacks=tuple(expand_attacks(config.attack)),
        plan=GamePlan.create(rounds=config.rounds, split=config.split, seed=config.seed),
    )
    setup.make_generator()  # refuses bad generator options now, not in a worker
    return setup


@functools.lru_cache(maxsize=4)
def _cached_setup(config_json: str) -> AuditSetup:
    return build_setup(AuditConfig.from_mapping(json.loads(config_json)))


@functools.lru_cache(maxsize=4)
def _round_rngs(config_json: str) -> list[Rngs]:
    return _cached_setup(config_json).plan.round_rngs()


# ------------------------------------------------------------------ training

def compact_claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    """A round's claim without its per-iteration trace (kept small in the store)."""
    out = {k: v for k, v in claim.items() if k != "trace"}
    trace = claim.get("trace", {})
    out["trace"] = {k: trace[k] for k in ("records_seen", "records_unused",
                                           "reference_note", "delta_used") if k in trace}
    # A PATE-GAN ledger is a short histogram; a data-dependent G-PATE ledger can be
    # long and is left out of the store.
    if "ledger" in trace and len(json.dumps(trace["ledger"])) < 20_000:
        out["trace"]["ledger"] = trace["ledger"]
    return out


def train_batch(config_json: str, rounds: Sequence[int]) -> list[dict[str, Any]]:
    """Trains and attacks the rounds ``rounds``; returns rows for the store.

    Runs in a worker: everything is rebuilt from the config, so the result depends on
    the rounds alone (not on which worker ran them).
    """
    keep_freed_memory()  # once per worker process
    setup = _cached_setup(config_json)
    plan = setup.plan
    if setup.config.device != "cuda":
        # Tiny per-member matmuls gain nothing from intra-op threads, and threads
        # oversubscribe the cores when jobs run side by side.
        import torch

        torch.set_num_threads(1)
    all_rngs = _round_rngs(config_json)
    generator = setup.make_generator()
    datasets, fit_rngs, sample_rngs = [], [], []
    for r in rounds:
        fit_rng, sample_rng = all_rngs[r].spawn(2)
        datasets.append(setup.with_target if plan.bits[r] else setup.without)
        fit_rngs.append(fit_rng)
        sample_rngs.append(sample_rng)
    if hasattr(generator, "fit_many"):
        models = generator.fit_many(datasets, domain=setup.domain, rngs=fit_rngs)
    else:
        models = [setup.make_generator().fit(d, domain=setup.domain, rng=g)
                  for d, g in zip(datasets, fit_rngs)]
    synthetic = []
    for model, g in zip(models, sample_rngs):
        frame = model.sample(setup.synthetic_rows, rng=g)
        if len(frame) != setup.synthetic_rows:
            raise InvalidParameterError(
                f"generator {setup.config.generator!r} released {len(frame)} rows; "
                f"{setup.synthetic_rows} were asked for (the release size must be fixed)."
            )
        synthetic.append(frame)
    attacks = setup.make_attacks()
    features = {name: attack.featurize(synthetic) for name, attack in attacks.items()}
    return [
        {"round": int(r), "bit": int(plan.bits[r]), "split": int(plan.splits[r]),
         "claim": compact_claim(model.privacy_claim_.to_json()),
         "features": {name: features[name][i] for name in attacks}}
        for i, (r, model) in enumerate(zip(rounds, models))
    ]


@contextlib.contextmanager
def _backend(config: AuditConfig) -> Iterator[None]:
    import joblib

    if config.backend == "dask":
        try:
            from distributed import Client
        except ImportError as err:
            raise InvalidParameterError(
                "`--backend dask` needs the dask extra: pip install 'dpaudit[dask]'."
            ) from err
        client = Client(config.scheduler)  # type: ignore[no-untyped-call]
        with client, joblib.parallel_backend("dask"):
            yield
    else:
        with joblib.parallel_backend(config.backend, n_jobs=config.jobs):
            yield


def _train_all(setup: AuditSetup, store: ResultStore, *, progress: bool) -> None:
    import joblib
    from tqdm import tqdm

    config = setup.config
    done = store.done_rounds()
    n = setup.plan.n_rounds
    batches = [list(range(s, min(s + config.batch_size, n)))
               for s in range(0, n, config.batch_size)]
    todo = [b for b in batches if not set(b) <= done]
    config_json = json.dumps(config.to_json(), sort_keys=True)
    bar = tqdm(total=n, initial=n - sum(len(b) for b in todo), unit="round",
               desc="audit", disable=not progress, file=None)
    try:
        with _backend(config):
            jobs = config.jobs if config.backend != "dask" else -1
            parallel = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")
            for rows in parallel(joblib.delayed(train_batch)(config_json, b) for b in todo):
                store.commit_batch(rows)
                bar.update(len(rows))
    finally:
        bar.close()


# ------------------------------------------------------------------ analysis

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
    threshold, direction = est.select_threshold(s_val, labels["validation"],
                                                delta=delta, alpha=alpha, method=method)
    counts = est.AttackCounts.from_scores(s_test, labels["test"], threshold=threshold,
                                          direction=direction)
    eps = est.eps_lower_bound(counts, delta=delta, alpha=alpha, method=method)
    n0, n1 = plan.world_sizes("test")
    oriented = direction * s_test
    fpr, tpr = est.roc_curve(oriented, labels["test"])
    return {
        "eps_emp": float(eps),
        "eps_max_attainable": float(est.eps_max_attainable(n0, n1, delta=delta,
                                                           alpha=alpha, method=method)),
        "auc": float(est.roc_auc(oriented, labels["test"])),
        "counts": counts.to_json(),
        "threshold": float(threshold),
        "direction": int(direction),
        "alpha": float(alpha),
        "roc": {"fpr": fpr, "tpr": tpr},
        "scores": {"member": s_test[labels["test"] == 1].tolist(),
                   "non_member": s_test[labels["test"] == 0].tolist()},
    }


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


def analyse(setup: AuditSetup, store: ResultStore) -> dict[str, Any]:
    """The result of a finished audit (the content of ``result.json``)."""
    config = setup.config
    n_attacks = len(setup.attacks)
    # Taking the best of several attacks is a multiple comparison: each attack's
    # bound is computed at alpha / n_attacks per rate (Bonferroni).
    alpha = est.bonferroni_alpha(config.alpha, n_attacks) if n_attacks > 1 else config.alpha
    claim = summarise_claims(store.claims())
    # The claim is (epsilon, delta_claimed): a violation of it must be shown at the
    # claimed delta. An implementation that claims a larger delta than asked
    # (delta_override) is judged at its own, weaker, delta.
    delta = max(config.delta, claim["delta"])
    attacks = setup.make_attacks()
    per_attack = {name: analyse_attack(name, attack, store, setup.plan,
                                       delta=delta, alpha=alpha,
                                       method=config.estimator)
                  for name, attack in attacks.items()}
    best = max(per_attack, key=lambda n: (per_attack[n]["eps_emp"], per_attack[n]["auc"]))
    head = per_attack[best]
    verdict = decide(head["eps_emp"], claim["epsilon"])
    n0, n1 = setup.plan.world_sizes("test")
    splits = {s: len(setup.plan.indices(s)) for s in SPLIT_CODES}
    return {
        "schema_version": SCHEMA_VERSION,
        "version": dpaudit.__version__,
        "verdict": verdict.value,
        "eps_emp": head["eps_emp"],
        "eps_claimed": claim["epsilon"],
        "eps_reference": claim["reference_epsilon"],
        "eps_max_attainable": head["eps_max_attainable"],
        "auc": head["auc"],
        "counts": head["counts"],
        "attack": best,
        "estimator": {"method": config.estimator, "alpha": alpha,
                      "confidence": 1.0 - alpha,
                      "correction": "bonferroni" if n_attacks > 1 else "none",
                      "n_attacks": n_attacks, "test_non_members": n0,
                      "test_members": n1},
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


# ------------------------------------------------------------------- driver

def _prepare_directory(out_dir: Path, config: AuditConfig, *, resume: bool,
                       force: bool) -> AuditConfig:
    """Checks what ``out_dir`` holds; returns the config to run (the stored one when
    resuming)."""
    store_path = out_dir / ResultStore.FILENAME
    if resume:
        if not store_path.exists():
            raise InvalidParameterError(
                f"--resume: {str(out_dir)!r} holds no audit to resume (no audit.sqlite)."
            )
        with ResultStore(out_dir) as store:
            stored = store.get_meta("config")
        if stored is None:
            raise StoreError(f"{str(store_path)!r} has no configuration; start over with --force.")
        return AuditConfig.from_mapping(stored)
    if store_path.exists() or (out_dir / "result.json").exists():
        existing = None
        if store_path.exists():
            with ResultStore(out_dir) as store:
                existing = store.get_meta("identity")
        if not force:
            same = existing == config.identity()
            hint = ("it holds this same audit: pass --resume to continue it"
                    if same else "it holds a different audit")
            raise InvalidParameterError(
                f"output directory {str(out_dir)!r} is not empty: {hint}, or pass "
                "--force to overwrite it, or choose another --out."
            )
        store_path.unlink(missing_ok=True)
        (out_dir / "result.json").unlink(missing_ok=True)
        trace = out_dir / "trace"
        if trace.is_dir():
            shutil.rmtree(trace)
    return config


def _write_training_trace(setup: AuditSetup, out: Path) -> None:
    """One extra PATE-GAN fit on ``D ∪ {target}`` with per-iteration traces, for the
    report (records seen per teacher, teacher losses, epsilon over iterations). Its
    stream is spawned apart from the rounds' and the attacks'; it is not part of the
    game."""
    if setup.config.generator != "pategan":
        return
    from dpaudit.audit.traces import write_trace

    options = {**setup.generator_options, "record_trace": True}
    generator = generator_factory("pategan")(epsilon=setup.config.epsilon,
                                             delta=setup.config.delta, **options)
    rng = Rngs.from_seed(setup.config.seed).spawn(4)[3]
    model = generator.fit(setup.with_target, domain=setup.domain, rng=rng)
    write_trace(out / "trace", model.privacy_claim_.to_json(),
                num_teachers=int(getattr(model, "num_teachers_", 0)))


def run_audit(config: AuditConfig, *, out_dir: Path | str, resume: bool = False,
              force: bool = False, progress: bool = False) -> dict[str, Any]:
    """Runs (or resumes) an audit and writes ``out_dir``; returns ``result.json``.

    Bad input raises :class:`InvalidParameterError` before anything is written.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`--out` {str(out)!r} exists and is not a directory.")
    config = _prepare_directory(out, config, resume=resume, force=force) if out.exists() \
        else config
    if resume and not out.exists():
        raise InvalidParameterError(f"--resume: {str(out)!r} does not exist.")
    started = time.perf_counter()
    setup = build_setup(config)
    out.mkdir(parents=True, exist_ok=True)
    with ResultStore(out) as store:
        store.set_meta("config", config.to_json())
        store.set_meta("identity", config.identity())
        store.set_meta("version", dpaudit.__version__)
        _train_all(setup, store, progress=progress)
        trained = time.perf_counter() - started
        result = analyse(setup, store)
    _write_training_trace(setup, out)
    result["timing"] = {"train_seconds": trained,
                        "total_seconds": time.perf_counter() - started}
    write_atomic(out / "result.json",
                 json.dumps(result, indent=2, allow_nan=False) + "\n")
    return result
