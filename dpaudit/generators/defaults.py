"""The privacy parameters of every command, config and generator left unset (no heavy
imports: the command line's parser reads them to build its help)."""

from __future__ import annotations

DEFAULT_EPSILON = 1.0
"""The privacy budget epsilon of every command, config and generator left unset."""
DEFAULT_DELTA = 1e-5
"""The delta of every command, config and generator left unset."""
