"""The plug-in contract's checks, run against any generator (``dpaudit check-generator``).

The project's ``check_estimator`` (scikit-learn's name for the same idea): every check
is a named function of a :class:`Checker`, and runs the same way against a built-in
generator (in this process), a user's ``module:Class`` or entry point, and an adapter
of a real library (both in a foreign worker process, under ``--python`` where given):
it goes through the registry's factory, so what it fits is exactly what an audit fits.

The checks (:data:`CHECKS`, in order):

* ``fit-in-time``: a fit on the small table finishes within the declared time
  (``--fit-timeout``; a foreign worker is stopped there);
* ``claim``: ``privacy_claim`` has the keys and ranges the audit needs;
* ``claim-profile``: a stated profile (``gdp_mu``, ``zcdp_rho``, ``rdp``) implies the
  claimed ``(epsilon, delta)`` (or, from a tighter accountant, at least half of it);
* ``sample-rows``: ``sample(n)`` returns exactly ``n`` rows;
* ``sample-columns``: the release has the domain's columns, in order, with the dtypes
  the domain implies;
* ``sample-in-domain``: every released value lies in the public domain;
* ``same-seeds``: the same ``seed`` and ``public_seed`` give the same release and claim;
* ``seeds-matter``: other seeds give another release where the mechanism is random
  (a release that ignores them but tells neighbouring tables apart fails);
* ``input-unchanged``: ``fit`` leaves its table (and the domain) as it got them;
* ``transcript``: a stated ``privacy_transcript`` follows the protocol, its cells in
  the domain;
* ``canary-column``: a fit on the one-run game's table with the ``canary`` column
  (``worst-case`` canaries) releases that column inside the domain.

A check passes, fails with the reason, or is skipped with why (a check that needs a
fitted model after the first fit failed; a profile or transcript not stated).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dpaudit.data import load_dataset
from dpaudit.generators.conformance.checker import (
    CHECK_ITERATIONS,
    SEED_TRIES,
    Checker,
    CheckFailed,
    CheckResult,
    CheckSkipped,
    Subject,
)
from dpaudit.generators.conformance.checks import (
    CHECKS,
    check_canary_column,
    check_claim,
    check_claim_profile,
    check_fit_in_time,
    check_input_unchanged,
    check_same_seeds,
    check_sample_columns,
    check_sample_in_domain,
    check_sample_rows,
    check_seeds_matter,
    check_transcript,
    implied_epsilon,
)
from dpaudit.generators.foreign.options import DEFAULT_FIT_TIMEOUT, WorkerOptions

__all__ = [
    "CHECKS",
    "CHECK_ITERATIONS",
    "SEED_TRIES",
    "CheckFailed",
    "CheckResult",
    "CheckSkipped",
    "Checker",
    "Subject",
    "check_canary_column",
    "check_claim",
    "check_claim_profile",
    "check_fit_in_time",
    "check_generator",
    "check_input_unchanged",
    "check_same_seeds",
    "check_sample_columns",
    "check_sample_in_domain",
    "check_sample_rows",
    "check_seeds_matter",
    "check_transcript",
    "implied_epsilon",
    "run_checks",
]


def run_checks(
    subject: Subject,
    *,
    only: Sequence[str] | None = None,
    report: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Runs the checks (``only``: those named) on ``subject``, in order; ``report``
    is called with each result as it is known.

    Raises:
        AuditError: the generator cannot be built (an unknown name, a plug-in
            that cannot be imported or breaks the class contract, a bad option):
            bad input, before any check.
    """
    # The generator is built once first: what cannot be built is bad input.
    subject.build(len(subject.dataset.train))
    checker = Checker(subject)
    results = []
    for name, check in CHECKS:
        if only is not None and name not in only:
            continue
        result = checker.run(name, check)
        results.append(result)
        if report is not None:
            report(result)
    return results


def check_generator(
    name: str,
    *,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    options: Mapping[str, Any] | None = None,
    dataset: str = "worst-case",
    rows: int | None = None,
    python: str | None = None,
    fit_timeout: float | None = DEFAULT_FIT_TIMEOUT,
    seed: int = 0,
) -> list[CheckResult]:
    """Every check of :data:`CHECKS` on the generator ``name`` (library use; the
    command is ``dpaudit check-generator``).

    >>> [r.status for r in check_generator("copy")][:2]
    ['passed', 'passed']
    """
    subject = Subject(
        name=name,
        epsilon=epsilon,
        delta=delta,
        options=dict(options or {}),
        dataset=load_dataset(dataset, rows=rows),
        worker=WorkerOptions(python=python, fit_timeout=fit_timeout),
        seed=seed,
    )
    return run_checks(subject)
