"""dpaudit's Python API: the commands as functions, for notebooks and scripts.

:func:`audit` takes exactly the settings of ``dpaudit audit`` and of a policy file's
audit (the keys of :data:`~dpaudit.audit.config.keys.AUDIT_KEYS`, their policy-file
aliases, and ``config`` and ``resume``), checks them the way the command does, runs
the same audit and returns its :class:`~dpaudit.audit.result.model.AuditResult`
(the same ``result.json`` is written). :func:`check` runs a policy file as ``dpaudit
check`` does, :func:`load` reads an audit directory, :func:`fit` trains a generator
once and :func:`to_frame` makes a table of results.

Bad input raises one exception type, :class:`~dpaudit.errors.BadInputError`, whose
message is the line the command prints for the same input (without its ``dpaudit:
error:`` prefix; :attr:`~dpaudit.errors.BadInputError.line` holds the whole line).
Any other failure (out of memory, a full disk, a bug) raises as it is.

Progress: a tqdm bar (``tqdm.auto``: a widget in a notebook where ipywidgets is
installed, text on stderr on a terminal), nothing when stderr is a pipe or a file
outside a notebook, or with ``quiet=True``. Nothing is printed: the result is
returned, and an interrupted audit is reported through :mod:`logging` (logger
``dpaudit``) before the ``KeyboardInterrupt`` is raised again.

Example:
    >>> import dpaudit  # doctest: +SKIP
    >>> r = dpaudit.audit(generator="randomized-response", dataset="worst-case",
    ...                   rounds=100, out="a")  # doctest: +SKIP
    >>> r.verdict, r.eps_emp  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import json
import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dpaudit.audit.config import AUDIT_KEYS, FLAG_ONLY, KEYS_BY_TOML_NAME, Key
from dpaudit.errors import EXIT_BAD_INPUT, BadInputError, exit_code_for

if TYPE_CHECKING:
    import pandas as pd

    from dpaudit.audit.result.model import AuditResult
    from dpaudit.ci.run import CheckReport
    from dpaudit.generators.base import PrivacyClaim

__all__ = [
    "SETTINGS",
    "BadInputError",
    "FitResult",
    "audit",
    "check",
    "fit",
    "load",
    "to_frame",
]

logger = logging.getLogger("dpaudit")

SETTINGS: tuple[str, ...] = (*(key.name for key in AUDIT_KEYS), *FLAG_ONLY)
"""The settings :func:`audit` takes: the keys of ``dpaudit audit`` and of a policy
file's audit (:data:`~dpaudit.audit.config.keys.AUDIT_KEYS`; their aliases, such as
``bugs`` and ``generator_options``, are taken too), then ``config`` (an
``audit.toml``, which the other settings override) and ``resume`` (an audit
directory to continue)."""

T = TypeVar("T")


# ---------------------------------------------------------------- the errors
def _bad_input(err: BaseException) -> BadInputError:
    """The :class:`BadInputError` of ``err``: the command's line for it."""
    from dpaudit.cli import _message
    from dpaudit.reports.escape import printable

    message = printable(_message(err))
    return BadInputError(message, line=f"dpaudit: error: {message}")


@contextlib.contextmanager
def _as_command() -> Iterator[None]:
    """Within: an error the command reports as bad input (exit 2) is raised as
    :class:`BadInputError` with the command's line; anything else as it is."""
    try:
        yield
    except BadInputError:
        raise
    except Exception as err:
        if exit_code_for(err) != EXIT_BAD_INPUT:
            raise
        raise _bad_input(err) from err


def _parse(argv: list[str]) -> argparse.Namespace:
    """``dpaudit ARGV`` parsed by the command's own parser; a usage error raises
    :class:`BadInputError` with the parser's line."""
    from dpaudit.cli import build_parser

    parser = build_parser()
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            return parser.parse_args(argv)
    except SystemExit as stop:
        line = " ".join(captured.getvalue().split()) or f"exit {stop.code}"
        message = line.split(": error: ", 1)[-1]
        raise BadInputError(message, line=line) from None


# ---------------------------------------------------------------- settings
def _text(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)  # exactly the same number once parsed again
    return str(value)


