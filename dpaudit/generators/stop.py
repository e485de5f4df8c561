"""A request to stop training, checked between training steps.

dpaudit's batched PyTorch generators (PATE-GAN, G-PATE) train a batch of models as
one tensor program for many iterations; a threaded audit's batch can train for tens
of seconds, and a thread inside torch cannot be interrupted. When the audit stops
(Ctrl-C, SIGTERM, a failure) its main thread calls :func:`requested`, and every
trainer reads the flag once per training step (:func:`training_step`, one iteration
of the algorithm: all teachers', the student's and the generator's updates for every
model of the batch) and raises :class:`TrainingStopped` at the next one. The
interrupted batch's models are discarded (nothing of them was committed), so the audit
stops within about one training step and ``--resume`` trains that batch again from
its own streams.

The check reads a flag and notes the time; it draws nothing, so a run that is never
stopped trains exactly the models it trained before the check existed. The flag is
the process's (threads share it): a stopping audit also stops another audit training
in the same process at that moment. Worker processes (``--backend loky``, ``dask``,
plug-in workers) do not see it; the audit stops those by ending the processes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

_REQUESTED = threading.Event()

#: Per training thread: (monotonic time of its last step check, the length of its
#: last step in seconds). Read to say how long a stop will take.
_STEPS: dict[int, tuple[float, float]] = {}


class TrainingStopped(BaseException):
    """Raised by :func:`training_step` in a trainer once a stop is requested.

    A ``BaseException`` (like ``KeyboardInterrupt``): no handler that turns a
    generator's failure into an error message takes it for one."""

    def __init__(self) -> None:
        super().__init__("training stopped: the audit is stopping")


def training_step() -> None:
    """Called by a trainer before each training step: raises
    :class:`TrainingStopped` when a stop was requested, else notes the step's start
    (no randomness, no per-model work)."""
    if _REQUESTED.is_set():
        raise TrainingStopped()
    now = time.monotonic()
    ident = threading.get_ident()
    last = _STEPS.get(ident)
    _STEPS[ident] = (now, now - last[0] if last is not None else 0.0)


def forget_steps() -> None:
    """Forgets the steps noted so far (a run starting its batches)."""
    _STEPS.clear()


def step_seconds() -> float | None:
    """The longest last step of the threads that noted a step since
    :func:`forget_steps` (about how long a stop takes), or ``None`` when no trainer
    has checked the flag (a generator that does not check it: its batch runs to its
    end)."""
    if not _STEPS:
        return None
    return max(length for _, length in list(_STEPS.values()))


@contextlib.contextmanager
def requested() -> Iterator[None]:
    """Within: every trainer stops at its next training step. The caller waits for
    its training threads inside (the flag is cleared on leaving, for the next run)."""
    _REQUESTED.set()
    try:
        yield
    finally:
        _REQUESTED.clear()
        forget_steps()
