"""The libraries' declarations are the one table every other table derives from."""

from __future__ import annotations

import importlib
from pathlib import Path

from dpaudit.adapters import FOREIGN_ADAPTERS, LIBRARIES
from dpaudit.adapters.envs import RECIPES, pins_path

ROOT = Path(__file__).resolve().parents[2]


def _docs_table() -> dict[str, str]:
    """docs/adapters.md's table of adapters: generator name -> library."""
    lines = (ROOT / "docs" / "adapters.md").read_text().splitlines()
    start = lines.index(
        "| name | library | class | min rows | reproducible (same seed) |"
    )
    rows: dict[str, str] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1]
    return rows


def test_every_table_of_libraries_is_derived_from_the_declarations() -> None:
    declared = {
        generator: library
        for library in LIBRARIES.values()
        for generator, _ in library.adapters
    }
    assert list(FOREIGN_ADAPTERS) == list(declared)
    assert sorted(RECIPES) == sorted(LIBRARIES)
    for name, library in LIBRARIES.items():
        assert library.name == name
        assert RECIPES[name].library == library.library
        assert pins_path(RECIPES[name]).is_file()
        # The recipe serves `NAME-*`: every adapter's name says its library.
        assert all(g.startswith(f"{name}-") for g, _ in library.adapters)
    # docs/adapters.md lists every adapter, with its library's pinned version.
    assert _docs_table() == {g: lib.library for g, lib in declared.items()}


def test_every_declared_adapter_is_a_class_of_its_librarys_module() -> None:
    for library in LIBRARIES.values():
        module = importlib.import_module(f"dpaudit.adapters.{library.name}.adapter")
        for generator, cls in library.adapters:
            adapter = getattr(module, cls)
            assert adapter.library is library, generator
