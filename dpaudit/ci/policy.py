"""``dpaudit check``: privacy regression tests for CI, driven by a policy file.

A policy (TOML) lists audits; :func:`run_check` runs each one, writes its audit
directory and HTML report, and decides the exit code: 0 when every audit is
CONSISTENT, 1 when any is a VIOLATION, 2 when the policy is bad or a run fails (an
INCONCLUSIVE audit, which could not produce an estimate, counts as a failed run; a
failed run takes precedence over a violation because the check is then incomplete).

The policy's ``alpha`` is the family-wise false-alarm level: the probability that the
check reports any VIOLATION although every generator keeps its claim. It is split
evenly over the audits (Bonferroni), and each audit gets ``alpha / n_audits`` as its
``alpha``: the total probability that its eps_emp overshoots (each error rate is then
bounded at half that, see :func:`dpaudit.audit.estimators.eps_lower_bound`, and the
runner splits it again over several attacks). The default ``alpha = 0.05`` makes a
one-audit policy identical to ``dpaudit audit``'s default and to the audit study
(upper ends of the two-sided 95% Clopper-Pearson intervals of both rates: eps_emp at
most 4.68 with 400 + 400 test rounds).

Policy format::

    alpha = 0.05            # optional: family-wise false-alarm level, in (0, 0.5)
    preset = "quick"        # optional: fewer rounds, for CI (see PRESETS)

    [defaults]              # optional: keys applied to every audit
    epsilon = 1.0
    delta = 1e-5

    [[audit]]               # one table per audit: any dpaudit audit key
    name = "pategan-synthcity"   # optional: names the test case and the directory
    generator = "pategan"        # or a plug-in "mypkg.module:MyGenerator"
    variant = "synthcity"
    attack = "querybased"

``target`` may be a TOML table (a record, column -> value): it is passed as the audit
key ``target_record``. ``alpha`` may not appear in ``[defaults]`` or ``[[audit]]``: the
split is the policy's.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from dpaudit.errors import InvalidParameterError

__all__ = [
    "DEFAULT_ALPHA",
    "PRESETS",
    "CheckOutcome",
    "CheckReport",
    "Policy",
    "PolicyAudit",
    "Preset",
    "exit_code_of",
    "load_policy",
    "parse_policy",
    "run_check",
    "write_junit",
    "write_summary",
]

#: Default family-wise false-alarm level of a policy.
DEFAULT_ALPHA = 0.05

Status = Literal["CONSISTENT", "VIOLATION", "INCONCLUSIVE", "ERROR"]
Runner = Callable[..., Mapping[str, Any]]
ConfigFactory = Callable[[Mapping[str, Any]], Any]

_TOP_KEYS = frozenset({"alpha", "preset", "defaults", "audit"})
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True, kw_only=True, slots=True)
class Preset:
    """A named set of audit settings for a purpose (e.g. fast CI runs).

    Attributes:
        name: the preset's name (``preset = "<name>"`` in a policy).
        settings: audit keys applied under every audit's own keys.
        generator_options: per built-in generator, options merged under the audit's
            ``generator_options`` (only for that generator, so a plug-in never
            receives options it does not know).
        description: what the preset trades away.
    """

    name: str
    settings: Mapping[str, Any]
    generator_options: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    description: str = ""


#: The presets a policy may name.
PRESETS: Mapping[str, Preset] = MappingProxyType(
    {
        "quick": Preset(
            name="quick",
            settings=MappingProxyType({"rounds": 200}),
            generator_options=MappingProxyType(
                {"pategan": MappingProxyType({"max_iterations": 50})}
            ),
            description=(
                "200 rounds per world (80 train, 40 validation, 80 test) instead of "
                "1,000, and PATE-GAN capped at 50 training iterations: a worst-case "
                "audit finishes in minutes on 2 CPU cores. The price is power: with "
                "80 + 80 test rounds the largest eps_emp any attack can show is about "
                "3.05 at alpha 0.05 (4.68 with the study's 400 + 400), so claims near "
                "or above it cannot be refuted."
            ),
        )
    }
)


@dataclass(frozen=True, kw_only=True, slots=True)
class PolicyAudit:
    """One audit of a policy.

    Attributes:
        name: a unique name (test-case name and sub-directory).
        settings: the audit keys to run, with preset, defaults and the audit's
            Bonferroni-split ``alpha`` applied.
    """

    name: str
    settings: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class Policy:
    """A parsed policy.

    Attributes:
        alpha: the family-wise false-alarm level over all audits.
        preset: the preset's name, or ``None``.
        audits: the audits, in file order.
        source: where the policy came from (named in messages).
    """

    alpha: float
    preset: str | None
    audits: tuple[PolicyAudit, ...]
    source: str = "policy"

    @property
    def audit_alpha(self) -> float:
        """The ``alpha`` of each audit: ``alpha / len(audits)`` (Bonferroni)."""
        return self.alpha / len(self.audits)


def _fail(source: str, message: str) -> InvalidParameterError:
    return InvalidParameterError(f"{source}: {message}")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "audit"


def _check_alpha(value: Any, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(source, f"`alpha` must be a number in (0, 0.5). Got {value!r}.")
    alpha = float(value)
    if not (0.0 < alpha < 0.5 and math.isfinite(alpha)):
        raise _fail(source, f"`alpha` must be in (0, 0.5). Got {value!r}.")
    return alpha


def _merge_options(
    preset: Preset | None, generator: Any, options: Any, source: str
) -> dict[str, Any] | None:
    if options is not None and not isinstance(options, Mapping):
        raise _fail(source, f"`generator_options` must be a table. Got {options!r}.")
    merged: dict[str, Any] = {}
    if preset is not None and isinstance(generator, str):
        merged.update(preset.generator_options.get(generator, {}))
    merged.update(options or {})
    return merged or None


def parse_policy(mapping: Mapping[str, Any], *, source: str = "policy") -> Policy:
    """Validates a policy given as a mapping (the parsed TOML).

    Args:
        mapping: The policy's top-level table.
        source: Its name in error messages (usually the file path).

    Returns:
        The :class:`Policy`, with each audit's settings merged and its ``alpha`` set.

    Raises:
        InvalidParameterError: Naming ``source``, on an unknown top-level key or
            preset, a bad ``alpha``, no audits, an audit without ``generator``, an
            ``alpha`` inside an audit, or a duplicate or malformed name.
    """
    unknown = sorted(set(mapping) - _TOP_KEYS)
    if unknown:
        raise _fail(
            source,
            f"unknown top-level key(s) {unknown}; allowed: {sorted(_TOP_KEYS)} "
            "(audit settings go in [[audit]] tables or [defaults]).",
        )
    alpha = _check_alpha(mapping.get("alpha", DEFAULT_ALPHA), source)
    preset_name = mapping.get("preset")
    preset = None
    if preset_name is not None:
        if preset_name not in PRESETS:
            raise _fail(
                source,
                f"`preset` must be one of {', '.join(PRESETS)}. Got {preset_name!r}.",
            )
        preset = PRESETS[preset_name]
    defaults = mapping.get("defaults", {})
    if not isinstance(defaults, Mapping):
        raise _fail(source, f"`defaults` must be a table. Got {defaults!r}.")
    tables = mapping.get("audit")
    if isinstance(tables, Mapping):
        tables = [tables]
    if not isinstance(tables, list) or not tables:
        raise _fail(
            source, "a policy needs at least one [[audit]] table (with a `generator`)."
        )
    n = len(tables)
    audit_alpha = alpha / n
    audits: list[PolicyAudit] = []
    names: set[str] = set()
    for i, table in enumerate(tables, start=1):
        where = f"{source}, [[audit]] #{i}"
        if not isinstance(table, Mapping):
            raise _fail(where, f"must be a table. Got {table!r}.")
        if "alpha" in table or "alpha" in defaults:
            raise _fail(
                where,
                "`alpha` is set once, at the top of the policy, and split over the "
                f"audits (Bonferroni: {alpha:g} / {n} = {audit_alpha:g} each); remove "
                "it from [defaults] and [[audit]].",
            )
        settings: dict[str, Any] = dict(preset.settings) if preset else {}
        settings.update(defaults)
        settings.update(table)
        name = settings.pop("name", None)
        generator = settings.get("generator")
        if not isinstance(generator, str) or not generator:
            raise _fail(
                where,
                "`generator` must be set: pategan, gpate or a plug-in "
                f"'module.path:ClassName'. Got {generator!r}.",
            )
        if isinstance(settings.get("target"), Mapping):
            if "target_record" in settings:
                raise _fail(
                    where, "set `target` (a record) or `target_record`, not both."
                )
            settings["target_record"] = dict(settings.pop("target"))
        options = _merge_options(
            preset, generator, settings.get("generator_options"), where
        )
        if options is not None:
            settings["generator_options"] = options
        settings["alpha"] = audit_alpha
        if name is None:
            parts = [
                generator,
                settings.get("variant") or "",
                settings.get("attack") or "",
            ]
            name = f"{i:02d}-" + _slug("-".join(p for p in parts if p))
        if not isinstance(name, str) or not _NAME.match(name):
            raise _fail(
                where,
                "`name` must be letters, digits, '.', '_' or '-' (it names a "
                f"directory). Got {name!r}.",
            )
        if name in names:
            raise _fail(where, f"`name` {name!r} is used twice; names must be unique.")
        names.add(name)
        audits.append(PolicyAudit(name=name, settings=MappingProxyType(settings)))
    return Policy(
        alpha=alpha,
        preset=preset.name if preset else None,
        audits=tuple(audits),
        source=source,
    )


def load_policy(path: Path | str) -> Policy:
    """Reads and validates a policy file (TOML).

    Raises:
        InvalidParameterError: Naming the file, when it cannot be read, is not TOML,
            or is not a valid policy.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            mapping = tomllib.load(handle)
    except FileNotFoundError as err:
        raise InvalidParameterError(
            f"`--policy` must be an existing TOML file. Got {str(path)!r}."
        ) from err
    except OSError as err:
        raise InvalidParameterError(
            f"cannot read {path}: {err.strerror or err}."
        ) from err
    except tomllib.TOMLDecodeError as err:
        raise InvalidParameterError(f"{path} is not valid TOML: {err}.") from err
    return parse_policy(mapping, source=str(path))


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckOutcome:
    """What happened to one audit of the policy.

    Attributes:
        name: the audit's name.
        status: its verdict, or ``ERROR`` when it could not run.
        settings: the settings it ran with.
        out_dir: its audit directory.
        result: the loaded result (``None`` after an error).
        report_path: its HTML report, when written.
        error: what went wrong (an error, or a report that could not be rendered).
        seconds: wall-clock time of the run.
        eps_max_planned: the largest eps_emp its test size can show at its alpha,
            known before the run (``None`` when it could not be computed).
    """

    name: str
    status: Status
    settings: Mapping[str, Any]
    out_dir: Path
    result: Any = None
    report_path: Path | None = None
    error: str | None = None
    seconds: float = 0.0
    eps_max_planned: float | None = None


