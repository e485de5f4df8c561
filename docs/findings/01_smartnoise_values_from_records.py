"""Finding 1 (docs/findings.md): smartnoise-synth 1.0.8 learns each column's values
from the private records. Needs only smartnoise-synth; run with its environment's python:

    ~/.cache/dpaudit/envs/smartnoise/bin/python docs/findings/01_smartnoise_values_from_records.py

Builds the transformer as ``Synthesizer._get_train_data`` does without one
(``TableTransformer.create(data, style=...)`` then ``fit``, base.py:157, :170) on two
neighbouring tables, D (1,999 records (0, 0, 0)) and D + (1, 1, 1), and prints the
cardinalities the synthesizers are built on and what one MST fit releases.
"""

import pandas as pd
from snsynth import Synthesizer
from snsynth.transform import TableTransformer

worlds = {
    "D": pd.DataFrame([(0, 0, 0)] * 1999, columns=["a", "b", "c"]),
    "D+target": pd.DataFrame([(0, 0, 0)] * 1999 + [(1, 1, 1)], columns=["a", "b", "c"]),
}
for name, table in worlds.items():
    for style in ("gan", "cube"):
        tt = TableTransformer.create(
            table, style=style, categorical_columns=list(table)
        )
        tt.fit(table)
        print(
            f"{name}: style={style} cardinality {tt.cardinality} output width {tt.output_width}"
        )
    synth = Synthesizer.create("mst", epsilon=1.0, delta=1e-5)
    synth.fit(table, categorical_columns=list(table))
    release = synth.sample(2000)
    print(
        f"{name}: MST release values {sorted(set(release.to_numpy().ravel().tolist()))}"
    )
