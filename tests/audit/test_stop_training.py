"""A stopping audit stops its batched trainers between training steps
(:mod:`dpaudit.generators.stop`): a running PATE-GAN or G-PATE batch is discarded at
its next step instead of training to its end, the store keeps whole batches only, and
the resumed audit's result equals an uninterrupted run's.

The interruption is deterministic: a hook around the step check requests the stop (or
sends the main thread its Ctrl-C) after a given number of steps, never a timer."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit import AuditConfig, run_audit
from dpaudit.audit.games.two_world import game
from dpaudit.audit.games.two_world.rounds import train_batch
from dpaudit.generators import stop

SMALL = {
    "pategan": {"max_iterations": 6},
    "gpate": {"max_iterations": 6, "batch_size": 8},
}


def _config(generator: str = "pategan", **kw: Any) -> AuditConfig:
    settings: dict[str, Any] = dict(
        generator=generator,
        rounds=12,
        jobs=2,
        device="cpu",
        generator_options=SMALL[generator],
    )
    settings.update(kw)
    return AuditConfig(**settings)


@pytest.mark.parametrize("generator", sorted(SMALL))
def test_a_batch_stops_at_the_next_training_step(
    generator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop is requested after the batch's 2nd step: the 3rd step's check raises
    (no further step trains), and nothing of the batch is returned."""
    config_json = json.dumps(_config(generator).to_json(), sort_keys=True)
    real = stop.training_step
    steps: list[int] = []  # one entry per check
    with contextlib.ExitStack() as requested:

        def hook() -> None:
            steps.append(len(steps) + 1)
            if len(steps) == 3:
                requested.enter_context(stop.requested())
            real()

        monkeypatch.setattr(stop, "training_step", hook)
        with pytest.raises(stop.TrainingStopped):
            train_batch(config_json, [0, 1, 2, 3])
    assert len(steps) == 3
    # Left for the next run: no request, and an unhooked batch trains to its end.
    monkeypatch.setattr(stop, "training_step", real)
    assert len(train_batch(config_json, [0, 1])) == 2


def _stored_rounds(out: Path) -> set[int]:
    with sqlite3.connect(f"file:{out / 'audit.sqlite'}?mode=ro", uri=True) as conn:
        return {int(r) for (r,) in conn.execute("SELECT round FROM rounds")}


@pytest.mark.slow
def test_ctrl_c_between_steps_leaves_whole_batches_and_resumes_to_the_same_result(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A threaded PATE-GAN audit (two workers, batches of 128, 128 and 4 models: on
    the CPU a batch is whole training groups of 128) gets its Ctrl-C
    (SIGINT to the main thread) two training steps after its first batch was
    committed. The batch whose thread sent it trains no further step (it waits for
    the stop request, then its check raises), the acknowledgement names the training
    step, the store holds whole batches only, and ``--resume`` gives the
    uninterrupted run's result.json (timing aside)."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    config = _config(rounds=130, attack="distance")
    whole = run_audit(config, out_dir=tmp_path / "whole")

    real_step, real_commit = stop.training_step, game._Output.commit
    committed = threading.Event()
    sent = threading.Event()
    after_commit = [0]
    steps_after_stop: list[str] = []
    lock = threading.Lock()

    def commit(self: Any, rows: list[dict[str, Any]]) -> None:
        real_commit(self, rows)
        committed.set()

    def hook() -> None:
        if sent.is_set() and stop._REQUESTED.is_set():
            steps_after_stop.append(threading.current_thread().name)
        elif committed.is_set():
            with lock:
                after_commit[0] += 1
                send = after_commit[0] == 2 and not sent.is_set()
                if send:
                    sent.set()
            if send:
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
                # The main thread's handler requests the stop; this batch's next
                # check is the first after the request.
                assert stop._REQUESTED.wait(60)
                steps_after_stop.append(threading.current_thread().name)
        real_step()

    monkeypatch.setattr(stop, "training_step", hook)
    monkeypatch.setattr(game._Output, "commit", commit)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    out = tmp_path / "stopped"
    try:
        with pytest.raises(KeyboardInterrupt):
            run_audit(config, out_dir=out)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sent.is_set()
    err = capsys.readouterr().err
    assert "dpaudit: stopping after the current training step, " in err, err
    assert "(the running batches are discarded); Ctrl-C again to stop now" in err
    # Each running batch checked once after the request, and that check raised
    # (the sending batch's among them).
    assert 1 <= len(steps_after_stop) == len(set(steps_after_stop)) <= 2
    assert not stop._REQUESTED.is_set()

    stored = _stored_rounds(out)
    n = 2 * config.rounds
    batches = [set(range(s, min(s + 128, n))) for s in range(0, n, 128)]
    assert 0 < len(stored) < n
    assert all(b <= stored or not b & stored for b in batches), sorted(stored)
    assert not (out / "result.json").exists()

    monkeypatch.setattr(stop, "training_step", real_step)
    monkeypatch.setattr(game._Output, "commit", real_commit)
    resumed = run_audit(config, out_dir=out, resume=True)
    assert {**resumed.to_json(), "timing": None} == {**whole.to_json(), "timing": None}


def test_the_acknowledgement_says_how_the_run_stops() -> None:
    """The examples of :mod:`dpaudit.audit.games.progress` (the two wordings of the
    acknowledgement: after the current training step, with its measured length, or
    after the current batch when the generator does not check the request)."""
    import doctest

    from dpaudit.audit.games import progress

    assert doctest.testmod(progress).failed == 0
    assert doctest.testmod(progress).attempted >= 4
