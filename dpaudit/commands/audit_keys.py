"""The keys of ``dpaudit audit``: one definition of its flags and its TOML keys.

Every key is a flag (``data_dir`` is ``--data-dir``) and every flag but ``--config``
and ``--resume`` is a key, with the same meaning; :mod:`dpaudit.commands.audit`
builds the parser and reads the TOML file from :data:`AUDIT_KEYS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.generators.registry import DEFAULT_GENERATOR

DEFAULT_OUT = "dpaudit-audit"


@dataclass(frozen=True)
class Key:
    """One key of the audit configuration: a TOML key and the flag of the same name.

    Attributes:
        name: the TOML key; the flag is ``--`` + ``name`` with dashes.
        help: the flag's help text.
        kind: the value's type: ``str``, ``int``, ``float``, ``bool`` (a switch),
            ``list`` (a repeatable flag; a TOML list), ``options`` (repeatable
            ``KEY=VALUE``; a TOML table), ``split`` (``TRAIN,VALIDATION,TEST``; a
            TOML list of three numbers) or ``record`` (JSON text; a TOML table).
        field: the :class:`~dpaudit.audit.config.model.AuditConfig` field it sets, or
            ``None`` for a setting of the run (``out``, ``force``, ``quiet``).
        choices: the allowed values, if fixed.
        aliases: other TOML names of the key (the configuration's field names).
        metavar: the flag's value in ``--help`` (default: from ``kind``).
    """

    name: str
    help: str
    kind: str = "str"
    field: str | None = ""
    choices: tuple[str, ...] | None = None
    aliases: tuple[str, ...] = ()
    metavar: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def target(self) -> str | None:
        """The configuration field (its own name unless told otherwise)."""
        return self.name if self.field == "" else self.field


AUDIT_KEYS: tuple[Key, ...] = (
    Key(
        "generator",
        "a name of `dpaudit list generators` or a plug-in module:Class "
        f"(default {DEFAULT_GENERATOR})",
    ),
    Key("variant", "a bug variant (dpaudit list variants)"),
    Key(
        "bug",
        "switch a bug flag on (repeatable; dpaudit list bugs)",
        kind="list",
        field="bugs",
        aliases=("bugs",),
    ),
    Key(
        "option",
        "a generator option KEY=VALUE, e.g. lam=0.01 (repeatable)",
        kind="options",
        field="generator_options",
        aliases=("generator_options",),
    ),
    Key(
        "attack_option",
        "an attack option KEY=VALUE, e.g. n_queries=500 (repeatable)",
        kind="options",
        field="attack_options",
        aliases=("attack_options",),
    ),
    Key(
        "dataset",
        "worst-case (default), a named dataset, or a CSV path (with --domain)",
    ),
    Key(
        "dataset_rows",
        "worst cases only: N rows, N - 1 copies of the base record plus "
        "the target (default 5), for libraries with a minimum table "
        "size",
        kind="int",
    ),
    Key("domain", "the public domain JSON of a CSV dataset"),
    Key(
        "data_dir",
        "folder of the named datasets (default $DPAUDIT_DATA_DIR or ../shared/data)",
    ),
    Key("target", "row index, or 'auto' (most vulnerable record)"),
    Key(
        "target_record",
        "a target record as a JSON object (TOML: a table)",
        kind="record",
    ),
    Key(
        "attack",
        "the attack; default: the dataset's default set (e.g. querybased, "
        "moments and fingerprint), the verdict their best with a Bonferroni "
        "split of alpha; all: every attack",
    ),
    Key("rounds", "rounds per world (default 1000)", kind="int"),
    Key(
        "sequential",
        "analyse after 10%, 20%, 50% and 100% of --rounds and stop at the first "
        "look that proves a VIOLATION (alpha is spent across the looks; never "
        "stops early otherwise)",
        kind="bool",
    ),
    Key(
        "split",
        "fractions of each world's rounds for attack training, threshold "
        "selection and test, as TRAIN,VALIDATION,TEST (default 0.4,0.2,0.4)",
        kind="split",
    ),
    Key(
        "candidates",
        "--target auto: candidate records mini-audited (default 64)",
        kind="int",
    ),
    Key(
        "selection_rounds",
        "--target auto: rounds per world of each mini-audit (default 100)",
        kind="int",
    ),
    Key(
        "alpha",
        "false-alarm probability of eps_emp (default 0.05: 95% confidence)",
        kind="float",
    ),
    Key(
        "estimator",
        "clopper_pearson (default) or jeffreys",
        choices=("clopper_pearson", "jeffreys"),
    ),
    Key(
        "randomness",
        "fixed_public (default): one public stream (weights, partitions, "
        "batches, latents, the release's sampling) for every round and both "
        "worlds, fresh privacy noise per round, where the generator declares "
        "its proof holds for any fixed public stream (docs/soundness.md); "
        "independent: every draw fresh per round",
    ),
    Key(
        "release",
        "what a round releases to the attacks: table (default: the synthetic "
        "table) or transcript (every noisy vote of dpaudit's PATE-GAN, attacked "
        "by the exact likelihood-ratio test; fixed_public only; "
        "docs/soundness.md)",
    ),
    Key(
        "teachers",
        "with --release transcript: trained (default: the teachers as "
        "implemented) or canary (the adversary's teachers: each votes 'real' "
        "exactly when it trained on the target; the claim's proof covers any "
        "teachers; docs/soundness.md, 'Canary teachers')",
        choices=("trained", "canary"),
    ),
    Key(
        "public_seed",
        "with fixed_public: which public randomness is held fixed: 0 "
        "(default), a candidate index, or 'auto': the candidate under "
        "which the attacks separate the worlds best on selection rounds "
        "disjoint from the audit's (docs/soundness.md)",
    ),
    Key(
        "public_candidates",
        "--public-seed auto: candidates compared, each with "
        "2 x --selection-rounds models (default 8)",
        kind="int",
    ),
    Key("epsilon", "privacy budget given to the generator (default 1)", kind="float"),
    Key("delta", "delta given to the generator (default 1e-5)", kind="float"),
    Key(
        "synthetic_rows",
        "rows released per round (default 100 on the worst case, |D| otherwise)",
        kind="int",
    ),
    Key(
        "batch_size",
        "rounds trained together (default 128); does not change the result",
        kind="int",
    ),
    Key("jobs", "parallel jobs (default -1: one per CPU core)", kind="int"),
    Key(
        "backend",
        "joblib backend (default threading; loky: worker processes); dask "
        "runs on --scheduler",
    ),
    Key("scheduler", "Dask scheduler address (with --backend dask)"),
    Key("device", "auto (default), cpu or cuda"),
    Key(
        "fit_timeout",
        "plug-ins and adapters: seconds one fit, sample or import may "
        "take before its worker is stopped and the audit fails "
        "(default 3600)",
        kind="float",
        metavar="SECONDS",
    ),
    Key(
        "max_memory",
        "dpaudit's own generators: the memory plan refuses an audit estimated "
        "above it (default: the memory available now); plug-ins and adapters: "
        "MiB of resident memory one worker process may use before it is stopped "
        "and the audit fails (default: half the machine's memory)",
        kind="int",
        metavar="MIB",
    ),
    Key(
        "python",
        "plug-ins and adapters: the Python interpreter of their worker "
        "processes (default: this one); it needs numpy, pandas and the "
        "generator's library only",
        metavar="PATH",
    ),
    Key(
        "game",
        "two-world (default): the distinguishing game, 2 x --rounds fits; "
        "one-run: --canaries canaries each included with probability 1/2 in "
        "--fits fits, guessed from the releases (docs/soundness.md)",
    ),
    Key("canaries", "--game one-run: canaries per fit (default 1000)", kind="int"),
    Key(
        "fits",
        "--game one-run: fits, each with its own canaries (default 1)",
        kind="int",
    ),
    Key(
        "guesses",
        "--game one-run: guesses 'in' (and 'out' unless --guesses-out), fixed "
        "in advance (default: a tenth of all canaries)",
        kind="int",
    ),
    Key(
        "guesses_out",
        "--game one-run: guesses 'out', fixed in advance (default: --guesses)",
        kind="int",
    ),
    Key("seed", "the root seed (default 0)", kind="int"),
    Key("out", f"output folder (default ./{DEFAULT_OUT})", field=None),
    Key(
        "force",
        "replace the audit in --out, once the new one has stored its first batch "
        "(the old one is kept if the new run fails before); only dpaudit's own "
        "files there are replaced",
        kind="bool",
        field=None,
    ),
    Key(
        "quiet",
        "no progress on stderr (alias --no-progress; progress shows only on a "
        "terminal)",
        kind="bool",
        field=None,
    ),
)
"""The keys of ``dpaudit audit``: its flags and its TOML keys, in ``--help`` order."""

FLAG_ONLY = ("config", "resume")
"""The flags that are not configuration keys (they say where the configuration is)."""

_BY_TOML_NAME: dict[str, Key] = {
    name: key for key in AUDIT_KEYS for name in (key.name, *key.aliases)
}

__all__ = ["AUDIT_KEYS", "DEFAULT_OUT", "FLAG_ONLY", "Key"]
