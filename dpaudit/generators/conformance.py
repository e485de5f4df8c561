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
  claimed ``(epsilon, delta)``;
* ``sample-rows``: ``sample(n)`` returns exactly ``n`` rows;
* ``sample-columns``: the release has the domain's columns, in order, with the dtypes
  the domain implies;
* ``sample-in-domain``: every released value lies in the public domain;
* ``same-seeds``: the same ``seed`` and ``public_seed`` give the same release and claim;
* ``seeds-matter``: other seeds give another release where the mechanism is random;
* ``input-unchanged``: ``fit`` leaves its table (and the domain) as it got them;
* ``transcript``: a stated ``privacy_transcript`` follows the protocol, its cells in
  the domain;
* ``canary-column``: a fit on the one-run game's table with the ``canary`` column
  (``worst-case`` canaries) releases that column inside the domain.

A check passes, fails with the reason, or is skipped with why (a check that needs a
fitted model after the first fit failed; a profile or transcript not stated).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from dpaudit.data import Dataset, Domain, load_dataset
from dpaudit.datasets.names import WORST_CASE_NAMES
from dpaudit.errors import AuditError, DataError
from dpaudit.generators.base import PROFILE_KEYS, PrivacyClaim, profile_problem
from dpaudit.generators.foreign.generator import AdapterError, ForeignGenerator
from dpaudit.generators.foreign.options import DEFAULT_FIT_TIMEOUT, WorkerOptions
from dpaudit.generators.registry import GeneratorSpec, audit_options, get_spec
from dpaudit.rng import Rngs

__all__ = [
    "CHECKS",
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

Status = Literal["passed", "failed", "skipped"]

SEED_TRIES = 20
"""Rounds of other seeds ``seeds-matter`` tries before it looks at the data: a
mechanism whose release takes two values with probabilities ``p`` and ``1 - p``
gives ``SEED_TRIES`` equal releases with probability ``p^19 + (1-p)^19`` after the
first (randomized response at epsilon 1: 0.3%)."""
CHECK_ITERATIONS = 3
"""The training iterations of a generator with an iteration option
(``AuditDefaults.iteration_option``, PATE-GAN's and G-PATE's ``max_iterations``)
unless the options set it: the checks test the contract, not the trained model, and
a check run takes seconds."""
CANARIES = 8
"""Canaries of the ``canary-column`` check's table (each a value of ``canary``)."""
RELATIVE_SLACK = 1e-6
"""``claim-profile``: the claimed epsilon may undercut the profile's by this much
(rounding in the plug-in's own conversion)."""
_ZCDP_ORDERS = 1.0 + np.logspace(-2.0, 4.0, 601)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome: ``passed``, ``failed`` (``reason``: what is wrong) or
    ``skipped`` (``reason``: why it did not run)."""

    check: str
    status: Status
    reason: str

    def line(self) -> str:
        """The line ``dpaudit check-generator`` prints."""
        return f"{self.status:<7}  {self.check}: {self.reason}"


class CheckFailed(Exception):
    """Raised by a check: the generator breaks the contract (the message says how)."""


class CheckSkipped(Exception):
    """Raised by a check that cannot run (the message says why)."""


@dataclass(kw_only=True)
class Subject:
    """The generator under check and the settings of its fits.

    Attributes:
        name: a built-in, an adapter, an entry point or ``module:Class``.
        epsilon, delta: the budget it is built with.
        options: the user's generator options (the audit's defaults are added per
            table, as an audit adds them: :func:`~dpaudit.generators.registry.audit_options`).
        dataset: the small table the checks fit.
        worker: the foreign worker's settings (interpreter, time and memory limits).
        seed: the root seed of every stream the checks draw.
    """

    name: str
    epsilon: float
    delta: float
    options: Mapping[str, Any]
    dataset: Dataset
    worker: WorkerOptions = field(default_factory=WorkerOptions)
    seed: int = 0

    def __post_init__(self) -> None:
        self.spec: GeneratorSpec = get_spec(self.name)

    @property
    def foreign(self) -> bool:
        """Whether the generator runs in a foreign worker (plug-ins and adapters)."""
        return self.spec.plugin

    @property
    def fit_timeout(self) -> float | None:
        return self.worker.fit_timeout

    def build(self, rows: int) -> Any:
        """A new generator, with the options an audit on ``rows`` rows gives it.

        Raises:
            AuditError: a bad option, or a plug-in that cannot be loaded (bad input,
                before any check).
        """
        options = dict(self.options)
        capped = self.spec.audit.iteration_option
        if capped is not None:
            options.setdefault(capped, CHECK_ITERATIONS)
        options = audit_options(
            self.name,
            options,
            n_rows=rows,
            worst_case=self.dataset.name in WORST_CASE_NAMES,
            epsilon=self.epsilon,
            delta=self.delta,
            device=None,
            variant=None,
            bugs=(),
        )
        generator = self.spec.make_factory(worker=self.worker)(
            epsilon=self.epsilon, delta=self.delta, **options
        )
        if isinstance(generator, ForeignGenerator):
            generator.check_input = True
        return generator


@dataclass
class Fit:
    """A fitted generator, its fit's wall time and what the fit changed."""

    generator: Any
    seconds: float
    claim: PrivacyClaim
    input_change: str | None


