"""What running plug-ins in foreign worker processes costs: a toy plug-in's audit
with dpaudit's source BEFORE (plug-ins fitted in-process) and AFTER (in long-lived
worker processes, one per thread, reused across fits).

Runs ``dpaudit audit --generator toy_overhead:Toy --rounds R --attack querybased``
as a subprocess with ``PYTHONPATH`` set to each source tree, alternating the two,
``--repeats`` times, and prints the wall time and the training time
(``result.json``'s ``timing.train_seconds``) of each run and the ratio of the medians.

    PYTHONPATH=$PWD python benchmarks/foreign_overhead.py --before ../before \
        --after . --rounds 1000 --repeats 2

(``../before``: a worktree of the commit before foreign workers.) ``--smoke`` times
this checkout against itself at 10 rounds per world, once.

The toy plug-in copies its data in ``fit`` and draws the release with
``DataFrame.sample``: about a millisecond a model, so the figure is the protocol's
cost per fit (two messages each way, the table cached in the worker), not a library's.

Measured on the 2-core machine shared with other jobs (the command above: 1,000
rounds per world, 2,000 models, default backend: threads, --jobs -1 = 2):

    run 1 before wall   41.4 s  train   23.8 s
    run 1 after  wall   41.0 s  train   22.3 s
    run 2 before wall   46.3 s  train   25.0 s
    run 2 after  wall   54.9 s  train   28.9 s
    median before wall   43.8 s  train   24.4 s  (12.20 ms a model)
    median after  wall   47.9 s  train   25.6 s  (12.79 ms a model)
    after / before: wall 1.09x, train 1.05x

The training time per model is dominated by the attacks' features and the store, not
by the protocol: the workers add about 0.6 ms a model (within the noise of a shared
machine).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]

TOY = '''
class Toy:
    """Copies its data; releases rows drawn with replacement (about 1 ms a model)."""

    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        self.data = data
        self.privacy_claim = {"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "toy"}
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
'''


def run_once(
    source: Path, plugin_dir: Path, out: Path, *, rounds: int, jobs: int, seed: int
) -> tuple[float, float]:
    """(wall seconds, train seconds) of one audit with dpaudit from ``source``."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin_dir), str(source.resolve())]),
    }
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpaudit",
            "audit",
            "--generator",
            "toy_overhead:Toy",
            "--rounds",
            str(rounds),
            "--attack",
            "querybased",
            "--jobs",
            str(jobs),
            "--seed",
            str(seed),
            "--quiet",
            "--force",
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"audit with {source} failed: {done.stderr.strip()}")
    train = json.loads((out / "result.json").read_text())["timing"]["train_seconds"]
    return wall, float(train)


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="source tree with in-process plug-ins (another worktree or checkout; "
        "required but with --smoke, which times this checkout twice)",
    )
    parser.add_argument(
        "--after",
        type=Path,
        default=Path("."),
        help="source tree with foreign workers (default .)",
    )
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per world")
    parser.add_argument("--jobs", type=int, default=-1)
    parser.add_argument("--repeats", type=int, default=2)
    args = harness.parse(
        parser,
        argv,
        smoke={"before": ROOT, "after": ROOT, "rounds": 10, "repeats": 1},
    )
    if args.before is None:
        parser.error("--before is required (a source tree to compare with)")
    table = harness.Rows(__file__, args)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "toy_overhead.py").write_text(TOY)
        times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
        for repeat in range(args.repeats):
            for label, source in (("before", args.before), ("after", args.after)):
                wall, train = run_once(
                    source,
                    folder,
                    folder / label,
                    rounds=args.rounds,
                    jobs=args.jobs,
                    seed=args.seed,
                )
                times[label].append((wall, train))
                table.add(f"run {repeat + 1} {label}", train_s=train, seconds=wall)
                print(f"run {repeat + 1} {label}: wall {wall:.1f} s", flush=True)
    models = 2 * args.rounds
    medians = {
        label: (
            statistics.median(w for w, _ in runs),
            statistics.median(t for _, t in runs),
        )
        for label, runs in times.items()
    }
    for label, (wall, train) in medians.items():
        table.add(
            f"median {label}",
            train_s=train,
            ms_a_model=1000 * train / models,
            seconds=wall,
        )
    ratios = {
        "wall": medians["after"][0] / medians["before"][0],
        "train": medians["after"][1] / medians["before"][1],
    }
    table.finish(
        title="seconds: wall time of the audit; train_s: its timing.train_seconds",
        formats={"train_s": ".1f", "ms_a_model": ".2f", "seconds": ".1f"},
        after_over_before=ratios,
    )
    print(f"after / before: wall {ratios['wall']:.2f}x, train {ratios['train']:.2f}x")


if __name__ == "__main__":
    main()
