"""The installed generator plug-ins' entry points (no heavy imports: ``dpaudit list
generators`` and the registry read them without importing torch or a plug-in)."""

from __future__ import annotations

import importlib.metadata

ENTRY_POINT_GROUP = "dpaudit.generators"


def plugin_entry_points() -> dict[str, str]:
    """The installed entry points of group ``dpaudit.generators``: name -> ``module:attr``.

    Nothing is imported: listing the plug-ins never runs their code.
    """
    points = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep.value for ep in sorted(points, key=lambda ep: ep.name)}
