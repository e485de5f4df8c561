"""The audit's configuration: :class:`AuditConfig` (the keys of ``audit.toml``)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from dpaudit.attacks.registry import ATTACK_NAMES, DEFAULT, SET_NAMES
from dpaudit.audit import estimators as est
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import require

Backend = Literal["loky", "threading", "dask"]
Randomness = Literal["fixed_public", "independent"]


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
        attack: an attack name, ``all`` or ``default`` (the set per dataset kind).
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
            test rounds). Split across attacks by Bonferroni with a set (``all``, ``default``).
        estimator: ``clopper_pearson`` or ``jeffreys``.
        generator_options: extra generator options (for example ``lam``).
        attack_options: extra attack options (for example ``n_queries``).
        candidates, selection_rounds: target selection with ``target = "auto"``
            (``selection_rounds``: models per candidate world; the shared pool
            trains ``2 * selection_rounds`` models for all candidates).
        randomness: ``fixed_public``: one public stream for the whole audit (every
            round, both worlds) and a fresh privacy stream per round, for generators
            that declare ``supports_public_randomness``; ``independent``: every draw
            fresh per round (docs/soundness.md). A generator that does not declare
            support is always audited ``independent``.
    """

    generator: str = "pategan"
    variant: str | None = None
    bugs: tuple[str, ...] = ()
    dataset: str = "worst-case"
    domain: str | None = None
    data_dir: str | None = None
    target: int | str | None = None
    target_record: Mapping[str, Any] | None = None
    attack: str = DEFAULT
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
    randomness: Randomness = "fixed_public"

    def __post_init__(self) -> None:
        need = require
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
        need(self.attack in (*ATTACK_NAMES, *SET_NAMES), "attack",
             f"one of {', '.join((*ATTACK_NAMES, *SET_NAMES))}", self.attack)
        need(isinstance(self.candidates, int) and self.candidates >= 1, "candidates",
             "an integer >= 1", self.candidates)
        need(isinstance(self.selection_rounds, int) and self.selection_rounds >= 5,
             "selection_rounds", "an integer >= 5", self.selection_rounds)
        need(self.randomness in ("fixed_public", "independent"), "randomness",
             "fixed_public or independent", self.randomness)
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
