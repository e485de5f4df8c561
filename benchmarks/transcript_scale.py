"""How long a plug-in's measurement transcript of many cells takes: a whole
``dpaudit audit --release transcript`` (5 rounds per world, 10 fits, each stating the
transcript) of a plug-in stating N distinct one-column cells, decided, and of one
stating a million copies of one cell, refused at the first round in one line. Each
audit runs as its own process; its wall time and its CPU time (user + system, the
worker's included) are the medians over ``--runs`` runs. Beside each, the transcript
path alone in this process (the worker's split into arrays, the wire bytes, the
parent's join, the checks and the attack's exact counts of one fit's transcript),
CPU seconds, median of ``--runs``::

    PYTHONPATH=. python benchmarks/transcript_scale.py --record  # records/transcript_scale.json
    PYTHONPATH=. python benchmarks/transcript_scale.py --smoke   # seconds: a test runs it
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

PLUGIN = '''
import numpy as np


class Distinct:
    """States `cells` distinct cells of column `a` (0, 1, ...), Gaussian noise 4."""

    def __init__(self, *, epsilon, delta, cells=1):
        self.cells = int(cells)

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = {"epsilon": 1.0, "delta": 1e-5}
        n = self.cells
        counts = np.bincount(data["a"].to_numpy().astype(int), minlength=n)[:n]
        noisy = counts + np.random.default_rng(seed).normal(0, 4.0, size=n)
        self.privacy_transcript = [{"columns": ["a"], "cells": self.state(n),
                                    "noisy": noisy, "noise": {"gaussian": 4.0}}]
        return self

    def state(self, n):
        return np.arange(n).reshape(-1, 1)

    def sample(self, n, *, seed):
        return self.data.head(n)


class Repeated(Distinct):
    """States one cell `cells` times, as a list of lists (refused: a repeat)."""

    def state(self, n):
        return [[1]] * n
'''
DATA = "a,b,c\n0,0,0\n1,0,0\n2,1,0\n3,0,1\n5,1,1\n"
DOMAIN = {
    "columns": [
        {"name": "a", "kind": "integer", "lower": 0, "upper": 2_000_000},
        {"name": "b", "kind": "binary"},
        {"name": "c", "kind": "binary"},
    ]
}


def _audit(folder: Path, plugin: str, cells: int, rounds: int) -> dict[str, Any]:
    """One audit as its own process: wall and CPU seconds, exit code, outcome."""
    out = folder / f"out-{plugin}-{cells}"
    command = [
        sys.executable,
        "-m",
        "dpaudit",
        "audit",
        "--generator",
        f"scale_plugin:{plugin}",
        "--dataset",
        "data.csv",
        "--domain",
        "domain.json",
        "--target-record",
        '{"a": 7, "b": 1, "c": 1}',
        "--release",
        "transcript",
        "--option",
        f"cells={cells}",
        "--rounds",
        str(rounds),
        "--synthetic-rows",
        "5",
        "--jobs",
        "1",
        "--quiet",
        "--force",
        "--out",
        str(out),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *sys.path])}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=folder, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result = out / "result.json"
    if done.returncode == 0 and result.exists():
        outcome = json.loads(result.read_text())["verdict"]
    else:
        lines = done.stderr.strip().splitlines()
        outcome = lines[-1][:240] if lines else f"exit {done.returncode}"
    return {"wall": wall, "cpu": cpu, "exit": done.returncode, "outcome": outcome}


def _path_cpu(cells: int, repeated: bool) -> float:
    """CPU seconds of one fit's transcript from the plug-in's attribute to the
    attack's exact counts (or to the refusal), in this process."""
    import numpy as np
    import pandas as pd

    from dpaudit.attacks.measurements import MeasurementAttack
    from dpaudit.data import Domain
    from dpaudit.errors import PluginError
    from dpaudit.generators.foreign import columnar, wire
    from dpaudit.generators.foreign.transcript import check_transcript

    domain = Domain.from_json(DOMAIN)
    state = [[1]] * cells if repeated else np.arange(cells).reshape(-1, 1)
    noisy = np.random.default_rng(0).normal(0, 4.0, size=cells)
    stated = [
        {"columns": ["a"], "cells": state, "noisy": noisy, "noise": {"gaussian": 4.0}}
    ]
    data = pd.read_csv(__import__("io").StringIO(DATA))
    attack = MeasurementAttack(
        without=data, with_target=pd.concat([data, data.head(1)]), delta=1e-5
    )
    started = time.process_time()
    header, arrays = columnar.split(stated)
    message = wire.pack(
        {"transcript": header}, [np.ascontiguousarray(a).tobytes() for a in arrays]
    )
    buffer = wire.MessageBuffer()
    buffer.feed(message)
    found = buffer.message()
    assert found is not None
    raw = columnar.join(found[0]["transcript"], found[1])
    try:
        records = check_transcript(raw, "scale", domain=domain) or ()
        for record in records:
            attack.exact_counts(record)
    except PluginError:
        pass
    return time.process_time() - started


def main(argv: list[str] | None = None) -> dict[str, object]:
    made = harness.parser(__doc__)
    made.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[10_000, 100_000, 1_000_000],
        help="distinct cells per transcript",
    )
    made.add_argument(
        "--repeated", type=int, default=1_000_000, help="copies of the repeated cell"
    )
    made.add_argument("--runs", type=int, default=3, help="runs of each case")
    made.add_argument("--rounds", type=int, default=5, help="rounds per world")
    args = harness.parse(
        made, argv, smoke={"sizes": [1000], "repeated": 1000, "runs": 1}
    )
    rows = harness.Rows(__file__, args)
    figures: dict[str, object] = {}
    cases = [("Distinct", n) for n in args.sizes] + [("Repeated", args.repeated)]
    with tempfile.TemporaryDirectory(prefix="transcript_scale-") as tmp:
        folder = Path(tmp)
        (folder / "scale_plugin.py").write_text(PLUGIN)
        (folder / "data.csv").write_text(DATA)
        (folder / "domain.json").write_text(json.dumps(DOMAIN))
        for plugin, cells in cases:
            runs = [
                _audit(folder, plugin, cells, args.rounds) for _ in range(args.runs)
            ]
            path = [_path_cpu(cells, plugin == "Repeated") for _ in range(args.runs)]
            name = f"{plugin.lower()} {cells}"
            row = rows.add(
                name,
                cells=cells,
                runs=args.runs,
                wall_s=statistics.median(r["wall"] for r in runs),
                cpu_s=statistics.median(r["cpu"] for r in runs),
                path_cpu_s=statistics.median(path),
                exit=runs[0]["exit"],
                outcome=runs[0]["outcome"],
            )
            for key in ("wall_s", "cpu_s", "path_cpu_s", "exit", "outcome"):
                value = row[key]
                figures[f"{name}/{key}"] = (
                    round(value, 2) if isinstance(value, float) else value
                )
            rows.save()
    rows.record(figures)
    return rows.finish(
        title="a transcript of many cells: whole audits (median wall, CPU) and the "
        "transcript path alone (median CPU)",
        columns=["row", "runs", "wall_s", "cpu_s", "path_cpu_s", "exit", "outcome"],
        formats={"wall_s": ".1f", "cpu_s": ".1f", "path_cpu_s": ".3f"},
    )


if __name__ == "__main__":
    main()
