"""``dpaudit fit``: train a generator on a dataset and write synthetic data."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from dpaudit.commands import EXIT_OK, budget, parse_options
from dpaudit.data import Dataset, load_dataset
from dpaudit.generators.base import Generator
from dpaudit.generators.registry import get_spec
from dpaudit.io import write_atomic
from dpaudit.rng import Rngs
from dpaudit.validation import require

DEFAULT_DATASET = "cervical_cancer"


def fit_one(args: argparse.Namespace, *, extra: dict[str, Any] | None = None
            ) -> tuple[Dataset, Generator, float]:
    """Loads ``--dataset``, builds ``--generator`` with its options and fits it once.

    The options: ``--option`` values, then ``--device`` (wins), ``--variant`` and
    ``--bug`` (refused for a generator without them), then ``extra``, then the
    generator's small-table calibration (the registry's; given options win).

    Returns:
        The dataset, the fitted generator and the fit's wall time in seconds.
    """
    dataset = load_dataset(args.dataset or DEFAULT_DATASET, domain=args.domain,
                           data_dir=args.data_dir)
    spec = get_spec(args.generator)
    options = spec.with_choices(parse_options(args.option), device=args.device,
                                variant=args.variant, bugs=args.bug or (),
                                device_wins=True)
    options.update(extra or {})
    epsilon, delta = budget(args)
    options = spec.calibrated(options, n_rows=len(dataset.train), epsilon=epsilon,
                              delta=delta)
    generator = spec.make_factory()(epsilon=epsilon, delta=delta, **options)
    started = time.perf_counter()
    generator.fit(dataset.train, domain=dataset.domain, rng=Rngs.from_seed(args.seed))
    return dataset, generator, time.perf_counter() - started


def run(args: argparse.Namespace) -> int:
    """Fits, samples ``--rows`` rows into ``--out`` and prints the privacy claim.

    Raises:
        InvalidParameterError: ``--out`` is a directory, or any bad input.
    """
    out = Path(args.out)
    require(not out.is_dir(), "--out", "a CSV file path, not a directory", str(out))
    dataset, generator, seconds = fit_one(args)
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
    epsilon, _ = budget(args)
    if claim.epsilon > epsilon:
        print(f"NOTE: the claim exceeds the budget {epsilon:g} (overshoot in the last "
              "iteration).")
    print(f"iterations: {claim.iterations}; wall time {seconds:.1f} s")
    print(f"wrote {rows} rows to {out}")
    return EXIT_OK
