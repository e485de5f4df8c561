"""Writing a training trace (the audit study's Figures 2 to 4) as CSV and JSON.

Files: ``records_seen.csv`` (model, teacher, records_seen), ``losses.csv``
(iteration, teacher, loss_own, loss_other), ``epsilon.csv`` (iteration, epsilon,
epsilon_data_independent, moment1) and ``trace.json`` (the claim with its trace).
The folder is written to a temporary sibling and renamed, so nothing half-written is
left behind; it gets the permissions of a folder made by ``mkdir`` (0777 less the
umask), like its files, so other users can read a shared audit.
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpaudit.errors import InvalidParameterError


def _fresh_sibling(out: Path) -> Path:
    """A new empty hidden folder beside ``out``, made with the umask's permissions
    (``tempfile.mkdtemp`` would make it 0700, unreadable by anyone else)."""
    while True:
        tmp = out.parent / f".{out.name}.{secrets.token_hex(6)}"
        try:
            tmp.mkdir(mode=0o777)
        except FileExistsError:
            continue
        return tmp


def write_trace(
    out: Path, claim: Mapping[str, Any], *, num_teachers: int, model: int = 0
) -> None:
    """Writes the trace of one fitted model's claim (``PrivacyClaim.to_json()``)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`--out` {str(out)!r} exists and is not a folder.")
    trace = claim.get("trace", {})
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _fresh_sibling(out)
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
                    w.writerow(
                        [
                            row["iteration"],
                            teacher,
                            row["own"][teacher],
                            row["other"][teacher],
                        ]
                    )
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
