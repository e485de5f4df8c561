"""What a game is: :class:`Game`, the protocol every game's declared part follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.result.model import AuditResult
from dpaudit.audit.storage.outdir import Session

__all__ = ["Game"]


class Game(Protocol):
    """A game: how an audit trains, releases, scores and bounds.

    :func:`~dpaudit.audit.run.run_audit` calls, in order: :meth:`check` (refusals
    beyond the key table's), :meth:`prepare` (everything that can be refused before
    anything is written: the memory plan, a design), then, holding the output
    folder's lock, :meth:`run`. The keys a game uses are declared in the key table
    (:data:`dpaudit.audit.config.keys.AUDIT_KEYS`, each key's ``games``).
    """

    name: str

    def check(self, config: AuditConfig, *, resume: bool) -> None:
        """Refuses, in one line, what this game cannot run."""

    def prepare(self, config: AuditConfig) -> Any:
        """What the run needs that can be checked before anything is written."""

    def run(
        self,
        prepared: Any,
        out: Path,
        session: Session,
        *,
        resume: bool,
        force: bool,
        progress: bool,
    ) -> AuditResult:
        """Runs the game in ``out`` (the lock held) and writes ``result.json``."""
        ...
