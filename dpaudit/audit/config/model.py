"""The audit's configuration: :class:`AuditConfig` (the keys of ``audit.toml``)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import inspect
import json
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from typing import Any

from dpaudit.attacks.names import ATTACK_NAMES, DEFAULT, SET_NAMES
from dpaudit.audit.config import serial
from dpaudit.audit.config.keys import AUDIT_CONSTRAINTS, RUN_SETTINGS
from dpaudit.audit.config.names import (
    Backend,
    Game,
    GuessRule,
    Randomness,
    ReleaseKind,
    TeacherKind,
)
from dpaudit.audit.config.requirements import check_requirements
from dpaudit.audit.config.split import (
    audit_attack_names,
    check_split,
    default_split,
)
from dpaudit.audit.stats import estimators as est
from dpaudit.datasets.names import DEFAULT_DATASET
from dpaudit.errors import InvalidParameterError, did_you_mean
from dpaudit.generators.foreign.options import DEFAULT_FIT_TIMEOUT, WorkerOptions
from dpaudit.generators.names import Device
from dpaudit.generators.registry import DEFAULT_GENERATOR
from dpaudit.validation import check_no_budget_option, require

_RECORDED: ContextVar[bool] = ContextVar("dpaudit_recorded_config", default=False)
"""Set while :meth:`AuditConfig.from_json` reads a recorded config."""


@contextmanager
def reading_recorded() -> Iterator[None]:
    """Within it, configs are recorded ones being read back (a result's): their
    generator options, checked when the audit ran, are not checked again, so that
    reading a result does not import the generator (torch)."""
    token = _RECORDED.set(True)
    try:
        yield
    finally:
        _RECORDED.reset(token)


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditConfig:
    """Everything that defines an audit (the keys of ``audit.toml``).

    Args:
        generator: ``pategan``, ``gpate``, a toy, or a plug-in ``module:Class``.
        variant: a bug variant of the generator (``dpaudit list variants``).
        bugs: extra bug flags switched on.
        dataset: ``worst-case-continuous`` (the default), ``worst-case``, a named
            dataset or a CSV path (with ``domain``).
        domain: the domain JSON of a CSV dataset.
        data_dir: folder of the named datasets.
        target: ``None`` (the dataset's default: the worst case's all-ones record),
            a row index of the dataset, or ``"auto"`` (the most vulnerable record).
        target_record: a record (column -> value) that need not be in the data.
        attack: an attack name, ``all`` or ``default`` (the set per dataset kind).
        rounds: rounds per world (``2 * rounds`` models in all).
        split: fractions of each world's rounds for train, validation and test;
            ``None`` (the default): by the attacks, resolved at construction
            (:func:`dpaudit.audit.config.split.default_split`: 0.4/0.2/0.4, or no
            training rounds when no attack fits).
        epsilon, delta: the privacy budget given to the generator.
        synthetic_rows: rows released per round (default: 100 for the worst case,
            ``|D|`` otherwise); equal in both worlds.
        batch_size: rounds trained together by ``fit_many``.
        jobs: parallel jobs (joblib); -1: one per CPU core.
        backend: joblib backend: ``threading`` (default: training runs in torch
            kernels that release the GIL, and worker processes would each import
            torch first), ``loky`` (worker processes) or ``dask`` (the cluster at
            ``scheduler``).
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
        public_seed: in ``fixed_public`` mode, which public randomness the audit
            holds fixed: ``0`` (default: the root seed's public stream), another
            candidate index, or ``"auto"``: the candidate among
            ``public_candidates`` under which the attack separates the worlds best
            on selection rounds disjoint from the game's (docs/soundness.md, "Choosing
            the public randomness").
        public_candidates: candidates ``public_seed = "auto"`` compares (each with
            ``2 * selection_rounds`` models).
        dataset_rows: the worst cases only: ``|D ∪ {target}|``, i.e. ``N - 1``
            copies of the base record plus the target (default 5); for libraries
            with a minimum table size.
        fit_timeout: seconds one call of a foreign generator (its import, ``fit``,
            ``sample``) may take before its worker is killed and the audit fails.
        max_memory: MiB of resident memory one foreign worker may use (default:
            half of the machine's physical memory); for dpaudit's own generators,
            the limit of the audit's memory plan instead (default: the memory
            available now; dpaudit/audit/games/memory.py).
        python: the interpreter that runs the foreign workers (default: this one);
            it needs numpy, pandas and the generator's library only.
        release: what a round releases to the attacks: ``table`` (default: the
            synthetic table, black box) or ``transcript`` (every noisy answer of
            the generator's private mechanism, attacked by the exact
            likelihood-ratio test; dpaudit's PATE-GAN, fixed public randomness;
            docs/soundness.md, "The transcript release").
        sequential: analyse at the looks (:mod:`dpaudit.audit.games.looks`) and stop
            at the first VIOLATION, spending ``alpha`` across the looks
            (docs/soundness.md, "Sequential looks").
        game: ``two-world`` or ``one-run`` (docs/soundness.md); below: its keys.
        canaries: one-run: canaries per fit, each included with probability 1/2.
        fits: one-run: fits, each with its own canaries.
        guesses: one-run: guesses "in" (and "out", unless ``guesses_out`` is set),
            fixed before any release is seen (default: planned from the
            configuration, ``dpaudit.audit.games.one_run.counts``).
        guesses_out: one-run: guesses "out" (default: as many as ``guesses``).
        guess_rule: one-run: ``count`` (the ``guesses`` and ``guesses_out`` fixed in
            advance), ``threshold`` (every canary whose score reaches a threshold
            fixed in advance) or ``both`` (default: each at half of ``alpha``;
            docs/soundness.md, "Guesses from the release").
        onerun_bound: one-run: ``steinke``, ``fdp``, ``order`` or ``auto`` (docs/onerun.md).
        teachers: with ``release = "transcript"``: ``trained`` (default, the
            teachers as implemented) or ``canary`` (the adversary's teachers, each
            voting "real" exactly when it trained on the target; the proof covers
            any teachers: docs/soundness.md, "Canary teachers").
    """

    generator: str = DEFAULT_GENERATOR
    variant: str | None = None
    bugs: tuple[str, ...] = ()
    dataset: str = DEFAULT_DATASET
    domain: str | None = None
    data_dir: str | None = None
    target: int | str | None = None
    target_record: Mapping[str, Any] | None = None
    attack: str = DEFAULT
    rounds: int = 1000
    split: tuple[float, float, float] | None = None
    epsilon: float = 1.0
    delta: float = 1e-5
    synthetic_rows: int | None = None
    batch_size: int = 128
    jobs: int = -1
    backend: Backend = "threading"
    scheduler: str | None = None
    device: Device = "auto"
    seed: int = 0
    alpha: float = 0.05
    estimator: est.EstimatorMethod = "clopper_pearson"
    generator_options: Mapping[str, Any] = field(default_factory=dict)
    attack_options: Mapping[str, Any] = field(default_factory=dict)
    candidates: int = 64
    selection_rounds: int = 100
    randomness: Randomness = "fixed_public"
    public_seed: int | str = 0
    public_candidates: int = 8
    dataset_rows: int | None = None
    fit_timeout: float = DEFAULT_FIT_TIMEOUT
    max_memory: int | None = None
    python: str | None = None
    release: ReleaseKind = "table"
    sequential: bool = field(default=False, metadata={"omit_if": False})
    game: Game = "two-world"
    canaries: int = 1000
    fits: int = 1
    guesses: int | None = None
    guesses_out: int | None = None
    guess_rule: GuessRule = "both"
    onerun_bound: str = "auto"
    teachers: TeacherKind = "trained"

    def __post_init__(self) -> None:
        need = require
        for key in ("generator", "dataset", "attack"):
            need(
                isinstance(getattr(self, key), str) and bool(getattr(self, key)),
                key,
                "a non-empty string",
                getattr(self, key),
            )
        for key in ("variant", "domain", "data_dir", "scheduler"):
            value = getattr(self, key)
            need(
                value is None or (isinstance(value, str) and bool(value)),
                key,
                "a non-empty string or unset",
                value,
            )
        # The declared constraints (dpaudit.audit.config.keys); a NumPy number is
        # stored as the Python number it equals, so the JSON and identity match.
        for key, constraint in AUDIT_CONSTRAINTS.items():
            object.__setattr__(self, key, constraint.check(getattr(self, key), key))
        need(
            all(isinstance(b, str) for b in self.bugs),
            "bugs",
            "a list of bug flag names (strings)",
            list(self.bugs),
        )
        if self.split is None:
            object.__setattr__(self, "split", self.default_split)
        split = self.fractions
        need(
            len(split) == 3
            and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= 1
                for x in split
            )
            and math.isclose(sum(split), 1.0, abs_tol=1e-9)
            and split[1] > 0
            and split[2] > 0,
            "split",
            "three fractions (train, validation, test) >= 0 summing to 1, "
            "validation and test > 0",
            split,
        )
        if self.game == "two-world":
            check_split(split, self.attack_names)
        need(
            _is_int(self.jobs) and (self.jobs >= 1 or self.jobs == -1),
            "jobs",
            "an integer >= 1 (or -1 for all cores)",
            self.jobs,
        )
        need(
            self.backend != "dask" or bool(self.scheduler),
            "scheduler",
            "a Dask scheduler address with --backend dask",
            self.scheduler,
        )
        need(
            self.estimator in ("clopper_pearson", "jeffreys"),
            "estimator",
            "clopper_pearson or jeffreys",
            self.estimator,
        )
        need(
            self.public_seed == "auto"
            or (_is_int(self.public_seed) and int(self.public_seed) >= 0),
            "public_seed",
            "a candidate index >= 0 or 'auto'",
            self.public_seed,
        )
        need(
            self.target is None
            or self.target == "auto"
            or (
                isinstance(self.target, int)
                and not isinstance(self.target, bool)
                and self.target >= 0
            ),
            "target",
            "a row index, 'auto', or unset",
            self.target,
        )
        need(
            self.target_record is None
            or (
                isinstance(self.target_record, Mapping)
                and bool(self.target_record)
                and all(isinstance(k, str) for k in self.target_record)
                and all(
                    v is None or isinstance(v, (str, int, float))
                    for v in self.target_record.values()
                )
            ),
            "target_record",
            'a JSON object of column -> value, e.g. {"a": 1, "b": 1}',
            self.target_record,
        )
        need(
            self.target is None or self.target_record is None,
            "target",
            "unset with `target_record` (give one of --target and --target-record)",
            self.target,
        )
        for key in ("generator_options", "attack_options"):
            value = getattr(self, key)
            need(
                isinstance(value, Mapping) and all(isinstance(k, str) for k in value),
                key,
                "a table of option = value",
                value,
            )
        if not _RECORDED.get():
            # Checked when the audit ran; read back, a recorded config imports no
            # generator or attack module.
            check_generator_options(self.generator, self.generator_options)
            _check_attack_option_names(self.attack, self.attack_options)
        need(
            isinstance(self.sequential, bool),
            "sequential",
            "true or false",
            self.sequential,
        )
        need(
            self.python is None or (isinstance(self.python, str) and bool(self.python)),
            "python",
            "the path of a Python interpreter",
            self.python,
        )
        if self.python is not None:
            from dpaudit.generators.registry import builtin_generators

            need(
                self.generator not in builtin_generators(),
                "python",
                "unset for a built-in generator (it runs plug-ins and adapters in "
                "workers under that interpreter)",
                self.python,
            )

    @property
    def attack_names(self) -> tuple[str, ...]:
        """The attacks the audit runs (its release's; ``all`` and ``default``
        expanded for the dataset), from the names alone."""
        return audit_attack_names(
            attack=self.attack,
            release=self.release,
            dataset=self.dataset,
            generator=self.generator,
        )

    @property
    def default_split(self) -> tuple[float, float, float]:
        """The split without ``split``: none for training when no attack fits."""
        return default_split(self.attack_names)

    @property
    def fractions(self) -> tuple[float, float, float]:
        """``split`` (resolved at construction, so never ``None``)."""
        assert self.split is not None
        return self.split

    def check_settings(self) -> None:
        """Refuses a setting that the chosen game does not use, or whose requirement
        another setting does not meet (:data:`~dpaudit.audit.config.keys.AUDIT_KEYS`:
        each key's ``games`` and ``requires``), in one line naming both settings.

        :func:`~dpaudit.audit.run.run_audit` calls it first, before anything is
        loaded or written, for every configuration it is given to run (not for a
        stored one it continues: that one names what its selections chose, and was
        checked when it first ran). Construction checks each field alone, so that
        a selection can name its choice (``--target auto`` becomes the chosen row).

        Raises:
            InvalidParameterError: naming both settings and the fix.
        """
        check_requirements(
            {f.name: getattr(self, f.name) for f in fields(self)},
            {**_defaults(), "split": self.default_split},
        )

    def worker_options(self) -> WorkerOptions:
        """The settings of the foreign workers (plug-ins and adapters)."""
        return WorkerOptions(
            python=self.python,
            fit_timeout=float(self.fit_timeout),
            max_memory=self.max_memory,
        )

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
            require(
                isinstance(bugs, (str, list, tuple)),
                "bugs",
                "a bug flag name or a list of them",
                bugs,
            )
            values["bugs"] = (bugs,) if isinstance(bugs, str) else tuple(bugs)
        if "split" in values:
            split = values["split"]
            require(
                isinstance(split, (list, tuple))
                and all(
                    isinstance(x, (int, float)) and not isinstance(x, bool)
                    for x in split
                ),
                "split",
                "a list of three numbers",
                split,
            )
            values["split"] = tuple(float(x) for x in split)
        for key in ("target", "public_seed"):
            if isinstance(values.get(key), str) and values[key].isdigit():
                values[key] = int(values[key])
        if isinstance(values.get("target_record"), str):
            text = values["target_record"]
            try:
                values["target_record"] = json.loads(text)
            except (json.JSONDecodeError, RecursionError) as err:
                raise InvalidParameterError(
                    f"`target_record` must be a JSON object, e.g. "
                    f'{{"a": 1, "b": 1}}. Got {text!r}.'
                ) from err
            require(
                isinstance(values["target_record"], dict),
                "target_record",
                'a JSON object of column -> value, e.g. {"a": 1, "b": 1}',
                text,
            )
        for key in ("generator_options", "attack_options"):
            if key in values:
                require(
                    isinstance(values[key], Mapping),
                    key,
                    "a table of option = value",
                    values[key],
                )
                values[key] = dict(values[key])
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``config`` of ``result.json``, the store's ``config``),
        derived from the fields by :mod:`dpaudit.audit.config.serial`."""
        out: dict[str, Any] = serial.to_json(self)
        return out

    @classmethod
    def from_json(cls, doc: Any, where: str = "config") -> AuditConfig:
        """Reads a recorded config (:meth:`to_json`), validated as on construction.

        Keys a config does not have are ignored; missing keys take their defaults.
        The generator options' types are not checked again (that would import the
        generator).

        Raises:
            InvalidParameterError: A value of the wrong type or out of range.
        """
        # A recorded config's generator options were checked when the audit ran:
        # reading a result does not import the generator (torch) to check them again.
        with reading_recorded():
            return serial.from_json(cls, doc, where)

    def identity(self) -> str:
        """A hash of everything that changes the result: every setting but the run
        settings (:data:`~dpaudit.audit.config.keys.RUN_SETTINGS`)."""
        return self._identity(RUN_SETTINGS)

    def matches_identity(self, recorded: object) -> bool:
        """Whether ``recorded`` (a store's ``identity``) is this config's: its
        :meth:`identity`, or the identity dpaudit 0.1 stores recorded, which kept
        ``batch_size`` (those stores still resume)."""
        legacy = tuple(k for k in RUN_SETTINGS if k != "batch_size")
        return recorded in (self.identity(), self._identity(legacy))

    def _identity(self, run_settings: tuple[str, ...]) -> str:
        data = self.to_json()
        for key in run_settings:
            data.pop(key)
        # Keys that did not exist before leave the identities of audits that do not
        # set them unchanged.
        for key in ("dataset_rows", "python"):
            if data[key] is None:
                data.pop(key)
        if data["release"] == "table":
            data.pop("release")
        if data["teachers"] == "trained":
            data.pop("teachers")
        # ``sequential`` is written only when set (serial's ``omit_if``): the
        # identities of audits analysed once are those of earlier versions.
        # The chosen public candidate's streams do not depend on how many were
        # compared, and the default (0) is the audit of earlier versions: identities
        # of audits stored before these keys existed stay the same.
        data.pop("public_candidates")
        # The one-run game's keys leave the two-world audit's identity unchanged.
        if data["game"] == "two-world":
            for key in (
                "game",
                "canaries",
                "fits",
                "guesses",
                "guesses_out",
                "guess_rule",
                "onerun_bound",
            ):
                data.pop(key, None)
        if data["public_seed"] == 0:
            data.pop("public_seed")
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[
            :16
        ]


def _check_attack_option_names(attack: str, options: Mapping[str, Any]) -> None:
    """Refuses an attack option that no attack of ``attack`` takes: each attack is
    given only the options it takes, so a typo would be silently ignored."""
    if not options:  # nothing to check: no attack module imported (torch)
        return
    from dpaudit.attacks.registry import attack_options

    names = ATTACK_NAMES if attack in SET_NAMES else (attack,)
    accepted = sorted({o for name in names for o in attack_options(name)})
    unknown = sorted(set(options) - set(accepted))
    require(
        not unknown,
        "attack_options",
        f"options that attack {attack!r} takes ({', '.join(accepted) or 'none'})"
        + (did_you_mean(unknown[0], accepted) if unknown else ""),
        unknown,
    )


@functools.cache
def _defaults() -> dict[str, Any]:
    """Every field's default (:meth:`AuditConfig.check_settings`)."""
    with reading_recorded():  # no option set: no generator imported to check it
        default = AuditConfig()
    return {f.name: getattr(default, f.name) for f in fields(AuditConfig)}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_generator_options(generator: str, options: Mapping[str, Any]) -> None:
    """Checks the type of each option a built-in generator's config declares (a
    number where its default is a number, a boolean where a boolean): a wrong
    type is refused here, naming the option, not deep in training.

    Options the config does not declare, and plug-ins' options, are left to the
    generator.

    Raises:
        InvalidParameterError: ``--option KEY`` of the wrong type.
    """
    from dpaudit.generators.registry import builtin_generators

    check_no_budget_option(options)  # any generator's: --epsilon and --delta set them
    spec = builtin_generators().get(generator)
    if spec is None or spec.plugin or not options:
        return
    if spec.config_builder is None:
        # A built-in without a config (the toy generators) takes its options as
        # keyword arguments: an unknown one would be a TypeError deep in the run.
        params = inspect.signature(spec.load_class()).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            takes = sorted(set(params) - {"epsilon", "delta"})
            unknown = sorted(set(options) - set(takes))
            require(
                not unknown,
                "--option",
                f"an option {generator!r} takes ({', '.join(takes) or 'none'})",
                unknown,
            )
        return
    module, _, attr = spec.config_builder.partition(":")
    defaults = getattr(importlib.import_module(module), attr)(epsilon=1.0, delta=1e-5)
    declared = {f.name: getattr(defaults, f.name) for f in dataclasses.fields(defaults)}
    for key, value in options.items():
        if key not in declared or key in ("variant", "bugs"):
            continue
        default, name = declared[key], f"--option {key}"
        if isinstance(default, bool):
            require(isinstance(value, bool), name, "true or false", value)
        elif isinstance(default, int):
            require(_is_int(value), name, f"an integer (default {default})", value)
        elif isinstance(default, float):
            require(
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and math.isfinite(value),
                name,
                f"a finite number (default {default:g})",
                value,
            )
