"""The utility benchmark (moved from ``dpaudit.audit.utility``; being split)."""

from __future__ import annotations

from dpaudit.utility.runner import *  # noqa: F403
