"""The checks of the plug-in contract, each a function of a :class:`Checker` that
returns why it passed, or raises :class:`CheckFailed` or :class:`CheckSkipped`
(:data:`CHECKS` lists them in order; the package's docstring says what each asks).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from dpaudit.data import Dataset, Domain
from dpaudit.datasets.names import WORST_CASE_NAMES
from dpaudit.errors import DataError
from dpaudit.generators.base import PROFILE_KEYS, PrivacyClaim, profile_problem
from dpaudit.generators.conformance.checker import (
    SEED_TRIES,
    Checker,
    CheckFailed,
    CheckSkipped,
    first_difference,
    is_claim_error,
    one_line,
)

CANARIES = 8
"""Canaries of the ``canary-column`` check's table (each a value of ``canary``)."""
RELATIVE_SLACK = 1e-6
"""``claim-profile``: the claimed epsilon may undercut the profile's by this much
(rounding in the plug-in's own conversion) and still follow from it."""
TIGHTER_ACCOUNTANT = 0.5
"""``claim-profile``: a claimed epsilon below what the profile implies, but at least
this fraction of it, passes with a note: an accountant tighter than the RDP
conversion (Opacus's PRV, a PLD accountant) states such a point beside its RDP curve
(synthcity's DPGAN: 0.994 against the curve's 1.131, 12% below). Below half, the two
are not one mechanism's accounting in practice: a profile in other units (``sigma``
for ``mu``, ``rho`` for ``mu``) or a conversion that drops a term."""
_ZCDP_ORDERS = 1.0 + np.logspace(-2.0, 4.0, 601)


def check_fit_in_time(c: Checker) -> str:
    """A fit on the table finishes within ``--fit-timeout`` (a foreign worker is
    stopped there: its error fails this check)."""
    limit = c.subject.fit_timeout
    try:
        c.first()
    except CheckSkipped:
        if not is_claim_error(c.first_error):
            raise CheckFailed(one_line(c.first_error or RuntimeError())) from None
    seconds = c.first_seconds
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
    if is_claim_error(c.first_error):
        raise CheckFailed(one_line(c.first_error or RuntimeError()))
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
    """A stated profile agrees with the claimed point: at the claimed delta, the
    claimed epsilon is at least the smallest epsilon any stated part implies
    (:func:`implied_epsilon`), or (an accountant tighter than those conversions) at
    least :data:`TIGHTER_ACCOUNTANT` of it. Below that, the point and its profile
    are not one accounting (a profile in other units, a conversion that undercounts).
    A pure claim (delta 0) is skipped: no GDP, zCDP or finite-order RDP statement
    implies delta 0, and the audit tests each part on its own."""
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
    best = min(implied.values())
    parts = ", ".join(f"{k} {v:.4g}" for k, v in implied.items())
    point = f"the claimed epsilon {claim.epsilon:.4g} at delta {claim.delta:g}"
    if claim.epsilon >= best * (1.0 - RELATIVE_SLACK) - 1e-12:
        return f"{point} follows from the profile ({parts})"
    if claim.epsilon >= TIGHTER_ACCOUNTANT * best:
        return (
            f"{point} is {1 - claim.epsilon / best:.0%} below what the profile "
            f"implies ({parts}): an accountant tighter than these conversions "
            "(PRV, PLD) gives that; the audit tests each part"
        )
    raise CheckFailed(
        f"{point} is less than half what the stated profile implies ({parts}): "
        "not one accounting (a profile in other units, such as sigma for mu?); "
        "state the profile the claimed epsilon was computed from"
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
    _rows_check(c.raw_release(), sizes[0])  # shared with the other checks
    for n in sizes[1:]:
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
    where = first_difference(release, other)
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
    table, twice the same (a deterministic release that tells two neighbours apart
    is (epsilon, delta)-DP for no delta < 1), and is skipped when that too is the
    same (a constant release has no randomness to check) or when the two differ
    (randomness the seeds do not reach: pac-synth's own generator)."""
    table = _neighbour(c.subject.dataset)
    n = len(table)
    first = c.sample(c.fit(table, c.domain, 0), n, 0)
    if not isinstance(first, pd.DataFrame):
        raise CheckSkipped("sample did not return a DataFrame (see sample-rows)")
    for index in range(1, SEED_TRIES + 1):
        other = c.sample(c.fit(table, c.domain, index), n, index)
        if not isinstance(other, pd.DataFrame) or first_difference(first, other):
            return f"other seeds gave another release (round {index} of {SEED_TRIES})"
    moved = c.sample(c.fit(c.train, c.domain, 0), n, 0)
    if isinstance(moved, pd.DataFrame) and first_difference(first, moved) is None:
        raise CheckSkipped(
            f"{SEED_TRIES + 1} seeds and the neighbouring table all gave the same "
            "release: a constant release, nothing random to check"
        )
    again = c.sample(c.fit(c.train, c.domain, 0), n, 0)
    if not isinstance(again, pd.DataFrame) or first_difference(moved, again):
        raise CheckSkipped(
            f"{SEED_TRIES + 1} seeds gave the same release, and the same seeds on the "
            "other table gave two different ones: randomness the seeds do not reach "
            "(same-seeds says so where it shows), too rare here to tell from the data"
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
    base = len(c.train)  # as the one-run game: --dataset-rows N gives N - 1
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
