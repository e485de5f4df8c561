"""``dpaudit audit``: run the distinguishing game and estimate epsilon.

The configuration comes from ``--config audit.toml`` (a table ``[audit]`` or top-level
keys), overridden by the flags. Both come from one definition,
:data:`dpaudit.audit.config.keys.AUDIT_KEYS`:
every key is a flag (``data_dir`` is ``--data-dir``) and every flag but ``--config``
and ``--resume`` is a key, with the same meaning. :func:`print_result` is the one
place that prints a result.

Signals: Ctrl-C (SIGINT) exits 130 and SIGTERM 143 (128 + the signal), each with one
line saying how to continue; the audit's workers are stopped with it
(:func:`terminate_as_exception`, which ``dpaudit check`` uses too).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from dpaudit.audit import RESULT_FILE
from dpaudit.audit.config import (
    AUDIT_KEYS,
    DEFAULT_OUT,
    GROUPS,
    KEYS_BY_TOML_NAME,
    RUN_SETTINGS,
    Choices,
    Key,
)
from dpaudit.audit.config import FLAG_ONLY as FLAG_ONLY
from dpaudit.commands import EXIT_OK, parse_option
from dpaudit.errors import InvalidParameterError, did_you_mean

if TYPE_CHECKING:
    from dpaudit.audit import AuditConfig, AuditResult
    from dpaudit.generators.registry import GeneratorSpec

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the flags of ``dpaudit audit`` to ``parser``, one argument group per
    option group of :data:`AUDIT_KEYS` (``--config`` and ``--resume`` in the
    output group's company: they say where the configuration is)."""
    groups = {name: parser.add_argument_group(name) for name in GROUPS}
    groups["what is audited"].add_argument(
        "--config",
        metavar="TOML",
        help="audit.toml: the same keys as the flags (flags override it)",
    )
    for key in AUDIT_KEYS:
        # The key's declared constraint: an interval is stated in the help
        # (Key.full_help), choices become the flag's choices.
        kwargs: dict[str, Any] = {
            "help": key.full_help().replace("%", "%%"),
            "dest": key.name,
            "default": None,
        }
        if key.kind == "bool":
            kwargs["action"] = "store_true"
        elif key.kind in ("list", "options"):
            kwargs["action"] = "append"
            kwargs["metavar"] = "KEY=VALUE" if key.kind == "options" else "NAME"
        else:
            kwargs["type"] = {"int": int, "float": float}.get(key.kind, str)
            if isinstance(key.constraint, Choices):
                kwargs["choices"] = key.constraint.values
            else:
                kwargs["metavar"] = key.metavar or {
                    "int": "N",
                    "float": "X",
                    "split": "TRAIN,VAL,TEST",
                    "record": "JSON",
                }.get(key.kind, key.name.upper())
        # One progress convention for every command: --quiet, alias --no-progress.
        aliases = ("--no-progress",) if key.name == "quiet" else ()
        groups[key.group].add_argument(key.flag, *aliases, **kwargs)
    may_change = ", ".join(key.flag for key in _resume_keys() if key.name != "quiet")
    groups["output"].add_argument(
        "--resume",
        metavar="DIR",
        help="continue the audit stored in DIR (killed, failed, or finished: "
        f"analysed again); only {may_change} and --quiet may be given with it "
        "(--generator only to name a plug-in again)",
    )
    groups["output"].add_argument(
        "--dry-run",
        action="store_true",
        help="check every setting as the run does and print the plan (fits, rounds "
        "per world and their split, the attainable maximum, the memory plan, where "
        "it will write), then exit 0 (2 with the run's refusal); fits nothing and "
        "writes nothing",
    )


def _resume_keys() -> list[Key]:
    """The keys ``--resume`` may be given with: the run settings, the keys it may
    name again (``--generator``) and ``--quiet``."""
    return [
        key
        for key in AUDIT_KEYS
        if key.target in RUN_SETTINGS or key.resume_repeat or key.name == "quiet"
    ]


