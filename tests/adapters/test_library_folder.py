"""A library is one folder: dropped into ``dpaudit/adapters/``, it is found by every
table of libraries, with no other file edited (docs/design.md, "Adding a library")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.adapters import FOREIGN_ADAPTERS, LIBRARIES
from dpaudit.adapters.envs import RECIPES
from dpaudit.adapters.libraries import PINS, discover

ROOT = Path(__file__).resolve().parents[2]
NEW = Path(__file__).resolve().parent / "new_library"
"""The folder of a new library, ``fakelib`` (numpy as its library)."""


def test_every_library_is_a_folder_of_declaration_adapters_and_pins() -> None:
    assert discover() == LIBRARIES
    for name, library in LIBRARIES.items():
        folder = ROOT / "dpaudit" / "adapters" / name
        assert library.folder == folder
        assert {"__init__.py", "adapter.py", PINS} <= {p.name for p in folder.iterdir()}
        assert RECIPES[name].pins == folder / PINS


def test_a_folder_whose_declaration_names_another_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpaudit.adapters as package

    shutil.copytree(NEW, tmp_path / "otherlib")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "dpaudit.adapters.otherlib", raising=False)
    with pytest.raises(ValueError, match="name it 'otherlib', as its folder"):
        discover()


def _run(tree: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=tree,  # `python -m` puts the working directory first on sys.path
        env={
            **os.environ,
            "PYTHONPATH": str(tree),
            "DPAUDIT_ENV_HOME": str(tree / "envs"),
            "OMP_NUM_THREADS": "1",
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_a_new_library_folder_is_found_with_no_other_file_edited(
    tmp_path: Path,
) -> None:
    """A copy of dpaudit plus the folder ``dpaudit/adapters/fakelib/``: the registry
    lists its adapter, ``dpaudit env`` has its recipe and pins, and
    ``dpaudit check-generator`` runs the contract's checks on it in a foreign worker
    (every check passes). About 10 s."""
    assert "fakelib" not in LIBRARIES and "fakelib-uniform" not in FOREIGN_ADAPTERS
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT / "dpaudit",
        tree / "dpaudit",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copytree(NEW, tree / "dpaudit" / "adapters" / "fakelib")

    listed = _run(
        tree,
        "-c",
        "from dpaudit.generators.registry import get_spec, registered_generators\n"
        "from dpaudit.adapters.envs import RECIPES, pins_path\n"
        "spec = get_spec('fakelib-uniform')\n"
        "print(spec.factory, spec.plugin, 'fakelib-uniform' in registered_generators())\n"
        "print(RECIPES['fakelib'].library, pins_path(RECIPES['fakelib']).read_text())",
    )
    assert listed.split() == [
        "dpaudit.adapters.fakelib.adapter:FakeUniform",
        "True",
        "True",
        "numpy",
        "0.0.0",
        *NEW.joinpath(PINS).read_text().split(),
    ]
    helped = _run(tree, "-m", "dpaudit", "env", "--help")
    assert "fakelib" in helped and "numpy" in helped
    recipes = _run(tree, "-m", "dpaudit", "env", "--list")
    assert any(line.startswith("fakelib ") for line in recipes.splitlines())
    checked = _run(
        tree,
        "-m",
        "dpaudit",
        "check-generator",
        "fakelib-uniform",
        "--python",
        sys.executable,
        "--dataset-rows",
        "50",
    )
    verdicts = {
        line.split()[1].rstrip(":"): line.split()[0]
        for line in checked.splitlines()[:-1]
    }
    assert verdicts["same-seeds"] == verdicts["sample-in-domain"] == "passed", checked
    assert "failed" not in verdicts.values(), checked
    assert checked.splitlines()[-1].startswith("fakelib-uniform: 9 passed, 0 failed")
