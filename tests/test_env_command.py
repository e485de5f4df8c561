"""``dpaudit env``: the recipes, where environments live, and what it refuses.

Building an environment downloads gigabytes (synthcity's 2.8 GB), so the suite builds
none; docs/adapters.md records the last builds' times and sizes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpaudit.adapters import envs
from dpaudit.cli import main
from dpaudit.commands import env as env_command


def test_list_names_every_recipe_with_its_library(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DPAUDIT_ENV_HOME", str(tmp_path))
    assert main(["env", "--list"]) == 0
    out = capsys.readouterr().out
    for name, library in [
        ("smartnoise", "smartnoise-synth 1.0.8"),
        ("synthcity", "synthcity 0.2.12"),
        ("dpmm", "dpmm 0.1.9"),
        ("opendp", "opendp 0.16.0"),
    ]:
        line = next(x for x in out.splitlines() if x.startswith(name + " "))
        assert library in line and str(tmp_path / name / "bin" / "python") in line


def test_default_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DPAUDIT_ENV_HOME", str(tmp_path / "h"))
    assert envs.env_python("dpmm") == tmp_path / "h" / "dpmm" / "bin" / "python"
    monkeypatch.delenv("DPAUDIT_ENV_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "c"))
    expected = tmp_path / "c" / ".cache" / "dpaudit" / "envs" / "opendp"
    assert envs.default_env_dir("opendp") == expected


@pytest.mark.parametrize("recipe", sorted(envs.RECIPES))
def test_every_package_is_pinned_exactly(recipe: str) -> None:
    pins = envs.pins_path(envs.RECIPES[recipe]).read_text().splitlines()
    lines = [x for x in pins if x.strip() and not x.startswith("#")]
    assert lines and all("==" in x and ">" not in x and "<" not in x for x in lines)
    name, version = envs.RECIPES[recipe].library.split()
    assert f"{name}=={version}" in lines


def test_refuses_a_folder_it_did_not_build(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "mine.txt").write_text("keep")
    assert main(["env", "dpmm", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was not built by `dpaudit env`" in err
    assert (tmp_path / "mine.txt").read_text() == "keep"


def test_a_complete_build_is_not_redone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    recipe = envs.RECIPES["dpmm"]
    marker = {
        "recipe": "dpmm",
        "pins_digest": env_command._digest(recipe),
        "status": "complete",
    }
    (tmp_path / envs.MARKER).write_text(json.dumps(marker))
    assert main(["env", "dpmm", "--out", str(tmp_path)]) == 0
    assert "already built" in capsys.readouterr().out
    # Another recipe's complete build is replaced only with --rebuild.
    assert main(["env", "opendp", "--out", str(tmp_path)]) == 2
    assert "--rebuild" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["env"], "needs NAME"),
        (["env", "dpmm", "--list"], "takes no NAME"),
        (["env", "nosuch"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


def test_refuses_an_interpreter_the_pins_do_not_fit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho cpython 3 12\n")
    fake.chmod(0o755)
    out = tmp_path / "env"
    assert main(["env", "dpmm", "--out", str(out), "--base-python", str(fake)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is cpython 3 12" in err and "CPython 3.11" in err
    assert not out.exists()
