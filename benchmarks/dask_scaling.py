"""Fits per second of a plug-in audit on Dask process workers, 1 and 2 processes.

Starts a ``distributed.LocalCluster(processes=True, threads_per_worker=1)`` with
``n`` worker processes, runs ``dpaudit``'s audit of a CPU-bound toy plug-in on it
(``backend = "dask"``), and prints the models trained per second of training time;
then the extrapolation to a cluster (docs/scale.md).

    PYTHONPATH=$PWD python benchmarks/dask_scaling.py --rounds 100 --processes 1 2

The toy plug-in's ``fit`` spends about ``--fit-ms`` milliseconds of one core
(matrix products on a 200 x 200 matrix), a stand-in for a real library's fit
(a smartnoise PATE-GAN fit takes 11 to 13 s).

Measured here (2 cores shared with five other jobs, load average 11; the command
above, 50 ms fits):

    1 process(es): 200 fits, train 48.1 s (wall 51.1 s): 4.2 fits/s
    2 process(es): 200 fits, train 55.9 s (wall 58.4 s): 3.6 fits/s

On a machine this loaded a second process finds no free core, so these figures say
nothing about scaling; they bound the per-fit overhead of the Dask path (its process
start, dpaudit's import in each Dask worker, the attacks and the store): at most
about 0.2 s per fit beyond the fit itself. docs/scale.md extrapolates.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

PLUGIN = '''
import time

import numpy as np


class Busy:
    """Burns about FIT_MS ms of one core in fit, then copies its data."""

    FIT_MS = {fit_ms}

    def __init__(self, *, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def fit(self, data, *, domain, seed):
        rng = np.random.default_rng(seed)
        m = rng.random((200, 200))
        end = time.process_time() + self.FIT_MS / 1000
        while time.process_time() < end:
            m = np.tanh(m @ m / 200)
        self.data = data
        self.privacy_claim = {{"epsilon": self.epsilon, "delta": self.delta,
                              "accountant": "busy"}}
        return self

    def sample(self, n, *, seed):
        return self.data.sample(n, replace=True, random_state=seed % 2**32
                                ).reset_index(drop=True)
'''


def fits_per_second(
    processes: int, *, rounds: int, folder: Path
) -> tuple[float, float]:
    """(fits per second of training, training seconds) on ``processes`` workers."""
    import distributed

    from dpaudit.audit.config import AuditConfig
    from dpaudit.audit.run import run_audit

    with distributed.LocalCluster(
        n_workers=processes,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    ) as cluster:
        config = AuditConfig(
            generator="busy_plugin:Busy",
            rounds=rounds,
            attack="querybased",
            backend="dask",
            batch_size=10,
            scheduler=cluster.scheduler_address,
        )
        started = time.perf_counter()
        result = run_audit(config, out_dir=folder / f"p{processes}", force=True)
        wall = time.perf_counter() - started
    train = float(result.timing["train_seconds"])
    print(
        f"{processes} process(es): {2 * rounds} fits, train {train:.1f} s "
        f"(wall {wall:.1f} s): {2 * rounds / train:.1f} fits/s",
        flush=True,
    )
    return 2 * rounds / train, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--fit-ms", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "busy_plugin.py").write_text(PLUGIN.format(fit_ms=args.fit_ms))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        sys.path.insert(0, str(folder))
        rates = {
            n: fits_per_second(n, rounds=args.rounds, folder=folder)[0]
            for n in args.processes
        }
    base = rates[min(rates)] / min(rates)
    for n, rate in rates.items():
        print(f"{n} process(es): {rate:.1f} fits/s, {rate / (base * n):.0%} of linear")


if __name__ == "__main__":
    main()
