"""``dpaudit utility``: the PATE-GAN papers' utility benchmark from the command line.

Parses the arguments, loads the dataset, calls :func:`dpaudit.utility.run_utility`,
prints a short table and writes ``utility.json`` and ``utility.csv`` with ``--out``.
No logic of its own beyond the CSV-path convenience split (``--label``).
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any, TextIO

from dpaudit.commands import standard_output
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.registry import DEFAULT_GENERATOR, get_spec
from dpaudit.utility.settings import (
    CLASSIFIERS,
    DEFAULT_MODELS,
    DEFAULT_SAMPLES,
    PROTOCOLS,
)
from dpaudit.validation import require

if TYPE_CHECKING:
    from dpaudit.data import Dataset
    from dpaudit.utility.results import UtilityResult


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Registers the ``utility`` sub-command on an ``argparse`` sub-parsers object.

    Args:
        subparsers: the object ``ArgumentParser.add_subparsers()`` returned.

    Returns:
        The sub-command's parser (its ``func`` default is :func:`run`).
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "utility",
        help="measure the utility of a generator's synthetic data (Settings A, B, C)",
        description=(
            "Train the generator several times, sample synthetic data and score 12 "
            "classifiers by AUROC and AUPRC: A = train real / test real, B = train "
            "synthetic / test real, C = train synthetic / test synthetic; plus the "
            "Synthetic Ranking Agreement of A and C."
        ),
    )
    parser.add_argument(
        "--generator",
        default=DEFAULT_GENERATOR,
        help="registered generator or plug-in module:Class "
        f"(default {DEFAULT_GENERATOR}; `dpaudit list generators`)",
    )
    parser.add_argument(
        "--variant",
        default=None,
        help="implementation variant (`dpaudit list variants`)",
    )
    parser.add_argument(
        "--bug",
        dest="bugs",
        action="append",
        default=[],
        metavar="FLAG",
        help="switch on a bug flag (repeatable; `dpaudit list bugs`)",
    )
    parser.add_argument(
        "--dataset",
        default="cervical_cancer",
        help="dataset name or CSV path (default cervical_cancer)",
    )
    parser.add_argument(
        "--domain", default=None, help="public domain JSON (CSV datasets)"
    )
    parser.add_argument("--data-dir", default=None, help="folder of the named datasets")
    parser.add_argument(
        "--label",
        default=None,
        help="label column of a CSV dataset (split 80/20 stratified, seed 13)",
    )
    parser.add_argument(
        "--epsilon", type=float, default=1.0, help="target epsilon (default 1)"
    )
    parser.add_argument(
        "--delta", type=float, default=1e-5, help="target delta (default 1e-5)"
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="write utility.json and utility.csv here",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="plain",
        help="plain: mean and std; best-of: the study's best score (default plain)",
    )
    parser.add_argument(
        "--models",
        type=int,
        default=DEFAULT_MODELS,
        help=f"generator seeds (default {DEFAULT_MODELS})",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help=f"synthetic datasets per model (default {DEFAULT_SAMPLES})",
    )
    parser.add_argument(
        "--classifier",
        dest="classifiers",
        action="append",
        default=None,
        choices=CLASSIFIERS,
        metavar="NAME",
        help="run only this classifier (repeatable; default all 12)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a generator option, e.g. preprocessing=public (repeatable)",
    )
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="plug-ins and adapters: the Python interpreter of their worker process",
    )
    parser.add_argument(
        "--fit-timeout",
        type=float,
        metavar="SECONDS",
        help="plug-ins and adapters: seconds one fit or sample may take (default 3600)",
    )
    parser.add_argument(
        "--max-memory",
        type=int,
        metavar="MIB",
        help="plug-ins and adapters: MiB of resident memory the worker may use",
    )
    parser.add_argument("--jobs", type=int, default=1, help="parallel classifier fits")
    parser.add_argument(
        "--quiet",
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bars (the one convention of every command)",
    )
    parser.set_defaults(func=run)
    return parser


def _load(args: argparse.Namespace) -> Dataset:
    from dpaudit.data import load_dataset  # lazily: pandas (`dpaudit --help` is fast)

    dataset = load_dataset(args.dataset, domain=args.domain, data_dir=args.data_dir)
    if dataset.test is not None and dataset.label is not None:
        # A named dataset has its own label and split: another --label would be
        # silently ignored.
        require(
            args.label in (None, dataset.label),
            "--label",
            f"unset or {dataset.label!r} for the {args.dataset!r} dataset (its label "
            "and split are fixed)",
            args.label,
        )
        return dataset
    if args.label is None:
        raise InvalidParameterError(
            f"`--label` must name the label column of {args.dataset!r}. Got none; the "
            "utility benchmark needs a binary label to split and score on."
        )
    if args.label not in dataset.train.columns:
        raise InvalidParameterError(
            f"`--label` must be a column of {args.dataset!r}. Got {args.label!r}."
        )
    column = dataset.domain[args.label] if args.label in dataset.domain.names else None
    require(
        column is not None and column.kind in ("binary", "categorical", "integer"),
        "--label",
        f"a discrete (binary, categorical or integer) column of "
        f"{args.dataset!r}: the classifiers are scored by AUROC on its classes",
        args.label,
    )
    counts = dataset.train[args.label].value_counts()
    require(
        len(counts) >= 2 and int(counts.min()) >= 5,
        "--label",
        f"a column of {args.dataset!r} with at least two classes of 5 rows or more "
        "(the 80/20 stratified split needs each class on both sides; column "
        f"{args.label!r} has { ({str(k): int(v) for k, v in counts.items()}) })",
        args.label,
    )
    from dpaudit.data import stratified_split

    train, test = stratified_split(dataset.train, label=args.label)
    return dataclasses.replace(dataset, train=train, test=test, label=args.label)


def run(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Runs the ``utility`` sub-command.

    Args:
        args: the parsed arguments of :func:`add_parser`'s parser.
        out: where the table is printed (default stdout).

    Returns:
        0 on success (errors are raised as :class:`dpaudit.errors.AuditError`).
    """
    stream = standard_output("the utility table") if out is None else out
    # The registry knows the generator: its variants and bug flags, and the
    # calibration of a generator whose published settings assume a larger table.
    spec = get_spec(args.generator)
    from dpaudit.audit.config import check_generator_options
    from dpaudit.commands import parse_options
    from dpaudit.commands.fit import worker_options

    given = [getattr(args, k, None) for k in ("python", "fit_timeout", "max_memory")]
    worker = (
        None
        if all(v is None for v in given)
        else worker_options(args, plugin=spec.plugin)
    )
    user_options = parse_options(getattr(args, "option", None))
    check_generator_options(args.generator, user_options)
    options = spec.with_choices(
        user_options,
        variant=args.variant,
        bugs=args.bugs,
    )
    dataset = _load(args)
    options = spec.calibrated(
        options, n_rows=len(dataset.train), epsilon=args.epsilon, delta=args.delta
    )
    from dpaudit.reports.escape import printable
    from dpaudit.utility.runner import run_utility  # lazily: scikit-learn, pandas

    result = run_utility(
        generator_name=args.generator,
        dataset=dataset,
        epsilon=args.epsilon,
        delta=args.delta,
        seed=args.seed,
        generator_options=options,
        protocol=args.protocol,
        n_models=args.models,
        n_samples=args.samples,
        classifiers=args.classifiers,
        n_jobs=args.jobs,
        progress=args.progress,
        worker=worker,
    )
    stream.write(printable(format_table(result), keep="\n"))
    if args.out is not None:
        json_path, csv_path = result.write(args.out)
        stream.write(f"wrote {json_path} and {csv_path}\n")
    return 0