def _streams(seed: int, index: int) -> tuple[Rngs, Rngs, Rngs]:
    """Round ``index``'s streams: ``(fit, sample, public)``, children of ``seed``."""
    fit, sample, public = Rngs.from_seed(seed).spawn(SEED_TRIES + 2)[index].spawn(3)
    return fit, sample, public


def _frame_change(before: pd.DataFrame, after: Any) -> str | None:
    """What differs between a table and the same table after a call, or None."""
    if not isinstance(after, pd.DataFrame):
        return "its table is no longer a DataFrame"
    if list(after.columns) != list(before.columns):
        return f"the table's columns, {list(before.columns)} -> {list(after.columns)}"
    if len(after) != len(before) or not after.index.equals(before.index):
        return f"the table's rows ({len(before)} -> {len(after)}) or its index"
    for name in before.columns:
        if after[name].dtype != before[name].dtype:
            return (
                f"the dtype of column {name!r}, {before[name].dtype} -> "
                f"{after[name].dtype}"
            )
        if not after[name].equals(before[name]):
            return f"values of column {name!r}"
    return None


def _difference(a: pd.DataFrame, b: pd.DataFrame) -> str | None:
    """Where two releases first differ, or None when they are equal."""
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return f"shapes {a.shape} and {b.shape}"
    for name in a.columns:
        x, y = a[name], b[name]
        if x.equals(y):
            continue
        if x.dtype != y.dtype:
            return f"column {name!r}: dtypes {x.dtype} and {y.dtype}"
        unequal = np.flatnonzero((x != y).to_numpy() & ~(x.isna() & y.isna()))
        row = int(unequal[0]) if unequal.size else 0
        return f"column {name!r}, row {row}: {x.iloc[row]!r} and {y.iloc[row]!r}"
    return None


