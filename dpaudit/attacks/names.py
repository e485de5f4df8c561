"""The attack names (stable: scripts and CI policies depend on them). No heavy
imports: configuration checks and the command line's parser read them;
:mod:`dpaudit.attacks.registry` builds the attacks."""

from __future__ import annotations

ATTACK_NAMES = (
    "querybased",
    "groundhog",
    "groundhog-naive",
    "groundhog-histogram",
    "groundhog-correlation",
    "distance",
    "moments",
    "fingerprint",
    "nearest",
)
ALL = "all"
DEFAULT = "default"
#: Names that expand to several attacks (the verdict takes the maximum over them, each
#: at the Bonferroni level alpha / number of attacks).
SET_NAMES = (DEFAULT, ALL)

__all__ = ["ALL", "ATTACK_NAMES", "DEFAULT", "SET_NAMES"]
