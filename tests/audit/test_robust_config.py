"""``dpaudit audit --config``: the TOML takes the same keys as the flags (one
definition, :data:`dpaudit.commands.audit.AUDIT_KEYS`)."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.cli import build_parser, main
from dpaudit.commands.audit import AUDIT_KEYS, FLAG_ONLY, config_mapping, settings


def _audit_parser() -> argparse.ArgumentParser:
    sub = next(
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    )
    parser: argparse.ArgumentParser = sub.choices["audit"]
    return parser


def _parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["audit", *argv])


def test_every_flag_is_a_toml_key_and_every_key_a_flag() -> None:
    # Each flag's first spelling (aliases such as --no-progress aside); --help and the
    # global --debug are not audit settings.
    flags = {
        action.option_strings[0][2:].replace("-", "_")
        for action in _audit_parser()._actions
        if action.option_strings and action.option_strings[0].startswith("--")
    }
    flags -= {"help", "debug"}
    keys = {key.name for key in AUDIT_KEYS}
    assert flags - set(FLAG_ONLY) == keys
    assert set(FLAG_ONLY) <= flags
    # Every configuration field is reachable by a key (and so by a flag).
    assert {f.name for f in fields(AuditConfig)} == {
        key.target for key in AUDIT_KEYS if key.target is not None
    }
    # Every key has help text.
    assert all(action.help for action in _audit_parser()._actions)


def test_toml_takes_out_bug_option_and_the_rest(tmp_path: Path) -> None:
    toml = tmp_path / "audit.toml"
    toml.write_text(
        '[audit]\ngenerator = "pategan"\nbug = ["data_bounds"]\nout = "x"\nquiet = true\n'
        'option = { lam = 0.01, max_iterations = 3 }\nattack_option = ["n_queries=7"]\n'
        'split = [0.5, 0.25, 0.25]\ntarget = 3\ndata_dir = "d"\nrounds = 30\n'
    )
    values = settings(_parse("--config", str(toml), "--option", "lam=0.5"))
    assert values["out"] == "x" and values["quiet"] is True
    mapping = config_mapping(
        _parse(
            "--config", str(toml), "--option", "lam=0.5", "--bug", "teacher_partition"
        )
    )
    assert mapping["bugs"] == ["teacher_partition"]  # the flag wins
    assert mapping["generator_options"] == {"lam": 0.5, "max_iterations": 3}
    assert mapping["attack_options"] == {"n_queries": 7}
    config = AuditConfig.from_mapping(mapping)
    assert config.split == (0.5, 0.25, 0.25)
    assert config.target == 3 and config.rounds == 30 and config.data_dir == "d"
    # The configuration's own field names are accepted as aliases.
    toml.write_text('bugs = "data_bounds"\ngenerator_options = { lam = 0.2 }\n')
    mapping = config_mapping(_parse("--config", str(toml)))
    assert mapping == {"bugs": ["data_bounds"], "generator_options": {"lam": 0.2}}
    # Flags that the TOML never had: --split and --attack-option.
    mapping = config_mapping(
        _parse("--split", "0.3,0.3,0.4", "--attack-option", "n_queries=9")
    )
    assert mapping == {"split": [0.3, 0.3, 0.4], "attack_options": {"n_queries": 9}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("roundz = 3", "'roundz' is not an audit key"),
        ('rounds = "many"', "`rounds` in"),
        ('epsilon = "abc"', "must be a number"),
        ('quiet = "yes"', "must be true or false"),
        ("bug = [1]", "a name or a list of names"),
        ("split = [0.5, 0.5]", "a list of three fractions"),
        ('backend = "mpi"', "one of loky, threading, dask"),
        ('bug = "a"\nbugs = "b"', "sets 'bug' twice"),
        ("audit = 3", "[audit] must be a table"),
        ("rounds = ", "must be valid TOML"),
    ],
)
def test_bad_toml_is_one_line_exit_2(
    capsys, tmp_path: Path, text: str, message: str
) -> None:
    toml = tmp_path / "audit.toml"
    toml.write_text(text + "\n")
    out = tmp_path / "out"
    code = main(["audit", "--config", str(toml), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_toml_out_is_used_and_empty_out_refused(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    toml = tmp_path / "audit.toml"
    toml.write_text(
        'generator = "randomized-response"\nrounds = 10\njobs = 1\n'
        'synthetic_rows = 5\nout = "from-toml"\nquiet = true\n'
    )
    assert main(["audit", "--config", str(toml)]) == 0
    assert (
        json.loads((tmp_path / "from-toml" / "result.json").read_text())["config"][
            "rounds"
        ]
        == 10
    )
    assert main(["audit", "--config", str(toml), "--out", " "]) == 2
    assert "`--out` must be a folder path" in capsys.readouterr().err
    assert not (tmp_path / "dpaudit-audit").exists()