class Checker:
    """Runs the checks on one :class:`Subject`, sharing its first fit and release.

    Each check (``check_*``) takes the checker and returns the reason it passed, or
    raises :class:`CheckFailed` or :class:`CheckSkipped`; :meth:`run` turns that
    into a :class:`CheckResult`.
    """

    def __init__(self, subject: Subject) -> None:
        self.subject = subject
        self._first: Fit | None = None
        self._first_error: Exception | None = None
        self._first_seconds = self._last_seconds = 0.0
        self._release: pd.DataFrame | None = None

    @property
    def train(self) -> pd.DataFrame:
        return self.subject.dataset.train

    @property
    def domain(self) -> Domain:
        return self.subject.dataset.domain

    # -- fits and releases --------------------------------------------------------

    def fit(self, data: pd.DataFrame, domain: Domain, index: int) -> Fit:
        """A new generator fitted on a copy of ``data`` with round ``index``'s
        streams (the privacy and the public one, as an audit with a fixed public
        stream passes them); its claim read, and what the fit changed in its
        table (a foreign worker compares its own copy)."""
        fit_rng, _, public_rng = _streams(self.subject.seed, index)
        generator = self.subject.build(len(data))
        given = data.copy(deep=True)
        started = time.perf_counter()
        try:
            generator.fit(given, domain=domain, rng=fit_rng, public_rng=public_rng)
        finally:
            self._last_seconds = time.perf_counter() - started
        change = (
            generator.input_changed_
            if isinstance(generator, ForeignGenerator)
            else _frame_change(data, given)
        )
        return Fit(generator, self._last_seconds, generator.privacy_claim_, change)

    def sample(self, fit: Fit, n: int, index: int) -> pd.DataFrame:
        """``n`` rows from ``fit`` with round ``index``'s streams, as the generator
        returned them (a foreign generator's release unchecked: the checks here
        check it)."""
        _, sample_rng, public_rng = _streams(self.subject.seed, index)
        kwargs: dict[str, Any] = {"rng": sample_rng, "public_rng": public_rng}
        if isinstance(fit.generator, ForeignGenerator):
            kwargs["checked"] = False
        out: pd.DataFrame = fit.generator.sample(n, **kwargs)
        return out

    def first(self) -> Fit:
        """The first fit (round 0 on the table), made once.

        Raises:
            CheckSkipped: it failed (``fit-in-time`` or ``claim`` says how).
        """
        if self._first is None and self._first_error is None:
            try:
                self._first = self.fit(self.train, self.domain, 0)
            except (AuditError, AdapterError) as err:
                self._first_error = err
            except Exception as err:
                self._first_error = RuntimeError(f"{type(err).__name__}: {err}")
            self._first_seconds = self._last_seconds
        if self._first is None:
            raise CheckSkipped("the first fit failed (see fit-in-time or claim)")
        return self._first

    def release(self) -> pd.DataFrame:
        """The first fit's release of as many rows as the table, made once.

        Raises:
            CheckSkipped: no first fit, or the release is not a DataFrame of the
                rows asked for (``sample-rows`` says so).
        """
        if self._release is None:
            fit = self.first()
            try:
                out = self.sample(fit, len(self.train), 0)
            except (AuditError, AdapterError) as err:
                raise CheckSkipped(f"the first sample failed: {err}") from None
            if not isinstance(out, pd.DataFrame):
                raise CheckSkipped(
                    f"sample returned a {type(out).__name__}, not a DataFrame"
                )
            self._release = out
        return self._release

    # -- running ------------------------------------------------------------------

    def run(self, name: str, check: Callable[[Checker], str]) -> CheckResult:
        """Runs one check; an error the generator raised fails it, with its message."""
        try:
            return CheckResult(name, "passed", check(self))
        except CheckFailed as err:
            return CheckResult(name, "failed", _one_line(err))
        except CheckSkipped as err:
            return CheckResult(name, "skipped", _one_line(err))
        except (AuditError, AdapterError) as err:
            return CheckResult(name, "failed", _one_line(err))
        except Exception as err:
            return CheckResult(
                name, "failed", f"raised {type(err).__name__}: {_one_line(err)}"
            )


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def _claim_error(err: Exception | None) -> bool:
    return err is not None and "privacy_claim" in str(err)


# -- the checks ---------------------------------------------------------------------


