"""The exact test's cost in the default audit's analysis (dpaudit/audit/stats/exact.py,
levels.py, families.py, calibrated.py, ceiling.py): CPU seconds of the calls one
default audit makes, in its order and per component, and the traced peak, on fresh
process caches.

The claim is PATE-GAN's kind as the default audit states it (epsilon 0.9984 at delta
1e-5; RDP epsilon 0.030464 lambda at orders 2..101); 400 + 400 test rounds; two
attacks at alpha 0.05 / 2. The components, in the audit's order:

- ``deciding_level``: the claim's calibrated level and rejection set (threshold
  choice, both attacks);
- ``families``: the mu family and its table (the threshold choice's expected bound,
  where the claim is out of reach) and the eps family (the attacks' figures);
- ``judge``: both attacks' figures and the perfect attack's (the verdict's
  ``profile_refutable``);
- ``rounds_needed`` and ``profile_rounds_needed``: the power's two searches over
  round counts.

CPU seconds (``time.process_time``) are steadier than wall time on a shared machine;
each repeat clears the caches; the peak of the memory the calls allocate
(``tracemalloc``) is taken on one more run.

The rows ``disk cache, filled`` and ``disk cache, read`` run the same calls with the
disk cache of :mod:`dpaudit.audit.storage.exactcache` in a fresh folder: the first
computes and keeps the calibrations, the second (process caches cleared, as a later
audit's process) reads them back.

    PYTHONPATH=. python benchmarks/exact_cost.py              # 400 + 400, 3 repeats
    PYTHONPATH=. python benchmarks/exact_cost.py --smoke      # 40 + 40, once
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import harness

from dpaudit.audit import stats
from dpaudit.audit.stats import ClaimedProfile

ORDERS = tuple(float(o) for o in range(2, 102))
CLAIM = ClaimedProfile(
    epsilon=0.9984026277526434,
    delta=1e-5,
    rdp_orders=ORDERS,
    rdp_epsilons=tuple(0.030464 * o for o in ORDERS),
)
SPLIT = (0.4, 0.2, 0.4)
COMPONENTS = (
    "deciding_level",
    "families",
    "judge",
    "rounds_needed",
    "profile_rounds_needed",
)


def analysis(n: int, alpha: float) -> dict[str, float]:
    """The exact test's calls of one default audit with ``n`` + ``n`` test rounds;
    returns each component's CPU seconds."""
    delta = CLAIM.delta
    attacks = ((n - 6, 2), (1, n - 2))  # the two attacks' test errors

    def deciding() -> None:
        for _ in attacks:
            stats.deciding_level(CLAIM, n, n, alpha=alpha, delta=delta)
            stats.deciding_counts(CLAIM, n, n, alpha=alpha, delta=delta)

    def families() -> None:
        stats.family("mu", n, n, alpha=alpha, delta=delta).table()
        stats.family("eps", n, n, alpha=alpha, delta=delta)

    def judge() -> None:
        for fp, fn in (*attacks, (0, 0)):
            stats.judge(fp, n, fn, n, delta=delta, alpha=alpha, profile=CLAIM)

    def needed() -> None:
        stats.rounds_needed(
            eps_claimed=CLAIM.epsilon, delta=delta, alpha=alpha, split=SPLIT
        )

    def profile_needed() -> None:
        stats.profile_rounds_needed(CLAIM, alpha=alpha, split=SPLIT)

    calls: tuple[Callable[[], None], ...] = (
        deciding,
        families,
        judge,
        needed,
        profile_needed,
    )
    cpu: dict[str, float] = {}
    for name, call in zip(COMPONENTS, calls):
        started = time.process_time()
        call()
        cpu[name] = time.process_time() - started
    return cpu


def main() -> None:
    made = harness.parser(__doc__)
    made.add_argument("--rounds", type=int, default=None, help="test rounds per world")
    made.add_argument("--repeats", type=int, default=None, help="runs (fresh caches)")
    args = harness.parse(made, smoke={"rounds": 40, "repeats": 1})
    n = args.rounds or 400
    rows = harness.Rows("exact_cost", args)
    # SciPy's modules load once per process (the audit loads them before): not timed.
    import scipy.optimize
    import scipy.special
    import scipy.stats  # noqa: F401

    for repeat in range(args.repeats or 3):
        stats.clear_caches()
        cpu = analysis(n, 0.05 / 2)
        rows.add(
            f"repeat {repeat}",
            test_rounds=n,
            cpu_seconds=sum(cpu.values()),
            **{f"{name}_s": value for name, value in cpu.items()},
        )
    # The disk cache (dpaudit.audit.storage.exactcache): what a later audit of the
    # same claim and size computes, its calibrations read back from a folder.
    from dpaudit.audit.storage import DiskStore

    with tempfile.TemporaryDirectory() as folder:
        stats.use_store(DiskStore(Path(folder)))
        try:
            for label in ("disk cache, filled", "disk cache, read"):
                stats.clear_caches()
                cpu = analysis(n, 0.05 / 2)
                rows.add(
                    label,
                    test_rounds=n,
                    cpu_seconds=sum(cpu.values()),
                    **{f"{name}_s": value for name, value in cpu.items()},
                )
        finally:
            stats.use_store(None)
    # The peak, apart: tracing every allocation slows the run severalfold.
    stats.clear_caches()
    tracemalloc.start()
    analysis(n, 0.05 / 2)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    rows.add("traced peak", test_rounds=n, peak_mib=peak)
    rows.finish()


if __name__ == "__main__":
    main()