def exit_code_of(statuses: Sequence[str]) -> int:
    """The exit code of a check from its audits' statuses.

    2 when any audit failed to run or was INCONCLUSIVE (the check is incomplete);
    otherwise 1 when any is a VIOLATION; otherwise 0.

    Example:
        >>> exit_code_of(["CONSISTENT", "VIOLATION"]), exit_code_of(["CONSISTENT"])
        (1, 0)
    """
    if not statuses or any(s in ("ERROR", "INCONCLUSIVE") for s in statuses):
        return 2
    if any(s == "VIOLATION" for s in statuses):
        return 1
    return 0


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckReport:
    """The outcome of a whole check.

    Attributes:
        policy: the policy that ran.
        outcomes: one per audit, in policy order.
        out_dir: the directory holding every audit directory.
    """

    policy: Policy
    outcomes: tuple[CheckOutcome, ...]
    out_dir: Path

    @property
    def exit_code(self) -> int:
        """0 all CONSISTENT, 1 a VIOLATION, 2 a failed or INCONCLUSIVE audit."""
        return exit_code_of([o.status for o in self.outcomes])


def _test_sizes(settings: Mapping[str, Any]) -> tuple[int, int] | None:
    """(non-members, members) among the test rounds, from the game's own plan."""
    try:
        from dpaudit.audit.game import GamePlan

        kwargs: dict[str, Any] = {"rounds": settings.get("rounds", 1000), "seed": 0}
        if settings.get("split") is not None:
            kwargs["split"] = tuple(float(x) for x in settings["split"])
        n0, n1 = GamePlan.create(**kwargs).world_sizes("test")
    except Exception:  # the run itself reports a bad setting
        return None
    return int(n0), int(n1)


