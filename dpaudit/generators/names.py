"""Stable names of the built-in generators and their settings, each declared once.
No imports: the generators' configs, the registry, the audit's config, the study plan
and the command line's parser read them."""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "DEVICES",
    "G_PATE",
    "PATE_GAN",
    "PATE_GAN_VARIANTS",
    "Device",
    "PateGanVariant",
]

PATE_GAN: Final = "pategan"
"""The registry name of the reference PATE-GAN (``--generator pategan``)."""
G_PATE: Final = "gpate"
"""The registry name of the reference G-PATE (``--generator gpate``)."""

Device = Literal["auto", "cpu", "cuda"]
"""Where a built-in generator trains (``auto``: CUDA when available)."""
DEVICES: tuple[Device, ...] = get_args(Device)

PateGanVariant = Literal[
    "original", "updated", "synthcity", "turing", "borealis", "smartnoise"
]
"""The six PATE-GAN implementations the study reviewed, as variants of the reference
(registered in :mod:`dpaudit.generators.pate_gan.variants`, in this order)."""
PATE_GAN_VARIANTS: tuple[PateGanVariant, ...] = get_args(PateGanVariant)
