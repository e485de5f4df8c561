"""Every ``dpaudit audit`` and ``dpaudit check`` command of README.md, docs/ and
examples/ passes ``--dry-run``: the run's checks (settings, names, options, data,
target, output folder, memory plan), nothing fitted, nothing written.

Each command runs in-process (``dpaudit.cli.main``) in one fresh folder prepared as a
reader's (tests/test_doc_commands.py's ``_prepare``: the examples' modules and the
files a reader brings), with ``--dry-run`` appended. A command that needs a library
environment (``--python ~/.cache/dpaudit/envs/NAME/bin/python``) is checked with its
interpreter replaced by a stub this test writes, which fails if it is ever started
(a dry run starts no worker). The folder holds afterwards exactly what it held
before. The other sub-commands (report, fit, list, ...) are parsed by the command
line's parser.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.test_doc_commands import (
    PRIVACY,
    RECIPE,
    SHELL,
    _prepare,
    fenced_blocks,
    privacy_commands,
    recipe_commands,
    split_commands,
    yaml,
)

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))

#: Shell lines that are not commands to run: ``(page, start) -> what they are``.
NOT_RUN: dict[tuple[str, str], str] = {
    ("docs/ci.md", "dpaudit check --policy privacy.toml [--junit"): "the synopsis",
    ("docs/ci.md", "dpaudit check FAILED"): "a check's output line",
    ("docs/index.md", "dpaudit list generators|"): "a synopsis (one of the names)",
}

#: Commands whose dry run must refuse, with the line's start and why.
REFUSED: dict[tuple[str, str], tuple[str, str]] = {
    ("README.md", "dpaudit audit --resume audits/borealis"): (
        "--resume: ",
        "continues the folder the page's previous command writes; a dry run wrote none",
    ),
    (
        "docs/scale.md",
        "dpaudit audit --resume audit-pategan --backend dask --scheduler "
        "tcp://SCHEDULER:8786 --generator smartnoise-pategan",
    ): ("--resume: ", "the same: the folder of the page's previous command"),
}


def doc_commands() -> list[tuple[str, str]]:
    """Every ``(page, command)`` of the pages and examples/ that runs dpaudit."""
    found: list[tuple[str, str]] = []
    for page in PAGES:
        for block in fenced_blocks(page):
            if block.lang in SHELL:
                found += [(page, c) for c in split_commands(block.lines)]
    found += [(PRIVACY, c) for c in privacy_commands()]
    found += [(RECIPE, c) for c in recipe_commands()]
    return [
        (page, c)
        for page, c in found
        if re.search(r"(^|[\s/])dpaudit\s", c)
        and not any(page == p and c.startswith(s) for p, s in NOT_RUN)
    ]


_PROGRAMS = ("dpaudit", ".venv/bin/dpaudit")


def dpaudit_calls(command: str) -> list[tuple[dict[str, str], list[str]]]:
    """The dpaudit invocations of a shell command: ``(environment assignments,
    argv)`` per ``&&``/``;`` part that runs dpaudit (``python -m dpaudit`` too)."""
    calls = []
    for part in re.split(r"\s*(?:&&|;|\|\|)\s*", command):
        words = shlex.split(part.split(" > ")[0])
        assign: dict[str, str] = {}
        while words and re.match(r"^[A-Z_]+=", words[0]):
            name, _, value = words.pop(0).partition("=")
            assign[name] = value
        if words[:1] and words[0] in _PROGRAMS:
            argv = words[1:]
        elif words[:3] and words[1:3] == ["-m", "dpaudit"]:
            argv = words[3:]
        else:
            continue
        # Outside CI "$GITHUB_STEP_SUMMARY" is empty, as a reader's shell makes it.
        argv = [os.path.expandvars(w) if w.startswith("$") else w for w in argv]
        argv = ["" if w.startswith("$") else w for w in argv]
        calls.append((assign, argv))
    return calls


def test_the_pages_hold_the_commands_this_test_runs() -> None:
    commands = doc_commands()
    audits = [c for _, c in commands if "dpaudit audit" in c]
    checks = [c for _, c in commands if "dpaudit check" in c]
    assert len(audits) >= 40 and len(checks) >= 3
    assert set(REFUSED) <= set(commands)
    for page, start in NOT_RUN:
        assert any(
            b.page == page and any(line.startswith(start) for line in b.lines)
            for b in fenced_blocks(page)
        ), (page, start)


def _stub(log: Path) -> str:
    """The stub interpreter: it records each start and answers as this test's
    interpreter does (the one-run game asks it whether it imports numpy and pandas;
    no fit is asked of it in a dry run)."""
    return (
        f'#!/bin/sh\necho "$@" >> {shlex.quote(str(log))}\n'
        f'exec {shlex.quote(sys.executable)} "$@"\n'
    )


@pytest.mark.slow
def test_every_doc_command_passes_its_dry_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dpaudit.cli import build_parser, main

    folder = tmp_path / "reader"
    folder.mkdir()
    _prepare(folder)
    stub = tmp_path / "stub" / "python"
    stub.parent.mkdir()
    stub.write_text(_stub(tmp_path / "stub.log"))
    stub.chmod(0o755)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for name, value in yaml.safe_load((ROOT / RECIPE).read_text())["env"].items():
        monkeypatch.setenv(name, str(value))  # the recipe's env (POLICY)
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", "off")
    before = sorted(str(p) for p in folder.rglob("*"))
    ran, failed = 0, []
    for page, command in doc_commands():
        for assign, argv in dpaudit_calls(command):
            if argv[:1] not in (["audit"], ["check"]):
                try:
                    build_parser().parse_args(argv)
                except SystemExit as stop:  # --version and --help exit 0
                    if stop.code:
                        failed.append(f"{page}: {command}: {capsys.readouterr().err}")
                capsys.readouterr()
                continue
            argv = [*argv, "--dry-run"]
            for i, word in enumerate(argv[:-1]):
                if word == "--python" and "/envs/" in argv[i + 1]:
                    argv[i + 1] = str(stub)  # a library environment's interpreter
            with monkeypatch.context() as m:
                for path in filter(None, assign.get("PYTHONPATH", "").split(":")):
                    m.syspath_prepend(str(folder / path))
                code = main(argv)
            out = capsys.readouterr()
            told = f"{page}: {command}\n{out.out[-2000:]}\n{out.err[-2000:]}"
            if (page, command) in REFUSED:
                start = f"dpaudit: error: {REFUSED[(page, command)][0]}"
                ok = code == 2 and out.err.startswith(start)
            else:
                ok = code == 0 and "nothing fitted, nothing written" in out.out
            if not ok:
                failed.append(told)
            ran += 1
    assert not failed, "\n\n".join(failed)
    assert ran >= 45
    assert sorted(str(p) for p in folder.rglob("*")) == before
    sys.modules.pop("noisy_histogram", None)
