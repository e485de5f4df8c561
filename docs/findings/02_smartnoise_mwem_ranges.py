"""Finding 2 (docs/findings.md): smartnoise-synth 1.0.8 MWEM sizes its histograms from
the records' minimum and maximum (mwem.py:541-583), whatever transformer it is given.
Needs only smartnoise-synth; run with its environment's python:

    ~/.cache/dpaudit/envs/smartnoise/bin/python docs/findings/02_smartnoise_mwem_ranges.py

Fits MWEM with a transformer fitted on the public values {0, 1} only (the route that
fixes finding 1) on D (1,999 records (0, 0, 0)) and D + (1, 1, 1), and prints the
histogram ranges MWEM read (``mins_maxes``) and the values it releases.
"""

import numpy as np
import pandas as pd
from snsynth.mwem import MWEMSynthesizer
from snsynth.transform import LabelTransformer, TableTransformer

public = pd.DataFrame({"a": [0, 1], "b": [0, 1], "c": [0, 1]})
worlds = {
    "D": pd.DataFrame([(0, 0, 0)] * 1999, columns=["a", "b", "c"]),
    "D+target": pd.DataFrame([(0, 0, 0)] * 1999 + [(1, 1, 1)], columns=["a", "b", "c"]),
}
np.random.seed(0)
for name, table in worlds.items():
    tt = TableTransformer([LabelTransformer(nullable=False) for _ in public.columns])
    tt.fit(public)
    synth = MWEMSynthesizer(epsilon=1.0, verbose=False)
    synth.fit(table, transformer=tt)
    release = synth.sample(2000)
    print(
        f"{name}: transformer cardinality {tt.cardinality}; MWEM ranges {synth.mins_maxes}; "
        f"released values {sorted(set(release.to_numpy().ravel().tolist()))}"
    )
