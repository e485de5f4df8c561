"""Stores an audit's figures for docs/findings.md in docs/findings/records.json.

    python docs/findings/record.py KEY RESULT_JSON -- dpaudit audit ...

``KEY`` names the figure in the doc (for example ``9-both-library``), ``RESULT_JSON``
is the audit's ``result.json`` and the words after ``--`` the exact command that made
it, as the doc prints it (``--out`` included). The record keeps the command, the UTC
date, the versions (dpaudit, Python, the library) and the figures the doc quotes;
tests/test_findings_doc.py holds the doc to them. Standard library only.
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Any

RECORDS = Path(__file__).with_name("records.json")


def figures(result: dict[str, Any]) -> dict[str, Any]:
    """The figures of one result.json the doc may quote."""
    measured = result.get("measurements") or {}
    claim = result.get("claim") or {}
    library = ((claim.get("extra") or {}).get("library") or {}).get("values")
    return {
        "verdict": result["verdict"],
        "eps_emp": result["eps_emp"],
        "eps_claimed": result["eps_claimed"],
        "eps_max_attainable": result["eps_max_attainable"],
        "auc": result.get("auc"),
        "counts": result.get("counts"),
        "mu_emp": result.get("mu_emp"),
        "eps_exact": measured.get("eps_exact"),
        "rounds": result.get("rounds"),
        "wall_s": (result.get("timing") or {}).get("total_seconds"),
        "library": library[0] if library else None,
    }


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: record.py KEY RESULT_JSON -- dpaudit COMMAND...", file=sys.stderr)
        return 2
    key, path, command = argv[0], Path(argv[1]), " ".join(argv[3:])
    result = json.loads(path.read_text())
    records = json.loads(RECORDS.read_text()) if RECORDS.exists() else {}
    found = figures(result)
    records[key] = {
        "command": command,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "dpaudit": result.get("version"),
        "python": result.get("python"),
        "library": found.pop("library"),
        "figures": found,
    }
    RECORDS.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    print(f"{key}: {found['verdict']} eps_emp {found['eps_emp']} -> {RECORDS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