def planned_power(settings: Mapping[str, Any]) -> float | None:
    """The largest eps_emp an audit with these settings can show, before running it.

    It is :func:`dpaudit.audit.estimators.eps_max_attainable` of the test split the
    game will use, at the audit's ``alpha`` and ``delta``. ``None`` when the settings
    are invalid (the run reports why).
    """
    sizes = _test_sizes(settings)
    if sizes is None:
        return None
    try:
        from dpaudit.audit.estimators import eps_max_attainable

        return float(
            eps_max_attainable(
                sizes[0],
                sizes[1],
                delta=float(settings.get("delta", 1e-5)),
                alpha=float(settings["alpha"]),
                method=settings.get("estimator", "clopper_pearson"),
            )
        )
    except Exception:  # reported by the run
        return None


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def _load_run_result(out_dir: Path, returned: Mapping[str, Any]) -> Any:
    from dpaudit.reports.model import RESULT_FILE, load_result, result_from_mapping

    if (out_dir / RESULT_FILE).is_file():
        return load_result(out_dir)
    # JSON round trip: the returned dict may hold NumPy scalars.
    doc = json.loads(json.dumps(returned, default=_json_default))
    return result_from_mapping(doc, source=out_dir / RESULT_FILE)


def _write_report(out_dir: Path, result: Any) -> Path:
    from dpaudit.reports import render_html, write_atomic

    return write_atomic(out_dir / "report.html", render_html([result]))


