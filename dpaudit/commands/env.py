"""``dpaudit env NAME``: build a library's own environment from the pins dpaudit ships.

The recipes (:data:`dpaudit.adapters.envs.RECIPES`) pin every package, so pip installs
exactly what was tested, with no search through versions. Steps: create a virtual
environment (the interpreter running dpaudit, or ``--base-python``), install the
recipe's first packages alone where it has any (a CPU torch), install the pins,
``pip check``, import the library. Each step's time is printed on stdout as it
finishes; pip's progress (each package collected) goes to stderr on a terminal, and
all of pip's output to ``DIR/dpaudit-env.log``. ``DIR/dpaudit-env.json`` records the
recipe, the pins' digest and the times; ``dpaudit env`` refuses a non-empty folder
without it (it will not install into a folder it did not build).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dpaudit.adapters.envs import (
    MARKER,
    RECIPES,
    Recipe,
    default_env_dir,
    env_home,
    env_python,
    pins_path,
)
from dpaudit.commands import EXIT_CODES_HELP, EXIT_OK, HelpFormatter
from dpaudit.errors import InvalidParameterError, RunFailedError

_LOG = "dpaudit-env.log"
_VERSION_CHECK = (
    "import importlib.metadata as m; v = m.version('{0}'); "
    "assert v == '{1}', f'{0} {{v}} installed, not {1}'"
)
_PROGRESS_PREFIXES = ("Collecting ", "Installing collected", "Successfully installed")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Registers the ``env`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "env",
        help="build a library's own environment from dpaudit's pins (for --python)",
        description=(
            "Build the virtual environment of an adapted library ("
            + ", ".join(recipe.library.split()[0] for recipe in RECIPES.values())
            + ") from the pins dpaudit ships, then audit with "
            "`--python DIR/bin/python`. Default DIR: $DPAUDIT_ENV_HOME/NAME, else "
            "~/.cache/dpaudit/envs/NAME. See docs/adapters.md."
        ),
        epilog=EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "name", nargs="?", choices=sorted(RECIPES), help="the recipe to build"
    )
    parser.add_argument(
        "--list", action="store_true", help="list the recipes and where each lives"
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="where to build (default above)"
    )
    parser.add_argument(
        "--base-python",
        metavar="PATH",
        help="the interpreter that creates the environment (default: this one; the "
        "pins are for CPython 3.11)",
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="delete and rebuild an environment dpaudit env built before",
    )
    parser.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no progress on stderr (progress shows only on a terminal)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Lists the recipes or builds one; returns the exit code."""
    if args.list:
        if args.name is not None:
            raise InvalidParameterError(
                "`dpaudit env --list` takes no NAME; drop NAME or --list."
            )
        _print_list()
        return EXIT_OK
    if args.name is None:
        raise InvalidParameterError(
            f"`dpaudit env` needs NAME, one of {', '.join(sorted(RECIPES))} "
            "(or --list)."
        )
    recipe = RECIPES[args.name]
    out = (args.out or default_env_dir(recipe.name)).expanduser()
    base = args.base_python or sys.executable
    if shutil.which(base) is None and not Path(base).is_file():
        raise InvalidParameterError(
            f"--base-python {base!r} is not an interpreter; pass the path of a "
            "CPython 3.11."
        )
    _check_base(base)
    if _prepare(out, recipe, rebuild=args.rebuild) == "built":
        print(f"{recipe.name}: already built in {out}; --rebuild to build it again")
        print(f"use: --python {env_python(recipe.name, out)}")
        return EXIT_OK
    progress = not args.quiet and sys.stderr.isatty()
    _build(recipe, out, base, progress=progress)
    return EXIT_OK


