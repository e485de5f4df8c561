"""Stable names of the generators' settings, each declared once. No imports: the
generators' configs, the registry, the audit's config and the command line's parser
read them."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["DEVICES", "Device"]

Device = Literal["auto", "cpu", "cuda"]
"""Where a built-in generator trains (``auto``: CUDA when available)."""
DEVICES: tuple[Device, ...] = get_args(Device)
