"""Adapters of real synthetic-data libraries, run as plug-ins in foreign workers.

``FOREIGN_ADAPTERS`` maps a generator name (``--generator NAME``) to the
``module:Class`` of a plain plug-in class (docs/plugins.md) that the foreign worker
imports; the registry (:mod:`dpaudit.generators.registry`) lists every name and never
imports the libraries in dpaudit's own process. Keep it a plain dict literal.
"""

from __future__ import annotations

FOREIGN_ADAPTERS: dict[str, str] = {}
