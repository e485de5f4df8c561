"""Finding 8 (docs/findings.md): synthcity 0.2.12's PrivBayes, AIM and DPGAN take the
columns' values from the private records, outside their privacy accounting. Needs
only synthcity; run with its environment's python:

    ~/.cache/dpaudit/envs/synthcity/bin/python docs/findings/08_synthcity_domains_from_records.py

Two neighbouring tables: D, 1,999 records (0, 0, 0), and D + one record (1, 1, 1).
For each: the values PrivBayes's label encoders hold and the values in 2,000 released
rows (PrivBayesPlugin, epsilon 1); the domain AIM's mechanism is given; the one-hot
outputs of the TabularEncoder DPGAN fits on the records. Any released 1 can come only
from the table with the target.
"""

import pandas as pd
from synthcity.plugins.core.models.tabular_encoder import TabularEncoder
from synthcity.plugins.privacy.plugin_aim import AIMPlugin
from synthcity.plugins.privacy.plugin_privbayes import PrivBayesPlugin

worlds = {
    "D": pd.DataFrame([(0, 0, 0)] * 1999, columns=["a", "b", "c"]),
    "D+target": pd.DataFrame([(0, 0, 0)] * 1999 + [(1, 1, 1)], columns=["a", "b", "c"]),
}
for name, table in worlds.items():
    plugin = PrivBayesPlugin(epsilon=1.0, random_state=0)
    plugin.fit(table)
    classes = {c: plugin.model.encoders[c]["model"].classes_.tolist() for c in table}
    release = plugin.generate(count=2000, random_state=0).dataframe()
    print(
        f"{name}: PrivBayes encoders {classes}; released rows holding a 1: "
        f"{int((release == 1).any(axis=1).sum())} of {len(release)}"
    )
    aim = AIMPlugin(epsilon=1.0, delta=1e-5, random_state=0, strict=False)
    aim.fit(table)
    print(f"{name}: AIM's domain {dict(aim.model.dataset.domain.config)}")
    encoder = TabularEncoder().fit(table)
    print(
        f"{name}: DPGAN's TabularEncoder outputs {encoder.transform(table).columns.tolist()}"
    )
