"""Plug-in classes run in this process (the Python API's ``in_process=True``).

:func:`in_process_plugin` registers a class under a generator name for the duration of
a run; the registry (:func:`dpaudit.generators.registry.get_spec`) then builds it
here, through :class:`~dpaudit.generators.plugins.PluginAdapter`, instead of in a
foreign worker.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["IN_PROCESS", "in_process_class", "in_process_plugin"]

IN_PROCESS: dict[str, type] = {}
"""Plug-in classes registered by :func:`in_process_plugin`, by generator name."""


def in_process_class(name: str) -> type:
    """The class registered as ``name``.

    Raises:
        PluginError: none is (any more).
    """
    from dpaudit.errors import PluginError

    cls = IN_PROCESS.get(name)
    if cls is None:
        raise PluginError(
            f"generator {name!r} ran in-process and is no longer registered: pass the "
            "class again (`generator=MyClass, in_process=True`)."
        )
    return cls


@contextlib.contextmanager
def in_process_plugin(name: str, cls: type) -> Iterator[None]:
    """Within: the generator ``name`` is the plug-in class ``cls``, constructed and
    fitted in this process (:class:`~dpaudit.generators.plugins.PluginAdapter`),
    where a ``module:Class`` name otherwise runs in a foreign worker. The Python
    API's ``in_process=True``; the name before is restored on exit."""
    before = IN_PROCESS.get(name)
    IN_PROCESS[name] = cls
    try:
        yield
    finally:
        if before is None:
            IN_PROCESS.pop(name, None)
        else:
            IN_PROCESS[name] = before
