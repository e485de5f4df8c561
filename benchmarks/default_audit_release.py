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

Measured on 2 CPU cores (AMD EPYC):

    dataset      min_width  seeds D != D'  max |D - D'|  values moved by the noise  claim (data-indep.)  iterations
    continuous   1          0 / 4          0             300 / 1200                 0.998 (0.998)        47
    continuous   8          1 / 4          1.8e-07       1200 / 1200                0.998 (0.998)        47
    binary       1          0 / 4          0             0 / 1200                   0.998 (0.998)        47
    binary       8          0 / 4          0             0 / 1200                   0.998 (0.998)        47
"""

from __future__ import annotations

import numpy as np
import torch

from dpaudit.generators.pate_gan import PateGan, config_from_options
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)

PUBLIC_SEEDS = 4
ROWS = 100


def main() -> None:
    torch.set_num_threads(1)
    print(
        f"{'dataset':12} {'min_width':>9} {'seeds D != D_':>14} {'max |D - D_|':>13} "
        f"{'values moved by the noise':>26} {'claim (data-indep.)':>20} iterations"
    )
    for continuous in (True, False):
        ds = worst_case_dataset(continuous=continuous)
        d0, d1 = neighbouring_pair(
            ds.train, worst_case_target(ds.domain), domain=ds.domain
        )
        for min_width in (1, 8):
            cfg = config_from_options(
                epsilon=1.0,
                delta=1e-5,
                max_iterations=100,
                device="cpu",
                min_width=min_width,
                num_teachers=2,
                lam=1e-3,
            )
            differ, moved, largest = 0, 0, 0.0
            for seed in range(PUBLIC_SEEDS):
                public = Rngs.from_seed(1000 + seed)
                out = {}
                for name, data, privacy in (
                    ("D", d0, 1),
                    ("D'", d1, 1),
                    ("D, noise 2", d0, 2),
                ):
                    model = PateGan(cfg).fit(
                        data,
                        domain=ds.domain,
                        rng=Rngs.from_seed(privacy),
                        public_rng=public,
                    )
                    out[name] = model.sample(
                        ROWS, rng=Rngs.from_seed(7), public_rng=Rngs.from_seed(8)
                    ).to_numpy(dtype=float)
                differ += bool((out["D"] != out["D'"]).any())
                largest = max(largest, float(np.abs(out["D"] - out["D'"]).max()))
                moved += int((out["D"] != out["D, noise 2"]).sum())
            claim = model.privacy_claim_
            total = PUBLIC_SEEDS * out["D"].size
            print(
                f"{'continuous' if continuous else 'binary':12} {min_width:>9} "
                f"{f'{differ} / {PUBLIC_SEEDS}':>14} {largest:>13.2g} "
                f"{f'{moved} / {total}':>26} "
                f"{f'{claim.epsilon:.3f} ({claim.epsilon_data_independent:.3f})':>20} "
                f"{claim.iterations}"
            )


if __name__ == "__main__":
    main()
