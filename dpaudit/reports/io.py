"""Writing report files atomically (see :mod:`dpaudit.io`)."""

from __future__ import annotations

from dpaudit.io import write_atomic

__all__ = ["write_atomic"]
