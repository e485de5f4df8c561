"""Wall time of a full GroundHog audit of one PATE-GAN variant on Cervical Cancer.

The study's average-case setting: 1,000 rounds per world (2,000 PATE-GANs), the
GroundHog attack with all three feature sets, on the bundled Cervical Cancer data,
with one fixed target record (no ``--target auto``: selection would add its own
mini-audits to the time). Prints the wall time, eps_emp, AUC and verdict.

    python benchmarks/research/groundhog_audit_time.py                  # borealis, 1,000 rounds
    python benchmarks/research/groundhog_audit_time.py --variant original --rounds 20

The full run trains 2,000 models and takes many minutes; ``--rounds 20`` checks the
script end to end. With ``--jobs 1`` (every batch in this process) it also prints the
time GroundHog's featurisation took, and its share of the wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dpaudit.attacks.groundhog import GroundHogAttack
from dpaudit.audit import AuditConfig, run_audit
from dpaudit.data import load_cervical_cancer
from dpaudit.generators.bugs import variants
from dpaudit.worst_case.targets import candidate_targets


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    names = sorted(n for n, v in variants().items() if v.generator == "pategan")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variant",
        default="borealis",
        choices=names,
        help="PATE-GAN variant to audit (default: borealis)",
    )
    parser.add_argument(
        "--target",
        type=int,
        default=None,
        help="target row of the training data (default: the most "
        "isolated record, the first of candidate_targets)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1000,
        help="rounds per world (default: 1000, as in the study)",
    )
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--jobs", type=int, default=-1)
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="audit directory to keep (default: a temporary one)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target = args.target
    if target is None:
        data = load_cervical_cancer()
        target = candidate_targets(data.train, domain=data.domain, n=1)[0]
    config = AuditConfig(
        generator="pategan",
        variant=args.variant,
        dataset="cervical_cancer",
        target=target,
        attack="groundhog",
        rounds=args.rounds,
        epsilon=args.epsilon,
        batch_size=args.batch_size,
        jobs=args.jobs,
        device=args.device,
        seed=args.seed,
    )
    featurize_seconds = [0.0]
    original = GroundHogAttack.featurize

    def timed(self: GroundHogAttack, synthetic: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(self, synthetic)
        finally:
            featurize_seconds[0] += time.perf_counter() - started

    # Counted in this process only: with --jobs 1 every batch runs here.
    GroundHogAttack.featurize = timed  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory(prefix="dpaudit-bench-") as tmp:
            out = args.out if args.out is not None else Path(tmp) / "audit"
            started = time.perf_counter()
            result = run_audit(
                config, out_dir=out, force=True, progress=sys.stderr.isatty()
            )
            wall = time.perf_counter() - started
    finally:
        GroundHogAttack.featurize = original  # type: ignore[method-assign]
    print(f"variant          {args.variant}")
    print(f"target row       {target}")
    print(f"rounds/world     {args.rounds} ({2 * args.rounds} models)")
    print(
        f"wall time        {wall:.1f} s "
        f"(training {(result.timing.train_seconds or float('nan')):.1f} s; "
        f"load average {os.getloadavg()[0]:.2f})"
    )
    if args.jobs == 1:
        print(
            f"featurize        {featurize_seconds[0]:.2f} s "
            f"({100 * featurize_seconds[0] / wall:.1f}% of the wall time)"
        )
    else:
        print("featurize        not measured (workers; run with --jobs 1)")
    eps_max = result.eps_max_attainable
    print(
        f"eps_emp          {result.eps_emp or 0.0:.3f} (max attainable "
        f"{float('nan') if eps_max is None else eps_max:.3f})"
    )
    print(f"eps_claimed      {result.eps_claimed:.3f}")
    print(f"AUC              {float('nan') if result.auc is None else result.auc:.3f}")
    print(f"verdict          {result.verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
