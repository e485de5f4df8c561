"""Adapters of real synthetic-data libraries, run as plug-ins in foreign workers.

Each library is one folder, ``dpaudit/adapters/NAME/`` (its declaration, adapters,
worker-side recorders and pins; docs/design.md, "Adding a library"). :data:`LIBRARIES`
holds the declarations of the folders found here
(:func:`dpaudit.adapters.libraries.discover`), the one table of them.

``FOREIGN_ADAPTERS`` maps a generator name (``--generator NAME``) to the
``module:Class`` of a plain plug-in class (docs/plugins.md) that the foreign worker
imports; the registry (:mod:`dpaudit.generators.registry`) lists every name and never
imports the libraries in dpaudit's own process. It is derived from :data:`LIBRARIES`.

Each adapter module imports only the standard library, numpy, pandas and (inside its
methods) the library it wraps, so the worker can run it under the library's own
interpreter (``--python``; docs/adapters.md).
"""

from __future__ import annotations

from dpaudit.adapters.libraries import Library, discover

LIBRARIES: dict[str, Library] = discover()
"""Every adapted library, in the order ``--generator`` lists their adapters."""

FOREIGN_ADAPTERS: dict[str, str] = {
    generator: plugin
    for library in LIBRARIES.values()
    for generator, plugin in library.plugins().items()
}
