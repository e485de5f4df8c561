"""Fits per second of an audit on Dask process workers, 1 and 2 processes.

For each case and each number of processes ``n``, starts a
``distributed.LocalCluster(n_workers=n, processes=True, threads_per_worker=1)``, runs
a ``backend = "dask"`` audit on it and prints the fits (models trained) per second of
training time, with the load average (``/proc/loadavg``, 1 minute) before and after
each measurement: a scaling figure means something only where the load before is
below the number of cores. Each cluster first runs a warm-up audit of 10 fits (every
worker process imports dpaudit and starts its foreign worker once; the time is
printed apart), then the timed audit. Then the ratio of 2 to 1 processes and the extrapolation
(docs/scale.md, "Measured throughput").

The cases:

* ``busy``: the toy plug-in :class:`dpaudit.generators.toy_plugins.BusyUniform`, whose
  ``fit`` is a fixed pure-Python hash chain of ``--work`` rounds (default 750,000:
  about 0.5 s of one core), released rows drawn from the public domain (0-DP, claim
  true). Stands for a slow library's fit with nothing else in the way.
* ``adapter`` (with ``--python``): a real library through its adapter (default
  ``smartnoise-mwem``, worst case of 2,000 rows, 2,000 released rows), its fits in
  worker processes under that interpreter.

Run on an idle machine (the figures of docs/scale.md; about 10 minutes)::

    PYTHONPATH=$PWD python benchmarks/dask_scaling.py \\
        --python ~/.cache/dpaudit/envs/smartnoise/bin/python

(``--python``: smartnoise-synth's interpreter, here where ``dpaudit env`` puts its
``smartnoise`` environment.) ``--smoke``: a few seconds' check that the benchmark runs
(one process, tiny fits, no adapter case; tests/test_benchmark_dask_scaling.py runs
it).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import harness

BUSY = "dpaudit.generators.toy_plugins:BusyUniform"


@dataclass(frozen=True)
class Measurement:
    case: str
    processes: int
    fits: int
    train_seconds: float
    wall_seconds: float
    load_before: float
    load_after: float

    @property
    def rate(self) -> float:
        return self.fits / self.train_seconds


def load_average() -> float:
    """The 1-minute load average (``nan`` where /proc/loadavg cannot be read)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def measure(
    case: str, processes: int, *, settings: dict[str, Any], folder: Path
) -> Measurement:
    """One audit of ``settings`` on a local cluster of ``processes`` processes."""
    import distributed

    from dpaudit.audit import AuditConfig, run_audit

    before = load_average()
    started = time.perf_counter()
    with distributed.LocalCluster(
        n_workers=processes,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    ) as cluster:
        dask = {"backend": "dask", "scheduler": cluster.scheduler_address}
        # Warm-up: every worker process imports dpaudit and starts its foreign
        # worker (a library's import: seconds) once; the timed audit then measures
        # the fits, not the start (reported apart).
        warm = AuditConfig.from_mapping(
            {**settings, **dask, "rounds": 5, "batch_size": 1, "seed": 1}
        )
        run_audit(warm, out_dir=folder / f"{case}-{processes}-warm", force=True)
        start_seconds = time.perf_counter() - started
        config = AuditConfig.from_mapping({**settings, **dask})
        result = run_audit(config, out_dir=folder / f"{case}-{processes}", force=True)
    wall = time.perf_counter() - started - start_seconds
    out = Measurement(
        case=case,
        processes=processes,
        fits=result.rounds.total,
        train_seconds=float(result.timing.train_seconds or float("nan")),
        wall_seconds=wall,
        load_before=before,
        load_after=load_average(),
    )
    print(
        f"{case}: {processes} process(es): {out.fits} fits, train "
        f"{out.train_seconds:.1f} s (wall {wall:.1f} s; cluster start and warm-up "
        f"{start_seconds:.1f} s): {out.rate:.2f} fits/s; load "
        f"{out.load_before:.2f} before, {out.load_after:.2f} after",
        flush=True,
    )
    return out


def cases(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The audits to time, by case name."""
    common: dict[str, Any] = {"seed": args.seed, "jobs": 1}
    out: dict[str, dict[str, Any]] = {
        "busy": {
            **common,
            "generator": BUSY,
            "generator_options": {"work": args.work},
            "dataset": "worst-case",
            "attack": "querybased",
            "rounds": args.rounds,
            "batch_size": args.batch_size,
        }
    }
    if args.python:
        out["adapter"] = {
            **common,
            "generator": args.adapter,
            "python": args.python,
            "dataset": "worst-case",
            "dataset_rows": 2000,
            "synthetic_rows": 2000,
            "attack": "querybased",
            "rounds": args.adapter_rounds,
            "batch_size": args.batch_size,
        }
    return out


def main(argv: list[str] | None = None) -> dict[str, list[Measurement]]:
    parser = harness.parser(__doc__)
    parser.add_argument("--rounds", type=int, default=40, help="busy: rounds per world")
    parser.add_argument("--work", type=int, default=750_000, help="busy: hash rounds")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument(
        "--python", help="interpreter of the adapter case (none: no adapter case)"
    )
    parser.add_argument("--adapter", default="smartnoise-mwem")
    parser.add_argument("--adapter-rounds", type=int, default=20)
    args = harness.parse(
        parser,
        argv,
        smoke={"rounds": 5, "work": 1000, "processes": [1], "batch_size": 10},
    )
    if args.smoke:
        args.python = None
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core per process, BLAS too
    table = harness.Rows(__file__, args)
    results: dict[str, list[Measurement]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case, settings in cases(args).items():
            results[case] = [
                measure(case, n, settings=settings, folder=Path(tmp))
                for n in args.processes
            ]
            for run in results[case]:
                table.add(
                    f"{case} {run.processes}",
                    **asdict(run),
                    rate=run.rate,
                    seconds=run.wall_seconds,
                )
    ratios = {}
    for case, runs in results.items():
        base = runs[0]
        for run in runs[1:]:
            ratio = run.rate / base.rate
            ratios[f"{case} {run.processes}/{base.processes}"] = ratio
            print(
                f"{case}: {run.processes} vs {base.processes} process(es): "
                f"{ratio:.2f}x ({ratio / (run.processes / base.processes):.0%} of "
                "linear)"
            )
    table.finish(
        title="rate: fits per second of training time",
        formats={"rate": ".2f", "train_seconds": ".1f", "wall_seconds": ".1f"},
        ratios=ratios,
    )
    return results


if __name__ == "__main__":
    main()
