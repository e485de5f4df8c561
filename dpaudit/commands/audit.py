"""``dpaudit audit``: run the distinguishing game and estimate epsilon.

The configuration comes from ``--config audit.toml`` (a table ``[audit]`` or top-level
keys), overridden by the flags. :func:`print_result` is the one place that prints a
result.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path
from typing import Any

from dpaudit.audit.runner import AuditConfig, run_audit
from dpaudit.commands import EXIT_OK, parse_options
from dpaudit.errors import InvalidParameterError

DEFAULT_OUT = "dpaudit-audit"

AUDIT_FLAGS = ("generator", "variant", "dataset", "domain", "data_dir", "target",
               "target_record", "attack", "rounds", "epsilon", "delta", "synthetic_rows",
               "batch_size", "jobs", "backend", "scheduler", "device", "seed",
               "candidates", "selection_rounds", "alpha", "estimator")
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


def print_result(result: Any) -> None:
    """Prints an audit result (the ``result.json`` mapping) for a terminal."""
    name = result["generator"] + (f" ({result['variant']})" if result.get("variant") else "")
    print(f"audit of {name} on {result['dataset']}, attack {result['attack']}, "
          f"{result['rounds']['total']} rounds")
    print(f"  eps_emp (lower bound, {result['estimator']['confidence']:.0%}) "
          f"{result['eps_emp']:.3f}")
    print(f"  claimed epsilon        {result['eps_claimed']:.3f}")
    reference = result.get("eps_reference")
    note = str((result.get("claim") or {}).get("reference_note") or "")
    shown = (f"{reference:.3f}" if reference is not None
             else "unbounded" if note.startswith("unbounded") else "n/a")
    print(f"  reference epsilon      {shown}")
    print(f"  attainable maximum     {result['eps_max_attainable']:.3f}")
    print(f"  AUC                    {result['auc']:.3f}")
    counts = result["counts"]
    print(f"  test counts            tp {counts['tp']} fp {counts['fp']} "
          f"tn {counts['tn']} fn {counts['fn']}")
    if len(result.get("attacks", {})) > 1:
        for attack, r in result["attacks"].items():
            print(f"    {attack:24s} eps_emp {r['eps_emp']:.3f}  AUC {r['auc']:.3f}")
    print(f"  verdict                {result['verdict']}")
    if "timing" in result:
        print(f"  wall time              {result['timing']['total_seconds']:.1f} s")