def check_fit_in_time(c: Checker) -> str:
    """A fit on the table finishes within ``--fit-timeout`` (a foreign worker is
    stopped there: its error fails this check)."""
    limit = c.subject.fit_timeout
    try:
        c.first()
    except CheckSkipped:
        if not _claim_error(c._first_error):
            raise CheckFailed(_one_line(c._first_error or RuntimeError())) from None
    seconds = c._first_seconds
    if limit is not None and seconds > limit:
        raise CheckFailed(
            f"the fit took {seconds:.1f} s, above the declared {limit:g} s "
            "(--fit-timeout)"
        )
    where = "no limit" if limit is None else f"limit {limit:g} s, --fit-timeout"
    return f"fitted {len(c.train)} rows in {seconds:.2f} s ({where})"


def check_claim(c: Checker) -> str:
    """``privacy_claim`` after ``fit``: ``epsilon`` a finite number >= 0, ``delta`` in
    [0, 1), ``accountant`` a name, ``iterations`` an integer >= 0 or absent, the
    profile keys valid (docs/plugins.md, "What dpaudit checks")."""
    if _claim_error(c._first_error):
        raise CheckFailed(_one_line(c._first_error or RuntimeError()))
    claim = c.first().claim
    problems = []
    if not (math.isfinite(claim.epsilon) and claim.epsilon >= 0):
        problems.append(f"epsilon {claim.epsilon!r} is not a finite number >= 0")
    if not 0 <= claim.delta < 1:
        problems.append(f"delta {claim.delta!r} is not in [0, 1)")
    if not (isinstance(claim.accountant, str) and claim.accountant.strip()):
        problems.append(f"accountant {claim.accountant!r} is not a name")
    if claim.iterations is not None and not (
        isinstance(claim.iterations, int) and claim.iterations >= 0
    ):
        problems.append(f"iterations {claim.iterations!r} is not an integer >= 0")
    stated = claim.to_json()
    for key in PROFILE_KEYS:
        problem = profile_problem(key, stated.get(key))
        if problem is not None:
            problems.append(f"{key} {problem}")
    if problems:
        raise CheckFailed("the claim's " + "; ".join(problems))
    return (
        f"epsilon {claim.epsilon:g}, delta {claim.delta:g}, accountant "
        f"{claim.accountant!r}"
    )