def _check_base(base: str) -> None:
    """Refuses an interpreter the pins were not resolved for (CPython 3.11)."""
    probe = subprocess.run(
        [
            base,
            "-c",
            "import sys; print(sys.implementation.name, *sys.version_info[:2])",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    found = probe.stdout.split()
    if probe.returncode != 0 or found[:3] != ["cpython", "3", "11"]:
        what = " ".join(found) or "no Python"
        raise InvalidParameterError(
            f"--base-python {base!r} is {what}: the pins are resolved for CPython "
            "3.11; pass a CPython 3.11 interpreter."
        )


def _print_list() -> None:
    print(f"environments live in {env_home()}/NAME unless --out says otherwise")
    for name in sorted(RECIPES):
        recipe = RECIPES[name]
        python = env_python(name)
        marker = _marker(python.parents[1]) or {}
        state = "not built"
        if marker.get("status") == "complete":
            same = marker.get("pins_digest") == _digest(recipe)
            state = "built" if same else "built from older pins (--rebuild)"
        elif marker:
            state = "incomplete (build it again)"
        print(
            f"{name:<11} {recipe.library:<24} adapters {recipe.adapters:<12} "
            f"({recipe.notes}); {state}: {python}"
        )


def _marker(out: Path) -> dict[str, Any] | None:
    path = out / MARKER
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _digest(recipe: Recipe) -> str:
    text = pins_path(recipe).read_bytes() + repr(recipe.first).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def _prepare(out: Path, recipe: Recipe, *, rebuild: bool) -> str:
    """``"built"`` when ``out`` holds this recipe, complete; else empties a folder
    dpaudit env built and returns ``"build"``. Refuses a folder it did not build."""
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(
            f"--out {out} is a file; name a folder that does not exist or is empty."
        )
    if not out.exists() or not any(out.iterdir()):
        return "build"
    marker = _marker(out)
    if marker is None:
        raise InvalidParameterError(
            f"--out {out} is not empty and was not built by `dpaudit env` (no "
            f"{MARKER}); name a new or empty folder."
        )
    complete = (
        marker.get("recipe") == recipe.name
        and marker.get("pins_digest") == _digest(recipe)
        and marker.get("status") == "complete"
    )
    if complete and not rebuild:
        return "built"
    if marker.get("status") == "complete" and not rebuild:
        raise InvalidParameterError(
            f"--out {out} holds dpaudit env's {marker.get('recipe')!r} built from "
            "other pins; pass --rebuild to replace it or name another folder."
        )
    shutil.rmtree(out)
    return "build"


def _step(
    number: int,
    total: int,
    what: str,
    command: list[str],
    log: Path,
    *,
    progress: bool,
) -> float:
    """Runs one step, its output appended to ``log``; prints and returns its time."""
    started = time.perf_counter()
    with log.open("a") as sink:
        sink.write(f"\n$ {' '.join(command)}\n")
        sink.flush()
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        assert process.stdout is not None
        collected = 0
        for line in process.stdout:
            sink.write(line)
            if line.startswith("Successfully installed"):
                collected = len(line.split()) - 2
            if progress and line.startswith(_PROGRESS_PREFIXES):
                print(
                    f"  [{time.perf_counter() - started:6.0f} s] {line.strip()[:100]}",
                    file=sys.stderr,
                    flush=True,
                )
        code = process.wait()
    seconds = time.perf_counter() - started
    if code != 0:
        raise RunFailedError(
            f"step {number}/{total} ({what}) failed with exit code {code} after "
            f"{seconds:.0f} s; its output is in {log}"
        )
    counted = f", {collected} packages installed" if collected else ""
    print(f"step {number}/{total} {what}: {seconds:.1f} s{counted}", flush=True)
    return seconds


def _size(out: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(out):
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def _build(recipe: Recipe, out: Path, base: str, *, progress: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    log = out / _LOG
    marker: dict[str, Any] = {
        "recipe": recipe.name,
        "library": recipe.library,
        "pins_digest": _digest(recipe),
        "status": "building",
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "steps": {},
    }
    (out / MARKER).write_text(json.dumps(marker, indent=2))
    python = str(env_python(recipe.name, out))
    pip = [python, "-m", "pip", "install", "--no-input"]
    steps: list[tuple[str, list[str]]] = [
        ("create the virtual environment", [base, "-m", "venv", str(out)]),
    ]
    if recipe.first:
        index = ["--extra-index-url", recipe.first_index] if recipe.first_index else []
        steps.append(
            (
                f"install {', '.join(recipe.first)}",
                [*pip, "--no-deps", *index, *recipe.first],
            )
        )
    steps += [
        (
            f"install the pins ({recipe.name}/{recipe.pins.name})",
            [*pip, "-r", str(pins_path(recipe))],
        ),
        ("pip check", [python, "-m", "pip", "check"]),
        (
            f"import {recipe.library}",
            [
                python,
                "-c",
                f"{recipe.check}; {_VERSION_CHECK.format(*recipe.library.split())}",
            ],
        ),
    ]
    print(f"building {recipe.name} ({recipe.library}) in {out}", flush=True)
    started = time.perf_counter()
    for number, (what, command) in enumerate(steps, 1):
        seconds = _step(number, len(steps), what, command, log, progress=progress)
        marker["steps"][what] = round(seconds, 1)
        (out / MARKER).write_text(json.dumps(marker, indent=2))
    total = time.perf_counter() - started
    size = _size(out)
    marker.update(
        status="complete",
        seconds=round(total, 1),
        bytes=size,
        finished=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    (out / MARKER).write_text(json.dumps(marker, indent=2))
    print(
        f"built {recipe.name} in {total:.0f} s ({total / 60:.1f} min), "
        f"{size / 1e9:.2f} GB on disk"
    )
    print(f"use: --python {python}")


__all__ = ["add_parser", "run"]
