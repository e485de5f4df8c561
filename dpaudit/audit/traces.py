"""Writing a training trace (the audit study's Figures 2 to 4) as CSV and JSON.

Files: ``records_seen.csv`` (model, teacher, records_seen), ``losses.csv``
(iteration, teacher, loss_own, loss_other), ``epsilon.csv`` (iteration, epsilon,
epsilon_data_independent, moment1) and ``trace.json`` (the claim with its trace).
The folder is written to a temporary sibling and renamed, so nothing half-written is
left behind.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpaudit.errors import InvalidParameterError


def write_trace(out: Path, claim: Mapping[str, Any], *, num_teachers: int,
                model: int = 0) -> None:
    """Writes the trace of one fitted model's claim (``PrivacyClaim.to_json()``)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`--out` {str(out)!r} exists and is not a folder.")
    trace = claim.get("trace", {})
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        with open(tmp / "records_seen.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["model", "teacher", "records_seen"])
            for teacher, seen in enumerate(trace.get("records_seen", [])):
                w.writerow([model, teacher, seen])
        with open(tmp / "losses.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["iteration", "teacher", "loss_own", "loss_other"])
            for row in trace.get("teacher_losses", []):
                for teacher in range(num_teachers):
                    w.writerow([row["iteration"], teacher, row["own"][teacher],
                                row["other"][teacher]])
        with open(tmp / "epsilon.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["iteration", "epsilon", "epsilon_data_independent", "moment1"])
            eps = trace.get("epsilon", [])
            di = trace.get("epsilon_data_independent", [None] * len(eps))
            m1 = trace.get("moment1", [None] * len(eps))
            for i, values in enumerate(zip(eps, di, m1)):
                w.writerow([i, *values])
        (tmp / "trace.json").write_text(json.dumps(dict(claim), indent=2) + "\n")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
