"""Training the two-world game's rounds: one batch of models, released and
featurised by the audit's release kind (:mod:`dpaudit.audit.games.releases`), as
rows for the store.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from dpaudit.allocator import keep_freed_memory
from dpaudit.audit.games.execution import in_groups, run_halving, training_group
from dpaudit.audit.games.memory import transcript_memory
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.games.releases import compact_claim
from dpaudit.audit.games.setup import AuditSetup, cached_round_rngs, cached_setup
from dpaudit.generators.base import Generator


def trace_round(setup: AuditSetup) -> int | None:
    """The round whose model's training trace the audit writes (the first round of
    the with-target world), or ``None`` when the generator records no trace (its
    registry spec has no ``trace_switch``)."""
    if setup.resolved.trace_switch is None:
        return None
    members = [r for r, bit in enumerate(setup.plan.bits) if bit]
    return int(members[0]) if members else None


@functools.lru_cache(maxsize=4)
def _round_setup(config_json: str) -> AuditSetup:
    """:func:`cached_setup` with the memory the transcripts of this worker may take
    (:func:`~dpaudit.audit.games.memory.transcript_memory`, read once per worker)."""
    setup = cached_setup(config_json)
    return replace(setup, transcript_memory=transcript_memory(setup.config))


def train_batch(
    config_json: str, rounds: Sequence[int], *, trace: int | None = None
) -> list[dict[str, Any]]:
    """Trains and attacks the rounds ``rounds``; returns rows for the store.

    Runs in a worker: everything is rebuilt from the config, so the result depends on
    the rounds alone (not on which worker ran them, nor on the batch size: a batch
    that runs out of device memory is halved and retried,
    :func:`dpaudit.audit.games.execution.run_halving`).

    When ``trace`` is one of ``rounds`` (:func:`trace_round`), that round is trained
    on its own with the generator's trace switch on, and its row also holds
    ``"trace"``: ``{"claim": the full claim with its per-iteration trace,
    "num_teachers": k}``. The switch only records (it draws nothing and changes no
    model: tests/audit/test_runner.py checks it), and a model depends only on its own
    streams, so the round's model, release and features are the ones it would have
    had in the batch. Recording inside the whole batch would cost more: PATE-GAN's
    teacher losses run every teacher over all rows each iteration, for every model.
    """
    keep_freed_memory()  # once per worker process
    setup = _round_setup(config_json)
    if setup.config.device != "cuda":
        # Tiny per-member matmuls gain nothing from intra-op threads, and threads
        # oversubscribe the cores when jobs run side by side.
        import torch

        torch.set_num_threads(1)
    todo = [int(r) for r in rounds]
    traced: list[dict[str, Any]] = []
    if trace is not None and trace in todo:
        todo.remove(trace)
        traced = _train_rounds(config_json, [trace], record_trace=True)
    # The models trained together are the rounds' training groups, never the batch
    # (dpaudit.audit.games.execution): the result does not depend on --batch-size.
    rows = []
    for group in in_groups(todo, training_group(setup.config.device)):
        rows += run_halving(
            group, lambda part: _train_rounds(config_json, part), key=config_json
        )
    return sorted([*traced, *rows], key=lambda row: int(row["round"]))


def _traced_generator(setup: AuditSetup) -> Generator:
    """The audit's generator with its trace switch on."""
    switch = setup.resolved.trace_switch
    assert switch is not None
    return setup.resolved.build({**setup.generator_options, switch: True})


def _train_rounds(
    config_json: str, rounds: list[int], *, record_trace: bool = False
) -> list[dict[str, Any]]:
    setup = _round_setup(config_json)
    plan = setup.plan
    all_rngs = cached_round_rngs(config_json)
    datasets = [setup.with_target if plan.bits[r] else setup.without for r in rounds]
    make_generator: Callable[[], Generator] = setup.make_generator
    if record_trace:
        make_generator = functools.partial(_traced_generator, setup)
    models, features = setup.release.release_group(
        setup, datasets, [all_rngs[r] for r in rounds], make_generator
    )
    return _stored_rows(plan, rounds, models, features, record_trace)


def _stored_rows(
    plan: GamePlan,
    rounds: list[int],
    models: Sequence[Generator],
    features: Mapping[str, Any],
    record_trace: bool,
) -> list[dict[str, Any]]:
    """The store's row of each round: its bit, split, compact claim and every
    attack's features (``features[name][i]`` for the ``i``-th of ``rounds``), and
    the full claim when traces are recorded."""
    rows = []
    for i, (r, model) in enumerate(zip(rounds, models)):
        claim = model.privacy_claim_.to_json()
        row: dict[str, Any] = {
            "round": int(r),
            "bit": int(plan.bits[r]),
            "split": int(plan.splits[r]),
            "claim": compact_claim(claim),
            "features": {name: values[i] for name, values in features.items()},
        }
        if record_trace:
            row["trace"] = {
                "claim": claim,
                "num_teachers": int(getattr(model, "num_teachers_", 0)),
            }
        rows.append(row)
    return rows
