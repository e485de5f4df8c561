"""How the Python API runs the commands' own checks (:mod:`dpaudit.api`).

Settings become the command line's arguments, parsed by the command's own parser
(:func:`parse`, :func:`argv`), so every refusal is the command's line; errors the
command reports as bad input become :class:`~dpaudit.errors.BadInputError`
(:func:`as_command`); a plug-in class or instance given as ``generator`` becomes a
name (:func:`generator`); and :func:`show_progress` says where progress shows.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from dpaudit.audit.config import AUDIT_KEYS, FLAG_ONLY, KEYS_BY_TOML_NAME, Key
from dpaudit.errors import EXIT_BAD_INPUT, BadInputError, exit_code_for

__all__ = [
    "argv",
    "as_command",
    "audit_settings",
    "command_settings",
    "generator",
    "parse",
    "show_progress",
]


# ---------------------------------------------------------------- the errors
def _bad_input(err: BaseException) -> BadInputError:
    """The :class:`BadInputError` of ``err``: the command's line for it."""
    from dpaudit.cli import _message
    from dpaudit.reports.escape import printable

    message = printable(_message(err))
    return BadInputError(message, line=f"dpaudit: error: {message}")


@contextlib.contextmanager
def as_command() -> Iterator[None]:
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


def parse(argv: list[str]) -> argparse.Namespace:
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


def argv(
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


def audit_settings() -> dict[str, str]:
    kinds = {key.name: key.kind for key in AUDIT_KEYS}
    kinds.update({name: "str" for name in FLAG_ONLY})
    return kinds


def command_settings(command: str) -> dict[str, str]:
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
def generator(settings: dict[str, Any], *, in_process: bool) -> Iterator[None]:
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
    from dpaudit.generators.in_process import in_process_plugin

    registered = f"{cls.__module__}:{cls.__qualname__}"
    settings["generator"] = registered
    with in_process_plugin(registered, cls):
        yield


def show_progress(quiet: bool) -> bool:
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