def load_toml(path: str) -> dict[str, Any]:
    """The audit table of a TOML file (``[audit]``, or the top level).

    Raises:
        InvalidParameterError: the file is missing, unreadable or not valid TOML.
    """
    from dpaudit.io import read_input

    try:
        data = tomllib.loads(read_input(path, what="`--config`").decode("utf-8"))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as err:
        raise InvalidParameterError(
            f"`--config` must be an existing TOML file. Got {path!r}."
        ) from err
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InvalidParameterError(
            f"`--config` must be valid TOML ({err}). Got {path!r}."
        ) from err
    except OSError as err:
        raise InvalidParameterError(
            f"`--config` must be a readable file ({err.strerror}). Got {path!r}."
        ) from err
    table = data.get("audit", data)
    if not isinstance(table, dict):
        raise InvalidParameterError(
            f"`--config` [audit] must be a table. Got {type(table).__name__} in {path!r}."
        )
    beside = sorted(set(data) - {"audit"}) if "audit" in data else []
    if beside:
        # tomllib puts every key written above `[audit]` (and every other table) at
        # the top level: read alone, they would be silently ignored.
        raise InvalidParameterError(
            f"`--config` key {beside[0]!r} is outside the [audit] table, where it "
            "would be ignored; move it under [audit] (or drop the [audit] header). "
            f"Got it in {path!r}."
        )
    return dict(table)


def _bad(where: str, what: str, value: Any) -> InvalidParameterError:
    return InvalidParameterError(f"{where} must be {what}. Got {value!r}.")


def _toml_value(key: Key, value: Any, where: str) -> Any:
    """A TOML value checked against its key's kind (flags are typed by argparse)."""
    if key.kind == "bool":
        if not isinstance(value, bool):
            raise _bad(where, "true or false", value)
    elif key.kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad(where, "an integer", value)
    elif key.kind == "float":
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise _bad(where, "a number", value)
        value = float(value)
    elif key.kind == "list":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _bad(where, "a name or a list of names", value)
    elif key.kind == "options":
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = dict(parse_option(v) for v in value)
        if not isinstance(value, dict):
            raise _bad(where, 'a table (or a list of "KEY=VALUE")', value)
    elif key.kind == "split":
        if (
            not isinstance(value, list)
            or len(value) != 3
            or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in value
            )
        ):
            raise _bad(where, "a list of three fractions", value)
    elif key.kind == "record":
        if not isinstance(value, dict | str):
            raise _bad(where, "a table (column -> value)", value)
    elif key.kind == "str" and key.name == "target" and isinstance(value, int):
        if isinstance(value, bool):
            raise _bad(where, "a row index or 'auto'", value)
    elif not isinstance(value, str):
        raise _bad(where, "a string", value)
    return value


def _flag_value(key: Key, value: Any) -> Any:
    """A flag's value in the configuration's form."""
    if key.kind == "options":
        return dict(parse_option(text) for text in value)
    if key.kind == "split":
        parts = str(value).split(",")
        try:
            fractions = [float(p) for p in parts]
        except ValueError:
            fractions = []
        if len(fractions) != 3:
            raise _bad(f"`{key.flag}`", "three fractions TRAIN,VALIDATION,TEST", value)
        return fractions
    return value


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """Every key of :data:`AUDIT_KEYS` that ``--config`` or a flag sets (a flag wins;
    ``option`` tables are merged, the flags' entries winning), by key name.

    Raises:
        InvalidParameterError: an unknown or malformed key of the TOML file.
    """
    values: dict[str, Any] = {}
    if getattr(args, "config", None):
        table = load_toml(args.config)
        for name, value in table.items():
            key = KEYS_BY_TOML_NAME.get(name)
            if key is None:
                known = sorted(KEYS_BY_TOML_NAME)
                raise InvalidParameterError(
                    f"`--config` key {name!r} is not an audit key"
                    f"{did_you_mean(name, known)}; valid keys: "
                    f"{', '.join(known)}. Got it in {args.config!r}."
                )
            if key.name in values:
                raise InvalidParameterError(
                    f"`--config` sets {key.name!r} twice (as {name!r} too). "
                    f"Got it in {args.config!r}."
                )
            values[key.name] = _toml_value(key, value, f"`{name}` in {args.config!r}")
    for key in AUDIT_KEYS:
        given = getattr(args, key.name, None)
        if given is None or given is False:
            continue
        value = _flag_value(key, given)
        if key.kind == "options":
            value = {**values.get(key.name, {}), **value}
        values[key.name] = value
    return values


