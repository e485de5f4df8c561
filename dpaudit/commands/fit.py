"""``dpaudit fit``: train a generator on a dataset and write synthetic data.

Every input is checked before training (``--rows``, ``--seed``, the budget, the
options' types, and that ``--out`` and ``--claim-out`` can be written), so a bad
input costs no training time. ``--out -`` writes the CSV to stdout and the summary
to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpaudit.audit.config import check_generator_options
from dpaudit.commands import (
    EXIT_OK,
    budget,
    check_writable_file,
    parse_options,
    progress_note,
    show_progress,
    standard_output,
)
from dpaudit.data import Dataset, load_dataset
from dpaudit.generators.base import Generator
from dpaudit.generators.foreign.options import DEFAULT_FIT_TIMEOUT, WorkerOptions
from dpaudit.generators.registry import get_spec
from dpaudit.io import write_atomic
from dpaudit.reports.escape import printable
from dpaudit.rng import Rngs
from dpaudit.validation import check_scalar, require

DEFAULT_DATASET = "cervical_cancer"
STDOUT = "-"


def fit_one(
    args: argparse.Namespace, *, extra: dict[str, Any] | None = None
) -> tuple[Dataset, Generator, float]:
    """Loads ``--dataset``, builds ``--generator`` with its options and fits it once.

    The options: ``--option`` values, then ``--device`` (wins), ``--variant`` and
    ``--bug`` (refused for a generator without them), then ``extra``, then the
    generator's small-table calibration (the registry's; given options win).

    Returns:
        The dataset, the fitted generator and the fit's wall time in seconds.

    Raises:
        InvalidParameterError: a bad budget, seed or option, checked before training.
    """
    epsilon, delta = budget(args)
    check_scalar(args.seed, "--seed", kind=int, min_val=0)
    user_options = parse_options(args.option)
    check_generator_options(args.generator, user_options)
    spec = get_spec(args.generator)
    worker = worker_options(args, plugin=spec.plugin)
    dataset = load_dataset(
        args.dataset or DEFAULT_DATASET,
        domain=args.domain,
        data_dir=args.data_dir,
        rows=getattr(args, "dataset_rows", None),
    )
    # The memory plan of one fit and its release, before training (audit/memory.py).
    from dpaudit.audit.games import check_fit_memory

    asked = getattr(args, "rows", None)
    check_fit_memory(
        rows=len(dataset.train),
        width=dataset.domain.encoded_dim,
        released=len(dataset.train) if asked is None else int(asked),
    )
    options = spec.with_choices(
        user_options,
        device=args.device,
        variant=args.variant,
        bugs=args.bug or (),
        device_wins=True,
    )
    options.update(extra or {})
    options = spec.calibrated(
        options, n_rows=len(dataset.train), epsilon=epsilon, delta=delta
    )
    generator = spec.make_factory(worker=worker)(
        epsilon=epsilon, delta=delta, **options
    )
    started = time.perf_counter()
    with progress_note(
        f"dpaudit: training {args.generator} on {dataset.name} "
        f"({len(dataset.train)} rows)...",
        enabled=show_progress(args),
    ):
        generator.fit(
            dataset.train, domain=dataset.domain, rng=Rngs.from_seed(args.seed)
        )
    return dataset, generator, time.perf_counter() - started


def worker_options(args: argparse.Namespace, *, plugin: bool) -> WorkerOptions:
    """The foreign worker's settings of ``--python``, ``--fit-timeout`` and
    ``--max-memory`` (``dpaudit audit``'s flags of the same names), checked.

    Raises:
        InvalidParameterError: a value out of range, or ``--python`` with a built-in
            generator (it runs in this process).
    """
    python = getattr(args, "python", None)
    timeout = getattr(args, "fit_timeout", None)
    memory = getattr(args, "max_memory", None)
    check_scalar(timeout, "--fit-timeout", min_val=0, closed="neither", allow_none=True)
    check_scalar(memory, "--max-memory", kind=int, min_val=1, allow_none=True)
    if python is not None:
        require(
            bool(python.strip()), "--python", "the path of a Python interpreter", python
        )
        require(
            plugin,
            "--python",
            "unset for a built-in generator (it runs plug-ins and adapters in a "
            "worker under that interpreter)",
            python,
        )
    return WorkerOptions(
        python=python,
        fit_timeout=DEFAULT_FIT_TIMEOUT if timeout is None else float(timeout),
        max_memory=memory,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Fitted:
    """One fit and its release (:func:`fit_and_sample`).

    Attributes:
        out, claim_out: where the CSV and the claim's JSON go (``None``: not
            written to a file), both checked writable before training.
        dataset: the table trained on; synthetic: the ``rows`` rows released.
        claim: the generator's privacy claim; seconds: the fit's wall time.
    """

    out: Path | None
    claim_out: Path | None
    dataset: Dataset
    synthetic: Any
    claim: Any
    rows: int
    seconds: float


def fit_and_sample(args: argparse.Namespace, *, to_file: bool = True) -> Fitted:
    """``dpaudit fit``'s work (the command and the Python API's
    :func:`dpaudit.api.fit`): ``--out`` (with ``to_file``) and ``--claim-out``
    checked writable and ``--rows`` checked, all before training; then one fit and
    ``--rows`` rows sampled (default: the table's), their number checked.

    Raises:
        InvalidParameterError: as :func:`run`.
    """
    out = check_writable_file(args.out, "--out") if to_file else None
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
    return Fitted(
        out=out,
        claim_out=claim_out,
        dataset=dataset,
        synthetic=synthetic,
        claim=generator.privacy_claim_,
        rows=rows,
        seconds=seconds,
    )


def write_fitted(fitted: Fitted) -> None:
    """Writes the release's CSV to ``fitted.out`` and the claim's JSON to
    ``fitted.claim_out``, each where set, atomically."""
    if fitted.out is not None:
        write_atomic(fitted.out, fitted.synthetic.to_csv(index=False))
    if fitted.claim_out is not None:
        text = json.dumps(fitted.claim.to_json(), indent=2) + "\n"
        write_atomic(fitted.claim_out, text)


def run(args: argparse.Namespace) -> int:
    """Fits, samples ``--rows`` rows into ``--out`` and prints the privacy claim.

    Raises:
        InvalidParameterError: ``--out`` or ``--claim-out`` cannot be written,
            ``--rows`` < 1, or any bad input (all checked before training).
    """
    to_stdout = args.out == STDOUT
    if to_stdout:
        standard_output("the synthetic CSV (`--out -`)")
    fitted = fit_and_sample(args, to_file=not to_stdout)
    if to_stdout:
        sys.stdout.write(fitted.synthetic.to_csv(index=False))
        sys.stdout.flush()
    write_fitted(fitted)
    _print_summary(
        args,
        fitted.claim,
        rows=fitted.rows,
        seconds=fitted.seconds,
        out=fitted.out,
        file=sys.stderr if to_stdout else sys.stdout,
    )
    return EXIT_OK


def _print_summary(
    args: argparse.Namespace,
    claim: Any,
    *,
    rows: int,
    seconds: float,
    out: Path | None,
    file: Any,
) -> None:
    di = claim.epsilon_data_independent
    print(
        f"claimed epsilon: {claim.epsilon:.4f} ({printable(claim.accountant)}), delta "
        f"{claim.delta:g}",
        file=file,
    )
    print(
        f"data-independent epsilon: {'n/a' if di is None else f'{di:.4f}'}", file=file
    )
    if claim.reference_epsilon is not None or claim.trace.get("reference_note"):
        ref = claim.reference_epsilon
        print(
            f"reference epsilon (correct accountant): "
            f"{'unbounded' if ref is None else f'{ref:.4f}'}"
            f"  [{printable(claim.trace.get('reference_note', ''))}]",
            file=file,
        )
    epsilon, _ = budget(args)
    if claim.epsilon > epsilon:
        print(
            f"NOTE: the claim exceeds the budget {epsilon:g} (overshoot in the last "
            "iteration).",
            file=file,
        )
    print(f"iterations: {claim.iterations}; wall time {seconds:.1f} s", file=file)
    print(f"wrote {rows} rows to {'stdout' if out is None else out}", file=file)
