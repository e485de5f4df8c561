"""The ``dpaudit`` command: parse arguments (or a TOML config) into config objects, call
the library, print. No logic of its own.

Exit codes: 0 success (for ``check``: no violation), 1 violation found (``check``),
2 bad input or a failed run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import tomllib
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dpaudit
from dpaudit.allocator import keep_freed_memory
from dpaudit.errors import AuditError, DpauditWarning, InvalidParameterError
from dpaudit.io import write_atomic

EXIT_OK, EXIT_VIOLATION, EXIT_ERROR = 0, 1, 2


# ------------------------------------------------------------------ helpers

def _parse_option(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise InvalidParameterError(f"`--option` must be KEY=VALUE. Got {text!r}.")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.replace("-", "_"), value


def _generator_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--generator", default="pategan",
                   help="pategan, gpate, a toy, or a plug-in module:Class (default pategan)")
    p.add_argument("--variant", help="a bug variant (dpaudit list variants)")
    p.add_argument("--bug", action="append", default=None, metavar="FLAG",
                   help="switch a bug flag on (repeatable; dpaudit list bugs)")
    p.add_argument("--option", action="append", default=None, metavar="KEY=VALUE",
                   help="a generator option, e.g. lam=0.01 (repeatable)")
    p.add_argument("--epsilon", type=float, default=None, help="privacy budget (default 1)")
    p.add_argument("--delta", type=float, default=None, help="delta (default 1e-5)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None)


def _data_args(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--dataset", default=None,
                   help=f"worst-case, cervical_cancer, epileptic_seizure, isolet5, "
                        f"credit_sample, or a CSV path (default {default})")
    p.add_argument("--domain", help="public domain JSON of a CSV dataset")
    p.add_argument("--data-dir", help="folder of the named datasets "
                                      "(default $DPAUDIT_DATA_DIR or ../shared/data)")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options = dict(_parse_option(o) for o in (args.option or []))
    if args.generator in ("pategan", "gpate"):
        if args.variant:
            options["variant"] = args.variant
        if args.bug:
            options["bugs"] = list(args.bug)
        if args.device:
            options["device"] = args.device
    elif args.variant or args.bug:
        raise InvalidParameterError(
            f"--variant/--bug apply to pategan and gpate, not to {args.generator!r}."
        )
    return options


# ---------------------------------------------------------------- commands

def cmd_list(args: argparse.Namespace) -> int:
    from dpaudit.attacks.registry import ATTACK_NAMES
    from dpaudit.data import DATASET_NAMES
    from dpaudit.generators.base import registered_generators
    from dpaudit.generators.bugs import bugs, variants

    if args.what == "generators":
        for name, desc in registered_generators().items():
            print(f"{name:22s} {desc}")
        print(f"{'module:Class':22s} a plug-in (see DESIGN.md); entry points in group "
              "dpaudit.generators")
    elif args.what == "datasets":
        for name in DATASET_NAMES:
            print(name)
    elif args.what == "attacks":
        for name in (*ATTACK_NAMES, "all"):
            print(name)
    elif args.what == "variants":
        for variant in variants().values():
            print(f"{variant.name:11s} {variant.rationale}")
            print(f"{'':11s} flags: {', '.join(sorted(variant.flags))}")
    else:
        for flag in bugs():
            table = "Table 1" if flag.in_table1 else "further"
            print(f"{flag.generator}:{flag.name:28s} [{flag.kind}, {table}] in "
                  f"{', '.join(flag.implementations)}")
            print(f"    {flag.description}")
    return EXIT_OK


def _fit_one(args: argparse.Namespace, *, extra: dict[str, Any] | None = None
             ) -> tuple[Any, Any, float]:
    from dpaudit.data import load_dataset
    from dpaudit.generators.base import generator_factory
    from dpaudit.rng import Rngs

    dataset = load_dataset(args.dataset or "cervical_cancer", domain=args.domain,
                           data_dir=args.data_dir)
    options = _options(args)
    options.update(extra or {})
    if args.generator == "gpate":
        from dpaudit.generators.g_pate import with_small_table_defaults

        options = with_small_table_defaults(
            options, len(dataset.train),
            epsilon=1.0 if args.epsilon is None else args.epsilon,
            delta=1e-5 if args.delta is None else args.delta)
    factory = generator_factory(args.generator)
    generator = factory(epsilon=1.0 if args.epsilon is None else args.epsilon,
                        delta=1e-5 if args.delta is None else args.delta, **options)
    started = time.perf_counter()
    generator.fit(dataset.train, domain=dataset.domain, rng=Rngs.from_seed(args.seed))
    return dataset, generator, time.perf_counter() - started


def cmd_fit(args: argparse.Namespace) -> int:
    from dpaudit.rng import Rngs

    out = Path(args.out)
    if out.exists() and out.is_dir():
        raise InvalidParameterError(f"`--out` {str(out)!r} is a directory; give a CSV path.")
    dataset, generator, seconds = _fit_one(args)
    rows = len(dataset.train) if args.rows is None else args.rows
    synthetic = generator.sample(rows, rng=Rngs.from_seed(args.seed).spawn(1)[0])
    claim = generator.privacy_claim_
    write_atomic(out, synthetic.to_csv(index=False))
    if args.claim_out:
        write_atomic(Path(args.claim_out), json.dumps(claim.to_json(), indent=2) + "\n")
    di = claim.epsilon_data_independent
    print(f"claimed epsilon: {claim.epsilon:.4f} ({claim.accountant}), delta {claim.delta:g}")
    print(f"data-independent epsilon: {'n/a' if di is None else f'{di:.4f}'}")
    if claim.reference_epsilon is not None or claim.trace.get("reference_note"):
        ref = claim.reference_epsilon
        print(f"reference epsilon (correct accountant): "
              f"{'unbounded' if ref is None else f'{ref:.4f}'}"
              f"  [{claim.trace.get('reference_note', '')}]")
    budget = 1.0 if args.epsilon is None else args.epsilon
    if claim.epsilon > budget:
        print(f"NOTE: the claim exceeds the budget {budget:g} (overshoot in the last "
              "iteration).")
    print(f"iterations: {claim.iterations}; wall time {seconds:.1f} s")
    print(f"wrote {rows} rows to {out}")
    return EXIT_OK


def cmd_trace(args: argparse.Namespace) -> int:
    from dpaudit.audit.traces import write_trace

    if args.generator != "pategan":
        raise InvalidParameterError(
            f"`dpaudit trace` records PATE-GAN training traces; got --generator "
            f"{args.generator!r}. Use --generator pategan [--variant NAME]."
        )
    extra = {"record_trace": True, "max_iterations": args.iterations,
             "fixed_iterations": args.iterations}
    if args.epsilon is None:
        # Run the asked iterations whatever the accountant says.
        args.epsilon = 1e12
    dataset, generator, seconds = _fit_one(args, extra=extra)
    claim = generator.privacy_claim_
    out = Path(args.out)
    write_trace(out, claim.to_json(), num_teachers=generator.num_teachers_)
    print(f"{claim.trace.get('records_seen')} records seen per teacher "
          f"({len(dataset.train)} rows); {claim.iterations} iterations in {seconds:.1f} s")
    print(f"wrote the trace to {out}/")
    return EXIT_OK


def _load_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError as err:
        raise InvalidParameterError(f"`--config` {path!r} does not exist.") from err
    except tomllib.TOMLDecodeError as err:
        raise InvalidParameterError(f"`--config` {path!r} is not valid TOML: {err}.") from err
    return dict(data.get("audit", data))


AUDIT_FLAGS = ("generator", "variant", "dataset", "domain", "data_dir", "target",
               "target_record", "attack", "rounds", "epsilon", "delta", "synthetic_rows",
               "batch_size", "jobs", "backend", "scheduler", "device", "seed",
               "candidates", "selection_rounds", "alpha", "estimator")


def cmd_audit(args: argparse.Namespace) -> int:
    from dpaudit.audit.runner import AuditConfig, run_audit

    mapping: dict[str, Any] = _load_toml(args.config) if args.config else {}
    for key in AUDIT_FLAGS:
        value = getattr(args, key, None)
        if value is not None:
            mapping[key] = value
    if args.bug:
        mapping["bugs"] = list(args.bug)
    if args.option:
        options = dict(mapping.get("generator_options", {}))
        options.update(dict(_parse_option(o) for o in args.option))
        mapping["generator_options"] = options
    config = AuditConfig.from_mapping(mapping)
    out = Path(args.resume or args.out or "dpaudit-audit")
    result = run_audit(config, out_dir=out, resume=bool(args.resume), force=args.force,
                       progress=not args.quiet)
    _print_result(result)
    print(f"result: {out / 'result.json'}")
    return EXIT_OK


def _print_result(result: dict[str, Any]) -> None:
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


def cmd_domain(args: argparse.Namespace) -> int:
    import pandas as pd

    from dpaudit.data import infer_domain

    try:
        table = pd.read_csv(args.data, na_values=["?"])
    except FileNotFoundError as err:
        raise InvalidParameterError(f"{args.data!r} does not exist.") from err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpauditWarning)
        domain = infer_domain(table)
    print("dpaudit: these bounds were read from the data and are NOT private; review "
          "them and replace them with public bounds before auditing.", file=sys.stderr)
    print(json.dumps(domain.to_json(), indent=2))
    return EXIT_OK


# ------------------------------------------------------------------ parser

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpaudit", description="Audit differentially private synthetic-data generators.")
    parser.add_argument("--version", action="version", version=f"dpaudit {dpaudit.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list generators, datasets, variants, bugs or attacks")
    p.add_argument("what", choices=("generators", "datasets", "variants", "bugs", "attacks"))
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("fit", help="train a generator and write synthetic data")
    _generator_args(p)
    _data_args(p, "cervical_cancer")
    p.add_argument("--rows", type=int, help="rows to release (default: the training size)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="synthetic.csv", help="CSV to write (default synthetic.csv)")
    p.add_argument("--claim-out", help="write the privacy claim as JSON")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("trace", help="write a training trace (records seen, losses, epsilon)")
    _generator_args(p)
    _data_args(p, "cervical_cancer")
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output folder")
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("audit", help="run the distinguishing game and estimate epsilon")
    p.add_argument("--config", help="audit.toml (flags override it)")
    p.add_argument("--generator")
    p.add_argument("--variant")
    p.add_argument("--bug", action="append", metavar="FLAG")
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="a generator option (repeatable)")
    _data_args(p, "worst-case")
    p.add_argument("--target", help="row index, or 'auto' (most vulnerable record)")
    p.add_argument("--target-record", help="a target record as JSON")
    p.add_argument("--attack", help="querybased (default), groundhog, groundhog-naive, "
                                    "groundhog-histogram, groundhog-correlation, distance, all")
    p.add_argument("--rounds", type=int, help="rounds per world (default 1000)")
    p.add_argument("--candidates", type=int,
                   help="--target auto: candidate records mini-audited (default 64)")
    p.add_argument("--selection-rounds", type=int,
                   help="--target auto: rounds per world of each mini-audit (default 100)")
    p.add_argument("--alpha", type=float,
                   help="false-alarm probability of eps_emp (default 0.05: 95%% confidence)")
    p.add_argument("--estimator", choices=("clopper_pearson", "jeffreys"))
    p.add_argument("--epsilon", type=float)
    p.add_argument("--delta", type=float)
    p.add_argument("--synthetic-rows", type=int)
    p.add_argument("--batch-size", type=int)
    p.add_argument("--jobs", type=int)
    p.add_argument("--backend", choices=("loky", "threading", "dask"))
    p.add_argument("--scheduler", help="Dask scheduler address (with --backend dask)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"))
    p.add_argument("--seed", type=int)
    p.add_argument("--out", help="output folder (default ./dpaudit-audit)")
    p.add_argument("--resume", metavar="DIR", help="continue a killed audit in DIR")
    p.add_argument("--force", action="store_true", help="overwrite an existing audit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("domain", help="draft a domain file from a CSV (for review)")
    dsub = p.add_subparsers(dest="domain_command", required=True)
    q = dsub.add_parser("infer", help="print a draft domain JSON (bounds are NOT private)")
    q.add_argument("data")
    q.set_defaults(func=cmd_domain)

    for module in ("utility", "report", "check"):
        try:
            mod = __import__(f"dpaudit.commands.{module}", fromlist=["add_parser"])
        except ModuleNotFoundError as err:
            if err.name != f"dpaudit.commands.{module}":
                raise
            continue
        mod.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    keep_freed_memory()  # batched training reuses freed tensor memory (allocator.py)
    try:
        func = args.func if hasattr(args, "func") else None
        if func is None:
            from importlib import import_module

            func = import_module(f"dpaudit.commands.{args.command}").run
        return int(func(args))
    except AuditError as err:
        print(f"dpaudit: error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