def run_check(
    policy: Policy,
    *,
    out_dir: Path | str,
    runner: Runner | None = None,
    make_config: ConfigFactory | None = None,
    progress: bool = False,
    reports: bool = True,
    log: Callable[[str], None] | None = None,
) -> CheckReport:
    """Runs every audit of ``policy`` and collects the outcomes.

    Every audit's configuration is built first, so a bad key stops the check before
    anything runs. A run that raises is recorded as ``ERROR`` and the check goes on.

    Args:
        policy: The policy.
        out_dir: Where audit directories go (``out_dir/<audit name>/``); a
            comparison report of all audits is written to ``out_dir/report.html``.
        runner: ``run_audit(config, *, out_dir, progress)``; default
            :func:`dpaudit.audit.runner.run_audit`.
        make_config: Builds the runner's config from settings; default
            ``AuditConfig.from_mapping``.
        progress: Show each run's progress bar.
        reports: Write HTML reports.
        log: Called with one line per finished audit.

    Returns:
        The :class:`CheckReport` (its ``exit_code`` is the command's).

    Raises:
        InvalidParameterError: If an audit's settings are invalid (before any run).
    """
    if runner is None or make_config is None:
        from dpaudit.audit.runner import AuditConfig, run_audit

        runner = runner or run_audit
        make_config = make_config or AuditConfig.from_mapping
    root = Path(out_dir)
    configs = []
    for audit in policy.audits:
        try:
            configs.append(make_config(dict(audit.settings)))
        except InvalidParameterError as err:
            raise InvalidParameterError(
                f"{policy.source}, audit {audit.name!r}: {err}"
            ) from err
    outcomes: list[CheckOutcome] = []
    for i, (audit, config) in enumerate(zip(policy.audits, configs), start=1):
        directory = root / audit.name
        planned = planned_power(audit.settings)
        started = time.perf_counter()
        status: Status
        result = None
        report_path = None
        error = None
        try:
            returned = runner(config, out_dir=directory, progress=progress)
            result = _load_run_result(directory, returned)
            status = result.verdict
        except Exception as err:  # recorded; the other audits still run
            status = "ERROR"
            error = f"{type(err).__name__}: {err}"
        seconds = time.perf_counter() - started
        if result is not None and reports:
            try:
                report_path = _write_report(directory, result)
            except Exception as err:  # a report problem does not change the verdict
                error = f"report not written: {type(err).__name__}: {err}"
        outcome = CheckOutcome(
            name=audit.name,
            status=status,
            settings=audit.settings,
            out_dir=directory,
            result=result,
            report_path=report_path,
            error=error,
            seconds=seconds,
            eps_max_planned=planned,
        )
        outcomes.append(outcome)
        if log is not None:
            log(_log_line(i, len(policy.audits), outcome))
    report = CheckReport(policy=policy, outcomes=tuple(outcomes), out_dir=root)
    if reports and len(outcomes) > 1:
        results = [o.result for o in outcomes if o.result is not None]
        if results:
            from dpaudit.reports import render_html, write_atomic

            # A failed comparison leaves the per-audit reports and the summary.
            with contextlib.suppress(Exception):
                write_atomic(
                    root / "report.html", render_html(results, base=root, compare=True)
                )
    return report


