"""``dpaudit audit``: run the distinguishing game and estimate epsilon.

The configuration comes from ``--config audit.toml`` (a table ``[audit]`` or top-level
keys), overridden by the flags. :func:`print_result` is the one place that prints a
result.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import Any

from dpaudit.audit.result import AuditResult
from dpaudit.audit.runner import AuditConfig, run_audit
from dpaudit.commands import EXIT_OK, parse_options
from dpaudit.errors import InvalidParameterError
from dpaudit.reports.text import render_terminal

DEFAULT_OUT = "dpaudit-audit"

AUDIT_FLAGS = ("generator", "variant", "dataset", "domain", "data_dir", "target",
               "target_record", "attack", "rounds", "epsilon", "delta", "synthetic_rows",
               "batch_size", "jobs", "backend", "scheduler", "device", "seed",
               "candidates", "selection_rounds", "alpha", "estimator", "randomness")
"""The flags that are keys of the audit configuration, under the same name."""


def load_toml(path: str) -> dict[str, Any]:
    """The audit table of a TOML file (``[audit]``, or the top level).

    Raises:
        InvalidParameterError: the file is missing or not valid TOML.
    """
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError as err:
        raise InvalidParameterError(
            f"`--config` must be an existing TOML file. Got {path!r}.") from err
    except tomllib.TOMLDecodeError as err:
        raise InvalidParameterError(
            f"`--config` must be valid TOML ({err}). Got {path!r}.") from err
    return dict(data.get("audit", data))


def config_mapping(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration keys of ``--config`` with the flags given on top."""
    mapping: dict[str, Any] = load_toml(args.config) if args.config else {}
    for key in AUDIT_FLAGS:
        value = getattr(args, key, None)
        if value is not None:
            mapping[key] = value
    if args.bug:
        mapping["bugs"] = list(args.bug)
    if args.option:
        options = dict(mapping.get("generator_options", {}))
        options.update(parse_options(args.option))
        mapping["generator_options"] = options
    return mapping


def run(args: argparse.Namespace) -> int:
    """Runs (or resumes) the audit, prints the result and where ``result.json`` is."""
    config = AuditConfig.from_mapping(config_mapping(args))
    out = Path(args.resume or args.out or DEFAULT_OUT)
    result = run_audit(config, out_dir=out, resume=bool(args.resume), force=args.force,
                       progress=not args.quiet)
    print_result(result)
    print(f"result: {out / 'result.json'}")
    return EXIT_OK


def print_result(result: AuditResult) -> None:
    """Prints an audit result for a terminal (colour only on a terminal)."""
    print(render_terminal(result, color=sys.stdout.isatty()))
