"""Finding 7 (docs/findings.md): dpmm 0.1.9's "auto" bin count is computed from the
number of records, with no noise (processing/binners.py:222-225, utils.py:108-117).
Needs only dpmm; run with its environment's python:

    ~/.cache/dpaudit/envs/dpmm/bin/python docs/findings/07_dpmm_auto_bins.py
"""

import numpy as np
from dpmm.processing import BINNER_DICT

for n in (1953, 1954):
    b = BINNER_DICT["uniform"](n_bins="auto", lower=0.0, upper=1.0)
    b.fit(np.zeros(n))
    top = b.inverse_transform(np.zeros(2000, dtype=int)).max()
    print(
        f"{n} records: {b.bin_domain} bins; largest released value of the first bin {top:.4f}"
    )
