"""The games: how an audit trains, releases, scores and bounds.

:data:`GAME_SPECS` (:mod:`dpaudit.audit.games.registry`) maps a game's name to what it
owns. The shared parts below the games: the resolved audit (:mod:`~.setup`), the
releases (:mod:`~.releases`), the streams, the plan, the looks, execution and memory,
claims and the verdict. The two games: ``two_world/`` and ``one_run/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.audit.games.estimate import (
        planned_attainable_maximum,
    )
    from dpaudit.audit.games.execution import (
        plan_for_setup,
    )
    from dpaudit.audit.games.looks import (
        audit_looks,
        plan_looks,
    )
    from dpaudit.audit.games.lookup import (
        looked_up,
    )
    from dpaudit.audit.games.memory import (
        check_fit_memory,
        check_memory,
    )
    from dpaudit.audit.games.one_run.counts import (
        count_alpha,
        plan_counts,
    )
    from dpaudit.audit.games.one_run.plan import (
        guess,
    )
    from dpaudit.audit.games.one_run.rules import (
        apply_rules,
        best_outcome,
        resolve_bound,
    )
    from dpaudit.audit.games.plan import (
        GamePlan,
    )
    from dpaudit.audit.games.registry import (
        GAME_SPECS,
        GameSpec,
        game_keys,
        load_game,
    )
    from dpaudit.audit.games.releases import (
        RELEASE_KINDS,
        TableRelease,
        TranscriptRelease,
        compact_claim,
        release_for,
        sample_all,
        train_and_release,
    )
    from dpaudit.audit.games.scores import (
        claimed_profile,
        judge_scores,
    )
    from dpaudit.audit.games.setup import (
        AuditSetup,
        build_setup,
        cached_setup,
    )
    from dpaudit.audit.games.streams import (
        Streams,
    )
    from dpaudit.audit.games.two_world.analysis import (
        analyse,
    )
    from dpaudit.audit.games.two_world.rounds import (
        train_batch,
    )
    from dpaudit.audit.games.verdict import (
        contradiction,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpaudit.audit.games.setup": (
        "AuditSetup",
        "build_setup",
        "cached_setup",
    ),
    "dpaudit.audit.games.plan": ("GamePlan",),
    "dpaudit.audit.games.streams": ("Streams",),
    "dpaudit.audit.games.looks": (
        "plan_looks",
        "audit_looks",
    ),
    "dpaudit.audit.games.execution": ("plan_for_setup",),
    "dpaudit.audit.games.memory": (
        "check_fit_memory",
        "check_memory",
    ),
    "dpaudit.audit.games.estimate": ("planned_attainable_maximum",),
    "dpaudit.audit.games.verdict": ("contradiction",),
    "dpaudit.audit.games.releases": (
        "compact_claim",
        "sample_all",
        "train_and_release",
        "release_for",
        "RELEASE_KINDS",
        "TableRelease",
        "TranscriptRelease",
    ),
    "dpaudit.audit.games.two_world.analysis": ("analyse",),
    "dpaudit.audit.games.two_world.rounds": ("train_batch",),
    "dpaudit.audit.games.scores": (
        "claimed_profile",
        "judge_scores",
    ),
    "dpaudit.audit.games.lookup": ("looked_up",),
    "dpaudit.audit.games.one_run.counts": ("count_alpha", "plan_counts"),
    "dpaudit.audit.games.one_run.plan": ("guess",),
    "dpaudit.audit.games.one_run.rules": (
        "apply_rules",
        "best_outcome",
        "resolve_bound",
    ),
    "dpaudit.audit.games.registry": (
        "GAME_SPECS",
        "GameSpec",
        "game_keys",
        "load_game",
    ),
}

__all__ = [
    "GAME_SPECS",
    "RELEASE_KINDS",
    "AuditSetup",
    "GamePlan",
    "GameSpec",
    "Streams",
    "TableRelease",
    "TranscriptRelease",
    "analyse",
    "apply_rules",
    "audit_looks",
    "best_outcome",
    "build_setup",
    "cached_setup",
    "check_fit_memory",
    "check_memory",
    "claimed_profile",
    "compact_claim",
    "contradiction",
    "count_alpha",
    "game_keys",
    "guess",
    "judge_scores",
    "load_game",
    "looked_up",
    "plan_counts",
    "plan_for_setup",
    "plan_looks",
    "planned_attainable_maximum",
    "release_for",
    "resolve_bound",
    "sample_all",
    "train_and_release",
    "train_batch",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
