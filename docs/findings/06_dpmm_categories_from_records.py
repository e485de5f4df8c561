"""Finding 6 (docs/findings.md): without categories in its domain, dpmm 0.1.9 takes a
column's categories from the records (processing/table_binner.py:144-147). Needs only
dpmm; run with its environment's python:

    ~/.cache/dpaudit/envs/dpmm/bin/python docs/findings/06_dpmm_categories_from_records.py

Two neighbouring tables; only the target holds the value "rare" of column ``c``.
"""

import pandas as pd
from dpmm.processing.table_binner import TableBinner

base = [("x", 0), ("y", 1)] * 1000
worlds = {
    "D": pd.DataFrame(base, columns=["c", "d"]),
    "D+target": pd.DataFrame(base + [("rare", 1)], columns=["c", "d"]),
}
for name, table in worlds.items():
    binner = TableBinner(binner_type="uniform")
    binner.fit(table)
    print(
        f"{name}: categories of c {binner.get_categories('c', table['c'])}; "
        f"model domain {binner.bin_domain if hasattr(binner, 'bin_domain') else '?'}"
    )
