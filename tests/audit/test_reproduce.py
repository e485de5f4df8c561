"""The reproduction line of every report: parsing the printed ``dpaudit audit``
command gives the recorded configuration back."""

from __future__ import annotations

import dataclasses
import shlex

import pytest

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.reproduce import audit_command
from dpaudit.cli import build_parser
from dpaudit.commands.audit import config_mapping

CONFIGS = [
    AuditConfig(),
    AuditConfig(
        generator="smartnoise-mwem",
        generator_options={"preprocessing": "public", "bins": 12, "label": "1"},
        dataset="worst-case",
        dataset_rows=2000,
        synthetic_rows=2000,
        rounds=300,
        seed=1,
        jobs=1,
        batch_size=20,
        python="/venvs/smart noise/bin/python",
        fit_timeout=120.5,
        max_memory=4000,
        epsilon=0.5,
        delta=1e-6,
    ),
    AuditConfig(
        variant="original",
        bugs=("bug1_duplicate_data",),
        attack="querybased",
        attack_options={"n_queries": 500},
        split=(0.5, 0.1, 0.4),
        alpha=0.01,
        estimator="jeffreys",
        randomness="independent",
        target_record={"a": 1, "b": 0.5, "c": 1},
        dataset="worst-case",
    ),
    AuditConfig(target="auto", public_seed="auto", candidates=8, selection_rounds=10),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_the_printed_command_parses_back_to_the_same_config(
    config: AuditConfig,
) -> None:
    line = audit_command(config)
    words = shlex.split(line)
    assert words[:2] == ["dpaudit", "audit"]
    args = build_parser().parse_args(words[1:])
    again = AuditConfig.from_mapping(config_mapping(args))
    assert again == config, line
    # Only what differs from the defaults is printed.
    if config == AuditConfig():
        assert line == "dpaudit audit"


def test_every_config_field_is_reachable_from_the_command_line() -> None:
    parser = build_parser()
    dests = {
        action.dest
        for sub in parser._subparsers._group_actions  # type: ignore[union-attr]
        for action in sub.choices["audit"]._actions  # type: ignore[index]
    }
    names = {f.name for f in dataclasses.fields(AuditConfig)}
    flags = {
        "bugs": "bug",
        "generator_options": "option",
        "attack_options": "attack_option",
    }
    assert {flags.get(n, n) for n in names} <= dests
