"""The package's layers run one way, and no module imports another in a cycle.

Layers, bottom to top (docs/design.md):

    errors, validation, rng, io, allocator, lazy  <  data  <  generators, attacks, worst_case
    <  audit, utility  <  reports  <  ci  <  commands, cli

Every ``import``/``from ... import`` of a ``dpaudit`` module is an edge, wherever it
stands (module level, inside a function, under ``TYPE_CHECKING``), and so is
``importlib.import_module("dpaudit....")`` with a literal name: lazy imports hide a
dependency from the reader but not from the interpreter.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpaudit"

LAYERS: dict[str, int] = {
    "__init__": 0,
    "errors": 0,
    "validation": 0,
    "rng": 0,
    "io": 0,
    "allocator": 0,
    "lazy": 0,
    "data": 1,
    "datasets": 1,
    "generators": 2,
    "attacks": 2,
    "worst_case": 2,
    "adapters": 2,
    "audit": 3,
    "utility": 3,
    "reports": 4,
    "ci": 5,
    "commands": 6,
    "cli": 6,
    "api": 6,
    "__main__": 6,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted import name lands in (a submodule, else its package)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(path: Path, modules: dict[str, Path]) -> Iterator[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from dpaudit.x import y`: y may be a submodule or an attribute.
            names = [f"{node.module}.{a.name}" for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.JoinedStr)
        ):
            head = node.args[0].values[0]
            if isinstance(head, ast.Constant) and str(head.value).startswith("dpaudit"):
                names = [str(head.value).rstrip(".")]
        for name in names:
            if name == "dpaudit" or name.startswith("dpaudit."):
                target = _resolve(name, modules)
                if target is not None:
                    yield target, node.lineno


def _layer(module: str) -> int:
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else "__init__"
    if key not in LAYERS:
        pytest.fail(f"module {module} is in no layer: add {key!r} to LAYERS")
    return LAYERS[key]


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for target, _ in _imports(path, modules):
            if target != module:
                graph[module].add(target)
    return graph


def test_no_module_imports_a_layer_above_it() -> None:
    modules = _modules()
    upward = []
    for module, path in sorted(modules.items()):
        for target, line in _imports(path, modules):
            if _layer(target) > _layer(module):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert upward == []


AUDIT_LAYERS: dict[str, int] = {
    "stats": 0,
    "config": 1,
    "storage": 2,
    "result": 3,
    "games": 4,
    "games.two_world": 5,
    "games.one_run": 5,
    "games.registry": 6,
    "games.__init__": 6,
    "run": 7,
    "dryrun": 7,
    "__init__": 8,
}
"""Sub-layers inside ``dpaudit.audit``, bottom to top (docs/design.md, "The audit
package"): pure statistics < configuration < storage < the typed result < what the
games share < each game (neither game imports the other) < the game registry and the
games' face < :func:`run_audit` < the audit's face."""


def _audit_layer(module: str) -> tuple[int, str]:
    """``(sub-layer, sub-package)`` of a module of ``dpaudit.audit``."""
    path = (PACKAGE / "audit").joinpath(*module.split(".")[2:])
    parts = module.split(".")[2:]
    if not parts:
        return AUDIT_LAYERS["__init__"], "audit"
    if path.is_dir() and (path / "__init__.py").exists():
        parts = [*parts, "__init__"]  # a package: its face
    for n in (3, 2, 1):
        key = ".".join(parts[:n])
        if key in AUDIT_LAYERS:
            return AUDIT_LAYERS[key], ".".join(parts[:2])
        if n == 2 and parts[0] == "games" and parts[1] not in AUDIT_LAYERS:
            continue
    pytest.fail(f"module {module} is in no sub-layer of dpaudit.audit: add it")
    raise AssertionError  # unreachable


def test_audit_sub_layers_run_one_way() -> None:
    """Inside ``dpaudit.audit`` no module imports a sub-layer above its own, and
    neither game imports the other."""
    modules = _modules()
    wrong = []
    for module, path in sorted(modules.items()):
        if not module.startswith("dpaudit.audit"):
            continue
        level, place = _audit_layer(module)
        for target, line in _imports(path, modules):
            if not target.startswith("dpaudit.audit") or target == module:
                continue
            other, other_place = _audit_layer(target)
            sideways = other == level == 5 and other_place != place
            if other > level or sideways:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert wrong == []


def test_outside_code_imports_only_audit_faces() -> None:
    """``ci``, ``commands``, ``reports``, ``cli`` and the benchmarks import the faces
    of ``dpaudit.audit`` and of its sub-packages, never a module inside them."""
    modules = _modules()
    faces = {
        m
        for m, p in modules.items()
        if m.startswith("dpaudit.audit") and p.name == "__init__.py"
    }
    sources = [
        p
        for m, p in modules.items()
        if m.count(".")
        and m.split(".")[1] in ("ci", "commands", "reports", "cli", "__main__")
    ] + sorted((ROOT / "benchmarks").rglob("*.py"))
    wrong = []
    for path in sources:
        for target, line in _imports(path, modules):
            if target.startswith("dpaudit.audit") and target not in faces:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert wrong == []


def test_no_import_cycles() -> None:
    graph = _graph()
    # Tarjan's strongly connected components: any component with two or more
    # modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_checker_sees_lazy_and_importlib_imports(tmp_path: Path) -> None:
    """The rule checker itself: a lazy import and an import_module call are edges."""
    source = tmp_path / "m.py"
    source.write_text(
        "import importlib\n"
        "def f():\n"
        "    from dpaudit.cli import main\n"
        "    importlib.import_module('dpaudit.reports')\n"
    )
    modules = {"dpaudit.cli": ROOT, "dpaudit.reports": ROOT}
    assert sorted(t for t, _ in _imports(source, modules)) == [
        "dpaudit.cli",
        "dpaudit.reports",
    ]


def test_no_module_over_600_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 600
    }
    assert long == {}
