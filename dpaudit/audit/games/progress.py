"""The audit's one kind of progress display."""

from __future__ import annotations

from typing import Any


def progress_bar(
    desc: str, total: int, *, unit: str, enabled: bool, initial: int = 0
) -> Any:
    """The audit's one kind of progress display: a tqdm bar, disabled (it prints
    nothing) unless ``enabled``. The training bar of
    :func:`dpaudit.audit.run.run_audit` and the selection and analysis bars all use
    it. ``tqdm.auto``: a widget in a Jupyter notebook (where ipywidgets is
    installed), text on stderr elsewhere; the callers enable it only in a notebook
    or on a terminal, never on a pipe."""
    import warnings

    with warnings.catch_warnings():
        # tqdm.auto warns once that a notebook lacks ipywidgets, then shows text.
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm

    return tqdm(
        total=total,
        initial=initial,
        unit=unit,
        desc=desc,
        disable=not enabled,
        file=None,
    )
