"""Names of a package imported on first use (PEP 562).

``dpaudit --help`` and the command parsers import the packages ``ci``, ``ci.study``
and ``utility``; their public names come from modules that import torch, pandas, scipy
or scikit-learn, which only running a command needs. Such a package lists its names
per module and installs the ``__getattr__``/``__dir__`` this module builds (and
imports the same names under ``TYPE_CHECKING`` for the type checker).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose names ``exports`` maps from
    module to names; a name is imported from its module on first use and kept."""
    module_of = {name: module for module, names in exports.items() for name in names}
    namespace = sys.modules[package].__dict__

    def getattr_(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(module_of))

    return getattr_, dir_
