"""How reports word each game's result: :data:`GAME_TEXT`, keyed by the game's name
(:data:`dpaudit.audit.games.registry.GAME_SPECS`).

The two-world game's words are the shared vocabulary of :mod:`dpaudit.reports.meaning`
and :mod:`dpaudit.reports.wording`; a game with a result section of its own (the
one-run game's canaries and guesses) declares here the functions that replace them,
so the terminal, Markdown and HTML reports all say it the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dpaudit.audit.games import GAME_SPECS
from dpaudit.reports.model import AuditResult
from dpaudit.reports.onerun import (
    one_run_explain,
    one_run_rounds,
    one_run_rows,
    one_run_test_size,
)

__all__ = ["GAME_TEXT", "GameText", "own_text"]


@dataclass(frozen=True, kw_only=True, slots=True)
class GameText:
    """A game's own words for what the shared vocabulary says of the two-world
    game.

    Attributes:
        rows: the power table's ``(name, text)`` rows.
        explain: the "what this means" paragraphs.
        rounds: what was run (the two-world game's rounds line).
        test_size: the test's size in words (``400 + 400 test rounds``).
    """

    rows: Callable[[AuditResult], list[tuple[str, str]]]
    explain: Callable[[AuditResult], list[str]]
    rounds: Callable[[AuditResult], str]
    test_size: Callable[[AuditResult], str]


GAME_TEXT: Mapping[str, GameText] = MappingProxyType(
    {
        "one-run": GameText(
            rows=one_run_rows,
            explain=one_run_explain,
            rounds=one_run_rounds,
            test_size=one_run_test_size,
        ),
    }
)


def own_text(result: AuditResult) -> GameText | None:
    """The words of ``result``'s game, where it has its own and the result records
    its section; ``None``: the shared vocabulary."""
    text = GAME_TEXT.get(result.game)
    spec = GAME_SPECS.get(result.game)
    if text is None or spec is None or spec.result_section is None:
        return None
    return text if getattr(result, spec.result_section, None) is not None else None
