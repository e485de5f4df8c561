"""The games, declared once: :data:`GAME_SPECS` maps a game's name (``--game``) to what
it owns (in the style of :data:`dpaudit.reports.formats.REPORT_FORMATS`).

A :class:`GameSpec` names the module whose ``GAME`` runs it (a
:class:`~dpaudit.audit.games.base.Game`: its refusals, its preparation, how it
trains, releases and scores), the bound that turns its counts into eps_emp, and the
result section it fills. The keys it uses are the key table's
(:data:`~dpaudit.audit.config.keys.AUDIT_KEYS`, each key's ``games``); how reports
word its result is :data:`dpaudit.reports.games.GAME_TEXT`. Adding a game: its
package under ``games/``, an entry here, its name in
:data:`dpaudit.audit.config.names.GAMES`, and its text in the reports
(docs/design.md, "Extending dpaudit: a game").
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import cast

from dpaudit.audit.config.keys import AUDIT_KEYS
from dpaudit.audit.games.base import Game

__all__ = ["GAME_SPECS", "GameSpec", "game_keys", "load_game"]


@dataclass(frozen=True, kw_only=True, slots=True)
class GameSpec:
    """A game's declaration.

    Attributes:
        name: the game's name (``--game``).
        module: the module whose ``GAME`` runs it.
        bound: which bound turns its counts into eps_emp, in words.
        result_section: the :class:`~dpaudit.audit.result.model.AuditResult` field
            only this game fills (``None``: the shared fields only).
        summary: one line for ``dpaudit list`` and the docs.
    """

    name: str
    module: str
    bound: str
    result_section: str | None
    summary: str


GAME_SPECS: Mapping[str, GameSpec] = MappingProxyType(
    {
        "two-world": GameSpec(
            name="two-world",
            module="dpaudit.audit.games.two_world.game",
            bound="Clopper-Pearson (or Jeffreys) upper bounds on the test rounds' "
            "error rates, turned into eps_emp; the claimed profile's region test",
            result_section=None,
            summary="the distinguishing game: 2 x --rounds fits with and without "
            "the target",
        ),
        "one-run": GameSpec(
            name="one-run",
            module="dpaudit.audit.games.one_run.game",
            bound="the --onerun-bound named before any fit (steinke: Steinke, Nasr "
            "and Jagielski's; fdp, order: the claim's trade-off curve against the "
            "correct guesses) turns the correct guesses into eps_emp",
            result_section="one_run",
            summary="canaries each included with probability 1/2 in one fit or a "
            "few, guessed from the releases",
        ),
    }
)


def load_game(name: str) -> Game:
    """The declared part of game ``name`` (its module imported on first use)."""
    return cast(Game, importlib.import_module(GAME_SPECS[name].module).GAME)


def game_keys(name: str) -> tuple[str, ...]:
    """The settings game ``name`` uses (the key table's ``games``)."""
    return tuple(
        key.name for key in AUDIT_KEYS if name in key.games and key.target is not None
    )
