"""The key table (dpaudit.audit.config.keys.AUDIT_KEYS) is the one declaration of
every setting: each setting a game does not use and each unmet ``requires`` is
refused by ``dpaudit audit`` with one line naming both settings, exit 2, before
anything is written; the help shows the table's groups; the run settings are the
resume allow-list."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from dpaudit.audit import AuditConfig
from dpaudit.audit.config import AUDIT_KEYS, GROUPS, RUN_SETTINGS, Key, Requires
from dpaudit.cli import main

SAMPLE: dict[str, Any] = {
    "dataset_rows": "10",
    "domain": "domain.json",
    "game": "one-run",
    "target": "2",
    "target_record": '{"a": 1}',
    "candidates": "5",
    "selection_rounds": "20",
    "rounds": "50",
    "split": "0.5,0.2,0.3",
    "sequential": True,
    "randomness": "independent",
    "public_seed": "3",
    "public_candidates": "4",
    "release": "transcript",
    "teachers": "canary",
    "canaries": "50",
    "fits": "3",
    "guesses": "7",
    "guesses_out": "7",
    "guess_rule": "count",
    "onerun_bound": "steinke",
    "attack": "distance",
    "attack_options": "n_queries=5",
    "estimator": "jeffreys",
    "batch_size": "7",
    "jobs": "1",
    "backend": "loky",
    "scheduler": "tcp://127.0.0.1:1",
}
"""A valid value, not the default, of every setting that a game or a requirement
restricts (as a flag's text; True: a switch)."""

UNMET: dict[str, str] = {
    "dataset": "cervical_cancer",
    "backend": "threading",
    "target": "2",
    "public_seed": "0",
    "randomness": "independent",
    "release": "table",
    "teachers": "trained",
    "attack": "distance",
}
"""A value of each required setting that does not meet its requirement."""

MEETS_NEGATED: dict[str, str] = {"dataset": "cervical_cancer"}
"""A value that meets a negated requirement the setting's default does not meet
(``--domain``: not a worst case)."""


def _argv(key: Key, value: Any) -> list[str]:
    return [key.flag] if value is True else [key.flag, str(value)]


def _cases() -> list[Any]:
    cases = []
    for key in AUDIT_KEYS:
        if key.target is None:
            continue
        for game in ("two-world", "one-run"):
            if game not in key.games:
                cases.append(
                    pytest.param(
                        key,
                        ["--game", game],
                        ("--game", key.flag),
                        id=f"{key.name}-{game}",
                    )
                )
        needs: list[tuple[Requires, ...]] = [(n,) for n in key.requires]
        if key.requires_any:
            needs.append(key.requires_any)
        for group in needs:
            flags: list[str] = []
            for need in group:
                other = next(k for k in AUDIT_KEYS if k.target == need.key)
                value = UNMET[need.key]
                if need.met(value):  # a negated requirement: unmet by its own value
                    value = need.values[0]
                assert not need.met(value)
                flags += _argv(other, value)
            names = (key.flag, *(n.fix.split()[0] for n in group))
            cases.append(
                pytest.param(key, flags, names, id=f"{key.name}-needs-{group[0].key}")
            )
    return cases


def test_every_restricted_setting_has_a_sample_value() -> None:
    restricted = {
        key.target
        for key in AUDIT_KEYS
        if key.target is not None
        and (key.games != ("two-world", "one-run") or key.requires or key.requires_any)
    }
    assert restricted <= set(SAMPLE), sorted(restricted - set(SAMPLE))


@pytest.mark.parametrize(("key", "flags", "names"), _cases())
def test_unused_or_unmet_settings_are_refused_before_anything_is_written(
    key: Key, flags: list[str], names: tuple[str, ...], tmp_path: Path
) -> None:
    """Exit 2, one line naming the setting and the one it needs, no traceback,
    and ``--out`` never created (the check runs before any fit)."""
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(
            [
                "audit",
                "--quiet",
                "--out",
                str(out),
                *flags,
                *_argv(key, SAMPLE[key.target or ""]),
            ]
        )
    text = err.getvalue()
    assert code == 2, text
    assert text.count("\n") == 1 and "Traceback" not in text
    for name in names:
        assert name in text, (name, text)
    assert not out.exists()


@pytest.mark.parametrize(
    "key",
    [k for k in AUDIT_KEYS if k.requires or k.requires_any],
    ids=lambda k: k.name,
)
def test_a_met_requirement_is_not_refused(key: Key) -> None:
    """The refusal is the requirement's, not the setting's: met, it passes."""
    values: dict[str, Any] = {}
    for need in (*key.requires, *key.requires_any[:1]):
        if not need.negate:
            values[need.key] = need.values[0]
        elif need.key in MEETS_NEGATED:
            values[need.key] = MEETS_NEGATED[need.key]
    if values.get("backend") == "dask":
        values["scheduler"] = "tcp://127.0.0.1:1"
    setting = SAMPLE[key.target or ""]
    if key.kind == "int":
        setting = int(setting)
    mapping = {**values, (key.target or ""): setting}
    if key.target == "public_seed":
        mapping["public_seed"] = 3
    AuditConfig.from_mapping(mapping).check_settings()


def test_help_shows_the_option_groups(capsys: pytest.CaptureFixture[str]) -> None:
    with contextlib.suppress(SystemExit):
        main(["audit", "--help"])
    text = capsys.readouterr().out
    shown = [g for g in GROUPS if f"\n{g}:\n" in text]
    assert len(shown) >= 5 and shown == list(GROUPS)


def test_run_settings_are_what_resume_may_change() -> None:
    from dpaudit.audit import RESUME_SETTINGS

    assert tuple(RESUME_SETTINGS) == RUN_SETTINGS
    base = AuditConfig(rounds=50)
    for field in RUN_SETTINGS:
        value = {"jobs": 1, "backend": "loky", "device": "cpu", "batch_size": 3}.get(
            field
        )
        if value is None:
            continue
        changed = AuditConfig.from_mapping({"rounds": 50, field: value})
        assert changed.identity() == base.identity()
    assert AuditConfig(rounds=51).identity() != base.identity()


def test_list_marks_the_defaults_the_audit_uses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`dpaudit list datasets` marks AuditConfig's default dataset, and `list
    attacks` marks the sets `default` expands to on each kind of dataset."""
    from dpaudit.attacks.registry import expand_attacks

    assert main(["list", "datasets"]) == 0
    marked = [
        line.split()[0]
        for line in capsys.readouterr().out.splitlines()
        if "(default)" in line
    ]
    assert marked == [AuditConfig().dataset]
    assert main(["list", "attacks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for kind, flags in (
        ("worst-case-continuous", {"worst_case": True, "continuous": True}),
        ("worst-case", {"worst_case": True, "continuous": False}),
        ("real data", {"worst_case": False, "continuous": False}),
    ):
        shown = {
            line.split()[0]
            for line in lines
            if "(default on " in line
            and kind in line.split("(default on ")[1].rstrip(")").split(", ")
        }
        assert shown == set(expand_attacks("default", **flags)), kind


@pytest.mark.parametrize(
    ("flags", "refused"),
    [
        (["--dataset-rows", "9"], None),
        (["--domain", "domain.json"], "--domain"),
    ],
)
def test_the_one_run_canary_design_is_a_worst_case_for_the_table(
    flags: list[str], refused: str | None, tmp_path: Path
) -> None:
    """``--dataset worst-case-unique`` (one-run only) meets ``--game one-run``'s and
    ``--dataset-rows``' requirement of a designed dataset, and ``--domain`` is
    refused with it as with the worst cases (its domain is fixed): one line, exit 2,
    nothing written."""
    values = {"game": "one-run", "dataset": "worst-case-unique"}
    if refused is None:
        AuditConfig.from_mapping({**values, "dataset_rows": 9}).check_settings()
        return
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(
            [
                *("audit", "--quiet", "--out", str(out), "--game", "one-run"),
                *("--dataset", "worst-case-unique", *flags),
            ]
        )
    text = err.getvalue()
    assert code == 2 and text.count("\n") == 1 and refused in text, text
    assert not out.exists()
