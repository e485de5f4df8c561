"""The default audit end to end: wall time, and where it goes.

Two measurements of the default audit (`dpaudit audit`: reference PATE-GAN on the
worst case, query-based attack, 1,000 rounds per world):

1. the command itself, run as a subprocess: wall time, and the CPU time of it and
   its worker processes (on a shared machine the CPU time is the steadier figure);
2. the same rounds in this one process, timed by phase: start-up (imports, setup),
   training (`fit_many`), sampling/decoding (the release), featurisation (the
   attacks' features), analysis (threshold, eps_emp, AUC). `--release per-model`
   samples as before batched sampling (one `sample` call and one pandas table per
   model); `batched` (default) uses the generators' `sample_many` (one generator
   pass, one decode per batch).

    python benchmarks/end_to_end.py [--rounds 1000] [--release batched|per-model]
        [--batch-size 128] [--skip-command] [--skip-phases] [--compare-backends]

``--compare-backends`` times the command once per CPU fan-out: threads (the
default), loky worker processes and one process (``--jobs 1``); the results must
agree (each batch depends only on its rounds).

It prints the machine's load average before and after (and, with
``--compare-backends``, after each run): figures taken while other work runs are
slower than on a quiet machine. ``--smoke``: 10 rounds per world, seconds.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness


def _load() -> str:
    one, five, _ = os.getloadavg()
    return (
        f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"
    )


def time_command(rounds: int, extra: list[str]) -> dict[str, Any]:
    """Wall and CPU seconds (with children) of `dpaudit audit` run as a subprocess,
    and its verdict, eps_emp and AUC."""
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "dpaudit",
                "audit",
                "--rounds",
                str(rounds),
                "--out",
                out,
                "--force",
                "--quiet",
                *extra,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = json.loads((Path(out) / "result.json").read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "verdict": result["verdict"],
        "eps_emp": result["eps_emp"],
        "auc": result["auc"],
        "seconds": wall,
    }


class Clock:
    """Wall and CPU seconds of this process since the last :meth:`lap`."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        out = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return out


PHASES = ("start-up", "training", "sampling/decoding", "featurisation", "analysis")


def time_phases(
    rounds: int, release: str, batch_size: int | None, seed: int
) -> dict[str, list[float]]:
    """Wall and CPU seconds per phase of the default audit's rounds, in this process."""
    phases = {name: [0.0, 0.0] for name in PHASES}

    def add(name: str, lap: tuple[float, float]) -> None:
        phases[name][0] += lap[0]
        phases[name][1] += lap[1]

    clock = Clock()
    import torch

    from dpaudit.audit import AuditConfig
    from dpaudit.audit.games import (
        Streams,
        analyse,
        build_setup,
        compact_claim,
        plan_for_setup,
        sample_all,
    )
    from dpaudit.audit.storage import ResultStore

    setup = build_setup(AuditConfig(rounds=rounds, jobs=1, seed=seed))
    plan = plan_for_setup(setup)
    batch = batch_size or plan.batch_size
    torch.set_num_threads(1)
    rngs = setup.plan.round_rngs()
    public = setup.public_streams()
    attacks = setup.make_attacks()
    add("start-up", clock.lap())
    rows = []
    n = setup.plan.n_rounds
    for start in range(0, n, batch):
        todo = list(range(start, min(start + batch, n)))
        split = [Streams.fit_and_sample(rngs[r]) for r in todo]
        datasets = [
            setup.with_target if setup.plan.bits[r] else setup.without for r in todo
        ]
        clock.lap()
        models = setup.make_generator().fit_many(  # type: ignore[attr-defined]
            datasets,
            domain=setup.domain,
            rngs=[f for f, _ in split],
            **({} if public is None else {"public_rngs": [public[0]] * len(todo)}),
        )
        add("training", clock.lap())
        sample_rngs = [s for _, s in split]
        sample_public = None if public is None else public[1]
        if release == "batched":
            frames = sample_all(
                models, setup.synthetic_rows, sample_rngs, public=sample_public
            ).frames()
        else:
            extra = {} if sample_public is None else {"public_rng": sample_public}
            frames = [
                m.sample(setup.synthetic_rows, rng=g, **extra)
                for m, g in zip(models, sample_rngs)
            ]
        add("sampling/decoding", clock.lap())
        features = {name: a.featurize(frames) for name, a in attacks.items()}
        add("featurisation", clock.lap())
        rows += [
            {
                "round": r,
                "bit": int(setup.plan.bits[r]),
                "split": int(setup.plan.splits[r]),
                "claim": compact_claim(m.privacy_claim_.to_json()),
                "features": {k: v[i] for k, v in features.items()},
            }
            for i, (r, m) in enumerate(zip(todo, models))
        ]
    with tempfile.TemporaryDirectory() as out, ResultStore(Path(out)) as store:
        store.commit_batch(rows)
        clock.lap()
        result = analyse(setup, store)
        add("analysis", clock.lap())
    print(
        f"  the audit's plan: {plan.reason}, batch size {plan.batch_size}; timed with "
        f"batch size {batch}; eps_emp "
        f"{result.eps_emp or 0.0:.3f}, AUC {result.auc or 0.5:.3f}"
    )
    return phases


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument(
        "--release", choices=("batched", "per-model"), default="batched"
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="phases: rounds per fit_many (default: the audit's plan for one process)",
    )
    parser.add_argument("--skip-command", action="store_true")
    parser.add_argument("--skip-phases", action="store_true")
    parser.add_argument(
        "--compare-backends",
        action="store_true",
        help="time the command with threads, processes and one process",
    )
    parser.add_argument(
        "--command-args",
        default="",
        help="extra arguments of the timed `dpaudit audit`",
    )
    args = harness.parse(parser, argv, smoke={"rounds": 10})
    table = harness.Rows(__file__, args)
    command_args = ["--seed", str(args.seed), *args.command_args.split()]
    print(
        f"default audit (pategan, worst-case, querybased), {args.rounds} rounds/world"
    )
    if not args.skip_command:
        table.add(
            "dpaudit audit (subprocess)", **time_command(args.rounds, command_args)
        )
    if args.compare_backends:
        for extra in (
            ["--backend", "threading"],
            ["--backend", "loky"],
            ["--jobs", "1"],
        ):
            table.add(
                f"dpaudit audit {' '.join(extra)}",
                **time_command(args.rounds, [*extra, *command_args]),
                load=_load(),
            )
    if not args.skip_phases:
        phases = time_phases(args.rounds, args.release, args.batch_size, args.seed)
        cpu = sum(c for _, c in phases.values())
        for name, (w, c) in phases.items():
            table.add(f"phase: {name}", wall_s=w, cpu_s=c, cpu_share=c / cpu, seconds=w)
        table.add(
            "phases: total",
            wall_s=sum(w for w, _ in phases.values()),
            cpu_s=cpu,
            seconds=sum(w for w, _ in phases.values()),
        )
    table.finish(
        title="the command: wall and CPU seconds of it and its workers; phases: one "
        f"process, release {args.release}, 1 torch thread",
        columns=("row", "wall_s", "cpu_s", "cpu_share", "verdict", "eps_emp", "auc"),
        formats={
            "wall_s": ".2f",
            "cpu_s": ".2f",
            "cpu_share": ".1%",
            "eps_emp": ".3f",
            "auc": ".3f",
        },
    )


if __name__ == "__main__":
    main()
