"""The exact test's cost in the default audit's analysis (dpaudit/audit/stats/exact.py,
stats.py): CPU seconds and the traced peak of the calls one default audit makes
(PATE-GAN's claim, an RDP curve at 100 orders; 400 + 400 test rounds; two attacks at
alpha 0.05 / 2), on fresh process caches.

The claim is PATE-GAN's kind as the default audit states it (epsilon 0.9984 at delta
1e-5; RDP epsilon 0.030464 lambda at orders 2..101). The calls: the claim's
calibrated level and rejection set, the eps and mu families with both attacks'
figures and the attainable maxima, the rounds a perfect attack needs, and the small
sizes the profile's rounds search visits. CPU seconds (``time.process_time``) are
steadier than wall time on a shared machine; each repeat clears the caches; the
peak of the memory the calls allocate (``tracemalloc``) is taken on one more run.

    PYTHONPATH=. python benchmarks/exact_cost.py              # 400 + 400, 3 repeats
    PYTHONPATH=. python benchmarks/exact_cost.py --smoke      # 40 + 40, once
"""

from __future__ import annotations

import time
import tracemalloc

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


def analysis(n: int, alpha: float) -> None:
    """The exact test's calls of one default audit with ``n`` + ``n`` test rounds."""
    delta = CLAIM.delta
    for fp, fn in ((n - 6, 2), (1, n - 2)):  # the two attacks' test errors
        stats.deciding_level(CLAIM, n, n, alpha=alpha, delta=delta)
        stats.deciding_counts(CLAIM, n, n, alpha=alpha, delta=delta)
        stats.judge(fp, n, fn, n, delta=delta, alpha=alpha, profile=CLAIM)
    stats.judge(0, n, 0, n, delta=delta, alpha=alpha, profile=CLAIM)
    stats.rounds_needed(eps_claimed=CLAIM.epsilon, delta=delta, alpha=alpha)
    for small in (8, 4, 2, 3):
        stats.refutes_perfectly(CLAIM, small, small, alpha=alpha, delta=delta)


def main() -> None:
    made = harness.parser(__doc__)
    made.add_argument("--rounds", type=int, default=None, help="test rounds per world")
    made.add_argument("--repeats", type=int, default=None, help="runs (fresh caches)")
    args = harness.parse(made, smoke={"rounds": 40, "repeats": 1})
    n = args.rounds or 400
    rows = harness.Rows("exact_cost", args)
    # SciPy's modules load once per process (the audit loads them before): not timed.
    import scipy.special
    import scipy.stats  # noqa: F401

    for repeat in range(args.repeats or 3):
        stats.clear_caches()
        started = time.process_time()
        analysis(n, 0.05 / 2)
        cpu = time.process_time() - started
        rows.add(f"repeat {repeat}", test_rounds=n, cpu_seconds=cpu)
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
