"""``dpaudit check``: privacy regression tests for CI, driven by a policy file.

- :mod:`dpaudit.ci.policy`: the policy file (TOML), its presets and the Bonferroni
  split of its ``alpha``.
- :mod:`dpaudit.ci.run`: running the audits and the exit code (1 a VIOLATION,
  whatever else; 2 bad input; 3 a failed run; 4 an INCONCLUSIVE audit; 0 all
  CONSISTENT).
- :mod:`dpaudit.ci.summary`: JUnit XML and the Markdown step summary.

See docs/ci.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.ci.policy import (
        DEFAULT_ALPHA,
        PRESETS,
        Policy,
        PolicyAudit,
        Preset,
        load_policy,
        parse_policy,
    )
    from dpaudit.ci.run import (
        CheckOutcome,
        CheckReport,
        as_result,
        exit_code_of,
        headline,
        planned_power,
        run_check,
    )
    from dpaudit.ci.summary import (
        junit_text,
        render_check_markdown,
        summary_path,
        write_junit,
        write_summary,
    )

# The package's names are imported on first use (PEP 562, dpaudit.lazy): `dpaudit --help` and the
# parsers import this package, and the audit machinery (torch, pandas, scipy) is
# needed only to run.
_EXPORTS = {
    "dpaudit.ci.policy": (
        "DEFAULT_ALPHA",
        "PRESETS",
        "Policy",
        "PolicyAudit",
        "Preset",
        "load_policy",
        "parse_policy",
    ),
    "dpaudit.ci.run": (
        "CheckOutcome",
        "CheckReport",
        "as_result",
        "exit_code_of",
        "headline",
        "planned_power",
        "run_check",
    ),
    "dpaudit.ci.summary": (
        "junit_text",
        "render_check_markdown",
        "summary_path",
        "write_junit",
        "write_summary",
    ),
}

__all__ = [
    "DEFAULT_ALPHA",
    "PRESETS",
    "CheckOutcome",
    "CheckReport",
    "Policy",
    "PolicyAudit",
    "Preset",
    "as_result",
    "exit_code_of",
    "headline",
    "junit_text",
    "load_policy",
    "parse_policy",
    "planned_power",
    "render_check_markdown",
    "run_check",
    "summary_path",
    "write_junit",
    "write_summary",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
