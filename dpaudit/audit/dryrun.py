"""``--dry-run``: an audit's plan, resolved as the run resolves it, with nothing
fitted and nothing written.

:func:`dry_run` makes every check :func:`~dpaudit.audit.run.run_audit` makes before
its first write, in the same order and with the same one-line refusals (the key
table's settings, the game's own checks, what the output folder holds, the memory
plan and the setup: data, target, generator options, attacks), then describes the
audit instead of running it: the fits, the rounds per world and their split, the
attainable maximum and the rounds the claimed epsilon needs, the memory plan, and
where it will write. It writes nothing (the output folder is only read) and trains
nothing; ``--target auto`` and ``--public-seed auto`` are described, not run (their
selection rounds are fits).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from dpaudit.audit.config.model import AuditConfig
from dpaudit.errors import InvalidParameterError

if TYPE_CHECKING:
    from dpaudit.audit.games.one_run.plan import OneRunPlan

__all__ = ["dry_run"]


NEW = "a new folder"


def _check_out(
    config: AuditConfig, out: Path, shown: str, *, resume: bool, force: bool
) -> str:
    """The run's refusals about ``out``, read only; what the run will do there
    (:data:`NEW`: it makes the folder)."""
    from dpaudit.audit.storage.outdir import (
        RESULT,
        check_replaceable,
        prepare_directory,
    )
    from dpaudit.audit.storage.store import ResultStore, StoreLock, check_store_path

    check_store_path(out, shown)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`--out` {shown!r} exists and is not a directory.")
    if resume and not out.is_dir():
        raise InvalidParameterError(f"--resume: {shown!r} does not exist.")
    if not out.is_dir():
        return NEW
    StoreLock(out).check_free()
    holds = (out / ResultStore.FILENAME).exists() or (out / RESULT).exists()
    if not holds:
        return f"{shown} (an existing folder without an audit)"
    if config.game == "one-run":  # its own refusals, --force or not (game.run's)
        from dpaudit.audit.games.one_run.game import _prepare

        _prepare(out, force=force)
        return f"{shown} (replacing its result.json once the new result exists)"
    if force:
        check_replaceable(out)
        return f"{shown} (replacing the audit it holds once the new one stores its first batch)"
    _, _, continued = prepare_directory(out, config, resume=resume)
    return f"{shown} (continuing the audit it holds)" if continued else shown


def _two_world_rows(config: AuditConfig) -> list[tuple[str, str]]:
    from dpaudit.audit.games.estimate import attack_names, planned_attainable_maximum
    from dpaudit.audit.games.plan import GamePlan
    from dpaudit.audit.stats import calibrated
    from dpaudit.audit.stats.estimators import rounds_needed as box_rounds_needed

    plan = GamePlan.create(
        rounds=config.rounds, split=config.fractions, seed=config.seed
    )
    sizes = {s: plan.world_sizes(s) for s in ("train", "validation", "test")}
    selection = 2 * config.selection_rounds if config.target == "auto" else 0
    public = (
        2 * config.selection_rounds * config.public_candidates
        if config.public_seed == "auto"
        else 0
    )
    fits = 2 * config.rounds + selection + public
    extra = []
    if selection:
        extra.append(f"{selection} to choose the target (--target auto)")
    if public:
        extra.append(f"{public} to choose the public seed (--public-seed auto)")
    top = planned_attainable_maximum(config)
    needed = (
        calibrated.rounds_needed(
            eps_claimed=config.epsilon,
            delta=config.delta,
            alpha=config.alpha / max(len(attack_names(config)), 1),
            split=config.fractions,
        )
        if config.estimator == "clopper_pearson"
        else box_rounds_needed(
            eps_claimed=config.epsilon,
            delta=config.delta,
            alpha=config.alpha / max(len(attack_names(config)), 1),
            split=config.fractions,
            method=config.estimator,
        )
    )
    split = ", ".join(f"{name} {n0} + {n1}" for name, (n0, n1) in sizes.items())
    return [
        (
            "fits",
            f"{fits}: {config.rounds} rounds per world in 2 worlds"
            + "".join(f", {e}" for e in extra),
        ),
        (
            "rounds per world",
            f"{config.rounds}, split {split} (without + with the target)",
        ),
        (
            "attainable maximum",
            f"eps_emp {top:.2f} at most ({len(attack_names(config))} attack(s): "
            f"{', '.join(attack_names(config))}); the requested epsilon "
            f"{config.epsilon:g} "
            + (
                "can be refuted at this size"
                if top > config.epsilon
                else f"cannot: about {needed} rounds per world would be needed"
                if needed is not None
                else "cannot at any feasible size"
            ),
        ),
        (
            "profile rounds needed",
            "known after the first fit (the profile is the generator's own claim, "
            "from its accountant); the result states it",
        ),
    ]


def _one_run_rows(config: AuditConfig, plan: OneRunPlan) -> list[tuple[str, str]]:
    """The one-run game's rows (``plan``: the game's plan, its guess counts)."""
    if config.guess_rule == "threshold":
        guesses = "threshold rule only: as many as the release shows (no counts)"
    else:
        how = (
            "planned from the configuration before any fit (on the "
            f"{plan.planning_mu or 0.0:.3f}-GDP Gaussian at epsilon {config.epsilon:g})"
            if plan.planned
            else "as given"
        )
        guesses = (
            f"count rule: {plan.guesses_in} 'in' + {plan.guesses_out} 'out', {how}"
        )
        if config.guess_rule == "both":
            guesses += "; and the threshold rule where the score has one"
    return [
        ("fits", f"{config.fits} (one-run game: {config.canaries} canaries per fit)"),
        ("rounds per world", "none: the one-run game has no worlds"),
        ("guesses", guesses),
    ]


def dry_run(
    config: AuditConfig,
    *,
    out_dir: Path | str,
    resume: bool = False,
    force: bool = False,
) -> list[tuple[str, str]]:
    """Checks ``config`` as :func:`~dpaudit.audit.run.run_audit` does before it
    writes, and returns its plan as ``(name, text)`` rows.

    Raises:
        InvalidParameterError: whatever the run would have refused first, as the
            same one line.
    """
    from dpaudit.audit.games.memory import _fmt, memory_limit, plan_memory, plan_one_run
    from dpaudit.audit.games.registry import load_game

    if not resume:
        config.check_settings()
    game = load_game(config.game)
    game.check(config, resume=resume)
    out = Path(os.path.abspath(out_dir))
    where = _check_out(config, out, str(out_dir), resume=resume, force=force)
    # The memory plan and the setup: refused as the run refuses; the audit resolved
    # once there, read here.
    prepared = game.prepare(config)
    resolved = prepared.resolved
    limit = memory_limit(config, foreign=resolved.foreign)
    one_run = config.game == "one-run"
    # In memory: the exact test's disk cache unused.
    rows = _one_run_rows(config, prepared.plan) if one_run else _two_world_rows(config)
    plan = prepared.memory
    if plan is None:  # no limit could be read: planned all the same
        planner = plan_one_run if one_run else plan_memory
        plan = planner(config, resolved=resolved)
    memory = (
        f"about {_fmt(plan.total)} at the peak ({_fmt(plan.table)} the table, "
        f"{_fmt(plan.models)} for {plan.models_at_once} "
        f"{'model' if plan.models_at_once == 1 else 'models'} at once, "
        f"{_fmt(plan.rounds)} the {'canaries' if one_run else 'rounds'})"
    )
    memory += (
        f"; {_fmt(limit.bytes)} {'allowed' if limit.source == '--max-memory' else 'available'} ({limit.source})"
        if limit is not None
        else "; no limit could be read"
    )
    head = [
        ("audit", f"{config.generator} on {config.dataset}, game {config.game}"),
        ("claim asked", f"epsilon {config.epsilon:g}, delta {config.delta:g}"),
    ]
    if where == NEW:
        where = f"{out_dir} (a new folder: {resolved.written})"
    return head + rows + [("memory plan", memory), ("writes", where)]
