"""``dpaudit check``: privacy regression tests for CI, driven by a policy file.

- :mod:`dpaudit.ci.policy`: the policy file (TOML), its presets and the Bonferroni
  split of its ``alpha``.
- :mod:`dpaudit.ci.run`: running the audits and the exit code (0 all CONSISTENT,
  1 a VIOLATION, 2 a failed or INCONCLUSIVE audit).
- :mod:`dpaudit.ci.summary`: JUnit XML and the Markdown step summary.

See docs/ci.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

# The package's names are imported on first use (PEP 562): `dpaudit --help` and the
# parsers import this package, and the audit machinery (torch, pandas, scipy) is
# needed only to run.
_WHERE = {
    'DEFAULT_ALPHA': 'dpaudit.ci.policy',
    'PRESETS': 'dpaudit.ci.policy',
    'Policy': 'dpaudit.ci.policy',
    'PolicyAudit': 'dpaudit.ci.policy',
    'Preset': 'dpaudit.ci.policy',
    'load_policy': 'dpaudit.ci.policy',
    'parse_policy': 'dpaudit.ci.policy',
    'CheckOutcome': 'dpaudit.ci.run',
    'CheckReport': 'dpaudit.ci.run',
    'as_result': 'dpaudit.ci.run',
    'exit_code_of': 'dpaudit.ci.run',
    'planned_power': 'dpaudit.ci.run',
    'run_check': 'dpaudit.ci.run',
    'junit_text': 'dpaudit.ci.summary',
    'render_check_markdown': 'dpaudit.ci.summary',
    'summary_path': 'dpaudit.ci.summary',
    'write_junit': 'dpaudit.ci.summary',
    'write_summary': 'dpaudit.ci.summary',
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


def __getattr__(name: str) -> Any:
    """Imports ``name`` from its module on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