def _flag_values(flag: str, kind: str, value: Any) -> list[str]:
    """``value`` as the command line writes it (``kind``: :attr:`Key.kind`)."""
    if kind == "bool":
        if not isinstance(value, bool):
            raise BadInputError(f"`{flag}` must be true or false. Got {value!r}.")
        return [flag] if value else []
    if kind == "list":
        items = [value] if isinstance(value, str) else list(value)
        return [part for item in items for part in (flag, _text(item))]
    if kind == "options":
        if isinstance(value, Mapping):
            items = [f"{k}={json.dumps(v)}" for k, v in value.items()]
        else:
            items = [value] if isinstance(value, str) else [str(v) for v in value]
        return [part for item in items for part in (flag, item)]
    if kind == "split" and isinstance(value, list | tuple):
        return [flag, ",".join(_text(v) for v in value)]
    if kind == "record" and isinstance(value, Mapping):
        return [flag, json.dumps(dict(value))]
    return [flag, _text(value)]


def _audit_key(name: str) -> Key | None:
    return KEYS_BY_TOML_NAME.get(name)


def _argv(
    command: str, settings: Mapping[str, Any], known: Mapping[str, str]
) -> list[str]:
    """``dpaudit COMMAND`` with ``settings`` as flags; ``known``: setting -> kind
    (``None`` values are unset; an unknown name is refused, never abbreviated)."""
    argv = [command]
    seen: dict[str, str] = {}
    for name, value in settings.items():
        key = _audit_key(name)
        canonical = key.name if key is not None and key.name in known else name
        if canonical not in known:
            raise BadInputError(
                f"{name!r} is not a setting of `dpaudit {command}`; valid settings: "
                f"{', '.join(sorted(known))}."
            )
        if canonical in seen:
            raise BadInputError(
                f"{canonical!r} is set twice (as {seen[canonical]!r} and {name!r})."
            )
        seen[canonical] = name
        if value is None:
            continue
        flag = "--" + canonical.replace("_", "-")
        argv += _flag_values(flag, known[canonical], value)
    return argv


def _audit_settings() -> dict[str, str]:
    kinds = {key.name: key.kind for key in AUDIT_KEYS}
    kinds.update({name: "str" for name in FLAG_ONLY})
    return kinds


def _command_settings(command: str) -> dict[str, str]:
    """The settings of ``dpaudit COMMAND`` (its parser's options) and their kinds."""
    from dpaudit.cli import build_parser

    parser = build_parser()
    sub = next(
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
    ).choices[command]
    kinds: dict[str, str] = {}
    for action in sub._actions:
        if not action.option_strings or action.dest in ("help", "debug"):
            continue
        key = _audit_key(action.dest)
        if key is not None:
            kinds[action.dest] = key.kind
        elif isinstance(action, argparse._StoreTrueAction):
            kinds[action.dest] = "bool"
        elif isinstance(action, argparse._AppendAction):
            kinds[action.dest] = "list"
        else:
            kinds[action.dest] = "str"
    return kinds