def _gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon with ``mu``-GDP's ``delta(epsilon) <= delta`` (bisection:
    ``delta(epsilon)`` decreases)."""
    from dpaudit.generators.zoo import gdp_delta

    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    low, high = 0.0, 1.0
    while gdp_delta(high, mu) > delta:
        low, high = high, 2.0 * high
    for _ in range(200):
        mid = (low + high) / 2.0
        if gdp_delta(mid, mu) > delta:
            low = mid
        else:
            high = mid
    return high


def _zcdp_epsilon(rho: float, delta: float) -> float:
    """The epsilon at ``delta`` of ``rho``-zCDP: the improved RDP conversion of
    RDP ``rho * a`` minimised over the order ``a`` (on :data:`_ZCDP_ORDERS`, then
    refined between the best order's neighbours; Canonne, Kamath, Steinke 2020)."""
    from scipy.optimize import minimize_scalar

    from dpaudit.generators.accountants.conversion import epsilon_per_order

    def at(order: float) -> float:
        eps = epsilon_per_order([rho * order], delta=delta, orders=[order])
        return float(eps[0])

    grid = epsilon_per_order(rho * _ZCDP_ORDERS, delta=delta, orders=_ZCDP_ORDERS)
    best = int(np.argmin(grid))
    low = _ZCDP_ORDERS[max(best - 1, 0)]
    high = _ZCDP_ORDERS[min(best + 1, _ZCDP_ORDERS.size - 1)]
    found = minimize_scalar(
        at, bounds=(float(low), float(high)), method="bounded", options={"xatol": 1e-12}
    )
    return max(min(float(grid[best]), float(found.fun)), 0.0)


def implied_epsilon(claim: PrivacyClaim) -> dict[str, float]:
    """The epsilon at the claim's delta (> 0) that each stated profile part implies:
    ``gdp`` exactly (Dong, Roth, Su 2022), ``zcdp`` and ``rdp`` through the RDP
    conversion of Balle et al. 2020 (``zcdp``: RDP ``rho * a`` minimised over the
    order; ``rdp``: at the stated orders).

    >>> round(implied_epsilon(PrivacyClaim(epsilon=1.0, delta=1e-5,
    ...     accountant="x", gdp_mu=0.5))["gdp"], 4)
    1.9931
    """
    from dpaudit.generators.accountants.conversion import epsilon_from_rdp

    delta = claim.delta
    out: dict[str, float] = {}
    if claim.gdp_mu is not None:
        out["gdp"] = _gdp_epsilon(claim.gdp_mu, delta)
    if claim.zcdp_rho is not None:
        out["zcdp"] = _zcdp_epsilon(claim.zcdp_rho, delta)
    if claim.rdp is not None:
        out["rdp"] = float(
            epsilon_from_rdp(
                list(claim.rdp.epsilons), delta=delta, orders=list(claim.rdp.orders)
            )
        )
    return out


def check_claim_profile(c: Checker) -> str:
    """A stated profile implies the claimed point: at the claimed delta, the claimed
    epsilon is at least the smallest epsilon any stated part implies
    (:func:`implied_epsilon`). A point stronger than its own profile gives is not
    what the accountant computed (a profile in other units, a conversion that
    undercounts)."""
    claim = c.first().claim
    stated = [k for k in ("gdp_mu", "zcdp_rho", "rdp") if getattr(claim, k) is not None]
    if not stated:
        raise CheckSkipped("the claim states no profile (gdp_mu, zcdp_rho, rdp)")
    if claim.delta == 0:
        raise CheckSkipped(
            f"the claim is pure (delta 0), which no {', '.join(stated)} implies: "
            "the audit tests each part on its own"
        )
    implied = implied_epsilon(claim)
    best = min(implied, key=implied.__getitem__)
    parts = ", ".join(f"{k} {v:.4g}" for k, v in implied.items())
    if claim.epsilon < implied[best] * (1.0 - RELATIVE_SLACK) - 1e-12:
        raise CheckFailed(
            f"the claimed epsilon {claim.epsilon:.4g} at delta {claim.delta:g} is below "
            f"what the stated profile implies ({parts}): state the profile the "
            "claimed epsilon was computed from, or the epsilon it gives"
        )
    return (
        f"epsilon {claim.epsilon:.4g} at delta {claim.delta:g} follows from the "
        f"profile ({parts})"
    )


def _rows_check(out: Any, n: int) -> None:
    if not isinstance(out, pd.DataFrame):
        raise CheckFailed(
            f"sample({n}) returned a {type(out).__name__}, not a DataFrame"
        )
    if len(out) != n:
        raise CheckFailed(f"sample({n}) returned {len(out)} rows, not {n}")


def check_sample_rows(c: Checker) -> str:
    """``sample(n)`` returns exactly ``n`` rows (the table's size, 1, and twice the
    table's size plus 3)."""
    fit = c.first()
    sizes = (len(c.train), 1, 2 * len(c.train) + 3)
    for n in sizes:
        _rows_check(c.sample(fit, n, 0), n)
    return f"sample(n) returned n rows for n = {', '.join(map(str, sizes))}"


def _dtype_problem(kind: str, series: pd.Series) -> str | None:
    dtype = series.dtype
    if kind == "binary" and (
        pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
    ):
        return None
    if kind == "integer" and pd.api.types.is_integer_dtype(dtype):
        return None
    if kind == "continuous" and (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    ):
        return None
    if kind == "categorical":
        return None  # any dtype: its values are checked against the categories
    want = {
        "binary": "an integer (or boolean) dtype",
        "integer": "an integer dtype",
        "continuous": "a numeric dtype",
    }[kind]
    return f"column {series.name!r} ({kind}) has dtype {dtype}, not {want}"


def _columns_check(out: pd.DataFrame, domain: Domain) -> None:
    if list(out.columns) != domain.names:
        raise CheckFailed(
            f"the release's columns are {list(out.columns)}, not the domain's "
            f"{domain.names} in that order"
        )
    for col in domain.columns:
        problem = _dtype_problem(col.kind, out[col.name])
        if problem is not None:
            raise CheckFailed(problem)


def check_sample_columns(c: Checker) -> str:
    """The release has the domain's columns, in order, each with a dtype of its kind
    (binary: integer or boolean; integer: integer; continuous: numeric)."""
    _columns_check(c.release(), c.domain)
    return f"columns {c.domain.names} with dtypes of their kinds"


def _domain_check(out: pd.DataFrame, domain: Domain) -> None:
    try:
        domain.validate(out, name="release", min_rows=0)
    except DataError as err:
        raise CheckFailed(f"released data outside the public domain: {err}") from None


def check_sample_in_domain(c: Checker) -> str:
    """Every released value lies in the public domain (categories, bounds, 0 and 1,
    integers; no missing value)."""
    _domain_check(c.release(), c.domain)
    return f"all {len(c.release())} released rows inside the public domain"


def _core(claim: PrivacyClaim) -> dict[str, Any]:
    """The claim's fields the audit reads (not ``extra``, ``trace``: what else a
    plug-in reports, such as its fit's time, may differ between equal fits)."""
    out = claim.to_json()
    return {k: out[k] for k in ("epsilon", "delta", "iterations", *PROFILE_KEYS)}


def check_same_seeds(c: Checker) -> str:
    """A second fit and sample with the same ``seed`` and ``public_seed`` (the same
    streams of a built-in) give the same release and the same claim."""
    first, release = c.first(), c.release()
    again = c.fit(c.train, c.domain, 0)
    other = c.sample(again, len(c.train), 0)
    if not isinstance(other, pd.DataFrame):
        raise CheckSkipped("sample did not return a DataFrame (see sample-rows)")
    where = _difference(release, other)
    if where is not None:
        raise CheckFailed(
            "two fits and samples with the same seed and public_seed released "
            f"different tables ({where}): draw every random number from them (or "
            "from global generators, which the worker seeds from `seed`)"
        )
    a, b = _core(first.claim), _core(again.claim)
    keys = [k for k in a if a[k] != b[k]]
    if keys:
        raise CheckFailed(
            f"two fits with the same seeds claimed different {', '.join(keys)}: "
            f"{[a[k] for k in keys]} and {[b[k] for k in keys]}"
        )
    return "the same seeds gave the same release and claim"


def _neighbour(dataset: Dataset) -> pd.DataFrame:
    """A table that neighbours the check's table (add/remove one record): the worst
    case with its target added, any other with its first record again."""
    train = dataset.train
    if dataset.name in WORST_CASE_NAMES:
        from dpaudit.worst_case.datasets import worst_case_target

        extra = worst_case_target(dataset.domain)
    else:
        extra = train.iloc[[0]]
    return pd.concat([train, extra], ignore_index=True)


def check_seeds_matter(c: Checker) -> str:
    """Other seeds give another release where the mechanism is random, on the
    neighbouring table (the table with one record added: :func:`_neighbour`, whose
    distinct record shows randomness a table of equal records hides): up to
    :data:`SEED_TRIES` further rounds of other seeds (``seed`` and ``public_seed``
    both). If all release the first round's table, the mechanism is deterministic:
    it fails when the check's own table under the same first seeds releases another
    table (a deterministic release that tells two neighbours apart is
    (epsilon, delta)-DP for no delta < 1), and is skipped when that too is the same
    (a constant release has no randomness to check)."""
    table = _neighbour(c.subject.dataset)
    n = len(table)
    first = c.sample(c.fit(table, c.domain, 0), n, 0)
    if not isinstance(first, pd.DataFrame):
        raise CheckSkipped("sample did not return a DataFrame (see sample-rows)")
    for index in range(1, SEED_TRIES + 1):
        other = c.sample(c.fit(table, c.domain, index), n, index)
        if not isinstance(other, pd.DataFrame) or _difference(first, other):
            return f"other seeds gave another release (round {index} of {SEED_TRIES})"
    moved = c.sample(c.fit(c.train, c.domain, 0), n, 0)
    if isinstance(moved, pd.DataFrame) and _difference(first, moved) is None:
        raise CheckSkipped(
            f"{SEED_TRIES + 1} seeds and the neighbouring table all gave the same "
            "release: a constant release, nothing random to check"
        )
    raise CheckFailed(
        f"{SEED_TRIES + 1} different seeds gave the same release, but the "
        "neighbouring table (one record fewer) gives another under the same seeds: "
        "the release is a deterministic function of the data, (epsilon, delta)-DP "
        "for no delta < 1; draw the privacy noise from `seed`"
    )


def check_input_unchanged(c: Checker) -> str:
    """``fit`` leaves the table it gets (columns, index, dtypes, values) and, for a
    plug-in, the ``domain`` dict as they were (the worker compares them after
    ``fit``; a built-in's table is compared here)."""
    change = c.first().input_change
    if change is not None:
        raise CheckFailed(
            f"fit changed its input: {change}; work on a copy (`data = data.copy()`)"
        )
    return "fit left its table and domain unchanged"


def check_transcript(c: Checker) -> str:
    """A stated ``privacy_transcript`` follows the protocol (docs/plugins.md, "The
    measurement transcript"): its records' keys, cells in the public domain, one
    noisy answer per cell or set, a noise kind and a scale."""
    if not c.subject.foreign:
        raise CheckSkipped(
            "a built-in generator records its noisy answers for replay, not a "
            "privacy_transcript"
        )
    generator = c.first().generator
    measurements = generator.read_transcript()
    if measurements is None:
        raise CheckSkipped("the generator states no privacy_transcript")
    answers = sum(len(m.noisy) for m in measurements)
    return (
        f"{len(measurements)} measurement records, {answers} noisy answers, cells "
        "in the public domain"
    )


def check_canary_column(c: Checker) -> str:
    """A fit on the one-run game's ``worst-case`` table, with its categorical
    ``canary`` column (one value per canary, ``base`` for the base records; half the
    canaries included), releases that column inside the domain with the other
    columns (docs/onerun.md)."""
    from dpaudit.worst_case.canaries import CANARY_COLUMN, canary_design

    c.first()
    base = max(len(c.train) - 1, 1)
    design = canary_design("worst-case", canaries=CANARIES, base_rows=base)
    included = np.arange(CANARIES) % 2 == 0
    table = design.training_table(included)
    fit = c.fit(table, design.domain, 0)
    out = c.sample(fit, len(table), 0)
    _rows_check(out, len(table))
    _columns_check(out, design.domain)
    _domain_check(out, design.domain)
    shown = sorted(set(out[CANARY_COLUMN].astype(str)) - {"base"})
    return (
        f"fitted {len(table)} rows with {CANARIES} canary values in the domain; "
        f"released {len(out)} rows inside it ({len(shown)} canary values shown)"
    )


CHECKS: tuple[tuple[str, Callable[[Checker], str]], ...] = (
    ("fit-in-time", check_fit_in_time),
    ("claim", check_claim),
    ("claim-profile", check_claim_profile),
    ("sample-rows", check_sample_rows),
    ("sample-columns", check_sample_columns),
    ("sample-in-domain", check_sample_in_domain),
    ("same-seeds", check_same_seeds),
    ("seeds-matter", check_seeds_matter),
    ("input-unchanged", check_input_unchanged),
    ("transcript", check_transcript),
    ("canary-column", check_canary_column),
)
"""Every check, in the order it runs: (name, function)."""


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
