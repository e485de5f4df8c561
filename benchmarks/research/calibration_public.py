"""Calibration of the game under fixed public randomness (issue: the strongest sound
adversary).

Audits ``dpaudit.generators.toy_plugins:PublicSeedRandomizedResponse`` -- exactly
``epsilon``-DP for every fixed public seed, drawing from both streams -- ``--audits``
times at ``epsilon`` (seeds 0, 1, ...), with ``--randomness fixed_public``, and prints
how often eps_emp exceeded ``epsilon``, the mean eps_emp, and the one-sided binomial
test of "P(eps_emp > epsilon) <= alpha": its p-value is P(Bin(audits, alpha) >= X).
A sound game gives a p-value below 0.001 with probability at most 0.001.

    python benchmarks/research/calibration_public.py --audits 100 --rounds 1000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from scipy import stats

from dpaudit.audit import AuditConfig, run_audit

TOY = "dpaudit.generators.toy_plugins:PublicSeedRandomizedResponse"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audits", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument(
        "--randomness", default="fixed_public", choices=("fixed_public", "independent")
    )
    args = parser.parse_args()
    values = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.audits):
            config = AuditConfig(
                generator=TOY,
                epsilon=args.epsilon,
                delta=0.0,
                rounds=args.rounds,
                seed=seed,
                jobs=1,
                batch_size=2 * args.rounds,
                alpha=args.alpha,
                randomness=args.randomness,
            )
            result = run_audit(config, out_dir=Path(tmp) / str(seed))
            values.append(float(result.eps_emp or 0.0))
    over = sum(v > args.epsilon for v in values)
    p_value = float(stats.binom.sf(over - 1, args.audits, args.alpha))
    print(f"toy: {TOY} at epsilon {args.epsilon}, randomness {args.randomness}")
    print(f"audits {args.audits}, rounds per world {args.rounds}, alpha {args.alpha}")
    print(f"eps_emp > epsilon: {over} of {args.audits} ({over / args.audits:.1%})")
    print(
        f"eps_emp mean {statistics.mean(values):.3f}, median "
        f"{statistics.median(values):.3f}, max {max(values):.3f}"
    )
    print(
        f"binomial test P(Bin({args.audits}, {args.alpha}) >= {over}) = {p_value:.4g}"
        f" ({'consistent with' if p_value >= 1e-3 else 'REJECTS'} calibration at 0.001)"
    )
    print(f"wall time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