# ---------------------------------------------------------------- generators
def _importable(cls: type) -> str | None:
    """``module:Class`` when a worker process can import ``cls`` by that name."""
    module = getattr(cls, "__module__", None)
    qualname = getattr(cls, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        return None
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return f"{module}:{qualname}" if found is cls else None


def _equal(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # an array, say: not a default
        return False


def _instance_settings(instance: object, settings: dict[str, Any]) -> None:
    """An instance's constructor arguments, read back from its attributes of the
    same names (scikit-learn's convention), as ``epsilon``, ``delta`` and ``option``
    where the settings leave them unset; an argument equal to its default is left
    to the default, as for the class."""
    params = inspect.signature(type(instance)).parameters
    options: dict[str, Any] = {}
    for name, param in params.items():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        if not hasattr(instance, name):
            if param.default is param.empty:
                raise BadInputError(
                    f"`generator` instance of {type(instance).__qualname__!r} has no "
                    f"attribute {name!r} to read its constructor argument back from; "
                    "pass the class and its options (`option={...}`) instead."
                )
            continue
        value = getattr(instance, name)
        if param.default is not param.empty and _equal(value, param.default):
            continue  # a default: as the class alone would be given it
        if name in ("epsilon", "delta"):
            settings.setdefault(name, value)
        else:
            options[name] = value
    given = settings.get("option") or settings.get("generator_options") or {}
    if options:
        settings["option"] = {**options, **dict(given)}
        settings.pop("generator_options", None)


@contextlib.contextmanager
def _generator(settings: dict[str, Any], *, in_process: bool) -> Iterator[None]:
    """Within: ``settings["generator"]`` a name; a class or an instance named by
    ``module:Class`` (importable), or registered in this process (``in_process``)."""
    value = settings.get("generator")
    if value is None or isinstance(value, str):
        if in_process:
            raise BadInputError(
                "`in_process=True` needs a plug-in class or instance as `generator` "
                f"(a name runs as registered). Got {value!r}."
            )
        yield
        return
    from dpaudit.generators.foreign.contract import contract_problem

    cls = value if isinstance(value, type) else type(value)
    if not isinstance(value, type):
        _instance_settings(value, settings)
    name = _importable(cls)
    problem = contract_problem(cls, name or cls.__qualname__)
    if problem is not None:
        raise BadInputError(problem)
    if not in_process:
        if name is None:
            raise BadInputError(
                f"`generator` {cls.__qualname__!r} is defined in {cls.__module__!r} "
                "(a notebook or a script), which a worker process cannot import: move "
                "it into a module on the Python path, or pass `in_process=True` to run "
                "it in this process (see dpaudit.audit's docstring)."
            )
        settings["generator"] = name
        yield
        return
    for setting, allowed in (("backend", ("threading",)), ("python", ())):
        if settings.get(setting) not in (None, *allowed):
            raise BadInputError(
                f"`{setting}` {settings[setting]!r} starts other processes, where a "
                "generator run in-process does not exist: unset it, or run the plug-in "
                "in its own process (`in_process=False`, a class in a module)."
            )
    from dpaudit.generators.registry import in_process_plugin

    registered = f"{cls.__module__}:{cls.__qualname__}"
    settings["generator"] = registered
    with in_process_plugin(registered, cls):
        yield


def _show_progress(quiet: bool) -> bool:
    """Progress in a notebook or on a terminal; never on a pipe or with ``quiet``."""
    if quiet:
        return False
    shell = sys.modules.get("IPython")
    if shell is not None:
        get = getattr(shell, "get_ipython", None)
        ip = get() if callable(get) else None
        if ip is not None and "IPKernelApp" in getattr(ip, "config", {}):
            return True
    return sys.stderr is not None and sys.stderr.isatty()


# ------------------------------------------------------------------ the API
def audit(*, in_process: bool = False, **settings: Any) -> AuditResult:
    """Runs (or continues) an audit, exactly as ``dpaudit audit`` does, and returns
    its result.

    The settings are the keys of ``dpaudit audit`` and of a policy file's audit
    (:data:`SETTINGS`; ``dataset_rows`` is ``--dataset-rows``): ``generator``,
    ``dataset``, ``epsilon``, ``delta``, ``rounds``, ``game``, ``release``,
    ``attack``, ``seed``, ``out``, ``force``, ...; ``config`` names an
    ``audit.toml`` (the other settings override it) and ``resume`` an audit
    directory to continue. A setting left out, or ``None``, takes the command's
    default. Values are what the policy file takes: ``option={"lam": 0.01}`` (or
    ``["lam=0.01"]``), ``bug=["a", "b"]``, ``split=(0.4, 0.2, 0.4)``,
    ``target_record={"x": 1}``, ``force=True``. They are checked by the command's
    own parser and configuration, so every refusal is the command's line.

    ``generator`` is also a plug-in class, or an instance, following the plug-in
    contract (docs/plugins.md). By default it runs as every plug-in runs: in its
    own worker processes, which import it by its ``module:Class`` name; a class
    defined in a notebook or a script (``__main__``) cannot be imported there and
    is refused. ``in_process=True`` runs it in this process instead, with these
    consequences: a plug-in that crashes, leaks memory or hangs takes this process
    (the notebook's kernel) with it, since ``fit_timeout`` and ``max_memory`` bound
    only worker processes; the threads of ``backend="threading"`` (the default)
    share it (``loky``, ``dask`` and ``python`` are refused); and the audit records
    the generator as ``module:Class`` (``__main__:MyGenerator``), which ``resume``
    continues only with the same class passed again. An instance stands for its
    class and its constructor arguments, read back from its attributes of the same
    names (``epsilon``, ``delta`` and the options); the class is constructed anew
    for every round, as the game requires.

    Progress shows in a notebook or on a terminal (``quiet=True``: none). Ctrl-C
    (``KeyboardInterrupt``) stops the audit as on the command line: its workers are
    stopped, the rounds stored so far are kept (``audit(resume=out)`` continues
    them), a line saying so is logged (logger ``dpaudit``) and the
    ``KeyboardInterrupt`` is raised again.

    Args:
        in_process: run a plug-in class or instance given as ``generator`` in this
            process (see above).
        **settings: the audit's settings.

    Returns:
        The audit's :class:`~dpaudit.audit.result.model.AuditResult`, as written to
        ``out/result.json``.

    Raises:
        BadInputError: bad input; the message is the command's line for it.
    """
    from dpaudit.allocator import keep_freed_memory
    from dpaudit.commands.audit import prepare, stopped_hint

    settings = dict(settings)
    with _as_command(), _generator(settings, in_process=in_process):
        args = _parse(_argv("audit", settings, _audit_settings()))
        prepared = prepare(args)
        from dpaudit.audit import run_audit, shutdown_workers

        keep_freed_memory()
        try:
            return run_audit(
                prepared.config,
                out_dir=prepared.where,
                resume=prepared.resume,
                force=prepared.force,
                progress=_show_progress(prepared.quiet),
            )
        except KeyboardInterrupt:
            shutdown_workers()
            hint = stopped_hint(
                prepared.out,
                prepared.where,
                force=prepared.force,
                resume=f"dpaudit.audit(resume={str(prepared.out)!r})",
            )
            logger.warning("dpaudit: interrupted; %s", hint)
            raise


def load(out_dir: str | Path) -> AuditResult:
    """Reads an audit directory (or its ``result.json``), as ``dpaudit report``
    does: the result with the training traces and the utility result found there.

    Raises:
        BadInputError: no ``result.json`` there, or one that is not a dpaudit
            result.
    """
    from dpaudit.reports.model import load_result

    with _as_command():
        return load_result(out_dir)


def check(
    policy: str | Path | Mapping[str, Any],
    *,
    out: str | Path = "dpaudit-check",
    junit: str | Path | None = None,
    summary: str | Path | None = None,
    force: bool = False,
    resume: bool = False,
    quiet: bool = False,
) -> CheckReport:
    """Runs every audit of a policy, as ``dpaudit check --policy POLICY`` does.

    Args:
        policy: the policy file (TOML), or its content as a mapping.
        out: the directory of the audit directories and reports.
        junit: write JUnit XML here; summary: append a Markdown summary here.
        force: start afresh the audits an earlier check left in ``out``.
        resume: continue the unfinished audits an earlier check left in ``out``.
        quiet: no progress (shown in a notebook or on a terminal otherwise).

    Returns:
        The :class:`~dpaudit.ci.run.CheckReport`: ``outcomes`` (one per audit, with
        its ``result``), ``exit_code`` (the command's: 1 a VIOLATION, 0 all
        CONSISTENT, ...) and ``headline``. Each finished audit is logged (logger
        ``dpaudit``).

    Raises:
        BadInputError: a bad policy or output, before any audit runs.
    """
    from dpaudit.ci import load_policy, parse_policy, run_check, write_junit
    from dpaudit.ci import write_summary as append_summary

    with _as_command():
        if force and resume:
            # The command's parser refuses the pair (a mutually exclusive group).
            message = (
                "argument --resume: not allowed with argument --force "
                "(see `dpaudit check --help`)"
            )
            raise BadInputError(message, line=f"dpaudit check: error: {message}")
        loaded = (
            parse_policy(policy)
            if isinstance(policy, Mapping)
            else load_policy(Path(policy))
        )
        files = [
            (flag, Path(path), append)
            for flag, path, append in (
                ("--junit", junit, False),
                ("--summary", summary, True),
            )
            if path is not None
        ]
        report: CheckReport = run_check(
            loaded,
            out_dir=Path(out),
            progress=_show_progress(quiet),
            log=logger.info,
            force=force,
            resume=resume,
            files=files,
        )
        if junit is not None:
            write_junit(report, Path(junit))
        if summary is not None:
            append_summary(report, Path(summary))
        return report


@dataclass(frozen=True, kw_only=True, slots=True)
class FitResult:
    """One fit of :func:`fit`.

    Attributes:
        synthetic: the released table.
        claim: the generator's privacy claim.
        generator: the generator's name; dataset: the dataset's.
        seconds: the fit's wall time.
    """

    synthetic: pd.DataFrame
    claim: PrivacyClaim
    generator: str
    dataset: str
    seconds: float


def fit(*, in_process: bool = False, **settings: Any) -> FitResult:
    """Trains a generator once and samples from it, as ``dpaudit fit`` does.

    The settings are ``dpaudit fit``'s: ``generator``, ``variant``, ``bug``,
    ``option``, ``epsilon``, ``delta``, ``device``, ``dataset``, ``domain``,
    ``data_dir``, ``dataset_rows``, ``rows``, ``seed``, ``python``,
    ``fit_timeout``, ``max_memory``; with ``out`` (and ``claim_out``) the CSV (and
    the claim's JSON) are written too. ``generator`` may be a plug-in class or
    instance, as for :func:`audit` (``in_process`` likewise).

    Returns:
        The :class:`FitResult`.

    Raises:
        BadInputError: bad input; the message is the command's line for it.
    """
    from dpaudit.commands.fit import fit_one
    from dpaudit.io import write_atomic
    from dpaudit.rng import Rngs

    settings = dict(settings)
    kinds = _command_settings("fit")
    kinds.pop("quiet", None)
    written = settings.get("out")
    with _as_command(), _generator(settings, in_process=in_process):
        args = _parse(_argv("fit", settings, kinds))
        args.quiet = True
        from dpaudit.commands import check_writable_file
        from dpaudit.validation import check_scalar, require

        out = None if written is None else check_writable_file(args.out, "--out")
        claim_out = (
            None
            if args.claim_out is None
            else check_writable_file(args.claim_out, "--claim-out")
        )
        check_scalar(args.rows, "--rows", kind=int, min_val=1, allow_none=True)
        dataset, generator, seconds = fit_one(args)
        rows = len(dataset.train) if args.rows is None else args.rows
        synthetic = generator.sample(rows, rng=Rngs.from_seed(args.seed).spawn(1)[0])
        require(
            len(synthetic) == rows,
            f"generator {args.generator!r}'s release",
            f"the {rows} rows asked for (--rows)",
            len(synthetic),
        )
        claim = generator.privacy_claim_
        if out is not None:
            write_atomic(out, synthetic.to_csv(index=False))
        if claim_out is not None:
            write_atomic(claim_out, json.dumps(claim.to_json(), indent=2) + "\n")
        return FitResult(
            synthetic=synthetic,
            claim=claim,
            generator=args.generator,
            dataset=dataset.name,
            seconds=seconds,
        )


#: The columns of :func:`to_frame`: name -> how it is read from a result.
FRAME_COLUMNS: Mapping[str, Callable[[Any], Any]] = {
    "generator": lambda r: r.label,
    "dataset": lambda r: r.dataset,
    "game": lambda r: r.game,
    "verdict": lambda r: r.verdict.value,
    "eps_emp": lambda r: r.eps_emp,
    "eps_claimed": lambda r: r.eps_claimed,
    "eps_reference": lambda r: r.eps_reference,
    "eps_max_attainable": lambda r: r.eps_max_attainable,
    "mu_emp": lambda r: r.mu_emp,
    "auc": lambda r: r.auc,
    "attack": lambda r: r.attack,
    "delta": lambda r: r.delta,
    "rounds_per_world": lambda r: r.rounds.per_world,
    "seed": lambda r: r.seed,
    "directory": lambda r: None if r.directory is None else str(r.directory),
}


def to_frame(results: Iterable[AuditResult]) -> pd.DataFrame:
    """A table of results, one row each: the generator (with its variant and bugs),
    the dataset, the game, the verdict, ``eps_emp``, the claimed and reference
    epsilons, the attainable maximum, ``mu_emp``, the AUC, the headline attack,
    delta, the rounds per world, the seed and the audit directory
    (:data:`FRAME_COLUMNS`)."""
    import pandas as pd

    rows = [{name: get(r) for name, get in FRAME_COLUMNS.items()} for r in results]
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
