"""The checks' machinery: the generator under check (:class:`Subject`), its fits
and releases shared between the checks (:class:`Checker`), and their outcomes
(:class:`CheckResult`). The checks themselves are in
:mod:`dpaudit.generators.conformance.checks`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from dpaudit.data import Dataset, Domain
from dpaudit.datasets.names import WORST_CASE_NAMES
from dpaudit.errors import AuditError
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.foreign.generator import AdapterError, ForeignGenerator
from dpaudit.generators.foreign.options import WorkerOptions
from dpaudit.generators.registry import GeneratorSpec, audit_options, get_spec
from dpaudit.rng import Rngs

Status = Literal["passed", "failed", "skipped"]

SEED_TRIES = 20
"""Rounds of other seeds ``seeds-matter`` tries before it looks at the data: a
mechanism whose release takes two values with probabilities ``p`` and ``1 - p``
gives ``SEED_TRIES + 1`` equal releases with probability ``p^21 + (1-p)^21``
(randomized response at epsilon 1, ``p = 0.731``: 0.14%)."""
CHECK_ITERATIONS = 3
"""The training iterations of a generator with an iteration option
(``AuditDefaults.iteration_option``, PATE-GAN's and G-PATE's ``max_iterations``)
unless the options set it: the checks test the contract, not the trained model, and
a check run takes seconds."""


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


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds (for messages)."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value


def first_difference(a: pd.DataFrame, b: pd.DataFrame) -> str | None:
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
        left, right = (_plain(v.iloc[row]) for v in (x, y))
        return f"column {name!r}, row {row}: {left!r} and {right!r}"
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
        self._raw: Any = None

    @property
    def first_error(self) -> Exception | None:
        """Why the first fit failed (None: it did not, or has not run)."""
        return self._first_error

    @property
    def first_seconds(self) -> float:
        """The first fit's wall seconds (until it failed, where it did)."""
        return self._first_seconds

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

    def raw_release(self) -> Any:
        """The first fit's release of as many rows as the table, as the generator
        returned it, made once (an error the generator raised is raised again)."""
        if self._raw is None:
            self._raw = self.sample(self.first(), len(self.train), 0)
        return self._raw

    def release(self) -> pd.DataFrame:
        """:meth:`raw_release`, for the checks that need a table.

        Raises:
            CheckSkipped: no first fit, sample failed, or the release is not a
                DataFrame (``sample-rows`` says so).
        """
        try:
            out = self.raw_release()
        except (AuditError, AdapterError) as err:
            raise CheckSkipped(f"the first sample failed: {one_line(err)}") from None
        if not isinstance(out, pd.DataFrame):
            raise CheckSkipped(
                f"sample returned a {type(out).__name__}, not a DataFrame"
            )
        return out

    # -- running ------------------------------------------------------------------

    def run(self, name: str, check: Callable[[Checker], str]) -> CheckResult:
        """Runs one check; an error the generator raised fails it, with its message."""
        try:
            return CheckResult(name, "passed", check(self))
        except CheckFailed as err:
            return CheckResult(name, "failed", one_line(err))
        except CheckSkipped as err:
            return CheckResult(name, "skipped", one_line(err))
        except (AuditError, AdapterError) as err:
            return CheckResult(name, "failed", one_line(err))
        except Exception as err:
            return CheckResult(
                name, "failed", f"raised {type(err).__name__}: {one_line(err)}"
            )


def one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def is_claim_error(err: Exception | None) -> bool:
    return err is not None and "privacy_claim" in str(err)
