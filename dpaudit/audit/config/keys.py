"""Every setting of an audit, declared once: :data:`AUDIT_KEYS`.

A :class:`Key` holds what the code needs to know of a setting: its command-line flag
and TOML key, its type and constraint (scikit-learn's ``_parameter_constraints``),
its option group in ``dpaudit audit --help``, which games use it, which other settings
it ``requires``, and whether it is a run setting (where and how an audit runs, never
what it computes: ``--resume`` may change it and the audit's identity leaves it out).
From this one table come the parser and its help groups
(:mod:`dpaudit.commands.audit`), the TOML keys, the field constraints and the
cross-field refusals (:func:`~dpaudit.audit.config.requirements.check_requirements`),
:data:`RUN_SETTINGS` and the resume allow-list.

No heavy imports: the parser reads this table before anything is trained.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from dpaudit.attacks.names import ATTACK_NAMES, SET_NAMES
from dpaudit.audit.config.constraints import (
    GROUPS,
    ONE_RUN,
    TWO_WORLD,
    Choices,
    Constraint,
    Interval,
    Key,
    Requires,
)
from dpaudit.audit.config.names import (
    BACKENDS,
    GAMES,
    GUESS_RULES,
    ONERUN_BOUNDS,
    RANDOMNESS_MODES,
    RELEASES,
    TEACHERS,
)
from dpaudit.datasets.names import ONE_RUN_NAMES, WORST_CASE_NAMES
from dpaudit.generators.names import DEVICES
from dpaudit.generators.registry import DEFAULT_GENERATOR

__all__ = [
    "AUDIT_CONSTRAINTS",
    "AUDIT_KEYS",
    "DEFAULT_OUT",
    "FLAG_ONLY",
    "GROUPS",
    "KEYS_BY_TOML_NAME",
    "RUN_SETTINGS",
    "Choices",
    "Constraint",
    "Interval",
    "Key",
    "Requires",
    "key_of",
]


DEFAULT_OUT = "dpaudit-audit"

_BACKEND_DASK = Requires(key="backend", values=("dask",), fix="--backend dask")
_TARGET_AUTO = Requires(key="target", values=("auto",), fix="--target auto")
_PUBLIC_AUTO = Requires(key="public_seed", values=("auto",), fix="--public-seed auto")
_FIXED_PUBLIC = Requires(
    key="randomness", values=("fixed_public",), fix="--randomness fixed_public"
)
_TRANSCRIPT = Requires(
    key="release", values=("transcript",), fix="--release transcript"
)
_WORST_CASE = Requires(
    key="dataset",
    values=WORST_CASE_NAMES,
    fix="--dataset worst-case or worst-case-continuous",
)
_DESIGNED = Requires(
    key="dataset",
    values=(*WORST_CASE_NAMES, *ONE_RUN_NAMES),
    fix="--dataset worst-case, worst-case-continuous or worst-case-unique",
)

AUDIT_KEYS: tuple[Key, ...] = (
    # ------------------------------------------------------------ what is audited
    Key(
        name="generator",
        help="a name of `dpaudit list generators` or a plug-in module:Class "
        f"(default {DEFAULT_GENERATOR})",
        group="what is audited",
        resume_repeat=True,
    ),
    Key(
        name="variant",
        help="a bug variant (dpaudit list variants)",
        group="what is audited",
    ),
    Key(
        name="bug",
        help="switch a bug flag on (repeatable; dpaudit list bugs)",
        group="what is audited",
        kind="list",
        field="bugs",
        aliases=("bugs",),
    ),
    Key(
        name="option",
        help="a generator option KEY=VALUE, e.g. lam=0.01 (repeatable)",
        group="what is audited",
        kind="options",
        field="generator_options",
        aliases=("generator_options",),
    ),
    Key(
        name="epsilon",
        help="privacy budget given to the generator (default 1)",
        group="what is audited",
        kind="float",
        constraint=Interval(low=0, closed="neither"),
    ),
    Key(
        name="delta",
        help="delta given to the generator (default 1e-5)",
        group="what is audited",
        kind="float",
        constraint=Interval(low=0, high=1, closed="left"),
    ),
    # ------------------------------------------------------------ data and target
    Key(
        name="dataset",
        help="worst-case-continuous (default), worst-case, a named dataset "
        "(dpaudit list datasets), or a CSV path (with --domain)",
        group="data and target",
    ),
    Key(
        name="dataset_rows",
        help="worst cases only: N rows, N - 1 copies of the base record plus "
        "the target (default 5), for libraries with a minimum table size",
        group="data and target",
        kind="int",
        constraint=Interval(integer=True, low=2, optional=True),
        requires=(_DESIGNED,),
    ),
    Key(
        name="domain",
        help="the public domain JSON of a CSV dataset",
        group="data and target",
        requires=(
            Requires(
                key="dataset",
                values=(*WORST_CASE_NAMES, *ONE_RUN_NAMES),
                negate=True,
                fix="--dataset NAME or a CSV path (the worst cases' domain is fixed)",
            ),
        ),
    ),
    Key(
        name="data_dir",
        help="folder of the named datasets (default $DPAUDIT_DATA_DIR or "
        "../shared/data)",
        group="data and target",
    ),
    Key(
        name="target",
        help="row index, or 'auto' (most vulnerable record)",
        group="data and target",
        games=TWO_WORLD,
    ),
    Key(
        name="target_record",
        help="a target record as a JSON object (TOML: a table)",
        group="data and target",
        kind="record",
        games=TWO_WORLD,
    ),
    Key(
        name="candidates",
        help="candidate records mini-audited (default 64)",
        group="data and target",
        kind="int",
        constraint=Interval(integer=True, low=1),
        games=TWO_WORLD,
        requires=(_TARGET_AUTO,),
    ),
    Key(
        name="selection_rounds",
        help="rounds per world of each candidate's mini-audit, for --target auto "
        "and --public-seed auto (default 100)",
        group="data and target",
        kind="int",
        constraint=Interval(integer=True, low=5),
        games=TWO_WORLD,
        requires=(
            Requires(
                key="release",
                values=("transcript",),
                negate=True,
                fix="--release table (a transcript's public candidates are ranked by "
                "exact privacy, on no selection rounds)",
            ),
        ),
        requires_any=(_TARGET_AUTO, _PUBLIC_AUTO),
    ),
    Key(
        name="synthetic_rows",
        help="rows released per round (default 100 on the worst case, |D| otherwise)",
        group="data and target",
        kind="int",
        constraint=Interval(integer=True, low=1, optional=True),
    ),
    # ------------------------------------------------------------------- the game
    Key(
        name="game",
        help="two-world (default): the distinguishing game, 2 x --rounds fits; "
        "one-run: --canaries canaries each included with probability 1/2 in "
        "--fits fits, guessed from the releases (docs/soundness.md)",
        group="the game",
        constraint=Choices(values=GAMES),
        # The one-run game designs its canaries for the worst cases only.
        requires=(_DESIGNED,),
    ),
    Key(
        name="rounds",
        help="rounds per world (default 1000)",
        group="the game",
        kind="int",
        constraint=Interval(integer=True, low=5),
        games=TWO_WORLD,
    ),
    Key(
        name="split",
        help="fractions of each world's rounds for attack training, threshold "
        "selection and test, as TRAIN,VALIDATION,TEST (default 0.4,0.2,0.4; "
        "0,0.2,0.8 when no attack trains: distance, --release transcript)",
        group="the game",
        kind="split",
        games=TWO_WORLD,
    ),
    Key(
        name="sequential",
        help="analyse after 10%, 20%, 50% and 100% of --rounds and stop at the first "
        "look that proves a VIOLATION (alpha is spent across the looks; never "
        "stops early otherwise)",
        group="the game",
        kind="bool",
        games=TWO_WORLD,
    ),
    Key(
        name="randomness",
        help="fixed_public (default): one public stream (weights, partitions, "
        "batches, latents, the release's sampling) for every round and both "
        "worlds, fresh privacy noise per round, where the generator declares "
        "its proof holds for any fixed public stream (docs/soundness.md); "
        "independent: every draw fresh per round",
        group="the game",
        constraint=Choices(values=RANDOMNESS_MODES),
        games=TWO_WORLD,
    ),
    Key(
        name="public_seed",
        help="which public randomness is held fixed: 0 (default), a candidate "
        "index, or 'auto': the candidate under which the attacks separate the "
        "worlds best on selection rounds disjoint from the audit's (with --release "
        "transcript --teachers canary: the candidate whose canary transcript's "
        "exact privacy is largest, two fits per candidate; docs/soundness.md)",
        group="the game",
        games=TWO_WORLD,
        requires=(_FIXED_PUBLIC,),
    ),
    Key(
        name="public_candidates",
        help="candidates compared, each with 2 x --selection-rounds models (a "
        "canary transcript: 2 fits) (default 8)",
        group="the game",
        kind="int",
        constraint=Interval(integer=True, low=2),
        games=TWO_WORLD,
        requires=(_PUBLIC_AUTO,),
    ),
    Key(
        name="release",
        help="what a round releases to the attacks: table (default: the synthetic "
        "table) or transcript (every noisy vote of dpaudit's PATE-GAN and G-PATE, or "
        "the noisy measurements a plug-in states, attacked by the exact "
        "likelihood-ratio test; with --game one-run: each canary scored by the "
        "likelihood ratio of its own measured cells; docs/soundness.md)",
        group="the game",
        constraint=Choices(values=RELEASES),
        requires_games=TWO_WORLD,
        # The likelihood-ratio attack replays training under the audit's one fixed
        # public stream and is the only attack on a transcript; --target auto's
        # selection ranks the table attacks. --public-seed auto ranks a transcript's
        # candidates by the canary transcript's exact privacy: with trained teachers
        # (and a plug-in's measurements) it is not computed, so auto is refused.
        requires=(
            _FIXED_PUBLIC,
            Requires(key="attack", values=("default",), fix="--attack default"),
            Requires(
                key="target",
                values=("auto",),
                negate=True,
                fix="a --target other than auto",
            ),
        ),
        requires_any=(
            Requires(
                key="public_seed",
                values=("auto",),
                negate=True,
                fix="a --public-seed other than auto",
            ),
            Requires(
                key="teachers",
                values=("canary",),
                fix="--teachers canary (auto then ranks the candidates by the canary "
                "transcript's exact privacy)",
            ),
        ),
    ),
    Key(
        name="teachers",
        help="trained (default: the teachers as implemented) or canary (the "
        "adversary's teachers: each votes 'real' exactly when it trained on the "
        "target; the claim's proof covers any teachers; docs/soundness.md, "
        "'Canary teachers')",
        group="the game",
        constraint=Choices(values=TEACHERS),
        games=TWO_WORLD,
        requires=(_TRANSCRIPT,),
    ),
    Key(
        name="seed",
        help="the root seed (default 0)",
        group="the game",
        kind="int",
        constraint=Interval(integer=True, low=0),
    ),
    # ---------------------------------------------------------- the one-run game
    Key(
        name="canaries",
        help="canaries per fit (default 1000)",
        group="the one-run game",
        kind="int",
        constraint=Interval(integer=True, low=2),
        games=ONE_RUN,
    ),
    Key(
        name="fits",
        help="fits, each with its own canaries (default 1)",
        group="the one-run game",
        kind="int",
        constraint=Interval(integer=True, low=1),
        games=ONE_RUN,
    ),
    Key(
        name="guesses",
        help="guesses 'in' (and 'out' unless --guesses-out), fixed in advance "
        "(default: planned from the configuration before any fit; docs/onerun.md)",
        group="the one-run game",
        kind="int",
        constraint=Interval(integer=True, low=1, optional=True),
        games=ONE_RUN,
    ),
    Key(
        name="guesses_out",
        help="guesses 'out', fixed in advance (default: --guesses)",
        group="the one-run game",
        kind="int",
        constraint=Interval(integer=True, low=0, optional=True),
        games=ONE_RUN,
    ),
    Key(
        name="guess_rule",
        help="count: --guesses 'in' and --guesses-out 'out' on the top and bottom "
        "scores; threshold: 'in' for every canary the release shows (its row or "
        "value); both (default): each at half of alpha (docs/onerun.md)",
        group="the one-run game",
        constraint=Choices(values=GUESS_RULES),
        games=ONE_RUN,
    ),
    Key(
        name="onerun_bound",
        help="the bound from the guesses to eps_emp: steinke (Steinke, Nasr and "
        "Jagielski 2023), fdp (the claim's trade-off curve against the guess "
        "count), order (fdp at nested guess counts, a union bound over them) or "
        "auto (default: the strongest sound choice; docs/onerun.md)",
        group="the one-run game",
        constraint=Choices(values=ONERUN_BOUNDS),
        games=ONE_RUN,
    ),
    # ---------------------------------------------------- attacks and statistics
    Key(
        name="attack",
        help="the attack; default: the dataset's default set (dpaudit list "
        "attacks), the verdict their best with a Bonferroni split of alpha; "
        "all: every attack",
        group="attacks and statistics",
        constraint=Choices(values=(*ATTACK_NAMES, *SET_NAMES)),
        games=TWO_WORLD,
    ),
    Key(
        name="attack_option",
        help="an attack option KEY=VALUE, e.g. n_queries=500 (repeatable)",
        group="attacks and statistics",
        kind="options",
        field="attack_options",
        aliases=("attack_options",),
        games=TWO_WORLD,
    ),
    Key(
        name="alpha",
        help="false-alarm probability of eps_emp (default 0.05: 95% confidence)",
        group="attacks and statistics",
        kind="float",
        constraint=Interval(low=0, high=0.5, closed="neither"),
    ),
    Key(
        name="estimator",
        help="the error rates' bound: clopper_pearson (default) or jeffreys",
        group="attacks and statistics",
        constraint=Choices(values=("clopper_pearson", "jeffreys")),
        games=TWO_WORLD,
    ),
    # ------------------------------------------------------------------ execution
    Key(
        name="batch_size",
        help="rounds trained together (default 128); does not change the result",
        group="execution",
        kind="int",
        constraint=Interval(integer=True, low=1),
        games=TWO_WORLD,
        run_setting=True,
    ),
    Key(
        name="jobs",
        help="parallel jobs (default -1: one per CPU core)",
        group="execution",
        kind="int",
        games=TWO_WORLD,
        run_setting=True,
    ),
    Key(
        name="backend",
        help="joblib backend (default threading; loky: worker processes); dask "
        "runs on --scheduler",
        group="execution",
        constraint=Choices(values=BACKENDS),
        games=TWO_WORLD,
        run_setting=True,
    ),
    Key(
        name="scheduler",
        help="Dask scheduler address",
        group="execution",
        games=TWO_WORLD,
        requires=(_BACKEND_DASK,),
        run_setting=True,
    ),
    Key(
        name="device",
        help="auto (default), cpu or cuda",
        group="execution",
        constraint=Choices(values=DEVICES),
        run_setting=True,
    ),
    Key(
        name="fit_timeout",
        help="plug-ins and adapters: seconds one fit, sample or import may "
        "take before its worker is stopped and the audit fails (default 3600)",
        group="execution",
        kind="float",
        constraint=Interval(low=0, closed="neither"),
        metavar="SECONDS",
        run_setting=True,
    ),
    Key(
        name="max_memory",
        help="dpaudit's own generators: the memory plan (either game) refuses an "
        "audit estimated above it (default: the memory available now); plug-ins "
        "and adapters: "
        "MiB of resident memory one worker process may use before it is stopped "
        "and the audit fails (default: half the machine's memory)",
        group="execution",
        kind="int",
        constraint=Interval(integer=True, low=1, optional=True),
        metavar="MIB",
        run_setting=True,
    ),
    Key(
        name="python",
        help="plug-ins and adapters: the Python interpreter of their worker "
        "processes (default: this one); it needs numpy, pandas and the "
        "generator's library only",
        group="execution",
        metavar="PATH",
    ),
    # --------------------------------------------------------------------- output
    Key(
        name="out",
        help=f"output folder (default ./{DEFAULT_OUT})",
        group="output",
        field=None,
    ),
    Key(
        name="force",
        help="replace the audit in --out, once the new one has stored its first "
        "batch (the old one is kept if the new run fails before); only dpaudit's "
        "own files there are replaced",
        group="output",
        kind="bool",
        field=None,
    ),
    Key(
        name="quiet",
        help="no progress on stderr (alias --no-progress; progress shows only on a "
        "terminal)",
        group="output",
        kind="bool",
        field=None,
    ),
)
"""Every setting of ``dpaudit audit`` and ``audit.toml``, in ``--help`` order."""

FLAG_ONLY = ("config", "resume", "dry_run")
"""The flags that are not settings (they say where the configuration is, or, with
``--dry-run``, that the audit is only planned)."""

KEYS_BY_TOML_NAME: Mapping[str, Key] = MappingProxyType(
    {name: key for key in AUDIT_KEYS for name in (key.name, *key.aliases)}
)
"""A TOML name (the key's or an alias) -> its key."""

_BY_FIELD: Mapping[str, Key] = MappingProxyType(
    {key.target: key for key in AUDIT_KEYS if key.target is not None}
)

AUDIT_CONSTRAINTS: Mapping[str, Constraint] = MappingProxyType(
    {
        key.target: key.constraint
        for key in AUDIT_KEYS
        if key.target is not None and key.constraint is not None
    }
)
"""Field of :class:`~dpaudit.audit.config.model.AuditConfig` -> its constraint."""

RUN_SETTINGS: tuple[str, ...] = tuple(
    key.target for key in AUDIT_KEYS if key.run_setting and key.target is not None
)
"""The run settings (fields): where and how an audit runs, not what it computes;
left out of the audit's identity, and the settings ``--resume`` may change."""


def key_of(field: str) -> Key:
    """The key of a configuration field."""
    return _BY_FIELD[field]
