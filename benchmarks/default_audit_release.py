"""Does the default audit's release depend on the data? (docs/soundness.md, "The
default audit")

Trains the reference PATE-GAN with the audit's worst-case settings (epsilon 1,
delta 1e-5, lambda 1e-3, 2 teachers, at most 100 iterations) on D and D' = D + target
under identical streams, and on D under another privacy stream, for four fixed public
seeds, with the paper's widths (``min_width`` 1) and with the audit's floor of 8, on
both worst cases; prints how many public seeds gave a release that differs between D
and D', the largest difference, and how many of the 4 x 300 released values another
privacy stream changed.

    python benchmarks/default_audit_release.py
    python benchmarks/default_audit_release.py --smoke   # seconds: 1 seed, 3 iterations

Measured on 2 CPU cores (AMD EPYC):

    dataset      min_width  seeds D != D'  max |D - D'|  values moved by the noise  claim (data-indep.)  iterations
    continuous   1          0 / 4          0             300 / 1200                 0.998 (0.998)        47
    continuous   8          1 / 4          1.8e-07       1200 / 1200                0.998 (0.998)        47
    binary       1          0 / 4          0             0 / 1200                   0.998 (0.998)        47
    binary       8          0 / 4          0             0 / 1200                   0.998 (0.998)        47
"""

from __future__ import annotations

import harness
import numpy as np
import torch

from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)

ROWS = 100


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--public-seeds", type=int, default=4)
    parser.add_argument("--max-iterations", type=int, default=100)
    args = harness.parse(parser, argv, smoke={"public_seeds": 1, "max_iterations": 3})
    torch.set_num_threads(1)
    seeds = args.public_seeds
    base = 10_000 * args.seed  # seed 0: the seeds of the measured table
    table = harness.Rows(__file__, args)
    for continuous in (True, False):
        ds = worst_case_dataset(continuous=continuous)
        d0, d1 = neighbouring_pair(
            ds.train, worst_case_target(ds.domain), domain=ds.domain
        )
        for min_width in (1, 8):
            cfg = config_from_options(
                epsilon=1.0,
                delta=1e-5,
                max_iterations=args.max_iterations,
                device="cpu",
                min_width=min_width,
                num_teachers=2,
                lam=1e-3,
            )
            name = "continuous" if continuous else "binary"
            with table.timed(name, min_width=min_width) as row:
                differ, moved, largest = 0, 0, 0.0
                for seed in range(seeds):
                    public = Rngs.from_seed(base + 1000 + seed)
                    out = {}
                    for world, data, privacy in (
                        ("D", d0, 1),
                        ("D'", d1, 1),
                        ("D, noise 2", d0, 2),
                    ):
                        model = PateGan(cfg).fit(
                            data,
                            domain=ds.domain,
                            rng=Rngs.from_seed(base + privacy),
                            public_rng=public,
                        )
                        out[world] = model.sample(
                            ROWS,
                            rng=Rngs.from_seed(base + 7),
                            public_rng=Rngs.from_seed(base + 8),
                        ).to_numpy(dtype=float)
                    differ += bool((out["D"] != out["D'"]).any())
                    largest = max(largest, float(np.abs(out["D"] - out["D'"]).max()))
                    moved += int((out["D"] != out["D, noise 2"]).sum())
                claim = model.privacy_claim_
                row.update(
                    seeds_d_differs=f"{differ} / {seeds}",
                    max_abs_d_diff=largest,
                    values_moved_by_noise=f"{moved} / {seeds * out['D'].size}",
                    claim=claim.epsilon,
                    claim_data_independent=claim.epsilon_data_independent,
                    iterations=claim.iterations,
                )
    table.finish(
        formats={
            "max_abs_d_diff": ".2g",
            "claim": ".3f",
            "claim_data_independent": ".3f",
        }
    )


if __name__ == "__main__":
    main()