def _log_line(i: int, n: int, outcome: CheckOutcome) -> str:
    head = f"[{i}/{n}] {outcome.name}: {outcome.status}"
    r = outcome.result
    if r is not None and r.eps_emp is not None:
        relation = ">" if outcome.status == "VIOLATION" else "<="
        head += (
            f" (eps_emp {r.eps_emp:.2f} {relation} claimed {r.eps_claimed:.3g}; "
            f"max attainable {r.eps_max_attainable or 0:.2f})"
        )
    if outcome.error:
        head += f" — {outcome.error}"
    if outcome.report_path is not None:
        head += f" — report: {outcome.report_path}"
    return head


def junit_text(report: CheckReport) -> str:
    """The check's JUnit XML: one test case per audit."""
    from dpaudit.reports.junit import JunitCase, case_from_result, render_junit

    cases = []
    for o in report.outcomes:
        if o.result is not None:
            case = case_from_result(o.result, name=o.name, report_path=o.report_path)
            cases.append(case)
        else:
            cases.append(
                JunitCase(
                    name=o.name,
                    classname=f"dpaudit.{o.settings.get('generator', 'audit')}",
                    status="error",
                    message=f"the audit did not run: {o.error}",
                    details=f"the audit did not run: {o.error}\n\nsettings: "
                    + json.dumps(dict(o.settings), default=str, sort_keys=True),
                    seconds=o.seconds,
                )
            )
    policy = report.policy
    properties = [
        ("policy", policy.source),
        ("alpha", f"{policy.alpha:g}"),
        ("alpha_per_audit", f"{policy.audit_alpha:g}"),
        ("correction", "bonferroni"),
        ("preset", policy.preset or ""),
        ("exit_code", str(report.exit_code)),
    ]
    return render_junit(cases, suite="dpaudit check", properties=properties)


def write_junit(report: CheckReport, path: Path | str) -> Path:
    """Writes the check's JUnit XML atomically to ``path``."""
    from dpaudit.reports.io import write_atomic

    return write_atomic(path, junit_text(report))


def write_summary(report: CheckReport, path: Path | str) -> Path:
    """Appends the check's Markdown summary to ``path``.

    Appending (not replacing) is what ``$GITHUB_STEP_SUMMARY`` expects: other steps'
    output in the same file is kept.
    """
    from dpaudit.reports.markdown import render_check_markdown

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(render_check_markdown(report))
    return path


def summary_path(explicit: Path | str | None) -> Path | None:
    """``--summary`` if given, else ``$GITHUB_STEP_SUMMARY`` if set, else ``None``."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(env) if env else None
