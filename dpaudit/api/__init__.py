"""dpaudit's Python API: the commands as functions, for notebooks and scripts.

:func:`audit` takes exactly the settings of ``dpaudit audit`` and of a policy file's
audit (the keys of :data:`~dpaudit.audit.config.keys.AUDIT_KEYS`, their policy-file
aliases, and ``config`` and ``resume``), checks them the way the command does, runs
the same audit and returns its :class:`~dpaudit.audit.result.model.AuditResult`
(the same ``result.json`` is written). :func:`check` runs a policy file as ``dpaudit
check`` does, :func:`load` reads an audit directory, :func:`fit` trains a generator
once and :func:`to_frame` makes a table of results.

Bad input raises one exception type, :class:`~dpaudit.errors.BadInputError`, whose
message is the line the command prints for the same input (without its ``dpaudit:
error:`` prefix; :attr:`~dpaudit.errors.BadInputError.line` holds the whole line).
Any other failure (out of memory, a full disk, a bug) raises as it is.

Progress: a tqdm bar (``tqdm.auto``: a widget in a notebook where ipywidgets is
installed, text on stderr on a terminal), nothing when stderr is a pipe or a file
outside a notebook, or with ``quiet=True``. Nothing is printed: the result is
returned, and an interrupted audit is reported through :mod:`logging` (logger
``dpaudit``) before the ``KeyboardInterrupt`` is raised again.

Example:
    >>> import dpaudit  # doctest: +SKIP
    >>> r = dpaudit.audit(generator="randomized-response", dataset="worst-case",
    ...                   rounds=100, out="a")  # doctest: +SKIP
    >>> r.verdict, r.eps_emp  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dpaudit.api import commandline
from dpaudit.audit.config import AUDIT_KEYS, FLAG_ONLY
from dpaudit.audit.result.model import AuditResult as TypedResult
from dpaudit.errors import BadInputError

if TYPE_CHECKING:
    import pandas as pd

    from dpaudit.ci.run import CheckReport
    from dpaudit.generators.base import PrivacyClaim

__all__ = [
    "SETTINGS",
    "AuditResult",
    "BadInputError",
    "FitResult",
    "audit",
    "check",
    "fit",
    "load",
    "to_frame",
]

logger = logging.getLogger("dpaudit")

SETTINGS: tuple[str, ...] = (*(key.name for key in AUDIT_KEYS), *FLAG_ONLY)
"""The settings :func:`audit` takes: the keys of ``dpaudit audit`` and of a policy
file's audit (:data:`~dpaudit.audit.config.keys.AUDIT_KEYS`; their aliases, such as
``bugs`` and ``generator_options``, are taken too), then ``config`` (an
``audit.toml``, which the other settings override) and ``resume`` (an audit
directory to continue)."""

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True, slots=True)
class AuditResult(TypedResult):
    """One audit, as the Python API returns it: the audit's typed result
    (:class:`dpaudit.audit.result.model.AuditResult`, the content of
    ``result.json``: ``verdict``, ``eps_emp``, ``mu_emp``, ``claim``, ``power``,
    ``attacks``, ...) with the views a notebook or a script uses."""

    @classmethod
    def of(cls, result: TypedResult) -> AuditResult:
        """``result`` with these views (the same values)."""
        if isinstance(result, cls):
            return result
        return cls(**{f.name: getattr(result, f.name) for f in fields(result)})

    def to_dict(self) -> dict[str, Any]:
        """The ``result.json`` document as a dict (``to_json``)."""
        return self.to_json()

    def to_frame(self) -> pd.DataFrame:
        """This result as a one-row ``pandas.DataFrame``; for several results,
        :func:`to_frame` (the same columns)."""
        return to_frame([self])

    def report(self, path: Path | str, *, format: str = "html") -> Path:
        """Writes this audit's report, as ``dpaudit report DIR --format FORMAT --out
        PATH`` does (``html``, ``md``, ``json`` or ``junit``).

        Returns:
            ``path``.

        Raises:
            BadInputError: an unknown format, or ``path`` is a directory.
        """
        from dpaudit.reports import render, write_atomic
        from dpaudit.validation import require

        with commandline.as_command():
            target = Path(path)
            require(not target.is_dir(), "path", "a file path, not a directory", path)
            text = render([self], format, base=self.directory, compare=False)
            write_atomic(target, text)
            return target

    def _repr_html_(self) -> str:
        """The verdict banner, the numbers and the figures (the epsilon chart, the
        trade-off plot, the ROC curves) for a notebook cell
        (:func:`dpaudit.reports.notebook.render_notebook_html`)."""
        from dpaudit.reports.notebook import render_notebook_html

        return render_notebook_html(self)


# ------------------------------------------------------------------ the API
def audit(*, in_process: bool = False, **settings: Any) -> AuditResult:
    """Runs (or continues) an audit, exactly as ``dpaudit audit`` does, and returns
    its result.

    The settings are the keys of ``dpaudit audit`` and of a policy file's audit
    (:data:`SETTINGS`; ``dataset_rows`` is ``--dataset-rows``): ``generator``,
    ``dataset``, ``epsilon``, ``delta``, ``rounds``, ``game``, ``release``,
    ``attack``, ``seed``, ``out``, ``force``, ...; ``config`` names an
    ``audit.toml`` (the other settings override it) and ``resume`` an audit
    directory to continue. A setting left out, or ``None``, takes the command's
    default. Values are what the policy file takes: ``option={"lam": 0.01}`` (or
    ``["lam=0.01"]``), ``bug=["a", "b"]``, ``split=(0.4, 0.2, 0.4)``,
    ``target_record={"x": 1}``, ``force=True``. They are checked by the command's
    own parser and configuration, so every refusal is the command's line.

    ``generator`` is also a plug-in class, or an instance, following the plug-in
    contract (docs/plugins.md). By default it runs as every plug-in runs: in its
    own worker processes, which import it by its ``module:Class`` name; a class
    defined in a notebook or a script (``__main__``) cannot be imported there and
    is refused. ``in_process=True`` runs it in this process instead, with these
    consequences: a plug-in that crashes, leaks memory or hangs takes this process
    (the notebook's kernel) with it, since ``fit_timeout`` and ``max_memory`` bound
    only worker processes; the threads of ``backend="threading"`` (the default)
    share it (``loky``, ``dask`` and ``python`` are refused); and the audit records
    the generator as ``module:Class`` (``__main__:MyGenerator``), which ``resume``
    continues only with the same class passed again. An instance stands for its
    class and its constructor arguments, read back from its attributes of the same
    names (``epsilon``, ``delta`` and the options); the class is constructed anew
    for every round, as the game requires.

    Progress shows in a notebook or on a terminal (``quiet=True``: none). Ctrl-C
    (``KeyboardInterrupt``) stops the audit as on the command line: its workers are
    stopped, the rounds stored so far are kept (``audit(resume=out)`` continues
    them), a line saying so is logged (logger ``dpaudit``) and the
    ``KeyboardInterrupt`` is raised again.

    Args:
        in_process: run a plug-in class or instance given as ``generator`` in this
            process (see above).
        **settings: the audit's settings.

    Returns:
        The audit's :class:`~dpaudit.audit.result.model.AuditResult`, as written to
        ``out/result.json``.

    Raises:
        BadInputError: bad input; the message is the command's line for it.
    """
    from dpaudit.allocator import keep_freed_memory
    from dpaudit.commands.audit import prepare, stopped_hint

    settings = dict(settings)
    with (
        commandline.as_command(),
        commandline.generator(settings, in_process=in_process),
    ):
        args = commandline.parse(
            commandline.argv("audit", settings, commandline.audit_settings())
        )
        prepared = prepare(args)
        from dpaudit.audit import run_audit, shutdown_workers

        keep_freed_memory()
        try:
            result = run_audit(
                prepared.config,
                out_dir=prepared.where,
                resume=prepared.resume,
                force=prepared.force,
                progress=commandline.show_progress(prepared.quiet),
            )
        except KeyboardInterrupt:
            shutdown_workers()
            hint = stopped_hint(
                prepared.out,
                prepared.where,
                force=prepared.force,
                resume=f"dpaudit.audit(resume={str(prepared.out)!r})",
            )
            logger.warning("dpaudit: interrupted; %s", hint)
            raise
    return AuditResult.of(result)


def load(out_dir: str | Path) -> AuditResult:
    """Reads an audit directory (or its ``result.json``), as ``dpaudit report``
    does: the result with the training traces and the utility result found there.

    Raises:
        BadInputError: no ``result.json`` there, or one that is not a dpaudit
            result.
    """
    from dpaudit.reports.model import load_result

    with commandline.as_command():
        return AuditResult.of(load_result(out_dir))


def check(
    policy: str | Path | Mapping[str, Any],
    *,
    out: str | Path = "dpaudit-check",
    junit: str | Path | None = None,
    summary: str | Path | None = None,
    force: bool = False,
    resume: bool = False,
    quiet: bool = False,
) -> CheckReport:
    """Runs every audit of a policy, as ``dpaudit check --policy POLICY`` does.

    Args:
        policy: the policy file (TOML), or its content as a mapping.
        out: the directory of the audit directories and reports.
        junit: write JUnit XML here; summary: append a Markdown summary here.
        force: start afresh the audits an earlier check left in ``out``.
        resume: continue the unfinished audits an earlier check left in ``out``.
        quiet: no progress (shown in a notebook or on a terminal otherwise).

    Returns:
        The :class:`~dpaudit.ci.run.CheckReport`: ``outcomes`` (one per audit, with
        its ``result``), ``exit_code`` (the command's: 1 a VIOLATION, 0 all
        CONSISTENT, ...) and ``headline``. Each finished audit is logged (logger
        ``dpaudit``).

    Raises:
        BadInputError: a bad policy or output, before any audit runs.
    """
    from dpaudit.ci import load_policy, parse_policy, run_check, write_junit
    from dpaudit.ci import write_summary as append_summary

    with commandline.as_command():
        if force and resume:
            # The command's parser refuses the pair (a mutually exclusive group).
            message = (
                "argument --resume: not allowed with argument --force "
                "(see `dpaudit check --help`)"
            )
            raise BadInputError(message, line=f"dpaudit check: error: {message}")
        loaded = (
            parse_policy(policy)
            if isinstance(policy, Mapping)
            else load_policy(Path(policy))
        )
        files = [
            (flag, Path(path), append)
            for flag, path, append in (
                ("--junit", junit, False),
                ("--summary", summary, True),
            )
            if path is not None
        ]
        report: CheckReport = run_check(
            loaded,
            out_dir=Path(out),
            progress=commandline.show_progress(quiet),
            log=logger.info,
            force=force,
            resume=resume,
            files=files,
        )
        if junit is not None:
            write_junit(report, Path(junit))
        if summary is not None:
            append_summary(report, Path(summary))
        outcomes = tuple(
            o if o.result is None else replace(o, result=AuditResult.of(o.result))
            for o in report.outcomes
        )
        return replace(report, outcomes=outcomes)


@dataclass(frozen=True, kw_only=True, slots=True)
class FitResult:
    """One fit of :func:`fit`.

    Attributes:
        synthetic: the released table.
        claim: the generator's privacy claim.
        generator: the generator's name; dataset: the dataset's.
        seconds: the fit's wall time.
    """

    synthetic: pd.DataFrame
    claim: PrivacyClaim
    generator: str
    dataset: str
    seconds: float


def fit(*, in_process: bool = False, **settings: Any) -> FitResult:
    """Trains a generator once and samples from it, as ``dpaudit fit`` does.

    The settings are ``dpaudit fit``'s: ``generator``, ``variant``, ``bug``,
    ``option``, ``epsilon``, ``delta``, ``device``, ``dataset``, ``domain``,
    ``data_dir``, ``dataset_rows``, ``rows``, ``seed``, ``python``,
    ``fit_timeout``, ``max_memory``; with ``out`` (and ``claim_out``) the CSV (and
    the claim's JSON) are written too. ``generator`` may be a plug-in class or
    instance, as for :func:`audit` (``in_process`` likewise).

    Returns:
        The :class:`FitResult`.

    Raises:
        BadInputError: bad input; the message is the command's line for it.
    """
    from dpaudit.commands.fit import fit_and_sample, write_fitted

    settings = dict(settings)
    kinds = commandline.command_settings("fit")
    kinds.pop("quiet", None)
    written = settings.get("out")
    with (
        commandline.as_command(),
        commandline.generator(settings, in_process=in_process),
    ):
        args = commandline.parse(commandline.argv("fit", settings, kinds))
        args.quiet = True
        fitted = fit_and_sample(args, to_file=written is not None)
        write_fitted(fitted)
        return FitResult(
            synthetic=fitted.synthetic,
            claim=fitted.claim,
            generator=args.generator,
            dataset=fitted.dataset.name,
            seconds=fitted.seconds,
        )


#: The columns of :func:`to_frame`: name -> how it is read from a result.
FRAME_COLUMNS: Mapping[str, Callable[[Any], Any]] = {
    "generator": lambda r: r.label,
    "dataset": lambda r: r.dataset,
    "game": lambda r: r.game,
    "verdict": lambda r: r.verdict.value,
    "eps_emp": lambda r: r.eps_emp,
    "eps_claimed": lambda r: r.eps_claimed,
    "eps_reference": lambda r: r.eps_reference,
    "eps_max_attainable": lambda r: r.eps_max_attainable,
    "mu_emp": lambda r: r.mu_emp,
    "auc": lambda r: r.auc,
    "attack": lambda r: r.attack,
    "delta": lambda r: r.delta,
    "rounds_per_world": lambda r: r.rounds.per_world,
    "seed": lambda r: r.seed,
    "directory": lambda r: None if r.directory is None else str(r.directory),
}


def to_frame(results: Iterable[TypedResult]) -> pd.DataFrame:
    """A table of results, one row each: the generator (with its variant and bugs),
    the dataset, the game, the verdict, ``eps_emp``, the claimed and reference
    epsilons, the attainable maximum, ``mu_emp``, the AUC, the headline attack,
    delta, the rounds per world, the seed and the audit directory
    (:data:`FRAME_COLUMNS`)."""
    import pandas as pd

    rows = [{name: get(r) for name, get in FRAME_COLUMNS.items()} for r in results]
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
