"""The audit's one kind of progress display, and what a stopping run says at once
(Ctrl-C while batches train in threads)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
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


def stop_text(took: list[float], *, workers: int, step: float | None) -> str:
    """What a Ctrl-C is answered with at once: how the run stops and about how long
    it takes. ``step``: the longest training step measured in the running batches
    (:func:`dpaudit.generators.stop.step_seconds`), ``None`` when the generator does
    not check the stop request (its batches run to their end).

    >>> stop_text([12.0], workers=2, step=1.7)[:70]
    'stopping after the current training step, about 2 s (the running batch'
    >>> "step, under 1 s (" in stop_text([12.0], workers=2, step=0.3)
    True
    >>> stop_text([4.0, 8.0], workers=2, step=None)
    'stopping after the current batch, about 8 s; Ctrl-C again to stop now'
    """
    if step is None:
        wait = f"after the current batch, {batch_wait_text(took, workers=workers)}"
    else:
        seconds = "under 1 s" if round(step) < 1 else f"about {round(step)} s"
        wait = (
            f"after the current training step, {seconds} "
            "(the running batches are discarded)"
        )
    return f"stopping {wait}; Ctrl-C again to stop now"


def batch_wait_text(took: list[float], *, workers: int) -> str:
    """How long the running batches may still take: the mean time between batch
    completions so far times the workers (a batch's own time), ``about N s``.

    >>> batch_wait_text([4.0, 8.0, 12.0], workers=2), batch_wait_text([], workers=2)
    ('about 8 s', 'up to one batch')
    """
    if not took:
        return "up to one batch"
    return f"about {max(1, round(took[-1] / len(took) * workers))} s"


@contextlib.contextmanager
def acknowledged(
    err: BaseException, took: list[float], *, workers: int
) -> Iterator[None]:
    """Within (the wait for the running batches after a Ctrl-C): the stop is said
    at once, with how long the wait may last, and a second Ctrl-C stops now (the
    committed rounds are kept; ``--resume`` continues)."""
    if not isinstance(err, KeyboardInterrupt):
        yield
        return
    from dpaudit.generators import stop

    print(
        f"dpaudit: {stop_text(took, workers=workers, step=stop.step_seconds())}",
        file=sys.stderr,
        flush=True,
    )
    try:
        previous = signal.signal(signal.SIGINT, _stop_now)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_now(signum: int, frame: Any) -> None:
    """A second Ctrl-C: exit at once (130), the committed rounds kept. A thread
    inside torch cannot be stopped, so the process ends without unwinding it."""
    print(
        "dpaudit: stopped now; the rounds committed so far are kept: continue with "
        "dpaudit audit --resume",
        file=sys.stderr,
        flush=True,
    )
    os._exit(130)