def _cell(value: float | None, std: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if std is None else f"{value:.4f}±{std:.3f}"


def format_table(result: UtilityResult) -> str:
    """A plain-text table: one row per classifier, AUROC and AUPRC per setting."""
    summary = "best of" if result.protocol == "best-of" else "mean±std over"
    lines = [
        f"utility of {result.generator or 'given data'} on {result.dataset} "
        f"(epsilon={result.epsilon}, delta={result.delta}, seed={result.seed}; "
        f"{summary} {result.n_train_sets} synthetic sets)",
    ]
    header = ["classifier"]
    for setting in result.settings:
        header += [f"{setting} AUROC", f"{setting} AUPRC"]
    header.append("status")
    rows = [header]
    for name in result.classifiers:
        row = [name]
        # Status -> settings, so "B, C: undefined: ..." is printed once.
        statuses: dict[str, list[str]] = {}
        for setting in result.settings:
            item = result.score(setting, name)
            show_std = result.protocol == "plain" and setting != "A"
            row.append(_cell(item.auroc, item.auroc_std if show_std else None))
            row.append(_cell(item.auprc, item.auprc_std if show_std else None))
            if item.status != "ok":
                statuses.setdefault(item.status, []).append(setting)
        row.append(
            "; ".join(f"{', '.join(s)}: {status}" for status, s in statuses.items())
            or "ok"
        )
        rows.append(row)
    mean_row = ["mean"]
    for setting in result.settings:
        mean_row.append(_cell(result.mean(setting, "auroc")))
        mean_row.append(_cell(result.mean(setting, "auprc")))
    mean_row.append(
        ", ".join(f"{s}: {result.n_averaged(s)} classifiers" for s in result.settings)
    )
    rows.append(mean_row)
    # The last column (status) is left unpadded.
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    for r in rows:
        lines.append(
            "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1]
        )
    if "A" in result.settings and "C" in result.settings:
        lines.append(
            f"SRA (A vs C): AUROC {_cell(result.sra_auroc)}, "
            f"AUPRC {_cell(result.sra_auprc)}"
        )
    lines.extend(f"note: {note}" for note in result.notes)
    lines.append(
        f"time: generators {result.fit_seconds:.1f} s, "
        f"classifiers {result.eval_seconds:.1f} s"
    )
    return "\n".join(lines) + "\n"
