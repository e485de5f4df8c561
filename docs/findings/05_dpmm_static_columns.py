"""Finding 5 (docs/findings.md): dpmm 0.1.9's TableBinner treats a column with one value
in the records as static and writes that value into every released row, whatever the
public domain (processing/table_binner.py:231-237, :434-435). Needs only dpmm; run with
its environment's python:

    ~/.cache/dpaudit/envs/dpmm/bin/python docs/findings/05_dpmm_static_columns.py

Two neighbouring tables with a public domain {no, yes} for both columns: in D column
``b`` holds only "no"; D + one record (yes, yes) breaks that. Then a table whose every column
is static (the worst case's world D).
"""

import pandas as pd
from dpmm.processing.table_binner import TableBinner

domain = {"a": {"categories": ["no", "yes"]}, "b": {"categories": ["no", "yes"]}}
varying = [("no", "no")] * 1000 + [("yes", "no")] * 999
worlds = {
    "D": pd.DataFrame(varying, columns=["a", "b"]),
    "D+target": pd.DataFrame(varying + [("yes", "yes")], columns=["a", "b"]),
}
for name, table in worlds.items():
    binner = TableBinner(binner_type="uniform", domain=domain)
    codes = binner.fit_transform(table)
    back = binner.inverse_transform(codes)
    print(
        f"{name}: static columns {binner.static_columns}; modelled columns "
        f"{list(codes.columns)}; values of b after the round trip {sorted(back['b'].unique())}"
    )
static = pd.DataFrame([("no", "no")] * 1999, columns=["a", "b"])
try:
    TableBinner(binner_type="uniform", domain=domain).fit_transform(static)
    print("every column static: fitted")
except ValueError as err:
    print(f"every column static: ValueError: {err}")
