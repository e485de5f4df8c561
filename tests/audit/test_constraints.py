"""The audit configuration's declared constraints (dpaudit.audit.config.keys): one
table checked by AuditConfig and read by the command line's help."""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest

from dpaudit.audit.config.keys import AUDIT_CONSTRAINTS, Choices, Interval
from dpaudit.audit.config.model import AuditConfig
from dpaudit.cli import build_parser
from dpaudit.errors import InvalidParameterError


def test_every_constraint_names_a_field_and_its_literal() -> None:
    fields = {f.name: f for f in dataclasses.fields(AuditConfig)}
    hints = typing.get_type_hints(AuditConfig)
    for name, constraint in AUDIT_CONSTRAINTS.items():
        assert name in fields, name
        if isinstance(constraint, Choices) and typing.get_origin(hints[name]):
            # A Literal field: the table's choices are the Literal's values.
            assert constraint.values == typing.get_args(hints[name]), name
        # The default satisfies its own constraint.
        default = fields[name].default
        assert constraint.check(default, name) == default, name


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("rounds", 4, "`rounds` must be an integer >= 5. Got 4."),
        ("rounds", 5.0, "`rounds` must be an integer >= 5. Got 5.0."),
        ("rounds", True, "`rounds` must be an integer >= 5. Got True."),
        ("alpha", 0.5, "`alpha` must be a number in (0, 0.5). Got 0.5."),
        ("delta", 1.0, "`delta` must be a number in [0, 1). Got 1.0."),
        ("public_candidates", 1, "`public_candidates` must be an integer >= 2."),
        ("device", "tpu", "`device` must be one of auto, cpu, cuda. Got 'tpu'."),
        ("randomness", "x", "`randomness` must be one of fixed_public, independent."),
        ("max_memory", 0, "`max_memory` must be an integer >= 1. Got 0."),
    ],
)
def test_config_refuses_out_of_range_values(
    key: str, value: object, message: str
) -> None:
    with pytest.raises(InvalidParameterError) as err:
        AuditConfig(**{key: value})  # type: ignore[arg-type]
    assert str(err.value).startswith(message)


def test_numpy_numbers_are_stored_as_python_numbers() -> None:
    config = AuditConfig(
        rounds=np.int64(10),
        epsilon=np.float32(0.5),
        seed=np.uint8(3),  # type: ignore[arg-type]
    )
    assert type(config.rounds) is int and config.rounds == 10
    assert type(config.epsilon) is float and config.epsilon == 0.5
    assert type(config.seed) is int and config.seed == 3
    # An integer epsilon stays an integer: result.json and the identity unchanged.
    assert AuditConfig(epsilon=2).to_json()["epsilon"] == 2


def test_interval_wording() -> None:
    assert Interval(integer=True, low=5).describe() == "an integer >= 5"
    assert Interval(low=0, closed="neither").describe() == "a number in (0, inf)"
    assert (
        Interval(integer=True, low=0, closed="neither").describe() == "an integer > 0"
    )
    assert Interval(optional=True, low=1).check(None, "x") is None


def test_cli_help_is_derived_from_the_table() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a.choices, dict)).choices["fit"]
    text = sub.format_help()
    assert AUDIT_CONSTRAINTS["epsilon"].describe() in text
    assert AUDIT_CONSTRAINTS["delta"].describe() in " ".join(text.split())


def test_reading_a_recorded_config_imports_no_generator(tmp_path) -> None:
    """A result's config is read back typed and validated, but its generator options
    (checked when the audit ran) are not checked again: reading a PATE-GAN result
    does not import torch."""
    import json
    import subprocess
    import sys

    doc = AuditConfig(generator="pategan", generator_options={"lam": 0.01}).to_json()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code = (
        "import json, sys\n"
        "from dpaudit.audit.config.model import AuditConfig\n"
        f"c = AuditConfig.from_json(json.load(open({str(path)!r})))\n"
        "print(dict(c.generator_options), 'torch' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert proc.stdout.split() == ["{'lam':", "0.01}", "False"]
    # Built (not read), the same options are checked against the generator's config.
    with pytest.raises(InvalidParameterError, match="--option lam"):
        AuditConfig(generator="pategan", generator_options={"lam": "x"})


def test_the_audit_flags_take_their_choices_and_ranges_from_the_table() -> None:
    """`dpaudit audit`'s flags are derived from AUDIT_CONSTRAINTS: a field with
    choices offers exactly those, a field with an interval states it in its help."""
    import argparse

    from dpaudit.audit.config.keys import AUDIT_CONSTRAINTS, Choices, Interval
    from dpaudit.commands.audit import AUDIT_KEYS, add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    actions = {a.dest: a for a in parser._actions}
    checked = 0
    for key in AUDIT_KEYS:
        constraint = AUDIT_CONSTRAINTS.get(key.target or "")
        if constraint is None:
            continue
        action = actions[key.name]
        if isinstance(constraint, Choices):
            assert tuple(action.choices or ()) == constraint.values, key.name
        if isinstance(constraint, Interval):
            assert action.help is not None
            assert constraint.describe() in action.help, key.name
        checked += 1
    assert checked >= 15
