"""The audit's one kind of progress display."""

from __future__ import annotations

from typing import Any


def progress_bar(
    desc: str, total: int, *, unit: str, enabled: bool, initial: int = 0
) -> Any:
    """The audit's one kind of progress display: a tqdm bar on stderr, disabled (it
    prints nothing) unless ``enabled``. The training bar of
    :func:`dpaudit.audit.run.run_audit` and the selection and analysis bars all use
    it."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit=unit,
        desc=desc,
        disable=not enabled,
        file=None,
    )