def config_mapping(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration keys (:class:`AuditConfig` fields) of ``--config`` and the
    flags."""
    values = settings(args)
    return {
        key.target: values[key.name]
        for key in AUDIT_KEYS
        if key.target is not None and key.name in values
    }


def _flags_given(args: argparse.Namespace) -> list[Key]:
    return [
        key for key in AUDIT_KEYS if getattr(args, key.name, None) not in (None, False)
    ]


def _resume_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a ``--resume`` may take from this command line; any other flag
    is refused, naming it."""
    allowed = {key.name for key in _resume_keys()}
    conflicts = [key.flag for key in _flags_given(args) if key.name not in allowed]
    if getattr(args, "config", None):
        conflicts.insert(0, "--config")
    if conflicts:
        raise InvalidParameterError(
            f"--resume continues the audit stored in {args.resume!r} with its own "
            f"configuration and cannot be combined with {', '.join(conflicts)}; "
            "start a new audit with --out (or --force) to change it."
        )
    return {
        key.target: getattr(args, key.name)
        for key in _flags_given(args)
        if key.name in allowed and key.target is not None
    }


@contextlib.contextmanager
def terminate_as_exception() -> Iterator[None]:
    """Within: SIGTERM raises :class:`Terminated` in the main thread, so the run
    unwinds (its workers are stopped, the lock released) instead of dying."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    try:
        previous: Callable[..., Any] | int | None = signal.signal(
            signal.SIGTERM, handler
        )
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread."""


def stopped_hint(out: Path, where: Path, *, force: bool, resume: str) -> str:
    """What ``out`` (absolute: ``where``) holds after a stopped run, and how to go
    on (``resume``: the command or call that continues it; ``{out}`` in it is
    replaced by the folder)."""
    from dpaudit.audit.storage import ResultStore

    if force and (where / RESULT_FILE).exists():
        # The swap moves result.json aside first: the old audit was not replaced.
        hint = f"the audit in {out} is unchanged (--force replaces it only once the "
        hint += "new audit has stored its first batch)"
    elif (where / ResultStore.FILENAME).exists():
        hint = "continue it with: " + resume.replace("{out}", str(out))
    else:
        hint = "no round was finished, nothing was written"
    return hint


def _stopped(out: Path, where: Path, why: str, code: int, *, force: bool) -> int:
    """The one line of a stopped run: what ``out`` (absolute: ``where``) holds now."""
    hint = stopped_hint(out, where, force=force, resume="dpaudit audit --resume {out}")
    print(f"dpaudit: {why}; {hint}", file=sys.stderr)
    return code


@dataclass(frozen=True, kw_only=True, slots=True)
class Prepared:
    """An audit ready to run: its configuration and where it goes.

    Attributes:
        config: the audit's configuration.
        out: ``--out`` (or ``--resume``) as given; ``where``: it made absolute.
        resume: ``--resume``; force: ``--force`` (never with ``--resume``).
        quiet: ``--quiet`` (by flag or configuration file).
    """

    config: AuditConfig
    out: Path
    where: Path
    resume: bool
    force: bool
    quiet: bool


def checked_config(mapping: dict[str, Any]) -> Any:
    """The :class:`AuditConfig` of ``mapping``, its settings checked first: each
    alone and against each other (the key table's refusals) before any generator or
    attack module is imported (a built-in's imports torch: seconds), then the
    generator's and attacks' options. So a bad setting is refused in one line well
    before torch could be imported (docs/design.md, "Start-up cost")."""
    from dpaudit.audit.config import AuditConfig, reading_recorded
    from dpaudit.audit.games import looked_up

    with reading_recorded():  # no generator or attack module imported
        probe = AuditConfig.from_mapping(mapping)
    probe.check_settings()
    spec = _check_names(probe)
    config = AuditConfig.from_mapping(mapping)
    looked_up(config, spec)  # the audit's own lookup: this one
    return config


def _check_names(config: Any) -> GeneratorSpec:
    """The generator's and the dataset's names, refused as the setup refuses them,
    without importing either (the registry's lookup is cheap; a dataset is a known
    name or an existing file); returns the generator's registry entry."""
    from dpaudit.datasets.names import DATASET_NAMES
    from dpaudit.generators.registry import get_spec

    spec = get_spec(config.generator)
    name = config.dataset
    if name not in DATASET_NAMES and not Path(name).exists():
        raise InvalidParameterError(
            f"`--dataset` {name!r} is neither a known dataset "
            f"({', '.join(DATASET_NAMES)}) nor an existing CSV file"
            f"{did_you_mean(name, DATASET_NAMES)}."
        )
    return spec


def prepare(args: argparse.Namespace) -> Prepared:
    """The configuration and the output folder of ``dpaudit audit``'s arguments
    (the command and the Python API's :func:`dpaudit.api.audit`).

    Raises:
        InvalidParameterError: a bad setting, configuration file or folder.
    """
    values = {} if args.resume else settings(args)
    quiet = bool(args.quiet or values.get("quiet"))
    if args.resume:
        from dpaudit.audit import resume_config

        out = Path(args.resume)
        if not out.is_dir():
            raise InvalidParameterError(f"--resume: {args.resume!r} does not exist.")
        config = resume_config(out, overrides=_resume_overrides(args))
    else:
        out_text = values.get("out", DEFAULT_OUT)
        if not out_text.strip():
            raise InvalidParameterError(
                f"`--out` must be a folder path. Got {out_text!r}."
            )
        out = Path(out_text)
        config = checked_config(config_mapping(args))
    return Prepared(
        config=config,
        out=out,
        # The working directory may change meanwhile.
        where=Path(os.path.abspath(out)),
        resume=bool(args.resume),
        force=bool(values.get("force")) and not args.resume,
        quiet=quiet,
    )


def run(args: argparse.Namespace) -> int:
    """Runs (or resumes) the audit, prints the result and where ``result.json`` is;
    with ``--dry-run`` only its plan (:func:`dpaudit.audit.dryrun.dry_run`)."""
    prepared = prepare(args)
    config, out, where = prepared.config, prepared.out, prepared.where
    force, quiet = prepared.force, prepared.quiet
    if getattr(args, "dry_run", False):
        from dpaudit.audit import dry_run

        rows = dry_run(
            config,
            out_dir=where,  # as the run names it
            resume=prepared.resume,
            force=force,
        )
        print("dry run: nothing fitted, nothing written")
        for name, text in rows:
            print(f"  {name:<22} {text}")
        return EXIT_OK
    from dpaudit.audit import run_audit, shutdown_workers

    try:
        with terminate_as_exception():
            result = run_audit(
                config,
                out_dir=where,
                resume=bool(args.resume),
                force=force,
                progress=not quiet,
            )
    except KeyboardInterrupt:
        shutdown_workers()
        return _stopped(out, where, "interrupted", EXIT_INTERRUPTED, force=force)
    except Terminated:
        shutdown_workers()
        return _stopped(
            out, where, "terminated (SIGTERM)", EXIT_TERMINATED, force=force
        )
    if result.timing.resumed:
        before = result.timing.rounds_stored_before
        print(f"resumed {out}: {before} rounds were already stored")
    print_result(result)
    print(f"result: {out / 'result.json'}")
    return EXIT_OK


def print_result(result: AuditResult) -> None:
    """Prints an audit result for a terminal (colour only on a terminal)."""
    from dpaudit.reports.terminal import render_terminal

    # Standard output closed (`>&-`): Python's print writes nowhere; result.json holds it.
    color = sys.stdout is not None and sys.stdout.isatty()
    print(render_terminal(result, color=color))
